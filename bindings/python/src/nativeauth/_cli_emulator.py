"""``nativeauth emulator``: runs the local emulator of Entra External ID (``nativeauth-emulator``, built with
``swift build --product nativeauth-emulator``) and shows what a client needs to use it.

In the foreground it runs until Ctrl-C or SIGTERM, which stop the emulator cleanly. With ``--print-env`` it starts
the emulator in the background (its own session, so the terminal's Ctrl-C does not reach it), prints ``export``
lines for ``eval`` and returns; ``kill $NATIVEAUTH_EMULATOR_PID`` stops it.

What it prints of the emulator's ready document (whose users and APIs come from ``--tenant-config``) goes through
``terminal_safe`` / ``terminal_json`` like the rest of the command line's output.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from types import FrameType
from typing import IO, Any, Dict, List, Mapping, Optional, TextIO

from ._cli_ui import EXIT_ERROR, EXIT_OK, CliError, terminal_json, terminal_safe

__all__ = ["find_emulator", "run_emulator"]


def find_emulator(environ: Mapping[str, str]) -> str:
    """``$NATIVEAUTH_EMULATOR``, else ``nativeauth-emulator`` on the PATH."""
    configured = environ.get("NATIVEAUTH_EMULATOR")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise CliError("emulator_not_found", f"NATIVEAUTH_EMULATOR={configured} is not an executable file")
        return configured
    found = shutil.which("nativeauth-emulator", path=environ.get("PATH"))
    if found is None:
        raise CliError("emulator_not_found", "no emulator: set NATIVEAUTH_EMULATOR to the nativeauth-emulator "
                                             "executable or put it on the PATH (in the source tree: `make emulator` "
                                             "builds .build/debug/nativeauth-emulator)")
    return found


def _start(binary: str, args: argparse.Namespace, detach: bool, verbose: bool,
           log: IO[bytes]) -> "tuple[subprocess.Popen[bytes], Dict[str, Any]]":
    argv: List[str] = [binary, "--port", str(args.port)]
    if args.tenant_config:
        argv += ["--config", args.tenant_config]
    if args.tls:
        argv.append("--tls")
    if not verbose:
        argv.append("--quiet")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,  # noqa: S603
                                stderr=None if verbose and not detach else log, start_new_session=detach)
    except OSError as e:
        raise CliError("emulator_failed", f"cannot run {binary}: {e.strerror or e}") from None
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the emulator's ready line (one JSON document) once it listens
    proc.stdout.close()
    if not line:
        proc.wait()
        log.seek(0)
        reason = log.read().decode("utf-8", "replace").strip().splitlines()
        raise CliError("emulator_failed", f"the emulator exited ({proc.returncode})"
                                          + (f": {reason[-1]}" if reason else ""))
    try:
        ready: Dict[str, Any] = json.loads(line)
    except ValueError:
        proc.terminate()
        raise CliError("emulator_failed", "the emulator's ready line is not JSON") from None
    return proc, ready


def _environment(ready: Mapping[str, Any]) -> Dict[str, str]:
    t = terminal_safe  # values that never hold a control character; escaped rather than printed raw if one did
    env = {"NATIVEAUTH_AUTHORITY": t(ready["authority"]), "NATIVEAUTH_CLIENT_ID": t(ready["client_id"]),
           "NATIVEAUTH_EMULATOR_URL": t(ready["base_url"]),
           "NATIVEAUTH_EMULATOR_CONTROL_TOKEN": t(ready["control_token"]),
           "NATIVEAUTH_EMULATOR_PID": t(ready["pid"])}
    if ready.get("ca_file"):
        env["NATIVEAUTH_CA_BUNDLE"] = t(ready["ca_file"])
    return env


def _describe(ready: Mapping[str, Any]) -> List[str]:
    """What the emulator offers: its APIs and demo users (the users' passwords are the demo tenant's, printed so
    the reader can sign in with them)."""
    t = terminal_safe
    lines: List[str] = []
    for api in ready.get("apis", ()):
        lines.append(f"API {t(api.get('name'))}: {t(api.get('url'))}  scopes: {t(' '.join(api.get('scopes', ())))}")
    for user in ready.get("users", ()):
        extra = f"  password: {t(user['password'])}" if user.get("password") else "  (email code)"
        lines.append(f"user {t(user.get('email'))} ({t(user.get('kind'))}){extra}")
    lines.append(f"controls: {t(ready.get('controls'))} (header X-Emulator-Token: {t(ready.get('control_token'))})")
    return lines


def run_emulator(args: argparse.Namespace, environ: Mapping[str, str], stdout: TextIO, stderr: TextIO) -> int:
    binary = find_emulator(environ)
    verbose = bool(getattr(args, "verbose", False))
    as_json = bool(getattr(args, "json", False))
    with tempfile.TemporaryFile() as log:
        proc, ready = _start(binary, args, detach=args.print_env, verbose=verbose, log=log)
        if args.print_env:
            if as_json:
                stdout.write(terminal_json(ready) + "\n")
            else:
                for name, value in _environment(ready).items():
                    stdout.write(f"export {name}={shlex.quote(value)}\n")
                stdout.write("# stop it with: kill $NATIVEAUTH_EMULATOR_PID\n")
                stdout.writelines(f"# {line}\n" for line in _describe(ready))
            stdout.flush()
            pid = terminal_safe(ready["pid"])
            stderr.write(f"nativeauth: the emulator runs in the background at {terminal_safe(ready['base_url'])} "
                         f"(pid {pid}); stop it with kill {pid}\n")
            stderr.flush()
            proc.returncode = 0  # it outlives this process on purpose (no "still running" warning)
            return EXIT_OK
        return _foreground(proc, ready, as_json, stdout, stderr)


def _foreground(proc: "subprocess.Popen[bytes]", ready: Mapping[str, Any], as_json: bool, stdout: TextIO,
                stderr: TextIO) -> int:
    stopping: List[int] = []

    def stop(signum: int, _frame: Optional[FrameType]) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if as_json:
            stdout.write(terminal_json(ready) + "\n")
        else:
            authority, client_id = terminal_safe(ready["authority"]), terminal_safe(ready["client_id"])
            stdout.write(f"NativeAuth emulator running (pid {terminal_safe(ready['pid'])}); Ctrl-C stops it.\n"
                         f"authority: {authority}\nclient id: {client_id}\n")
            stdout.writelines(line + "\n" for line in _describe(ready))
            stdout.write(f"\nexport NATIVEAUTH_AUTHORITY={shlex.quote(authority)} "
                         f"NATIVEAUTH_CLIENT_ID={shlex.quote(client_id)}\n")
        stdout.flush()
        while not stopping:
            try:
                proc.wait(timeout=0.25)
            except subprocess.TimeoutExpired:
                continue
            raise CliError("emulator_exited", f"the emulator exited by itself ({proc.returncode})", EXIT_ERROR)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stderr.write("nativeauth: the emulator stopped\n")
        stderr.flush()
        return EXIT_OK
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
