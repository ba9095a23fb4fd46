"""The ``nativeauth`` and ``docker-credential-nativeauth`` console scripts and ``python -m nativeauth``: they run the
native ``nativeauth`` executable (exec: the process becomes it; there is no second implementation in Python).

The executable is found, in order: ``$NATIVEAUTH_CLI``; ``nativeauth/bin/nativeauth`` inside the installed package
(the wheel carries it beside the library); ``<prefix>/bin/nativeauth`` of the prefix the package is installed under
(``make install PREFIX=<prefix>`` beside a pure ``pip install``: the prefixes and the rule of
``nativeauth/_prefix.py``); a ``nativeauth`` executable on the PATH. Each must be a native program (an ELF file —
never a script, so this console script never finds and runs itself). This module is outside the ``nativeauth``
package so that running the command does not load the library into Python first.
"""
import importlib.util
import os
import pathlib
import sys
from types import ModuleType
from typing import List, NoReturn, Optional

ELF = b"\x7fELF"


def _is_native(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF and os.access(path, os.X_OK)
    except OSError:
        return False


def _prefix_module(location: str) -> Optional[ModuleType]:
    """``nativeauth/_prefix.py`` of the package at ``location``, loaded by its path (not through the package, whose
    ``__init__`` loads the library)."""
    try:
        spec = importlib.util.spec_from_file_location("_nativeauth_prefix", os.path.join(location, "_prefix.py"))
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError, SyntaxError):
        return None


def _in_prefix(location: str) -> Optional[str]:
    """``<prefix>/bin/nativeauth`` of the prefix the package at ``location`` is installed under, when it is a native
    executable that others may not have written (``_prefix.refusal``)."""
    helpers = _prefix_module(location)
    if helpers is None:
        return None
    package = pathlib.Path(location).resolve()
    for prefix in helpers.install_prefixes(package):
        candidate = prefix / "bin" / "nativeauth"
        if _is_native(str(candidate)) and helpers.refusal(candidate, package) is None:
            return str(candidate)
    return None


def find() -> Optional[str]:
    """The native executable this command runs, or None."""
    configured = os.environ.get("NATIVEAUTH_CLI")
    if configured:
        return configured if _is_native(configured) else None
    spec = importlib.util.find_spec("nativeauth")  # (finds the package without importing it)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        inside = os.path.join(location, "bin", "nativeauth")
        if _is_native(inside):
            return inside
    for location in locations:
        installed = _in_prefix(location)
        if installed is not None:
            return installed
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", "nativeauth")
        if _is_native(candidate):
            return candidate
    return None


def _run(name: str, args: List[str]) -> NoReturn:
    path = find()
    if path is None:
        sys.stderr.write(f"{name}: the native nativeauth executable is not installed: install the nativeauth wheel, "
                         "or the nativeauth package, or `make install PREFIX=<prefix>` into the prefix this package "
                         "is installed under (or onto the PATH), or set NATIVEAUTH_CLI=/path/to/nativeauth\n")
        sys.exit(127)
    sys.stdout.flush()
    sys.stderr.flush()
    # argv[0] picks the protocol: "docker-credential-nativeauth" speaks Docker's credential-helper protocol.
    os.execv(path, [name] + args)


def main() -> NoReturn:
    """``nativeauth …``"""
    _run("nativeauth", sys.argv[1:])


def docker() -> NoReturn:
    """``docker-credential-nativeauth get|store|erase|list``"""
    _run("docker-credential-nativeauth", sys.argv[1:])


if __name__ == "__main__":
    main()
