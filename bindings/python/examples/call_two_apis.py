#!/usr/bin/env python3
"""The tutorial in Python: sign in with email + password, call two APIs with tokens for two scope sets, sign out.

Settings come from the environment: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME, NATIVEAUTH_PASSWORD,
API1_URL, API1_SCOPE, API2_URL, API2_SCOPE (and NATIVEAUTH_CA_BUNDLE for a private CA).
"""
import json
import os
import sys

import nativeauth as na


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        sys.exit(f"missing environment variable {name}")
    return value


def masked(token: str) -> str:
    return f"{token[:10]}… ({len(token)} chars)"


def main() -> int:
    apis = [("API 1", setting("API1_URL"), setting("API1_SCOPE")), ("API 2", setting("API2_URL"), setting("API2_SCOPE"))]
    username = setting("NATIVEAUTH_USERNAME")
    with na.Client(setting("NATIVEAUTH_AUTHORITY"), setting("NATIVEAUTH_CLIENT_ID"),
                   ca_bundle=os.environ.get("NATIVEAUTH_CA_BUNDLE")) as client:
        print(f"[Python] signing in as {username}")
        try:
            state = client.sign_in(username, setting("NATIVEAUTH_PASSWORD"), scopes=[apis[0][2]])
        except na.NativeAuthError as e:
            print(f"sign-in failed: {e.code}: {e.message}", file=sys.stderr)
            return 1
        if not isinstance(state, na.SignedIn):
            print(f"sign-in needs more: {type(state).__name__}", file=sys.stderr)
            return 1
        print(f"  signed in: {state.account.username} ({state.account.claims.get('name')})")
        for _ in range(2):  # the second round is served from the cache
            for name, url, scope in apis:
                token = client.get_access_token([scope])
                print(f"  token for {name}: {masked(token.access_token)}, scopes: {token.scopes[0]}, {'from the cache' if token.from_cache else 'from the server'}")
                response = client.call_api(url, [scope])
                print(f"  {name} answered HTTP {response.status}: {json.dumps(response.body, separators=(',', ':'))}")
                if not response.ok:
                    return 1
        print("  signed_out" if client.sign_out() else "  (nobody was signed in)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
