#!/usr/bin/env python3
"""Device-code sign-in for a machine without a browser (SSH, containers): print the code and where to enter it,
wait for the user to approve on another device, then call an API.

Settings come from the environment: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, API_URL, API_SCOPE (and
NATIVEAUTH_AUTHORITY_TYPE=oidc for any OpenID Connect provider, NATIVEAUTH_CA_BUNDLE for a private CA).
"""
import os
import sys

import nativeauth as na


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        sys.exit(f"missing environment variable {name}")
    return value


def main() -> int:
    scope = setting("API_SCOPE")
    with na.Client(setting("NATIVEAUTH_AUTHORITY"), setting("NATIVEAUTH_CLIENT_ID"),
                   authority_type=os.environ.get("NATIVEAUTH_AUTHORITY_TYPE"),
                   ca_bundle=os.environ.get("NATIVEAUTH_CA_BUNDLE")) as client:
        try:
            pending = client.sign_in_device_code([scope])
        except na.NotSupportedError:
            print("this provider does not offer device-code sign-in", file=sys.stderr)
            return 1
        assert isinstance(pending, na.DeviceCodeRequired)
        print(f"[Python] {pending.message}", flush=True)
        state: na.State = pending
        while isinstance(state, na.DeviceCodeRequired):
            try:
                state = state.wait(timeout=30)  # returns the same state when 30 s pass without an answer
            except na.AccessDeniedError:
                print("[Python] the sign-in was refused", file=sys.stderr)
                return 1
            except na.FlowExpiredError:
                print("[Python] the code expired; run again", file=sys.stderr)
                return 1
        assert isinstance(state, na.SignedIn)
        print(f"[Python] signed in: {state.account.username}")
        answer = client.call_api(setting("API_URL"), [scope])
        print(f"[Python] the API answered HTTP {answer.status}")
        client.sign_out()
        return 0 if answer.ok else 1


if __name__ == "__main__":
    sys.exit(main())
