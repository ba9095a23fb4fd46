"""Where the package looks for libnativeauth.so (nativeauth/_loader.py; security issue #18).

A package installed without its library (a pure ``pip install``) must not load ``.build/release/libnativeauth.so``
from a directory above it that holds a ``Package.swift``: a virtual environment under a world-writable directory
(/tmp/x/venv) would let another user plant both and run code in every program importing the package. Only the
package's own source tree (``<root>/bindings/python/src/nativeauth`` with ``<root>/Package.swift``) looks there.

Each check runs in a fresh interpreter (``-I``: no PYTHONPATH, no user site, no current directory on the path) with
NATIVEAUTH_LIBRARY unset."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Dict, List

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
ROOT = SRC.parents[2]
SOURCE_BUILD = ROOT / ".build" / "release" / "libnativeauth.so"

# Prints the candidates, then what `import nativeauth` loaded (or the ImportError), as one JSON document.
PROBE = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("probe_loader", sys.argv[1] + "/nativeauth/_loader.py")
loader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loader)
result = {"candidates": loader._candidates()}
try:
    import nativeauth._native
    result["loaded"] = nativeauth._native.lib._name
except ImportError as e:
    result["import_error"] = str(e)
print(json.dumps(result))
"""


def _real_library() -> pathlib.Path:
    named = os.environ.get("NATIVEAUTH_LIBRARY")
    return pathlib.Path(named) if named else SOURCE_BUILD


def _probe(path_entry: pathlib.Path, cwd: pathlib.Path) -> Dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "NATIVEAUTH_LIBRARY"}
    r = subprocess.run([sys.executable, "-I", "-c", PROBE, str(path_entry)], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    result: Dict[str, Any] = json.loads(r.stdout)
    return result


def test_an_installed_package_never_loads_a_library_planted_above_it(tmp_path: pathlib.Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    shutil.copytree(SRC / "nativeauth", site / "nativeauth",
                    ignore=shutil.ignore_patterns("*.so", "*.so.*", "__pycache__"))
    # Another user's files in every directory above the package: a Package.swift and a library that loads (a copy
    # of the real one, so that loading it is visible), or at least a file, when no build is at hand.
    planted: List[str] = []
    real = _real_library()
    directory = site
    while True:
        (directory / "Package.swift").write_text("// planted\n")
        build = directory / ".build" / "release"
        build.mkdir(parents=True)
        if real.is_file():
            shutil.copyfile(real, build / "libnativeauth.so")
        else:
            (build / "libnativeauth.so").write_bytes(b"not a library")
        planted.append(str(build / "libnativeauth.so"))
        if directory == tmp_path:
            break
        directory = directory.parent

    result = _probe(site, cwd=tmp_path)
    candidates: List[str] = result["candidates"]
    assert not [c for c in candidates if c in planted or ".build" in c], candidates
    assert candidates[:2] == [str(site.resolve() / "nativeauth" / "libnativeauth.so"),
                              str(site.resolve() / "nativeauth" / "libnativeauth.so.1")]
    assert "libnativeauth.so.1" in candidates  # then the system's
    # The import itself: the system's library when one is installed, else an ImportError that never tried them.
    if "loaded" in result:
        assert result["loaded"] not in planted and str(tmp_path) not in result["loaded"]
    else:
        message: str = result["import_error"]
        assert not [p for p in planted if p in message] and str(tmp_path / ".build") not in message, message
        assert "NATIVEAUTH_LIBRARY" in message


def test_the_source_tree_finds_its_own_build(tmp_path: pathlib.Path) -> None:
    result = _probe(SRC, cwd=tmp_path)
    package = SRC.resolve() / "nativeauth"
    own_build = str(ROOT.resolve() / ".build" / "release" / "libnativeauth.so")
    assert result["candidates"][:3] == [str(package / "libnativeauth.so"), str(package / "libnativeauth.so.1"),
                                        own_build]
    if SOURCE_BUILD.is_file() and not (package / "libnativeauth.so").exists():
        assert result.get("loaded") == own_build, result


def test_a_copy_of_the_package_layout_without_package_swift_is_not_a_source_tree(tmp_path: pathlib.Path) -> None:
    # <root>/bindings/python/src/nativeauth, but no <root>/Package.swift: nothing under <root> is looked at, nor
    # above it.
    src = tmp_path / "root" / "bindings" / "python" / "src"
    shutil.copytree(SRC / "nativeauth", src / "nativeauth",
                    ignore=shutil.ignore_patterns("*.so", "*.so.*", "__pycache__"))
    (tmp_path / "Package.swift").write_text("// planted\n")
    (tmp_path / ".build" / "release").mkdir(parents=True)
    (tmp_path / ".build" / "release" / "libnativeauth.so").write_bytes(b"not a library")
    candidates: List[str] = _probe(src, cwd=tmp_path)["candidates"]
    assert not [c for c in candidates if ".build" in c], candidates
