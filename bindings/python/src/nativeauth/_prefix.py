"""The installation prefix this package is installed under, and whether a file found there may be used.

A pure ``pip install ./bindings/python`` puts the package in ``<prefix>/lib/pythonX.Y/site-packages``; ``make install
PREFIX=<prefix>`` puts the library in ``<prefix>/lib`` and the command in ``<prefix>/bin``. The prefixes looked at:
``sys.prefix`` (a virtual environment's, or the system's) when the package is installed in one of its site
directories, and ``site.USER_BASE`` (``~/.local``; ``$PYTHONUSERBASE``) only when the package is installed in the user
site directory (``pip install --user``). Nothing else above the package is looked at.

Whoever may write ``<prefix>/lib`` may already replace the package itself (``<prefix>/lib/pythonX.Y`` is an entry of
that directory), so a library there is as trusted as the package — unless the directory is writable by others and
sticky (like ``/tmp``: others may add files but not replace the package). ``refusal`` says why a file is not used: it,
or its directory, is writable by others, or belongs to someone other than root, this user or the package's owner.

Standard library only, no import of the package: ``_nativeauth_command`` loads this file by its path (importing
``nativeauth`` would load the library first).
"""
from __future__ import annotations

import os
import pathlib
import site
import stat
import sys
from typing import List, Optional


def _resolved(path: str) -> Optional[pathlib.Path]:
    try:
        return pathlib.Path(path).resolve()
    except (OSError, RuntimeError):
        return None


def install_prefixes(package: pathlib.Path) -> List[pathlib.Path]:
    """The prefix ``package`` (this package's resolved directory) is installed under, as a list (empty when it is
    not in a site directory of ``sys.prefix`` nor in the user site directory)."""
    site_dir = package.parent
    out: List[pathlib.Path] = []
    user_site = _resolved(site.getusersitepackages()) if hasattr(site, "getusersitepackages") else None
    user_base = _resolved(site.getuserbase()) if hasattr(site, "getuserbase") else None
    if user_site is not None and user_base is not None and site_dir == user_site:
        out.append(user_base)
    system_sites = [_resolved(d) for d in site.getsitepackages()] if hasattr(site, "getsitepackages") else []
    prefix = _resolved(sys.prefix)
    if prefix is not None and site_dir in system_sites and site_dir.is_relative_to(prefix / "lib"):
        out.append(prefix)
    return out


def refusal(path: pathlib.Path, package: pathlib.Path) -> Optional[str]:
    """Why the file at ``path`` (found under the package's prefix) is not to be used, or None when it may be."""
    try:
        owner = package.stat().st_uid
        trusted = {0, os.geteuid(), owner}
        real = path.resolve()
        for item in (real, real.parent, path.parent):
            st = item.stat()
            if st.st_uid not in trusted:
                return f"{item} belongs to uid {st.st_uid}, not to root, this user or the package's owner"
            if st.st_mode & stat.S_IWOTH:
                return f"{item} may be written by anyone"
    except (OSError, RuntimeError) as e:
        return f"{path}: {e.strerror if isinstance(e, OSError) and e.strerror else e}"
    return None
