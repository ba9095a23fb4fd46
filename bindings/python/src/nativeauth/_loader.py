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
  4. the system (``libnativeauth.so.1`` through the dynamic linker, e.g. after ``make install``).
When nothing loads, one ImportError lists every place that was tried and why.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import pathlib
from typing import Optional

ABI_VERSION = 1


def _source_tree(package: pathlib.Path) -> Optional[pathlib.Path]:
    """The repository root when ``package`` (this package's resolved directory) is the source tree's own
    ``<root>/bindings/python/src/nativeauth`` and ``<root>/Package.swift`` exists; None otherwise (no walking up)."""
    if package.parts[-4:] != ("bindings", "python", "src", "nativeauth") or len(package.parts) < 5:
        return None
    root = package.parents[3]
    return root if (root / "Package.swift").is_file() else None


def _candidates() -> list[str]:
    """Where to look, in order: see the module's docstring."""
    out: list[str] = []
    env = os.environ.get("NATIVEAUTH_LIBRARY")
    if env:
        return [env]
    here = pathlib.Path(__file__).resolve().parent
    out += [str(here / "libnativeauth.so"), str(here / "libnativeauth.so.1")]
    root = _source_tree(here)
    if root is not None:
        out.append(str(root / ".build" / "release" / "libnativeauth.so"))
    out.append("libnativeauth.so.1")
    found = ctypes.util.find_library("nativeauth")
    if found:
        out.append(found)
    return out


def load() -> ctypes.CDLL:
    """The first candidate that loads and has this package's ABI version; ImportError listing them all otherwise."""
    tried: list[str] = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path}: not found")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
            continue
        try:
            abi = lib.na_abi_version
        except AttributeError:
            tried.append(f"{path}: not libnativeauth (no na_abi_version)")
            continue
        abi.restype = ctypes.c_int
        abi.argtypes = []
        version = abi()
        if version != ABI_VERSION:
            tried.append(f"{path}: ABI version {version}, this package needs {ABI_VERSION}")
            continue
        return lib
    if os.environ.get("NATIVEAUTH_LIBRARY"):
        raise ImportError("nativeauth: cannot load the library NATIVEAUTH_LIBRARY names (unset it to search the usual "
                          "places): " + "; ".join(tried))
    raise ImportError(
        "nativeauth: cannot load libnativeauth.so. Set NATIVEAUTH_LIBRARY to its path (e.g. the source tree's "
        ".build/release/libnativeauth.so after `make`), or `make install` it. Tried:\n  " + "\n  ".join(tried)
    )
