"""docs/errors.tsv is the one list of the library's error codes: each has the Python exception class (and that
class's first base) the table names, and an error document with the code raises it with the status the table gives.
The classes are read from the imported package, not from its source text."""
from __future__ import annotations

import csv
import pathlib
import re
from typing import Dict, List

import pytest

from nativeauth import errors

ROOT = pathlib.Path(__file__).resolve().parents[3]


def table() -> List[Dict[str, str]]:
    with (ROOT / "docs" / "errors.tsv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def status_values() -> Dict[str, int]:
    """NA_* name → value, from the header's status enum (the header is the source of the values)."""
    header = (ROOT / "include" / "nativeauth.h").read_text(encoding="utf-8")
    enum = header[header.index("enum {\n    NA_OK"):]
    return {name: int(value) for name, value in re.findall(r"\b(NA_\w+)\s*=\s*(-?\d+)", enum[:enum.index("};")])}


def test_the_package_has_one_class_per_code_of_the_table() -> None:
    rows = table()
    assert len(rows) > 40
    assert {row["code"]: row["python_class"] for row in rows} == {
        code: cls.__name__ for code, cls in errors._BY_CODE.items()}
    for row in rows:
        cls = getattr(errors, row["python_class"])
        assert cls.code == row["code"] and row["python_class"] in errors.__all__
        assert cls.__bases__[0].__name__ == row["python_base"], row["code"]


@pytest.mark.parametrize("row", table(), ids=lambda row: row["code"])
def test_an_error_document_raises_the_tables_class_with_its_status(row: Dict[str, str]) -> None:
    status = status_values()[row["status"]]
    e = errors.from_document(status, {"v": 1, "error": {"code": row["code"], "message": "m", "field": "f"}})
    assert type(e).__name__ == row["python_class"]
    assert (e.code, e.status, e.message, e.details) == (row["code"], status, "m", {"field": "f"})
    # A code newer than the package falls back on its status's family, which every class of that status belongs to.
    newer = errors.from_document(status, {"v": 1, "error": {"code": "a_newer_code", "message": "m"}})
    assert isinstance(e, type(newer)) and newer.code == "a_newer_code"
