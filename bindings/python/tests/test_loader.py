"""Where the package looks for libnativeauth.so (nativeauth/_loader.py; security issue #18).

A package installed without its library (a pure ``pip install``) must not load ``.build/release/libnativeauth.so``
from a directory above it that holds a ``Package.swift``: a virtual environment under a world-writable directory
(/tmp/x/venv) would let another user plant both and run code in every program importing the package. Only the
package's own source tree (``<root>/bindings/python/src/nativeauth`` with ``<root>/Package.swift``) looks there.

Each check runs in a fresh interpreter (``-I``: no PYTHONPATH, no user site, no current directory on the path) with
NATIVEAUTH_LIBRARY unset.

The install paths (issue 29): a pure ``pip install`` of the package (its wheel, built offline) into a fresh virtual
environment with ``make install PREFIX=<the environment>``, a ``pip install --user`` with ``make install
PREFIX=$PYTHONUSERBASE``, and a library only pkg-config knows: each imports, signs in against the emulator and runs
``python -m nativeauth``. A user base's library is not used for a package installed elsewhere, nor a prefix's library
in a directory anyone may write."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from emulator_protocol import Emulator

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
ROOT = SRC.parents[2]
SOURCE_BUILD = ROOT / ".build" / "release" / "libnativeauth.so"

# Prints the candidates, then what `import nativeauth` loaded (or the ImportError), as one JSON document.
# (The loader is run without the package's __init__, which loads the library: under a bare stand-in package.)
PROBE = """
import importlib.util, json, sys, types
sys.path.insert(0, sys.argv[1])
stand_in = types.ModuleType("nativeauth")
stand_in.__path__ = [sys.argv[1] + "/nativeauth"]
sys.modules["nativeauth"] = stand_in
spec = importlib.util.spec_from_file_location("nativeauth._loader", sys.argv[1] + "/nativeauth/_loader.py")
loader = importlib.util.module_from_spec(spec)
sys.modules["nativeauth._loader"] = loader
spec.loader.exec_module(loader)
result = {"candidates": loader._candidates()}
for name in [m for m in sys.modules if m == "nativeauth" or m.startswith("nativeauth.")]:
    del sys.modules[name]
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


# -- the install paths: a pure `pip install ./bindings/python` beside `make install` -------------------------------

# In the installed package's interpreter, from an empty directory: what loaded, then a sign-in against the emulator.
SIGN_IN = r'''
import json, sys
import nativeauth
from nativeauth import _native
ready = json.loads(sys.argv[1])
user = next(u for u in ready["users"] if u["kind"] == "password")
with nativeauth.Client(ready["authority"], ready["client_id"]) as c:
    state = c.sign_in(user["email"], user["password"])
    assert isinstance(state, nativeauth.SignedIn), state
print(json.dumps({"loaded": _native.lib._name, "package": nativeauth.__file__}))
'''

CANDIDATES = "import json; from nativeauth import _loader; print(json.dumps(_loader._candidates()))"


def _built(variable: str, default: pathlib.Path) -> pathlib.Path:
    path = pathlib.Path(os.environ.get(variable) or default)
    if not path.is_file():
        pytest.fail(f"not built: {path} (make lib cli emulator)")
    return path


def _clean_env(**extra: str) -> Dict[str, str]:
    """This environment without what would point the package at a library or command (the test's own settings)."""
    # (MAKEFLAGS and the rest: an outer make's, e.g. make test-python's, are not this make's.)
    drop = ("NATIVEAUTH_", "PYTHON", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "VIRTUAL_ENV", "MAKE", "MFLAGS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


def _pure_wheel(tmp: pathlib.Path) -> pathlib.Path:
    """The wheel `pip install ./bindings/python` installs (no library inside), built offline from a copy of the
    package (no build artefacts in the source tree; a library in src/nativeauth, as `make wheel` leaves there, is not
    copied)."""
    copy = tmp / "package"
    copy.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copyfile(SRC.parent / name, copy / name)
    shutil.copytree(SRC, copy / "src", ignore=shutil.ignore_patterns("*.so", "*.so.*", "__pycache__", "bin",
                                                                     "*.egg-info"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                        "-w", str(tmp / "dist"), str(copy)], capture_output=True, text=True, timeout=300,
                       env=_clean_env())
    assert r.returncode == 0, ("building the wheel needs setuptools>=70.1 in the test environment (make deps-test): "
                               + r.stderr)
    (wheel,) = (tmp / "dist").glob("nativeauth-*-py3-none-any.whl")
    return wheel


def _venv(path: pathlib.Path, *options: str) -> pathlib.Path:
    subprocess.run([sys.executable, "-m", "venv", *options, str(path)], check=True, timeout=300, env=_clean_env())
    return path / "bin" / "python"


def _make_install(prefix: pathlib.Path, tmp: pathlib.Path) -> None:
    """`make install PREFIX=prefix` of the library and command under test (install-files: no build)."""
    library = _built("NATIVEAUTH_LIBRARY", SOURCE_BUILD)
    command = _built("NATIVEAUTH_CLI", ROOT / ".build" / "release" / "nativeauth-cli")
    emulator = _built("NATIVEAUTH_EMULATOR", ROOT / ".build" / "debug" / "nativeauth-emulator")
    (tmp / "make").mkdir(exist_ok=True)
    r = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "install-files", f"PREFIX={prefix}",
                        f"RELEASE_SO={library}", f"RELEASE_CLI={command}", f"RELEASE_EMULATOR={emulator}",
                        f"NA_TMP={tmp / 'make'}"], capture_output=True, text=True, timeout=300, env=_clean_env())
    assert r.returncode == 0, r.stdout + r.stderr


def _run(python: pathlib.Path, args: List[str], cwd: pathlib.Path, env: Dict[str, str]) -> str:
    r = subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _signs_in_over(python: pathlib.Path, library: pathlib.Path, emulator: Emulator, cwd: pathlib.Path,
                   env: Dict[str, str]) -> None:
    """`import nativeauth` loads `library` and signs in; `python -m nativeauth` runs the command of the same prefix."""
    loaded = json.loads(_run(python, ["-c", SIGN_IN, json.dumps(emulator.ready)], cwd, env))
    assert pathlib.Path(loaded["loaded"]).resolve() == library.resolve(), loaded
    version = _run(python, ["-m", "nativeauth", "--version"], cwd, env)
    assert version.startswith("nativeauth ") and "libnativeauth " in version, version


def test_pip_install_then_make_install_into_the_virtual_environment(tmp_path: pathlib.Path,
                                                                    emulator: Emulator) -> None:
    python = _venv(tmp_path / "venv")
    prefix = (tmp_path / "venv").resolve()
    _run(python, ["-m", "pip", "install", "-q", "--no-index", str(_pure_wheel(tmp_path))], tmp_path, _clean_env())
    _make_install(prefix, tmp_path)
    # A library in a user base does not count: the package is not installed there.
    other = tmp_path / "other-user-base"
    (other / "lib").mkdir(parents=True)
    shutil.copyfile(prefix / "lib" / "libnativeauth.so.1", other / "lib" / "libnativeauth.so.1")
    env = _clean_env(PYTHONUSERBASE=str(other))
    _signs_in_over(python, prefix / "lib" / "libnativeauth.so.1", emulator, tmp_path, env)
    candidates: List[str] = json.loads(_run(python, ["-c", CANDIDATES], tmp_path, env))
    assert str(prefix / "lib" / "libnativeauth.so.1") in candidates
    assert not [c for c in candidates if str(other) in c], candidates

    # A prefix's lib directory anyone may write is not trusted: the library there is not loaded.
    (prefix / "lib").chmod(0o777)
    try:
        r = subprocess.run([str(python), "-c", SIGN_IN, json.dumps(emulator.ready)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    finally:
        (prefix / "lib").chmod(0o755)
    if r.returncode == 0:  # the system's own library (an installed libnativeauth1), never the refused one
        assert str(prefix) not in json.loads(r.stdout)["loaded"]
    else:
        assert "may be written by anyone" in r.stderr and "NATIVEAUTH_LIBRARY=/path/to/libnativeauth.so.1" in r.stderr


def test_user_install_with_the_library_in_the_user_base(tmp_path: pathlib.Path, emulator: Emulator) -> None:
    # (A virtual environment with the system's site packages: pip installs there with --user, and Python reads the
    # user site, as the system's own Python does.)
    python = _venv(tmp_path / "venv", "--system-site-packages")
    base = (tmp_path / "user-base").resolve()
    env = _clean_env(PYTHONUSERBASE=str(base))
    _run(python, ["-m", "pip", "install", "-q", "--user", "--no-index", "--no-warn-script-location",
                  str(_pure_wheel(tmp_path))], tmp_path, env)
    _make_install(base, tmp_path)
    _signs_in_over(python, base / "lib" / "libnativeauth.so.1", emulator, tmp_path, env)


def test_pkg_config_names_the_library(tmp_path: pathlib.Path, emulator: Emulator) -> None:
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed")
    python = _venv(tmp_path / "venv")
    _run(python, ["-m", "pip", "install", "-q", "--no-index", str(_pure_wheel(tmp_path))], tmp_path, _clean_env())
    elsewhere = (tmp_path / "elsewhere").resolve()
    _make_install(elsewhere, tmp_path)
    without = subprocess.run([str(python), "-c", "import nativeauth"], cwd=tmp_path, env=_clean_env(),
                             capture_output=True, text=True, timeout=120)
    if without.returncode != 0:  # (unless the machine has a libnativeauth of its own)
        assert "NATIVEAUTH_LIBRARY=/path/to/libnativeauth.so.1" in without.stderr and "LD_LIBRARY_PATH" in without.stderr
    env = _clean_env(PKG_CONFIG_PATH=str(elsewhere / "lib" / "pkgconfig"))
    loaded = json.loads(_run(python, ["-c", SIGN_IN, json.dumps(emulator.ready)], tmp_path, env))
    if without.returncode != 0:
        assert pathlib.Path(loaded["loaded"]).resolve() == (elsewhere / "lib" / "libnativeauth.so.1").resolve()
