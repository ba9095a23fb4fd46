"""Settings of the ``nativeauth`` command line: flags, then the environment, then a profile of the configuration
file (``$XDG_CONFIG_HOME/nativeauth/config.toml``), then built-in defaults.

The file holds named profiles::

    default_profile = "work"          # optional; else the profile named "default"

    [profiles.work]
    authority = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
    client_id = "00001111-aaaa-2222-bbbb-3333cccc4444"
    scopes = ["api://…/ToDoList.Read"]

Python 3.11+ reads it with ``tomllib``; older versions with a small parser of the subset profiles need (tables,
``key = "string"`` / ``'literal'`` / integer / boolean / array of those, comments).
"""
from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["ConfigError", "Settings", "config_path", "default_cache_path", "load_file", "parse_toml", "resolve"]


class ConfigError(Exception):
    """Bad settings: an unreadable or invalid configuration file, an unknown profile, a missing client id."""


# Profile keys and their types ("str", "int", "bool", "list": an array of strings).
PROFILE_KEYS: Dict[str, str] = {
    "authority": "str",
    "client_id": "str",
    "authority_type": "str",
    "tenant_subdomain": "str",
    "redirect_uri": "str",
    "post_logout_redirect_uri": "str",
    "ca_bundle": "str",
    "browser_command": "str",
    "cache": "bool",
    "cache_path": "str",
    "scopes": "list",
    "account": "str",
    "capabilities": "list",
    "challenge_types": "list",
    "connect_timeout_ms": "int",
    "request_timeout_ms": "int",
}

# Environment variables (an empty value counts as unset).
ENVIRONMENT: Dict[str, str] = {
    "authority": "NATIVEAUTH_AUTHORITY",
    "client_id": "NATIVEAUTH_CLIENT_ID",
    "authority_type": "NATIVEAUTH_AUTHORITY_TYPE",
    "tenant_subdomain": "NATIVEAUTH_TENANT_SUBDOMAIN",
    "redirect_uri": "NATIVEAUTH_REDIRECT_URI",
    "ca_bundle": "NATIVEAUTH_CA_BUNDLE",
    "browser_command": "NATIVEAUTH_BROWSER_COMMAND",
    "cache": "NATIVEAUTH_CACHE",
    "cache_path": "NATIVEAUTH_CACHE_PATH",
    "scopes": "NATIVEAUTH_SCOPES",
    "account": "NATIVEAUTH_ACCOUNT",
}


@dataclass
class Settings:
    """The effective settings, and where each came from (``sources``: key → "flag", "env NAME", "profile NAME")."""

    profile: str = "default"
    authority: Optional[str] = None
    client_id: Optional[str] = None
    authority_type: Optional[str] = None
    tenant_subdomain: Optional[str] = None
    redirect_uri: Optional[str] = None
    post_logout_redirect_uri: Optional[str] = None
    ca_bundle: Optional[str] = None
    browser_command: Optional[str] = None
    cache: bool = True
    cache_path: Optional[str] = None
    cache_encryption_key: Optional[str] = None
    scopes: List[str] = field(default_factory=list)
    account: Optional[str] = None
    capabilities: Optional[List[str]] = None
    challenge_types: Optional[List[str]] = None
    connect_timeout_ms: Optional[int] = None
    request_timeout_ms: Optional[int] = None
    sources: Dict[str, str] = field(default_factory=dict)


def _env(environ: Mapping[str, str], name: str) -> Optional[str]:
    value = environ.get(name)
    return value if value else None


def _xdg(environ: Mapping[str, str], name: str, fallback: str) -> pathlib.Path:
    value = environ.get(name)
    if value and os.path.isabs(value):  # the XDG spec: relative values are invalid and ignored
        return pathlib.Path(value)
    return pathlib.Path(os.path.expanduser("~")) / fallback


def config_path(environ: Mapping[str, str]) -> pathlib.Path:
    """``$XDG_CONFIG_HOME/nativeauth/config.toml`` (``~/.config/…`` when XDG_CONFIG_HOME is unset)."""
    return _xdg(environ, "XDG_CONFIG_HOME", ".config") / "nativeauth" / "config.toml"


def default_cache_path(environ: Mapping[str, str]) -> pathlib.Path:
    """``$XDG_CACHE_HOME/nativeauth/token_cache.json``: the library's default for ``cache_path=True``."""
    return _xdg(environ, "XDG_CACHE_HOME", ".cache") / "nativeauth" / "token_cache.json"


def _parse_bool(text: str, what: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{what}: expected true or false, not {text!r}")


def _split_scopes(text: str) -> List[str]:
    return [s for s in text.replace(",", " ").split() if s]


def resolve(flags: Mapping[str, Any], environ: Mapping[str, str], *, config_file: Optional[str] = None,
            profile: Optional[str] = None) -> Settings:
    """Merges the settings: ``flags`` (only the keys the user gave) > ``environ`` > the profile > defaults.

    ``config_file`` (``--config``) or ``$NATIVEAUTH_CONFIG`` names the file (then it must exist); ``profile``
    (``--profile``) or ``$NATIVEAUTH_PROFILE`` picks the profile (then it must exist in the file)."""
    explicit_file = config_file or _env(environ, "NATIVEAUTH_CONFIG")
    path = pathlib.Path(os.path.expanduser(explicit_file)) if explicit_file else config_path(environ)
    document: Dict[str, Any] = {}
    if path.exists() or explicit_file:
        document = load_file(path)
    profiles: Dict[str, Any] = document.get("profiles", {})
    chosen = profile or _env(environ, "NATIVEAUTH_PROFILE")
    name = chosen or document.get("default_profile") or "default"
    if name not in profiles and (chosen or "default_profile" in document):
        known = ", ".join(sorted(profiles)) or "none"
        raise ConfigError(f"no profile {name!r} in {path} (profiles: {known})")
    values: Dict[str, Any] = {}
    sources: Dict[str, str] = {}
    for key, value in dict(profiles.get(name, {})).items():
        values[key] = value
        sources[key] = f"profile {name}"
    for key, var in ENVIRONMENT.items():
        text = _env(environ, var)
        if text is None:
            continue
        if key == "cache":
            values[key] = _parse_bool(text, var)
        elif key == "scopes":
            values[key] = _split_scopes(text)
        else:
            values[key] = text
        sources[key] = f"env {var}"
    for key, value in flags.items():
        if value is not None:
            values[key] = value
            sources[key] = "flag"
    settings = Settings(profile=name, sources=sources)
    for key, value in values.items():
        setattr(settings, key, value)
    for key in ("cache_path", "ca_bundle"):
        value = getattr(settings, key)
        if value is not None:
            setattr(settings, key, os.path.abspath(os.path.expanduser(value)))
    settings.cache_encryption_key = _env(environ, "NATIVEAUTH_CACHE_ENCRYPTION_KEY")
    return settings


# -- the configuration file ---------------------------------------------------------------------------------------


def load_file(path: pathlib.Path) -> Dict[str, Any]:
    """Reads and checks the configuration file: ``default_profile`` and ``[profiles.NAME]`` tables of known keys."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8") from None
    try:
        document = parse_toml(text)
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None
    for key in document:
        if key not in ("profiles", "default_profile"):
            raise ConfigError(f"{path}: unknown setting {key!r} (expected [profiles.NAME] tables)")
    if "default_profile" in document and not isinstance(document["default_profile"], str):
        raise ConfigError(f"{path}: default_profile must be a string")
    profiles = document.get("profiles", {})
    if not isinstance(profiles, dict):
        raise ConfigError(f"{path}: profiles must be tables ([profiles.NAME])")
    for name, profile in profiles.items():
        if not isinstance(profile, dict):
            raise ConfigError(f"{path}: profiles.{name} must be a table ([profiles.{name}])")
        for key, value in profile.items():
            kind = PROFILE_KEYS.get(key)
            if kind is None:
                raise ConfigError(f"{path}: [profiles.{name}]: unknown setting {key!r}")
            if not _has_kind(value, kind):
                expected = {"str": "a string", "int": "an integer", "bool": "true or false",
                            "list": "an array of strings"}[kind]
                raise ConfigError(f"{path}: [profiles.{name}]: {key} must be {expected}")
    return document


def _has_kind(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def parse_toml(text: str) -> Dict[str, Any]:
    """``tomllib.loads`` when available (Python 3.11+), else :func:`parse_toml_subset`."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        return parse_toml_subset(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(str(e)) from None


_INTEGER = re.compile(r"[+-]?(0|[1-9](_?[0-9])*)\Z")
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class _SubsetParser:
    """TOML's subset that profiles need: tables (``[a.b]``, bare or quoted keys), dotted keys, basic and literal
    strings, integers, booleans, arrays (over several lines too), comments. Anything else is a ValueError naming the
    line."""

    def __init__(self, text: str) -> None:
        self.s = text.replace("\r\n", "\n")
        self.i = 0

    def fail(self, message: str) -> ValueError:
        return ValueError(f"line {self.s.count(chr(10), 0, self.i) + 1}: {message}")

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_spaces(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.i += 1

    def skip_comment(self) -> None:
        if self.peek() == "#":
            while self.peek() not in ("\n", ""):
                self.i += 1

    def skip_blank(self) -> None:
        """Spaces, comments and newlines."""
        while True:
            self.skip_spaces()
            self.skip_comment()
            if self.peek() == "\n":
                self.i += 1
                continue
            return

    def end_of_line(self) -> None:
        self.skip_spaces()
        self.skip_comment()
        if self.peek() not in ("\n", ""):
            raise self.fail(f"unexpected {self.peek()!r}")

    def parse(self) -> Dict[str, Any]:
        root: Dict[str, Any] = {}
        table = root
        defined: List[Tuple[str, ...]] = []
        while True:
            self.skip_blank()
            if not self.peek():
                return root
            if self.peek() == "[":
                self.i += 1
                if self.peek() == "[":
                    raise self.fail("arrays of tables are not supported")
                keys = self.key()
                self.skip_spaces()
                if self.peek() != "]":
                    raise self.fail("expected ']'")
                self.i += 1
                if tuple(keys) in defined:
                    raise self.fail(f"table [{'.'.join(keys)}] defined twice")
                defined.append(tuple(keys))
                table = self.walk(root, keys)
            else:
                keys = self.key()
                self.skip_spaces()
                if self.peek() != "=":
                    raise self.fail("expected '='")
                self.i += 1
                self.skip_spaces()
                value = self.value()
                target = self.walk(table, keys[:-1])
                if keys[-1] in target:
                    raise self.fail(f"{keys[-1]!r} set twice")
                target[keys[-1]] = value
            self.end_of_line()

    def walk(self, table: Dict[str, Any], keys: Sequence[str]) -> Dict[str, Any]:
        for key in keys:
            nxt = table.setdefault(key, {})
            if not isinstance(nxt, dict):
                raise self.fail(f"{key!r} is not a table")
            table = nxt
        return table

    def key(self) -> List[str]:
        parts: List[str] = []
        while True:
            self.skip_spaces()
            c = self.peek()
            if c == '"':
                parts.append(self.basic_string())
            elif c == "'":
                parts.append(self.literal_string())
            else:
                start = self.i
                while self.peek() and self.peek() in _BARE:
                    self.i += 1
                if start == self.i:
                    raise self.fail("expected a key")
                parts.append(self.s[start:self.i])
            self.skip_spaces()
            if self.peek() != ".":
                return parts
            self.i += 1

    def value(self) -> Any:
        c = self.peek()
        if c == '"':
            if self.s.startswith('"""', self.i):
                raise self.fail("multi-line strings are not supported")
            return self.basic_string()
        if c == "'":
            if self.s.startswith("'''", self.i):
                raise self.fail("multi-line strings are not supported")
            return self.literal_string()
        if c == "[":
            return self.array()
        for word, result in (("true", True), ("false", False)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return result
        start = self.i
        while self.peek() and self.peek() in "+-0123456789_":
            self.i += 1
        text = self.s[start:self.i]
        if not _INTEGER.match(text):
            self.i = start
            raise self.fail("unsupported value (strings, integers, booleans and arrays only)")
        return int(text.replace("_", ""))

    def array(self) -> List[Any]:
        self.i += 1
        items: List[Any] = []
        while True:
            self.skip_blank()
            if self.peek() == "]":
                self.i += 1
                return items
            items.append(self.value())
            self.skip_blank()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']' in the array")

    def literal_string(self) -> str:
        end = self.s.find("'", self.i + 1)
        newline = self.s.find("\n", self.i + 1)
        if end < 0 or 0 <= newline < end:
            raise self.fail("unterminated string")
        text = self.s[self.i + 1:end]
        self.i = end + 1
        return text

    def basic_string(self) -> str:
        self.i += 1
        out: List[str] = []
        while True:
            c = self.peek()
            if c in ("", "\n"):
                raise self.fail("unterminated string")
            self.i += 1
            if c == '"':
                return "".join(out)
            if c != "\\":
                out.append(c)
                continue
            e = self.peek()
            self.i += 1
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
            elif e in ("u", "U"):
                width = 4 if e == "u" else 8
                digits = self.s[self.i:self.i + width]
                if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise self.fail("invalid unicode escape")
                out.append(chr(int(digits, 16)))
                self.i += width
            else:
                raise self.fail(f"invalid escape \\{e}")


def parse_toml_subset(text: str) -> Dict[str, Any]:
    """Parses the TOML subset of :class:`_SubsetParser` (for Python < 3.11)."""
    return _SubsetParser(text).parse()
