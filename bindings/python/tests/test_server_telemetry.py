"""Server telemetry (issue 28) through the Python package against the emulator: every native-auth and token request
carries MSAL's ``x-client-current-telemetry`` with the api id and operation of its endpoint (MSAL iOS's
``MSALNativeAuthTelemetryApiId``), ``x-client-last-telemetry`` with the requests that failed since the last one
that did not, ``x-client-OS`` (the kernel release) and ``x-client-CPU`` (the machine), and ``x-app-name`` /
``x-app-ver`` from the configuration."""
from __future__ import annotations

import platform
from typing import Any, Dict, List, Optional

import pytest

import nativeauth as na
from emulator_protocol import Emulator

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"

# The api id and operation of each endpoint (the path below the tenant), as MSAL iOS's request configurator
# assigns them; the token endpoint's depends on the grant.
CURRENT = {
    "oauth2/v2.0/initiate": "4|74002,2|", "oauth2/v2.0/challenge": "4|74002,3|",
    "oauth2/v2.0/introspect": "4|74002,4|",
    "signup/v1.0/start": "4|75010,3|", "signup/v1.0/challenge": "4|75010,4|", "signup/v1.0/continue": "4|75010,5|",
    "resetpassword/v1.0/start": "4|75009,0|", "resetpassword/v1.0/challenge": "4|75009,1|",
    "resetpassword/v1.0/continue": "4|75009,2|", "resetpassword/v1.0/submit": "4|75009,3|",
    "resetpassword/v1.0/poll_completion": "4|75009,4|",
    "register/v1.0/introspect": "4|75029,0|", "register/v1.0/challenge": "4|75029,1|",
    "register/v1.0/continue": "4|75029,2|",
}
TOKEN = {"refresh_token": "4|75002,1|", "urn:ietf:params:oauth:grant-type:device_code": "4|622,0|"}


def expected_current(request: Dict[str, Any]) -> Optional[str]:
    """What a logged request's x-client-current-telemetry must be (None: it must carry none)."""
    endpoint = request["path"].split("/", 2)[2]  # below /<tenant>/
    if endpoint == "oauth2/v2.0/token":
        return TOKEN.get(request["fields"].get("grant_type", ""), "4|75002,0|")
    if endpoint == "oauth2/v2.0/devicecode":
        return "4|622,0|"
    return CURRENT.get(endpoint)


def identity_requests(emulator: Emulator) -> List[Dict[str, Any]]:
    return [r for r in emulator.requests() if not r["path"].startswith(("/_emulator", "/api/"))]


def telemetry_requests(emulator: Emulator) -> List[Dict[str, Any]]:
    """The identity requests that carry telemetry (not OIDC discovery)."""
    return [r for r in identity_requests(emulator) if "x-client-last-telemetry" in r["headers"]]


def test_every_native_auth_and_token_request_names_its_operation(emulator: Emulator) -> None:
    emulator.control("POST", "settings", {"reset_poll_interval": 0})
    todo = emulator.apis["ToDoList"]["scopes"]
    with na.Client(emulator.authority, emulator.client_id, capabilities=["mfa_required", "registration_required"],
                   app_name="Contoso Notes", app_version="2.1.0") as client:
        emulator.control("DELETE", "requests")
        assert isinstance(client.sign_in(ANN, ANN_PW, scopes=todo), na.SignedIn)
        assert not client.get_access_token(todo, force_refresh=True).from_cache
        assert client.get_access_token(todo).from_cache  # the cached-token path sends nothing
        reset = client.reset_password(ANN)
        assert isinstance(reset, na.CodeRequired)
        new_pw = reset.submit_code(emulator.last_code(ANN))
        assert isinstance(new_pw, na.PasswordRequired)
        assert isinstance(new_pw.submit_password("N3w-Passw0rd!"), na.PasswordResetCompleted)
        up = client.sign_up("telemetry.user@contoso.com", "Str0ng-Passw0rd!", attributes={"displayName": "T"})
        assert isinstance(up, na.CodeRequired)
        assert isinstance(up.submit_code(emulator.last_code("telemetry.user@contoso.com")), na.SignUpCompleted)
        mfa = client.sign_in("mike@contoso.com", "Mfa-Passw0rd!")
        assert isinstance(mfa, na.MfaRequired)
        code = mfa.request_challenge(mfa.methods[0])
        assert isinstance(code.submit_code(emulator.last_code("mike.backup@fabrikam.com")), na.SignedIn)
        reg = client.sign_in("rita@contoso.com", "Reg-Passw0rd!")
        assert isinstance(reg, na.RegistrationRequired)
        reg_code = reg.register_method("rita.tel@fabrikam.com")
        assert isinstance(reg_code, na.CodeRequired)
        assert isinstance(reg_code.submit_code(emulator.last_code("rita.tel@fabrikam.com")), na.SignedIn)
        device = client.sign_in_device_code(todo)
        assert isinstance(device, na.DeviceCodeRequired)
        emulator.control("POST", "device/approve", {"user_code": device.user_code, "email": ANN})
        assert isinstance(device.wait(timeout=20), na.SignedIn)
    log = identity_requests(emulator)
    seen = {r["path"].split("/", 2)[2] for r in log}
    assert seen >= set(CURRENT) | {"oauth2/v2.0/token", "oauth2/v2.0/devicecode"}, seen
    grants = {r["fields"].get("grant_type") for r in log if r["path"].endswith("/oauth2/v2.0/token")}
    assert grants >= {"password", "refresh_token", "mfa_oob", "continuation_token",
                      "urn:ietf:params:oauth:grant-type:device_code"}, grants
    for r in log:
        headers = r["headers"]
        assert headers.get("x-client-current-telemetry") == expected_current(r), r["path"]
        if expected_current(r) is not None:
            assert headers.get("x-client-last-telemetry", "").startswith("4|0|"), r["path"]
        assert headers.get("x-client-os") == platform.release() and headers.get("x-client-os") != "Linux"
        assert headers.get("x-client-cpu") == platform.machine()
        assert headers.get("x-app-name") == "Contoso Notes" and headers.get("x-app-ver") == "2.1.0"
    # OIDC discovery is not a token request: no telemetry, the identity headers still.
    discovery = [r for r in log if r["path"].endswith("openid-configuration")]
    assert discovery and "x-client-current-telemetry" not in discovery[0]["headers"]


def test_last_telemetry_names_the_failed_requests_until_one_succeeds(emulator: Emulator, client: na.Client) -> None:
    emulator.control("DELETE", "requests")
    state = client.sign_in(ANN)
    assert isinstance(state, na.PasswordRequired)
    with pytest.raises(na.InvalidCredentialsError) as wrong:
        state.submit_password("wrong")
    correlation = wrong.value.server.correlation_id if wrong.value.server else None
    assert correlation
    with pytest.raises(na.InvalidCredentialsError):
        state.submit_password("wrong again")
    assert isinstance(state.submit_password(ANN_PW), na.SignedIn)
    assert isinstance(client.sign_in(ANN, ANN_PW), na.SignedIn)
    last = [r["headers"]["x-client-last-telemetry"] for r in telemetry_requests(emulator)]
    assert len(last) == 8, last
    # initiate, challenge: nothing failed yet; then the two wrong passwords, each carried by the next request.
    assert last[:3] == ["4|0|||"] * 3, last
    assert last[3] == f"4|0|75002,{correlation}|invalid_grant|", last
    assert last[4] == f"4|0|75002,{correlation},75002,{correlation}|invalid_grant,invalid_grant|", last
    assert last[5:] == ["4|0|||"] * 3, last  # the successful token request ended the count


def test_a_suberror_is_what_counts_and_app_identity_is_checked(emulator: Emulator) -> None:
    emulator.control("DELETE", "requests")
    with na.Client(emulator.authority, emulator.client_id, capabilities=["mfa_required"]) as client:
        assert isinstance(client.sign_in("mike@contoso.com", "Mfa-Passw0rd!"), na.MfaRequired)
    token, introspect = telemetry_requests(emulator)[-2:]
    assert token["path"].endswith("/token") and introspect["path"].endswith("/introspect")
    assert introspect["headers"]["x-client-last-telemetry"].endswith("|mfa_required|")
    for bad in ["", " x", "x ", "é", "a\tb", "x" * 129]:
        with pytest.raises(na.InvalidArgumentError):
            na.Client(emulator.authority, emulator.client_id, app_name=bad)
        with pytest.raises(na.InvalidArgumentError):
            na.Client(emulator.authority, emulator.client_id, app_version=bad)
    with na.Client(emulator.authority, emulator.client_id, app_name="A", app_version="1") as named:
        assert named.info["config"]["app_name"] == "A" and named.info["config"]["app_version"] == "1"
