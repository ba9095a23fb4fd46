"""A client nobody here wrote: MSAL for Python against the emulator (--tls), through the standard flows.

MSAL Python only accepts https authorities, and its `verify=` is overridden by REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE,
so those are cleared for this process. It is pointed at the emulator with `oidc_authority`, as README explains.
"""
import html
import re
import threading
import urllib.parse

import msal
import pytest
import requests

REDIRECT = "http://localhost:8765/callback"


@pytest.fixture
def app(tls_emulator, monkeypatch):
    for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(var, raising=False)
    return msal.PublicClientApplication(
        tls_emulator["client_id"],
        oidc_authority=tls_emulator["oidc_authority"],
        verify=tls_emulator["ca_file"],
    )


def user(ready, kind):
    return next(u for u in ready["users"] if u["kind"] == kind)


def api(ready, name):
    return next(a for a in ready["apis"] if a["name"] == name)


def sign_in_through_page(ready, auth_uri, email, password):
    """What a browser and a person do: load the page, fill in the form, follow the redirect."""
    s = requests.Session()
    s.verify = ready["ca_file"]
    page = s.get(auth_uri, allow_redirects=False)
    assert page.status_code == 200, page.text
    request_id = html.unescape(re.search(r'name="request" value="([^"]+)"', page.text).group(1))
    done = s.post(auth_uri, data={"request": request_id, "username": email, "password": password}, allow_redirects=False)
    assert done.status_code == 302, done.text
    location = done.headers["Location"]
    assert location.startswith(REDIRECT)
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))


def test_auth_code_with_pkce_then_silent_refresh(app, tls_emulator):
    ann = user(tls_emulator, "password")
    todo, notes = api(tls_emulator, "ToDoList"), api(tls_emulator, "Notes")
    flow = app.initiate_auth_code_flow(scopes=[todo["scopes"][0]], redirect_uri=REDIRECT, login_hint=ann["email"])
    assert "code_challenge" in flow["auth_uri"]
    response = sign_in_through_page(tls_emulator, flow["auth_uri"], ann["email"], ann["password"])
    result = app.acquire_token_by_auth_code_flow(flow, response)
    assert "access_token" in result, result
    assert result["id_token_claims"]["preferred_username"] == ann["email"]
    call = requests.get(todo["url"], headers={"Authorization": "Bearer " + result["access_token"]}, verify=tls_emulator["ca_file"])
    assert call.status_code == 200 and call.json()["user"] == ann["email"]

    accounts = app.get_accounts()
    assert [a["username"] for a in accounts] == [ann["email"]]
    # A second API: MSAL redeems the refresh token for the new scope set.
    silent = app.acquire_token_silent([notes["scopes"][0]], account=accounts[0])
    assert silent and "access_token" in silent, silent
    call = requests.get(notes["url"], headers={"Authorization": "Bearer " + silent["access_token"]}, verify=tls_emulator["ca_file"])
    assert call.status_code == 200
    # Cached now; and a forced refresh rides the rotated refresh token.
    assert app.acquire_token_silent([notes["scopes"][0]], account=accounts[0])["token_source"] == "cache"
    forced = app.acquire_token_silent([todo["scopes"][0]], account=accounts[0], force_refresh=True)
    assert forced and forced["token_source"] == "identity_provider", forced


def test_device_flow(app, tls_emulator):
    ann = user(tls_emulator, "password")
    notes = api(tls_emulator, "Notes")
    flow = app.initiate_device_flow(scopes=[notes["scopes"][0]])
    assert flow.get("user_code"), flow
    controls = tls_emulator["controls"]
    ca = tls_emulator["ca_file"]
    token = {"X-Emulator-Token": tls_emulator["control_token"]}  # every control call carries it
    result = {}
    worker = threading.Thread(target=lambda: result.update(app.acquire_token_by_device_flow(flow)))
    worker.start()
    # Wait until MSAL has polled and been told authorization_pending, then approve as the user would.
    for _ in range(500):
        log = requests.get(controls + "/requests?path=/oauth2/v2.0/token", headers=token, verify=ca)
        log = log.json()["requests"]
        if any(r["status"] == 400 for r in log):
            break
        threading.Event().wait(0.02)
    ok = requests.post(controls + "/device/approve", json={"user_code": flow["user_code"], "email": ann["email"]},
                       headers=token, verify=ca)
    assert ok.json()["ok"] is True
    worker.join(timeout=60)
    assert "access_token" in result, result
    assert result["id_token_claims"]["preferred_username"] == ann["email"]


def test_generic_oidc_provider_with_form_post(tls_emulator, monkeypatch):
    """MSAL's generic OIDC support against the emulator's /oidc provider: form_post with RFC 9207's iss, no
    client_info, a pairwise sub as the account, an opaque access token, and no widening of scopes on refresh."""
    for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(var, raising=False)
    oidc, ca = tls_emulator["oidc"], tls_emulator["ca_file"]
    todo, notes = oidc["apis"][0], oidc["apis"][1]
    app = msal.PublicClientApplication(oidc["client_id"], oidc_authority=oidc["issuer"], verify=ca)
    flow = app.initiate_auth_code_flow(scopes=[todo["scopes"][0]], redirect_uri=REDIRECT, response_mode="form_post")
    s = requests.Session()
    s.verify = ca
    page = s.get(flow["auth_uri"], allow_redirects=False)
    request_id = html.unescape(re.search(r'name="request" value="([^"]+)"', page.text).group(1))
    action = html.unescape(re.search(r'<form id="form" method="post" action="([^"]+)"', page.text).group(1))
    done = s.post(urllib.parse.urljoin(flow["auth_uri"], action),
                  data={"request": request_id, "username": "ann@contoso.com", "password": "Demo-Passw0rd!"})
    assert 'id="form_post"' in done.text, done.text
    response = {html.unescape(m.group(1)): html.unescape(m.group(2))
                for m in re.finditer(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', done.text)}
    assert response["iss"] == oidc["issuer"] and "client_info" not in response
    result = app.acquire_token_by_auth_code_flow(flow, response)
    assert "access_token" in result, result
    assert result["access_token"].count(".") == 0  # opaque
    ann = next(u for u in oidc["users"] if u["email"] == "ann@contoso.com")
    assert result["id_token_claims"]["sub"] == ann["sub"] and "nbf" not in result["id_token_claims"]
    call = requests.get(todo["url"], headers={"Authorization": "Bearer " + result["access_token"]}, verify=ca)
    assert call.status_code == 200 and call.json()["user"] == "ann@contoso.com"
    account = app.get_accounts()[0]
    assert account["home_account_id"] == ann["sub"]
    forced = app.acquire_token_silent([todo["scopes"][0]], account=account, force_refresh=True)
    assert forced and forced["token_source"] == "identity_provider", forced
    wider = app.acquire_token_silent_with_error([notes["scopes"][0]], account=account)
    assert wider and wider.get("error") == "invalid_scope", wider
