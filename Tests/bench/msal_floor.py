"""The floor of any tool built on MSAL for Python that prints a cached token: import msal, load a
SerializableTokenCache from the file, acquire_token_silent. `make bench` times it as a whole process (python3 -c
would be the same). The OIDC discovery document MSAL fetches when it starts is answered from memory (a real tool
pays a round trip or its own cache for it): this is the floor, not a typical run.

Usage: msal_floor.py OIDC_AUTHORITY CLIENT_ID CACHE_FILE SCOPE DISCOVERY_JSON_FILE"""
import json
import sys

import msal  # type: ignore


class _Response:
    def __init__(self, text: str) -> None:
        self.status_code = 200
        self.text = text
        self.headers: dict = {}

    def raise_for_status(self) -> None:
        pass


class _Discovery:
    """An http_client that knows one document; any other request is a failure of the measurement."""

    def __init__(self, text: str) -> None:
        self.text = text

    def get(self, url: str, **_: object) -> _Response:
        if not url.endswith("/.well-known/openid-configuration"):
            raise SystemExit(f"msal_floor: unexpected request {url}")
        return _Response(self.text)

    def post(self, url: str, **_: object) -> _Response:
        raise SystemExit(f"msal_floor: unexpected request {url} (not a cache hit)")

    def close(self) -> None:
        pass


def main() -> None:
    authority, client_id, cache_file, scope, discovery = sys.argv[1:6]
    cache = msal.SerializableTokenCache()
    with open(cache_file) as f:
        cache.deserialize(f.read())
    with open(discovery) as f:
        http = _Discovery(f.read())
    app = msal.PublicClientApplication(client_id, oidc_authority=authority, token_cache=cache, http_client=http)
    accounts = app.get_accounts()
    result = app.acquire_token_silent([scope], account=accounts[0]) if accounts else None
    if not result or "access_token" not in result:
        raise SystemExit("msal_floor: no cached token")
    print(result["access_token"])


if __name__ == "__main__":
    main()
