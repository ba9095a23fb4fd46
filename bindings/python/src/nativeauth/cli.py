"""The ``nativeauth`` command line: sign in, list accounts, print access tokens, call APIs, sign out, and run the local
emulator. ``nativeauth --help`` (and ``nativeauth COMMAND --help``) describe it; bindings/python/README.md too.

Run as ``nativeauth …`` (the console script) or ``python -m nativeauth …``; :func:`main` is the entry point.

Text that comes from outside — usernames, codes, addresses and messages from a server, a redirect, an ID token or the
token cache, the library's error messages and ``--verbose`` log lines — is printed with terminal controls (C0, DEL,
C1, bidirectional controls) as visible escapes (``\\x1b``, ``\\u202e``); ``--json`` output escapes them the JSON way
(``\\u0085``), the same value. Only ``call``'s response body is printed as it came.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO, Union

from . import errors
from ._cli_settings import ConfigError, Settings, default_cache_path, resolve
from ._cli_ui import (EXIT_INTERRUPTED, EXIT_NETWORK, EXIT_OK, EXIT_SERVER, EXIT_SIGN_IN, EXIT_STORAGE,
                      EXIT_USAGE, CliError, Interrupted, error_from_library, prompt_line, prompt_secret, report_error,
                      terminal_json, terminal_lines, terminal_safe, wait_for)
from .client import Client
from .states import (Account, BrowserPending, CodeRequired, DeviceCodeRequired, MfaRequired, PasswordRequired,
                     RegistrationRequired, SignedIn, State)

__all__ = ["main"]

EPILOG = """\
settings (first found wins): flags, then the environment (NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID,
NATIVEAUTH_AUTHORITY_TYPE, NATIVEAUTH_TENANT_SUBDOMAIN, NATIVEAUTH_REDIRECT_URI, NATIVEAUTH_CA_BUNDLE,
NATIVEAUTH_BROWSER_COMMAND, NATIVEAUTH_CACHE (0/1), NATIVEAUTH_CACHE_PATH, NATIVEAUTH_SCOPES, NATIVEAUTH_ACCOUNT,
NATIVEAUTH_PROFILE, NATIVEAUTH_CONFIG), then the profile of $XDG_CONFIG_HOME/nativeauth/config.toml
([profiles.NAME] tables; the profile "default" unless --profile, $NATIVEAUTH_PROFILE or default_profile names one).
Tokens are kept in $XDG_CACHE_HOME/nativeauth/token_cache.json (--cache-path, --no-cache), so `login` and `token`
may run in separate processes.

exit codes:
  0  success
  1  other error
  2  bad usage or settings (also the library's invalid_argument, not_supported, invalid_scope, invalid_client)
  3  sign-in needed: no_account, account_required, interaction_required, browser_required, refresh_token_expired, …
  4  network: network, timeout, tls
  5  server error (server, throttled, declined_scopes, …), or `call`: the API answered a non-2xx status
  6  authentication refused: invalid_credentials, invalid_code, user_not_found, access_denied, …
  7  token cache: cache_unreadable, cache_write_failed, cache_insecure, cache_key_invalid
130  interrupted (Ctrl-C)
Errors are one line on stderr, `nativeauth: <code>: <message>`; with --json also {"error": {"code": …, "message":
…}, "exit_code": N} on stdout.

example:  curl -H "Authorization: Bearer $(nativeauth token --scope api://…/ToDoList.Read)" https://api.example.com/
"""

# Settings flags: argparse destination → settings key.
_SETTING_FLAGS: Dict[str, str] = {
    "authority": "authority", "client_id": "client_id", "authority_type": "authority_type",
    "tenant_subdomain": "tenant_subdomain", "redirect_uri": "redirect_uri", "ca_bundle": "ca_bundle",
    "browser_command": "browser_command", "cache_path": "cache_path",
}


class _Parser(argparse.ArgumentParser):
    """argparse's parser with the error prefix of the other messages (still exit code 2)."""

    def error(self, message: str) -> Any:  # argparse declares NoReturn; Any keeps mypy happy on all versions
        self.print_usage(sys.stderr)
        sys.stderr.write(f"nativeauth: usage: {terminal_safe(message)}\n")
        raise SystemExit(EXIT_USAGE)


def _common_options(with_settings: bool) -> _Parser:
    """Options every command takes, before or after its name (defaults are SUPPRESS so that a subcommand's parser
    does not overwrite what was given before it)."""
    p = _Parser(add_help=False)
    s = argparse.SUPPRESS
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", default=s, help="print JSON documents (errors too) on stdout")
    g.add_argument("-v", "--verbose", action="store_true", default=s,
                   help="the library's log lines (no secrets) on stderr")
    if not with_settings:
        return p
    g = p.add_argument_group("settings (flags override the environment and the profile)")
    g.add_argument("--profile", metavar="NAME", default=s, help="profile of the configuration file")
    g.add_argument("--config", metavar="FILE", default=s,
                   help="configuration file (default $XDG_CONFIG_HOME/nativeauth/config.toml)")
    g.add_argument("--authority", metavar="URL", default=s,
                   help="e.g. https://contoso.ciamlogin.com/contoso.onmicrosoft.com")
    g.add_argument("--tenant-subdomain", metavar="NAME", default=s, help="contoso → its ciamlogin.com authority")
    g.add_argument("--client-id", metavar="ID", default=s, help="the app registration's client id")
    g.add_argument("--authority-type", choices=("ciam", "aad", "oidc"), default=s)
    g.add_argument("--redirect-uri", metavar="URI", default=s, help="for --browser (default http://localhost)")
    g.add_argument("--ca-bundle", metavar="FILE", default=s, help="CA certificates to verify the server with")
    g.add_argument("--browser-command", metavar="CMD", default=s,
                   help="opens the browser (the URL is appended, or replaces %%s); default $BROWSER, xdg-open")
    g.add_argument("--cache-path", metavar="FILE", default=s,
                   help="token cache file (default $XDG_CACHE_HOME/nativeauth/token_cache.json)")
    g.add_argument("--no-cache", action="store_true", default=s, help="keep tokens in memory only (this process)")
    return p


def build_parser() -> argparse.ArgumentParser:
    settings = _common_options(True)
    output = _common_options(False)
    parser = _Parser(prog="nativeauth", parents=[settings], epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Sign in to Microsoft Entra External ID (or any OpenID Connect provider) and use "
                                 "access tokens from the shell, over libnativeauth.")
    from . import __version__, library_version
    parser.add_argument("--version", action="version", version=f"nativeauth {__version__} (libnativeauth "
                                                                 f"{library_version})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help: str, parents: List[_Parser]) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=parents, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    p = command("login", "sign in: username and password or emailed code, --browser, or --device-code", [settings])
    how = p.add_mutually_exclusive_group()
    how.add_argument("--browser", action="store_true", help="sign in through the system browser")
    how.add_argument("--device-code", action="store_true", help="sign in on another device with a code")
    p.add_argument("-u", "--username", help="the username (email); prompted for when missing")
    p.add_argument("--password-stdin", action="store_true",
                   help="read the password from stdin (one line) instead of prompting")
    p.add_argument("--scope", "-s", action="append", dest="scopes", metavar="SCOPE",
                   help="scope to ask for at sign-in (repeatable; default: the profile's scopes)")
    p.add_argument("--login-hint", metavar="USER", help="--browser: pre-fill the username")
    p.add_argument("--prompt", choices=("select_account", "login", "consent", "none", "create"),
                   help="--browser: the prompt parameter")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="--browser / --device-code: give up after this long (default 300 / the code's lifetime)")

    p = command("accounts", "list the signed-in accounts", [settings])

    p = command("token", "print an access token (for curl -H \"Authorization: Bearer $(nativeauth token …)\")",
                [settings])
    p.add_argument("--scope", "-s", action="append", dest="scopes", metavar="SCOPE",
                   help="scope (repeatable; default: the profile's scopes, else the sign-in's)")
    p.add_argument("--account", metavar="ACCOUNT", help="username or home_account_id, when several are signed in")
    p.add_argument("--force-refresh", action="store_true", help="get a new token even if a cached one is valid")

    p = command("call", "call an API with the access token; prints the response body", [settings])
    p.add_argument("url", metavar="URL")
    p.add_argument("--scope", "-s", action="append", dest="scopes", metavar="SCOPE",
                   help="scope (repeatable; default: the profile's scopes)")
    p.add_argument("-X", "--request", dest="method", metavar="METHOD", help="HTTP method (default GET, POST with -d)")
    p.add_argument("-d", "--data", metavar="BODY", help="request body; @FILE reads a file, @- stdin. A JSON object "
                                                         "or array is sent as application/json unless -H sets it")
    p.add_argument("-H", "--header", action="append", dest="headers", metavar="'NAME: VALUE'", default=[],
                   help="request header (repeatable)")
    p.add_argument("--account", metavar="ACCOUNT", help="username or home_account_id, when several are signed in")
    p.add_argument("--force-refresh", action="store_true", help="get a new token even if a cached one is valid")

    p = command("logout", "sign out (forget the account's tokens)", [settings])
    p.add_argument("--account", metavar="ACCOUNT", help="the account to sign out, when several are signed in")
    p.add_argument("--all", action="store_true", help="sign every account out")
    p.add_argument("--browser", action="store_true", help="also end the provider's browser session")

    p = command("emulator", "run the local emulator of Entra External ID (for trying things out and tests)",
                [output])
    p.add_argument("--print-env", action="store_true",
                   help="start it in the background and print `export …` lines: "
                        "eval \"$(nativeauth emulator --print-env)\"; stop it with kill $NATIVEAUTH_EMULATOR_PID")
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    p.add_argument("--tenant-config", metavar="FILE", help="the emulator's JSON tenant configuration")
    p.add_argument("--tls", action="store_true", help="serve HTTPS with a freshly generated local CA")
    return parser


# -- running -------------------------------------------------------------------------------------------------------


class _Context:
    def __init__(self, args: argparse.Namespace, environ: Mapping[str, str], stdout: TextIO, stderr: TextIO) -> None:
        self.args = args
        self.environ = environ
        self.stdout = stdout
        self.stderr = stderr
        self.json: bool = bool(getattr(args, "json", False))
        self.verbose: bool = bool(getattr(args, "verbose", False))
        self._settings: Optional[Settings] = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            flags: Dict[str, Any] = {}
            for dest, key in _SETTING_FLAGS.items():
                if hasattr(self.args, dest):
                    flags[key] = getattr(self.args, dest)
            if getattr(self.args, "no_cache", False):
                flags["cache"] = False
            try:
                self._settings = resolve(flags, self.environ, config_file=getattr(self.args, "config", None),
                                         profile=getattr(self.args, "profile", None))
            except ConfigError as e:
                raise CliError("usage", str(e), EXIT_USAGE) from None
        return self._settings

    def out(self, text: str) -> None:
        """A line (or lines) of the command line's own on stdout; values from outside in it should be
        ``terminal_safe`` already (a newline inside one), and nothing else unsafe gets through."""
        self.out_body(terminal_lines(text))

    def out_body(self, text: str) -> None:
        """Text as it came: only for ``call``'s response body, the user's explicit output."""
        self.stdout.write(text if text.endswith("\n") else text + "\n")
        self.stdout.flush()

    def out_bytes(self, data: bytes) -> None:
        self.stdout.flush()
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:  # a text-only stream (tests): the bytes as Latin-1, one character each
            self.stdout.write(data.decode("latin-1"))
            self.stdout.flush()

    def info(self, text: str) -> None:
        """A message on stderr; like :meth:`out`, nothing unsafe for the terminal gets through."""
        self.stderr.write(terminal_lines(text) + "\n")
        self.stderr.flush()

    def emit_json(self, document: Any) -> None:
        self.out_body(terminal_json(document, indent=2))

    def scopes(self) -> Optional[List[str]]:
        given: Optional[List[str]] = getattr(self.args, "scopes", None)
        if given:
            return [s for scope in given for s in scope.replace(",", " ").split()]
        return list(self.settings.scopes) or None

    def account(self) -> Optional[str]:
        given: Optional[str] = getattr(self.args, "account", None)
        return given or self.settings.account

    def client(self) -> Client:
        s = self.settings
        if s.client_id is None:
            raise CliError("usage", "no client id: give --client-id, set NATIVEAUTH_CLIENT_ID, or set client_id in "
                                    f"the profile {s.profile!r} of the configuration file", EXIT_USAGE)
        if s.authority is None and s.tenant_subdomain is None:
            raise CliError("usage", "no authority: give --authority, set NATIVEAUTH_AUTHORITY, or set authority in "
                                    f"the profile {s.profile!r} of the configuration file", EXIT_USAGE)
        cache_path: Optional[str] = None
        if s.cache:
            cache_path = s.cache_path or str(default_cache_path(self.environ))
            _ensure_private_directory(os.path.dirname(cache_path))
        capabilities = s.capabilities
        if capabilities is None and s.authority_type != "oidc":
            capabilities = ["mfa_required", "registration_required"]  # the command line drives both
        log_handler: Optional[Callable[[int, str, Optional[str]], None]] = None
        if self.verbose:
            stderr = self.stderr

            def log_handler(level: int, message: str, correlation_id: Optional[str]) -> None:
                stderr.write(_log_line(level, message, correlation_id))
                stderr.flush()

        return Client(s.authority, s.client_id, tenant_subdomain=s.tenant_subdomain,
                      authority_type=s.authority_type, redirect_uri=s.redirect_uri,
                      post_logout_redirect_uri=s.post_logout_redirect_uri, ca_bundle=s.ca_bundle,
                      browser_command=s.browser_command, capabilities=capabilities,
                      challenge_types=s.challenge_types, connect_timeout_ms=s.connect_timeout_ms,
                      request_timeout_ms=s.request_timeout_ms, cache_path=cache_path,
                      cache_encryption_key=s.cache_encryption_key if cache_path else None,
                      log_level="verbose" if self.verbose else "off", log_handler=log_handler)


_LOG_LEVELS = {1: "error", 2: "warning", 3: "info", 4: "verbose"}


def _log_line(level: int, message: str, correlation_id: Optional[str]) -> str:
    """The stderr line ``--verbose`` prints for one of the library's log lines, made safe for the terminal."""
    suffix = f" [{terminal_safe(correlation_id)}]" if correlation_id else ""
    return f"nativeauth: log {_LOG_LEVELS.get(level, str(level))}: {terminal_safe(message)}{suffix}\n"


def _ensure_private_directory(path: str) -> None:
    """Creates the token cache's directory 0700 when missing (the library refuses a directory that others may
    write to; it does not loosen or fix an existing one)."""
    if not path or os.path.isdir(path):
        return
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # makedirs' mode is masked by the umask
    except OSError as e:
        raise CliError("cache_write_failed", f"cannot create the token cache directory {path}: "
                                             f"{e.strerror or e}", EXIT_STORAGE) from None


def _account_document(account: Account) -> Dict[str, Any]:
    return {"username": account.username, "home_account_id": account.home_account_id,
            "tenant_id": account.tenant_id, "environment": account.environment,
            "name": account.claims.get("name")}


# -- login ---------------------------------------------------------------------------------------------------------


def _login(ctx: _Context) -> int:
    args = ctx.args
    if args.password_stdin and (args.browser or args.device_code):
        raise CliError("usage", "--password-stdin is for the username/password sign-in", EXIT_USAGE)
    with ctx.client() as client:
        if args.browser:
            state = _login_browser(ctx, client)
        elif args.device_code:
            state = _login_device_code(ctx, client)
        else:
            state = _login_native(ctx, client)
    if ctx.json:
        ctx.emit_json({"status": "signed_in", "flow_type": state.flow_type,
                       "account": _account_document(state.account), "scopes": list(state.token.scopes),
                       "expires_on": state.token.expires_on})
    else:
        ctx.out(f"Signed in as {terminal_safe(state.account.username or state.account.home_account_id)}.")
    return EXIT_OK


def _login_native(ctx: _Context, client: Client) -> SignedIn:
    args = ctx.args
    username: Optional[str] = args.username
    if args.password_stdin and not username:
        raise CliError("usage", "--password-stdin needs --username", EXIT_USAGE)
    if not username:
        username = prompt_line("Username: ")
    interactive = not args.password_stdin
    state: State = client.sign_in(username, scopes=ctx.scopes())
    refusals, max_refusals = 0, (3 if interactive else 1)  # a mistyped password or code may be typed again
    while not isinstance(state, SignedIn):
        if isinstance(state, PasswordRequired):
            current_password = state
            password = _read_password() if args.password_stdin else prompt_secret("Password: ")
            state = _retry(lambda: current_password.submit_password(password), errors.InvalidCredentialsError,
                           refusals + 1 < max_refusals, ctx)
            refusals += state is current_password
        elif isinstance(state, CodeRequired):
            current_code = state
            if refusals == 0:
                where = f" to {terminal_safe(state.sent_to)}" if state.sent_to else ""
                ctx.info(f"A one-time code was sent{where}.")
            code = prompt_secret("Code: ")
            state = _retry(lambda: current_code.submit_code(code.strip()), errors.InvalidCodeError,
                           refusals + 1 < max_refusals, ctx)
            refusals += state is current_code
        elif isinstance(state, MfaRequired):
            method = state.methods[0] if state.methods else None
            if len(state.methods) > 1 and interactive:
                for n, m in enumerate(state.methods, 1):
                    label = terminal_safe(m.channel or m.challenge_type or "method")
                    ctx.info(f"  {n}. {label} {terminal_safe(m.login_hint or '')}".rstrip())
                choice = prompt_line(f"Second factor [1-{len(state.methods)}, default 1]: ") or "1"
                if not choice.isdigit() or not 1 <= int(choice) <= len(state.methods):
                    raise CliError("usage", f"no method {choice!r}", EXIT_USAGE)
                method = state.methods[int(choice) - 1]
            state = state.request_challenge(method)
        elif isinstance(state, RegistrationRequired):
            if not interactive:
                raise CliError("unsupported_step", "the account must register a strong-authentication method; "
                                                   "run `nativeauth login` in a terminal", EXIT_SIGN_IN)
            ctx.info("This account needs a verification method (an email address) for the second factor.")
            contact = prompt_line("Email address to verify: ")
            state = state.register_method(contact)
        else:
            raise CliError("unsupported_step", f"the sign-in needs a step the command line cannot drive "
                                               f"({type(state).__name__}); try `nativeauth login --browser`",
                           EXIT_SIGN_IN)
    return state


def _retry(submit: Callable[[], State], refused: type, may_retry: bool, ctx: _Context) -> State:
    """Submits; when the input is refused and may be typed again, reports it and returns the same state."""
    try:
        return submit()
    except errors.NativeAuthError as e:
        if isinstance(e, refused) and may_retry and e.state is not None:
            ctx.info(f"nativeauth: {terminal_safe(e.code)}: {terminal_safe(e.message)}; try again")
            state: State = e.state
            return state
        raise


def _read_password() -> str:
    line = sys.stdin.readline()
    if not line:
        raise CliError("usage", "--password-stdin: stdin is empty", EXIT_USAGE)
    return line.rstrip("\r\n")


def _login_browser(ctx: _Context, client: Client) -> SignedIn:
    args = ctx.args
    options: Dict[str, Any] = {"login_hint": args.login_hint, "prompt": args.prompt}
    if args.timeout is not None:
        options["timeout"] = args.timeout
    scopes = ctx.scopes()
    try:
        state = wait_for(lambda: client.sign_in_interactive(scopes, **options), "Waiting for the browser sign-in")
    except errors.BrowserUnavailableError:
        # No browser could be opened: show the address and wait on the loopback listener.
        pending = client.sign_in_interactive(scopes, browser="none", **options)
        assert isinstance(pending, BrowserPending)
        ctx.info(f"No browser could be opened. To sign in, open this address in a browser on this machine:\n"
                 f"  {terminal_safe(pending.authorization_url)}")
        state = wait_for(lambda: pending.wait(args.timeout if args.timeout is not None else 300),
                         "Waiting for the browser sign-in", pending.cancel)
        if isinstance(state, BrowserPending):
            pending.cancel()
            raise CliError("timeout", "the browser sign-in did not finish in time", EXIT_NETWORK)
    if not isinstance(state, SignedIn):
        raise CliError("unsupported_step", f"unexpected answer {type(state).__name__}")
    return state


def _login_device_code(ctx: _Context, client: Client) -> SignedIn:
    import time
    state = client.sign_in_device_code(ctx.scopes())
    if not isinstance(state, DeviceCodeRequired):
        raise CliError("unsupported_step", f"unexpected answer {type(state).__name__}")
    device = state
    ctx.info(f"To sign in, open {terminal_safe(device.verification_uri)} and enter the code "
             f"{terminal_safe(device.user_code)}")
    if device.verification_uri_complete:
        ctx.info(f"  (or open {terminal_safe(device.verification_uri_complete)})")
    limit = ctx.args.timeout if ctx.args.timeout is not None else (device.expires_in or 900)
    deadline = time.monotonic() + limit
    current: State = device
    while isinstance(current, DeviceCodeRequired):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            device.cancel()
            raise CliError("timeout", "the device-code sign-in was not approved in time", EXIT_NETWORK)
        current = wait_for(lambda: device.wait(min(remaining, 60.0)), "Waiting for the sign-in on the other device",
                           device.cancel)
    if not isinstance(current, SignedIn):
        raise CliError("unsupported_step", f"unexpected answer {type(current).__name__}")
    return current


# -- accounts, token, call, logout --------------------------------------------------------------------------------


def _accounts(ctx: _Context) -> int:
    with ctx.client() as client:
        accounts: List[Account] = list(client.accounts)
    if ctx.json:
        ctx.emit_json({"accounts": [_account_document(a) for a in accounts]})
    elif accounts:
        rows = [(terminal_safe(a.username), terminal_safe(a.home_account_id)) for a in accounts]
        width = max(len(username) for username, _ in rows)
        for username, home_account_id in rows:
            ctx.out(f"{username:<{width}}  {home_account_id}")
    else:
        ctx.info("No account is signed in (run `nativeauth login`).")
    return EXIT_OK


def _token(ctx: _Context) -> int:
    with ctx.client() as client:
        token = client.get_access_token(ctx.scopes(), account=ctx.account(), force_refresh=ctx.args.force_refresh)
    if ctx.json:
        ctx.emit_json({"access_token": token.token, "token_type": token.token_type, "expires_on": token.expires_on,
                       "scopes": list(token.scopes), "from_cache": token.from_cache})
    else:
        ctx.out(terminal_safe(token.token))  # a real token has nothing to escape
    return EXIT_OK


def _call(ctx: _Context) -> int:
    args = ctx.args
    scopes = ctx.scopes()
    if not scopes:
        raise CliError("usage", "call needs --scope (or scopes in the profile or NATIVEAUTH_SCOPES)", EXIT_USAGE)
    headers: Dict[str, str] = {}
    for header in args.headers:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise CliError("usage", f"-H {header!r}: expected 'Name: value'", EXIT_USAGE)
        headers[name.strip()] = value.strip()
    body: Union[None, str, Dict[str, Any], List[Any]] = None
    if args.data is not None:
        body = _read_body(args.data)
        if not any(n.lower() == "content-type" for n in headers):
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                body = parsed  # sent as application/json
    method = args.method or ("POST" if body is not None else "GET")
    with ctx.client() as client:
        response = client.call_api(args.url, scopes, method=method.upper(), headers=headers or None, body=body,
                                   account=ctx.account(), force_refresh=args.force_refresh)
    if ctx.json:
        document: Dict[str, Any] = {"status": response.status, "headers": response.headers, "body": response.body}
        if response.body_base64 is not None:
            document["body_base64"] = response.body_base64
        ctx.emit_json(document)
    elif response.body_base64 is not None:  # not UTF-8: the bytes as they came, like curl
        ctx.out_bytes(response.content)
    elif isinstance(response.body, (dict, list)):  # the body is the user's explicit output: as it came
        ctx.out_body(json.dumps(response.body, ensure_ascii=False, indent=2))
    elif response.body:
        ctx.out_body(str(response.body))
    if not response.ok:
        ctx.info(f"nativeauth: http_error: the API answered HTTP {response.status}")
        return EXIT_SERVER
    return EXIT_OK


def _read_body(data: str) -> str:
    if not data.startswith("@"):
        return data
    try:
        if data == "@-":
            return sys.stdin.read()
        with open(data[1:], encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise CliError("usage", f"-d {data}: {getattr(e, 'strerror', None) or e}", EXIT_USAGE) from None


def _logout(ctx: _Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        before = {a.home_account_id: a.username for a in client.accounts}
        signed_out = client.sign_out(ctx.account(), all=args.all, browser="system" if args.browser else "none")
        after = {a.home_account_id for a in client.accounts}
        end_session_url = getattr(client, "last_end_session_url", None)
    gone = [name or home for home, name in before.items() if home not in after]
    shown = [terminal_safe(name) for name in gone]
    if ctx.json:
        ctx.emit_json({"was_signed_in": signed_out, "signed_out": gone, "end_session_url": end_session_url})
    elif signed_out:
        ctx.out("Signed out " + ", ".join(shown) + "." if shown else "Signed out.")
    else:
        ctx.out("Nobody was signed in.")
    return EXIT_OK


_COMMANDS: Dict[str, Callable[[_Context], int]] = {
    "login": _login, "accounts": _accounts, "token": _token, "call": _call, "logout": _logout,
}


def main(argv: Optional[Sequence[str]] = None, *, environ: Optional[Mapping[str, str]] = None,
         stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> int:
    """Runs the command line (``argv`` defaults to ``sys.argv[1:]``); returns the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    ctx = _Context(args, os.environ if environ is None else environ, out, err)
    try:
        if args.command == "emulator":
            from ._cli_emulator import run_emulator
            return run_emulator(args, ctx.environ, out, err)
        return _COMMANDS[args.command](ctx)
    except CliError as e:
        return report_error(e, as_json=ctx.json, stdout=out, stderr=err)
    except errors.NativeAuthError as e:
        return report_error(error_from_library(e), as_json=ctx.json, stdout=out, stderr=err)
    except (Interrupted, KeyboardInterrupt):
        err.write("\nnativeauth: interrupted\n")
        err.flush()
        out.flush()
        if isinstance(sys.exc_info()[1], Interrupted):
            os._exit(EXIT_INTERRUPTED)  # a library call may still block on the worker thread: do not wait for it
        return EXIT_INTERRUPTED

