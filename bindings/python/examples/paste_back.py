#!/usr/bin/env python3
"""Browser sign-in for a machine without a browser (an SSH session, a container, a server), by paste-back: print
the provider's sign-in address, let the user sign in in a browser on any device, read back the address that browser
ended on, then call an API.

The browser ends on the redirect URI — http://localhost:PORT/?code=…&state=… — which it cannot load on another
device; the user copies that address from its address bar. The library checks that its ``state`` is this sign-in's
and redeems the code with the PKCE verifier, which never leaves this process. A browser on this machine that loads
the address completes the sign-in too: the library's loopback listener is served between reads of the input.

Settings come from the environment: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, API_URL, API_SCOPE (and
NATIVEAUTH_AUTHORITY_TYPE=oidc for any OpenID Connect provider, NATIVEAUTH_REDIRECT_URI for a redirect URI such as
Entra's https://login.microsoftonline.com/common/oauth2/nativeclient, NATIVEAUTH_CA_BUNDLE for a private CA).
"""
import os
import select
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
                   redirect_uri=os.environ.get("NATIVEAUTH_REDIRECT_URI"),
                   ca_bundle=os.environ.get("NATIVEAUTH_CA_BUNDLE")) as client:
        state = client.sign_in_interactive([scope], browser="none")
        assert isinstance(state, na.BrowserPending)
        print("[Python] Open this address in a browser on any device and sign in:", flush=True)
        print(state.authorization_url, flush=True)
        print(f"[Python] The browser then goes to an address starting with {state.redirect_uri}, which it may not\n"
              "[Python] be able to load. Copy that whole address and paste it here:", flush=True)
        listening = state.redirect_uri.startswith(("http://localhost", "http://127.0.0.1"))
        while isinstance(state, na.BrowserPending):
            # A line on stdin, or (with a loopback redirect URI) a short wait for a browser on this machine.
            if listening and not select.select([sys.stdin], [], [], 0)[0]:
                state = state.wait(timeout=0.5)
                continue
            line = sys.stdin.readline()
            if not line:
                print("[Python] no address was pasted", file=sys.stderr)
                state.cancel()
                return 1
            try:
                state = state.submit_redirect(line.strip())
            except na.InvalidArgumentError as e:  # not this sign-in's redirect URI: the sign-in goes on
                print(f"[Python] {e}; paste the address again:", flush=True)
        assert isinstance(state, na.SignedIn)
        print(f"[Python] signed in: {state.account.username}")
        answer = client.call_api(setting("API_URL"), [scope])
        print(f"[Python] the API answered HTTP {answer.status}")
        client.sign_out()
        return 0 if answer.ok else 1


if __name__ == "__main__":
    sys.exit(main())
