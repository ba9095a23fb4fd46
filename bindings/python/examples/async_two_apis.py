#!/usr/bin/env python3
"""The tutorial with asyncio: sign in with email + password, then get tokens for two APIs and call both at once
(asyncio.gather) on one event loop, and sign out — nativeauth.aio.AsyncClient, no threads of our own.

Settings come from the environment: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME, NATIVEAUTH_PASSWORD,
API1_URL, API1_SCOPE, API2_URL, API2_SCOPE (and NATIVEAUTH_CA_BUNDLE for a private CA).
"""
import asyncio
import json
import os
import sys

import nativeauth as na
from nativeauth.aio import AsyncClient


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        sys.exit(f"missing environment variable {name}")
    return value


def masked(token: str) -> str:
    return f"{token[:10]}… ({len(token)} chars)"


async def call(client: AsyncClient, name: str, url: str, scope: str) -> bool:
    """One API: its token (from the cache or one refresh), then the call with it."""
    token = await client.get_access_token([scope])
    source = "from the cache" if token.from_cache else "from the server"
    print(f"  token for {name}: {masked(token.access_token)}, {source}")
    response = await client.call_api(url, [scope])
    print(f"  {name} answered HTTP {response.status}: {json.dumps(response.body, separators=(',', ':'))}")
    return response.ok


async def main() -> int:
    apis = [("API 1", setting("API1_URL"), setting("API1_SCOPE")),
            ("API 2", setting("API2_URL"), setting("API2_SCOPE"))]
    username = setting("NATIVEAUTH_USERNAME")
    async with AsyncClient(setting("NATIVEAUTH_AUTHORITY"), setting("NATIVEAUTH_CLIENT_ID"),
                           ca_bundle=os.environ.get("NATIVEAUTH_CA_BUNDLE")) as client:
        print(f"[Python asyncio] signing in as {username}")
        try:
            state = await client.sign_in(username, setting("NATIVEAUTH_PASSWORD"), scopes=[apis[0][2]])
        except na.NativeAuthError as e:
            print(f"sign-in failed: {e.code}: {e.message}", file=sys.stderr)
            return 1
        if not isinstance(state, na.SignedIn):
            print(f"sign-in needs more: {type(state).__name__}", file=sys.stderr)
            return 1
        print(f"  signed in: {state.account.username} ({state.account.claims.get('name')})")
        # Both APIs at once: the calls run on the library's workers while the loop stays free.
        results = await asyncio.gather(*(call(client, name, url, scope) for name, url, scope in apis))
        if not all(results):
            return 1
        print("  signed out" if await client.sign_out() else "  (nobody was signed in)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
