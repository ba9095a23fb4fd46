"""MSAL for Python reading a cache file that holds a DPoP-bound sign-in of this library (RFC 9449, "dpop": true).

MSAL for Python 1.39's token_cache.py serves any AccessToken entry that matches the account, client, realm and
scopes — it filters on neither token_type nor key_id — and presents any RefreshToken entry without a proof. So the
library keeps DPoP-bound tokens in sections of its own, which MSAL never reads and writes back untouched: MSAL lists
the account, gets no token for it (never the DPoP-bound one as a bearer token), and the library's sign-in survives
MSAL writing the file.
"""
import json
import os
import pathlib
import sys

import msal
import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings" / "python" / "src"))

import nativeauth as na  # noqa: E402  (the package from this tree, over NATIVEAUTH_LIBRARY)


def control(ready, method, path, body=None):
    r = requests.request(method, ready["base_url"] + "/_emulator/" + path, json=body, verify=ready["ca_file"],
                         headers={"X-Emulator-Token": ready["control_token"]})
    return r.json()


def test_msal_for_python_never_serves_a_dpop_bound_token(tls_emulator, monkeypatch, tmp_path):
    if not os.environ.get("NATIVEAUTH_LIBRARY"):
        pytest.skip("needs NATIVEAUTH_LIBRARY (make test-interop sets it)")
    for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(var, raising=False)
    oidc, ca = tls_emulator["oidc"], tls_emulator["ca_file"]
    todo = oidc["apis"][0]["scopes"][0]
    cache = tmp_path / "cache.json"

    def client():
        return na.Client(oidc["authority"], oidc["client_id"], authority_type="oidc", dpop=True, cache_path=cache,
                         ca_bundle=ca)

    with client() as c:
        state = c.sign_in_device_code([todo])
        control(tls_emulator, "POST", "device/approve", {"user_code": state.user_code, "email": "ann@contoso.com"})
        assert isinstance(state.wait(timeout=30), na.SignedIn)
        token = c.get_access_token([todo])
        assert token.token_type == "DPoP"

    msal_cache = msal.SerializableTokenCache()
    msal_cache.deserialize(cache.read_text())
    app = msal.PublicClientApplication(oidc["client_id"], oidc_authority=oidc["issuer"], verify=ca,
                                       token_cache=msal_cache)
    accounts = app.get_accounts()
    assert [a["home_account_id"] for a in accounts] and accounts[0]["username"] == "ann"
    refresh_grants = control(tls_emulator, "GET", "counters").get("refresh_grants", 0)
    result = app.acquire_token_silent([todo], account=accounts[0])
    assert result is None or "access_token" not in result, "MSAL served the DPoP-bound token as a bearer token"
    assert control(tls_emulator, "GET", "counters").get("refresh_grants", 0) == refresh_grants, \
        "MSAL presented the DPoP-bound refresh token without a proof"
    for credential in (msal_cache.CredentialType.ACCESS_TOKEN, msal_cache.CredentialType.REFRESH_TOKEN):
        assert all(e.get("secret") != token.access_token for e in msal_cache.search(credential))
        assert not list(msal_cache.search(credential, query={"home_account_id": accounts[0]["home_account_id"]}))

    # MSAL writes the file back (as after any change of its own): the sections it does not know stay, so the
    # library's sign-in, key included, is still there.
    cache.write_text(msal_cache.serialize())
    with client() as again:
        served = again.get_access_token([todo])
        assert served.from_cache and served.token_type == "DPoP" and served.access_token == token.access_token
        assert again.call_api(oidc["apis"][0]["url"], [todo]).status == 200
    assert json.loads(cache.read_text())["NativeAuthDPoPKey"]
