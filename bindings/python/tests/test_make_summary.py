"""`make test` ends with one summary line (issue 29), and only when every target passed: the Makefile's `test` rule run
in a scratch directory (a copy of the Makefile, nothing else of the tree) with stand-in targets that pass, or one that
fails — then make stops and its last line is make's own error."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

MAKEFILE = pathlib.Path(__file__).resolve().parents[3] / "Makefile"

STAND_INS = """
passes-1:
\t@echo one
passes-2:
\t@echo two
fails:
\t@false
"""


def make_test(tmp: pathlib.Path, targets: str) -> "subprocess.CompletedProcess[str]":
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shutil.copyfile(MAKEFILE, tmp / "Makefile")
    (tmp / "stand-ins.mk").write_text(STAND_INS)
    (tmp / "scratch").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}  # (an outer make's)
    return subprocess.run(["make", "--no-print-directory", "-f", "Makefile", "-f", "stand-ins.mk", "test",
                           f"TEST_TARGETS={targets}", f"NA_TMP={tmp / 'scratch'}"], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_last_line_sums_up(tmp_path: pathlib.Path) -> None:
    r = make_test(tmp_path, "passes-1 passes-2")
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.splitlines()[-1]
    assert re.fullmatch(r"make test: all 2 targets passed in \d+ min \d+ s", last), r.stdout


def test_a_failing_target_leaves_make_s_error_last(tmp_path: pathlib.Path) -> None:
    r = make_test(tmp_path, "passes-1 fails passes-2")
    assert r.returncode != 0
    assert "targets passed" not in r.stdout + r.stderr and "two" not in r.stdout
    assert re.search(r"\[.*fails\] Error 1$", r.stderr.splitlines()[-1]), r.stderr
