"""Finds and loads libnativeauth.so.

Search order (the first that loads wins):
  1. the ``NATIVEAUTH_LIBRARY`` environment variable (a path to the .so) — when it is set, only that one: a library
     that was asked for by name and does not load is an ImportError, never silently replaced by another;
  2. next to this package (a wheel or ``pip install`` may bundle ``libnativeauth.so``);
  3. the source tree this package sits in (``.build/release/libnativeauth.so`` of a ``make`` build);
  4. the system (``libnativeauth.so.1`` through the dynamic linker, e.g. after ``make install``).
When nothing loads, one ImportError lists every place that was tried and why.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import pathlib

ABI_VERSION = 1


def _candidates() -> list[str]:
    out: list[str] = []
    env = os.environ.get("NATIVEAUTH_LIBRARY")
    if env:
        return [env]
    here = pathlib.Path(__file__).resolve().parent
    out += [str(here / "libnativeauth.so"), str(here / "libnativeauth.so.1")]
    for parent in here.parents:
        build = parent / ".build" / "release" / "libnativeauth.so"
        if (parent / "Package.swift").exists():
            out.append(str(build))
            break
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
        "nativeauth: cannot load libnativeauth.so. Set NATIVEAUTH_LIBRARY to its path, run `make` in the source tree, "
        "or `make install` it. Tried:\n  " + "\n  ".join(tried)
    )
