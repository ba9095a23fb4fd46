"""ctypes declarations for every function of include/nativeauth.h, and the one helper that calls them.

Rules: owned results are read through c_void_p + string_at and freed with na_string_free in ``finally`` (a c_char_p
restype would lose the pointer); strings are UTF-8 explicitly; ctypes releases the GIL during each call.
"""
from __future__ import annotations

import ctypes
import json
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from . import _loader

# A C function pointer made from a Python callable (LOG_FN(f), BROWSER_FN(f)); the client keeps a reference.
if TYPE_CHECKING:
    CallbackPointer = ctypes._CFunctionType
else:
    CallbackPointer = ctypes._CFuncPtr

Document = Dict[str, Any]
"""A JSON document (request or result) as a dict."""

lib = _loader.load()

_OUT = ctypes.POINTER(ctypes.c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p)
BROWSER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

lib.na_version.restype = ctypes.c_char_p
lib.na_version.argtypes = []
lib.na_abi_version.restype = ctypes.c_int
lib.na_abi_version.argtypes = []
lib.na_status_str.restype = ctypes.c_char_p
lib.na_status_str.argtypes = [ctypes.c_int]
lib.na_string_free.restype = None
lib.na_string_free.argtypes = [ctypes.c_void_p]
lib.na_client_new.restype = ctypes.c_int
lib.na_client_new.argtypes = [ctypes.c_char_p, _OUT, _OUT]
lib.na_client_free.restype = None
lib.na_client_free.argtypes = [ctypes.c_void_p]
lib.na_client_set_log_callback.restype = ctypes.c_int
lib.na_client_set_log_callback.argtypes = [ctypes.c_void_p, ctypes.c_int, LOG_FN, ctypes.c_void_p]
lib.na_client_set_browser_callback.restype = ctypes.c_int
lib.na_client_set_browser_callback.argtypes = [ctypes.c_void_p, BROWSER_FN, ctypes.c_void_p]
lib.na_parse_www_authenticate.restype = ctypes.c_int
lib.na_parse_www_authenticate.argtypes = [ctypes.c_char_p, _OUT]

OPERATIONS = ("na_client_info", "na_sign_in", "na_sign_up", "na_reset_password", "na_flow_submit",
              "na_get_access_token", "na_call_api", "na_get_account", "na_get_accounts", "na_sign_out",
              "na_sign_in_interactive", "na_sign_in_device_code")


class _Result(ctypes.Union):
    """An operation's result (its char ** argument): ``address`` to free it, ``text`` its bytes — read by ctypes
    as it reads the field, without a string_at call (a foreign call of its own: a tenth of a cached token's time)."""

    _fields_ = [("address", ctypes.c_void_p), ("text", ctypes.c_char_p)]
    address: Optional[int]
    text: Optional[bytes]


for _name in OPERATIONS:
    _fn = getattr(lib, _name)
    _fn.restype = ctypes.c_int
    _fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Result)]

# The asynchronous calls (na_start …): declared when the library has them, so that this module still loads a library
# built before them; ASYNC says which (nativeauth.aio refuses to make a client without them).
DONE_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
ASYNC_FUNCTIONS = ("na_start", "na_op_cancel", "na_op_free", "na_client_event_fd", "na_client_dispatch")
ASYNC = all(hasattr(lib, _name) for _name in ASYNC_FUNCTIONS)
if ASYNC:
    lib.na_start.restype = ctypes.c_int
    lib.na_start.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, DONE_FN, ctypes.c_void_p, _OUT]
    lib.na_op_cancel.restype = ctypes.c_int
    lib.na_op_cancel.argtypes = [ctypes.c_void_p]
    lib.na_op_free.restype = None
    lib.na_op_free.argtypes = [ctypes.c_void_p]
    lib.na_client_event_fd.restype = ctypes.c_int
    lib.na_client_event_fd.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    lib.na_client_dispatch.restype = ctypes.c_int
    lib.na_client_dispatch.argtypes = [ctypes.c_void_p]
# DPoP proofs (na_dpop_proof): declared when the library has it (Client.dpop_proof raises NotSupportedError without).
DPOP = hasattr(lib, "na_dpop_proof")
if DPOP:
    lib.na_dpop_proof.restype = ctypes.c_int
    lib.na_dpop_proof.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Result)]


def take_string(ptr: ctypes.c_void_p) -> str:
    """Reads and frees a string the library returned."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", errors="replace")
    finally:
        lib.na_string_free(ptr)


def encode(document: Document) -> bytes:
    """A request document as UTF-8 JSON. Raises ValueError for what cannot be encoded (e.g. lone surrogates)."""
    try:
        return json.dumps(document, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as e:
        raise ValueError(f"request cannot be encoded as UTF-8 JSON: {e.__class__.__name__}") from None


def parse(rc: int, text: str) -> Tuple[int, Any]:
    """(status, parsed document) of a result text."""
    try:
        return rc, json.loads(text) if text else {}
    except json.JSONDecodeError:
        return rc, {"v": 1, "error": {"code": "internal", "message": "the library returned a document that is not JSON"}}


def call(name: str, handle: Optional[int], document: Document) -> Tuple[int, Any]:
    """Calls operation ``name`` and returns (status, parsed document)."""
    rc, raw = call_raw(getattr(lib, name), handle, encode(document))
    return parse(rc, raw.decode("utf-8", errors="replace"))


_free = lib.na_string_free
_byref = ctypes.byref


def call_raw(fn: Any, handle: Optional[int], request: bytes) -> Tuple[int, bytes]:
    """Calls an operation with an encoded request and returns (status, the result's bytes), freeing the library's
    string. The hot path of ``get_access_token``: no JSON work here."""
    out = _Result()
    rc = fn(handle, request, _byref(out))
    address = out.address
    if not address:
        return rc, b""
    try:
        return rc, out.text or b""
    finally:
        _free(address)


def parse_www_authenticate(header: bytes) -> Tuple[int, Any]:
    """``na_parse_www_authenticate`` (no client): (status, parsed document)."""
    out = ctypes.c_void_p()
    rc = lib.na_parse_www_authenticate(header, ctypes.byref(out))
    return parse(rc, take_string(out))


def client_new(config: Document) -> Tuple[int, Optional[int], Any]:
    """``na_client_new``: (status, the handle or None, the parsed error document or None)."""
    handle = ctypes.c_void_p()
    err = ctypes.c_void_p()
    rc = lib.na_client_new(encode(config), ctypes.byref(handle), ctypes.byref(err))
    text = take_string(err)
    return rc, handle.value, (json.loads(text) if text else None)


def version() -> str:
    """The loaded library's version string (``na_version()``)."""
    text: bytes = lib.na_version()
    return text.decode()


def status_str(status: int) -> str:
    """``na_status_str(status)``."""
    text: bytes = lib.na_status_str(status)
    return text.decode()

