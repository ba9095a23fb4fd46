"""Typed shapes of the C documents that stay mappings in Python.

Most results are frozen dataclasses (see `nativeauth.states`). A few documents are naturally mappings and are
returned as plain ``dict`` objects typed with these ``TypedDict`` classes: the client's effective configuration
(`nativeauth.Client.info`) and the accounts listed by an `nativeauth.AccountRequiredError`. The keys are exactly
those of the C documents described in ``include/nativeauth.h`` and ``docs/`` (``docs/configuration.md``,
``docs/calls/na_get_account.md``); keys marked optional there may be missing here.
"""
from __future__ import annotations

from typing import Any, Dict, List, TypedDict

__all__ = ["AccountDocument", "CacheInfo", "ClientConfig", "ClientInfo"]


class AccountDocument(TypedDict, total=False):
    """An account as the C documents carry it (``na_get_account``'s ``"account"``; the ``"accounts"`` of an
    ``account_required`` error). ``id_token`` is present only when asked for."""

    username: str
    home_account_id: str
    tenant_id: str
    environment: str
    claims: Dict[str, Any]
    id_token: str


class CacheInfo(TypedDict, total=False):
    """The token cache of a client: ``{"type": "memory"}`` or ``{"type": "file", "path", "encrypted",
    "key_store"?, "migrate_plaintext_cache"?, "problem"?}`` (``key_store``: where the key is — "secret_service",
    "kernel_keyring", or "encryption_key" for a key the host supplied; ``migrate_plaintext_cache``: true when a
    plaintext file is to be encrypted once; ``problem``: the error code of the last failure to use the file).
    Never the key."""

    type: str
    path: str
    encrypted: bool
    key_store: str
    migrate_plaintext_cache: bool
    problem: str


class ClientConfig(TypedDict, total=False):
    """The effective configuration of a client (``na_client_info``'s ``"config"``; see ``docs/configuration.md``).
    Members that were not configured and have no default are missing."""

    authority: str
    authority_type: str
    client_id: str
    challenge_types: List[str]
    capabilities: List[str]
    client_capabilities: List[str]
    request_headers: Dict[str, str]
    connect_timeout_ms: int
    request_timeout_ms: int
    retry_after_max_s: int
    log_level: str
    ca_bundle_source: str
    ca_bundle: str
    ca_bundle_system: bool
    ca_directory: str
    proxy: str
    proxy_source: str
    proxy_credentials: bool
    proxy_error: str
    no_proxy: str
    no_proxy_source: str
    proxy_ca_bundle: str
    cache: CacheInfo
    redirect_uri: str
    post_logout_redirect_uri: str
    browser_command: str
    app_name: str
    app_version: str
    dpop: bool


class ClientInfo(TypedDict):
    """``na_client_info``'s result: the document version ``v`` (1), the library ``version`` and the ``config``."""

    v: int
    version: str
    config: ClientConfig
