"""The ``nativeauth`` and ``docker-credential-nativeauth`` console scripts and ``python -m nativeauth``: they run the
native ``nativeauth`` executable (exec: the process becomes it; there is no second implementation in Python).

The executable is found, in order: ``$NATIVEAUTH_CLI``; ``nativeauth/bin/nativeauth`` inside the installed package
(the wheel carries it beside the library); a ``nativeauth`` executable on the PATH that is a native program (an ELF
file — never a script, so this console script never finds and runs itself). This module is outside the ``nativeauth``
package so that running the command does not load the library into Python first.
"""
import importlib.util
import os
import sys
from typing import List, NoReturn, Optional

ELF = b"\x7fELF"


def _is_native(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF and os.access(path, os.X_OK)
    except OSError:
        return False


def find() -> Optional[str]:
    """The native executable this command runs, or None."""
    configured = os.environ.get("NATIVEAUTH_CLI")
    if configured:
        return configured if _is_native(configured) else None
    spec = importlib.util.find_spec("nativeauth")  # (finds the package without importing it)
    for location in (spec.submodule_search_locations or []) if spec else []:
        inside = os.path.join(location, "bin", "nativeauth")
        if _is_native(inside):
            return inside
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", "nativeauth")
        if _is_native(candidate):
            return candidate
    return None


def _run(name: str, args: List[str]) -> NoReturn:
    path = find()
    if path is None:
        sys.stderr.write(f"{name}: the native nativeauth executable is not installed (install the nativeauth wheel, "
                         "or `make install` the library and command, or set NATIVEAUTH_CLI to it)\n")
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
