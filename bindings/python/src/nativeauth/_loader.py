"""Finds and loads libnativeauth.so.

Search order (the first that loads wins):
  1. the ``NATIVEAUTH_LIBRARY`` environment variable (a path to the .so) — when it is set, only that one: a library
     that was asked for by name and does not load is an ImportError, never silently replaced by another;
  2. next to this package (a wheel or ``pip install`` may bundle ``libnativeauth.so``);
  3. the source tree's ``<root>/.build/release/libnativeauth.so`` (a ``make`` build) — only when this package is
     imported from that source tree itself: its directory is exactly ``<root>/bindings/python/src/nativeauth`` and
     ``<root>/Package.swift`` exists. No other directory is looked at: a package installed elsewhere (a virtual
     environment, site-packages) never loads a library from a directory above it, which someone else may control
     (a virtual environment under /tmp);
  4. ``<prefix>/lib/libnativeauth.so.1`` of the prefix this package is installed under (``make install
     PREFIX=<prefix>`` beside a pure ``pip install``): ``sys.prefix`` when the package is in one of its site
     directories (a virtual environment's), ``site.USER_BASE`` (``~/.local``) only when the package is in the user
     site directory (``pip install --user``) — see ``_prefix``: not when it, or the file, may be written by others;
  5. the system (``libnativeauth.so.1`` through the dynamic linker, e.g. after ``make install`` and ``ldconfig``,
     or with ``LD_LIBRARY_PATH``);
  6. only when all of those failed: the ``libdir`` that ``pkg-config --variable=libdir nativeauth`` names (when
     pkg-config is installed; run without a shell, for at most a few seconds), with the same rule as 4.
When nothing loads, one ImportError lists every place that was tried and why, and what to set.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import pathlib
import shutil
import subprocess
from typing import List, Optional

from . import _prefix

ABI_VERSION = 1
SONAME = "libnativeauth.so.1"


def _source_tree(package: pathlib.Path) -> Optional[pathlib.Path]:
    """The repository root when ``package`` (this package's resolved directory) is the source tree's own
    ``<root>/bindings/python/src/nativeauth`` and ``<root>/Package.swift`` exists; None otherwise (no walking up)."""
    if package.parts[-4:] != ("bindings", "python", "src", "nativeauth") or len(package.parts) < 5:
        return None
    root = package.parents[3]
    return root if (root / "Package.swift").is_file() else None


def _here() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent


def _prefix_libraries(here: pathlib.Path) -> List[str]:
    """``<prefix>/lib/libnativeauth.so.1`` of each prefix the package is installed under (4. above)."""
    return [str(prefix / "lib" / SONAME) for prefix in _prefix.install_prefixes(here)]


def _candidates() -> list[str]:
    """Where to look, in order (1. to 5.; 6. only when these failed): see the module's docstring."""
    out: list[str] = []
    env = os.environ.get("NATIVEAUTH_LIBRARY")
    if env:
        return [env]
    here = _here()
    out += [str(here / "libnativeauth.so"), str(here / SONAME)]
    root = _source_tree(here)
    if root is not None:
        out.append(str(root / ".build" / "release" / "libnativeauth.so"))
    out += _prefix_libraries(here)
    out.append(SONAME)
    found = ctypes.util.find_library("nativeauth")
    if found:
        out.append(found)
    return out


def _pkg_config_library() -> Optional[str]:
    """``<libdir>/libnativeauth.so.1`` for the libdir pkg-config names (6. above), or None: no pkg-config, no
    nativeauth.pc, no answer within a few seconds, or not an absolute path."""
    tool = shutil.which("pkg-config")
    if tool is None:
        return None
    try:
        r = subprocess.run([tool, "--variable=libdir", "nativeauth"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return None
    libdir = r.stdout.strip()
    if r.returncode != 0 or not libdir.startswith("/") or "\n" in libdir:
        return None
    return os.path.join(libdir, SONAME)


def _open(path: str, tried: List[str]) -> Optional[ctypes.CDLL]:
    """The library at ``path`` when it loads and has this package's ABI version; else None, saying why in ``tried``."""
    if os.sep in path and not os.path.exists(path):
        tried.append(f"{path}: not found")
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        tried.append(f"{path}: {e}")
        return None
    try:
        abi = lib.na_abi_version
    except AttributeError:
        tried.append(f"{path}: not libnativeauth (no na_abi_version)")
        return None
    abi.restype = ctypes.c_int
    abi.argtypes = []
    version = abi()
    if version != ABI_VERSION:
        tried.append(f"{path}: ABI version {version}, this package needs {ABI_VERSION}")
        return None
    return lib


def _checked_open(path: str, tried: List[str]) -> Optional[ctypes.CDLL]:
    """``_open`` for a file under a prefix (4. and 6.): not when it, or its directory, may be written by others."""
    if os.path.exists(path):
        why = _prefix.refusal(pathlib.Path(path), _here())
        if why is not None:
            tried.append(f"{path}: not used: {why}")
            return None
    return _open(path, tried)


HOW_TO = ("Set NATIVEAUTH_LIBRARY=/path/to/libnativeauth.so.1 (in the source tree after `make`: "
          "$PWD/.build/release/libnativeauth.so), or add the library's directory to LD_LIBRARY_PATH, or install the "
          "library: the nativeauth wheel (`make wheel`) carries it, so does the libnativeauth1 package, or `make "
          "install PREFIX=<prefix>` into the prefix this package is installed under (a virtual environment's "
          "sys.prefix, or ~/.local for `pip install --user`).")


def load() -> ctypes.CDLL:
    """The first candidate that loads and has this package's ABI version; ImportError listing them all otherwise."""
    tried: list[str] = []
    checked = set(_prefix_libraries(_here())) if not os.environ.get("NATIVEAUTH_LIBRARY") else set()
    for path in _candidates():
        lib = _checked_open(path, tried) if path in checked else _open(path, tried)
        if lib is not None:
            return lib
    if os.environ.get("NATIVEAUTH_LIBRARY"):
        raise ImportError("nativeauth: cannot load the library NATIVEAUTH_LIBRARY names (unset it to search the usual "
                          "places): " + "; ".join(tried))
    named = _pkg_config_library()
    if named is not None:
        lib = _checked_open(named, tried)
        if lib is not None:
            return lib
    else:
        tried.append("pkg-config --variable=libdir nativeauth: no answer")
    raise ImportError("nativeauth: cannot load libnativeauth.so.1. " + HOW_TO + " Tried:\n  " + "\n  ".join(tried))
