"""Terminal plumbing of the ``nativeauth`` command line: exit codes, error lines and documents, prompts, waiting for
a browser or device-code sign-in with a spinner (only when stderr is a terminal), and the one place that makes text
from outside safe to print (:func:`terminal_safe`, :func:`terminal_json`).

Anything the command line prints that it did not write itself — from a server, a redirect, an ID token, the token
cache, the library's messages and log lines — may carry terminal controls: a hostile provider could erase lines,
fake "signed in", set the window title or write the clipboard (OSC 52). Every print path goes through those two
functions; only ``call``'s response body (the user's explicit output) is printed as it came.
"""
from __future__ import annotations

import getpass
import itertools
import json
import os
import re
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, TextIO, TypeVar

from . import errors

__all__ = ["EXIT_OK", "EXIT_ERROR", "EXIT_USAGE", "EXIT_SIGN_IN", "EXIT_NETWORK", "EXIT_SERVER", "EXIT_REFUSED",
           "EXIT_STORAGE", "EXIT_INTERRUPTED", "CliError", "Interrupted", "exit_code_for", "error_from_library",
           "report_error", "prompt_line", "prompt_secret", "wait_for", "terminal_safe", "terminal_lines",
           "terminal_json"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_SIGN_IN = 3
EXIT_NETWORK = 4
EXIT_SERVER = 5
EXIT_REFUSED = 6
EXIT_STORAGE = 7
EXIT_INTERRUPTED = 130

# The library's error codes (docs/errors.md) → exit codes; codes not listed fall back on their status family.
_EXIT_BY_CODE: Dict[str, int] = {
    "invalid_argument": EXIT_USAGE, "not_supported": EXIT_USAGE, "invalid_scope": EXIT_USAGE,
    "invalid_client": EXIT_USAGE,
    "no_account": EXIT_SIGN_IN, "account_required": EXIT_SIGN_IN, "interaction_required": EXIT_SIGN_IN,
    "browser_required": EXIT_SIGN_IN, "refresh_token_expired": EXIT_SIGN_IN,
    "password_change_required": EXIT_SIGN_IN, "browser_unavailable": EXIT_SIGN_IN,
    "network": EXIT_NETWORK, "timeout": EXIT_NETWORK, "tls": EXIT_NETWORK,
    "server": EXIT_SERVER, "throttled": EXIT_SERVER, "declined_scopes": EXIT_SERVER,
    "id_token_invalid": EXIT_SERVER, "password_reset_failed": EXIT_SERVER, "http_error": EXIT_SERVER,
    "invalid_username": EXIT_REFUSED, "user_not_found": EXIT_REFUSED, "invalid_credentials": EXIT_REFUSED,
    "invalid_code": EXIT_REFUSED, "invalid_password": EXIT_REFUSED, "user_already_exists": EXIT_REFUSED,
    "attributes_invalid": EXIT_REFUSED, "user_has_no_password": EXIT_REFUSED, "invalid_contact": EXIT_REFUSED,
    "contact_blocked": EXIT_REFUSED, "auth_method_blocked": EXIT_REFUSED, "access_denied": EXIT_REFUSED,
    "cache_unreadable": EXIT_STORAGE, "cache_write_failed": EXIT_STORAGE, "cache_insecure": EXIT_STORAGE,
    "cache_key_invalid": EXIT_STORAGE,
}
# NA_* status → exit code, for codes newer than this table.
_EXIT_BY_STATUS: Dict[int, int] = {-1: EXIT_USAGE, -2: EXIT_REFUSED, -3: EXIT_SIGN_IN, -4: EXIT_SIGN_IN,
                                   -5: EXIT_NETWORK, -6: EXIT_SERVER, -10: EXIT_STORAGE}

_HINTS: Dict[str, str] = {
    "no_account": "run `nativeauth login`",
    "interaction_required": "run `nativeauth login`",
    "refresh_token_expired": "run `nativeauth login`",
    "password_change_required": "change the password, then run `nativeauth login`",
    "browser_required": "run `nativeauth login --browser`",
    "account_required": "choose one with --account (see `nativeauth accounts`)",
}


# -- text from outside, made safe for a terminal -----------------------------------------------------------------

# What never reaches the terminal raw: C0 controls (ESC, CR, BEL, a newline inside a value, …), DEL, C1 controls
# (U+0080–U+009F: CSI, OSC, … for terminals that read them), the bidirectional controls (U+061C, U+200E, U+200F,
# U+202A–U+202E, U+2066–U+2069), the line and paragraph separators (U+2028, U+2029), and lone surrogates (which
# cannot be written as UTF-8).
_ABOVE_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_TEXT = re.compile(f"[\\x00-\\x1f{_ABOVE_C0}]")
_UNSAFE_IN_JSON = re.compile(f"[{_ABOVE_C0}]")  # json.dumps escapes C0 itself (and writes no other raw C0)


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(value: object) -> str:
    """``str(value)`` with each unsafe character (see above) as a visible escape: ``\\x1b``, ``\\x0a``,
    ``\\x85``, ``\\u202e``. Whatever it returns is one line of printable text, and applying it again changes
    nothing. A backslash is left as it is (so ``\\x1b`` in the text itself looks the same: harmless)."""
    return _UNSAFE_TEXT.sub(_escape, str(value))


def terminal_lines(text: str) -> str:
    """:func:`terminal_safe` for each line of ``text`` (a message of the command line's own, with values from outside
    already made safe): its own newlines stay, nothing else unsafe gets through."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def terminal_json(document: Any, indent: Optional[int] = None) -> str:
    """``json.dumps(document, ensure_ascii=False)`` whose text is safe for a terminal: JSON escapes C0 controls; DEL,
    C1, bidirectional controls, separators and lone surrogates are written as ``\\u0085``-style escapes too. The
    result is valid JSON with the same value (``json.loads`` gives ``document`` back)."""
    text = json.dumps(document, ensure_ascii=False, indent=indent)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class CliError(Exception):
    """An error to report: ``code`` (the library's error code, or one of the command line's own: usage,
    http_error, unsupported_step, emulator_not_found, …), ``message``, the exit code, and extra members for the
    ``--json`` error document."""

    def __init__(self, code: str, message: str, exit_code: int = EXIT_ERROR,
                 details: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.details: Dict[str, Any] = dict(details or {})


class Interrupted(Exception):
    """Ctrl-C while waiting for a sign-in; the wait was cancelled when it could be."""


def exit_code_for(code: str, status: int = 0) -> int:
    if code in _EXIT_BY_CODE:
        return _EXIT_BY_CODE[code]
    return _EXIT_BY_STATUS.get(status, EXIT_ERROR)


def error_from_library(e: errors.NativeAuthError) -> CliError:
    """The CliError for a library exception. Its details never include the flow handle; the library's messages and
    details carry no secrets."""
    details: Dict[str, Any] = {k: v for k, v in e.details.items() if k != "flow"}
    if e.server is not None:
        details["server"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(e.server).items()
                             if v is not None and v != ()}
    return CliError(e.code, e.message, exit_code_for(e.code, e.status), details)


def report_error(err: CliError, *, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    """One line on stderr, ``nativeauth: <code>: <message>`` (with a hint for sign-in errors); with ``--json`` also
    ``{"error": {"code", "message", …}}`` on stdout. Both safe for a terminal (:func:`terminal_safe`,
    :func:`terminal_json`). Returns the exit code."""
    hint = _HINTS.get(err.code)
    stderr.write(f"nativeauth: {terminal_safe(err.code)}: {terminal_safe(err.message)}"
                 f"{f' ({hint})' if hint else ''}\n")
    stderr.flush()
    if as_json:
        document = {"error": {"code": err.code, "message": err.message, **err.details}, "exit_code": err.exit_code}
        stdout.write(terminal_json(document) + "\n")
        stdout.flush()
    return err.exit_code


# -- prompts ------------------------------------------------------------------------------------------------------


def prompt_line(label: str) -> str:
    """Reads a visible line (a username, a contact) from stdin; the prompt goes to stderr (made safe)."""
    sys.stderr.write(terminal_safe(label))
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise CliError("usage", f"no input for {label.strip().rstrip(':')!r} (stdin is closed)", EXIT_USAGE)
    return line.rstrip("\r\n").strip()


def prompt_secret(label: str) -> str:
    """Reads a secret without echo (getpass: the terminal, /dev/tty, when there is one); the prompt is made safe."""
    try:
        return getpass.getpass(terminal_safe(label), stream=sys.stderr)
    except EOFError:
        raise CliError("usage", f"no input for {label.strip().rstrip(':')!r}", EXIT_USAGE) from None


# -- waiting with a spinner ---------------------------------------------------------------------------------------

T = TypeVar("T")


class _Spinner:
    """A progress line on stderr, redrawn in place; only used when stderr is a terminal."""

    FRAMES = "|/-\\"

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label = terminal_safe(label)
        self.stream = stream
        self.frames = itertools.cycle(self.FRAMES)
        self.started = time.monotonic()

    def tick(self) -> None:
        elapsed = int(time.monotonic() - self.started)
        self.stream.write(f"\r{next(self.frames)} {self.label} ({elapsed} s, Ctrl-C to stop)\x1b[K")
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r\x1b[K")
        self.stream.flush()


def wait_for(work: Callable[[], T], label: str, cancel: Optional[Callable[[], None]] = None) -> T:
    """Runs ``work`` (a blocking library call) on a worker thread while this thread shows a spinner and stays
    responsive to Ctrl-C. On Ctrl-C ``cancel`` (when given) cancels the flow, and Interrupted is raised."""
    results: List[T] = []
    failures: List[BaseException] = []

    def run() -> None:
        try:
            results.append(work())
        except BaseException as e:  # noqa: B902 — handed to the waiting thread
            failures.append(e)

    worker = threading.Thread(target=run, name="nativeauth-wait", daemon=True)
    worker.start()
    spinner = _Spinner(label, sys.stderr) if _isatty(sys.stderr) else None
    try:
        while worker.is_alive():
            if spinner is not None:
                spinner.tick()
            worker.join(0.1)
    except KeyboardInterrupt:
        if cancel is not None:
            try:
                cancel()
            except Exception:  # the flow may be finished already
                pass
        raise Interrupted() from None
    finally:
        if spinner is not None:
            spinner.clear()
    if failures:
        raise failures[0]
    return results[0]


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False
