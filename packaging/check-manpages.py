#!/usr/bin/env python3
"""The manual pages and completion scripts list exactly the options the programs take (make packages runs it).

    check-manpages.py NATIVEAUTH NATIVEAUTH_EMULATOR DEB_DIR

For every command of `nativeauth --experimental-dump-help`: each option and flag is in its manual page (its own
nativeauth-<command>.1, or nativeauth.1 for what that page folds in) and in the bash, zsh and fish completion
scripts; and no page names an option the command does not take. For the emulator: the options of
`nativeauth-emulator --help` against nativeauth-emulator.1, both ways. Pages and scripts are read from the built
packages, as they will be installed.
"""
from __future__ import annotations

import gzip
import json
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile

OPTION = re.compile(r"\\-\\-([a-z][a-z0-9]*(?:\\-[a-z0-9]+)*)")
# Commands described in nativeauth.1 instead of a page of their own (manpages.py, FOLDED).
FOLDED = {"emulator"}


def unpack(deb: pathlib.Path, into: pathlib.Path) -> None:
    """The data of a .deb (dpkg-deb -x)."""
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)


def page_options(page: pathlib.Path) -> set[str]:
    """The options a page documents: those named in the headings of its .TP entries (not its prose)."""
    lines = gzip.decompress(page.read_bytes()).decode().split("\n")
    headings = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith(".TP")]
    return {name.replace("\\-", "-") for heading in headings for name in OPTION.findall(heading)}


def command_options(cmd: dict) -> set[str]:
    names = set()
    for arg in cmd.get("arguments", []):
        if not arg.get("shouldDisplay", True):
            continue
        names |= {n["name"] for n in arg.get("names", []) if n["kind"] == "long"}
    return names


def main() -> int:
    cli, emulator, debs = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for deb in debs.glob("nativeauth*_*.deb"):
            unpack(deb, root)
        man = root / "usr/share/man/man1"
        scripts = {
            "bash": (root / "usr/share/bash-completion/completions/nativeauth").read_text(),
            "zsh": (root / "usr/share/zsh/vendor-completions/_nativeauth").read_text(),
            "fish": (root / "usr/share/fish/vendor_completions.d/nativeauth.fish").read_text(),
        }
        dump = json.loads(subprocess.run([cli, "--experimental-dump-help"], check=True, capture_output=True,
                                         text=True).stdout)["command"]
        main_page = page_options(man / "nativeauth.1.gz")
        documented_anywhere = set(main_page)
        for sub in dump.get("subcommands", []):
            name = sub["commandName"]
            if name == "help" or not sub.get("shouldDisplay", True):
                continue
            own = man / f"nativeauth-{name}.1.gz"
            if name in FOLDED:
                own = man / "nativeauth.1.gz"
            listed = page_options(own)
            documented_anywhere |= listed
            wanted = command_options(sub)
            for missing in sorted(wanted - listed):
                problems.append(f"nativeauth {name} --{missing}: not in {own.name}")
            if name not in FOLDED:
                for extra in sorted(listed - wanted):
                    problems.append(f"{own.name} names --{extra}, which nativeauth {name} does not take")
            for shell, script in scripts.items():
                if name not in script:
                    problems.append(f"the {shell} completion does not know the command {name}")
                for option in sorted(wanted):
                    if f"--{option}" not in script and f"-l {option}" not in script and f"-l '{option}'" not in script:
                        problems.append(f"the {shell} completion does not know nativeauth {name} --{option}")
        emulator_help = subprocess.run([emulator, "--help"], capture_output=True, text=True)
        help_options = set(re.findall(r"--([a-z][a-z0-9-]*)", emulator_help.stdout + emulator_help.stderr))
        emulator_page = page_options(man / "nativeauth-emulator.1.gz")
        for missing in sorted(help_options - emulator_page):
            problems.append(f"nativeauth-emulator --{missing}: not in nativeauth-emulator.1")
        for extra in sorted(emulator_page - help_options):
            problems.append(f"nativeauth-emulator.1 names --{extra}, which nativeauth-emulator --help does not")
    for p in problems:
        print("check-manpages:", p)
    if not problems:
        print(f"check-manpages: every option of nativeauth's {len(dump['subcommands']) - 1} commands and of "
              "nativeauth-emulator is in their manual pages and the bash, zsh and fish completions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
