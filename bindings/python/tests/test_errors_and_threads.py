"""Error classes from real server answers, bad arguments, threads, close()."""
import os
import pathlib
import threading
from typing import Callable, List, Tuple, Type, Union

import pytest

import nativeauth as na
from emulator_protocol import Emulator

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"


def test_error_classes_from_server_answers(emulator: Emulator, client: na.Client) -> None:
    cases: List[Tuple[Callable[[], object], Type[na.NativeAuthError]]] = [
        (lambda: client.sign_in("nobody@contoso.com"), na.UserNotFoundError),
        (lambda: client.sign_in("not-an-email"), na.InvalidUsernameError),
        (lambda: client.sign_up(ANN), na.UserAlreadyExistsError),
        (lambda: client.sign_up("x@contoso.com", "weakweak"), na.InvalidPasswordError),
        (lambda: client.sign_up("x@contoso.com", attributes={"postalCode": "x"}), na.AttributesInvalidError),
        (lambda: client.reset_password("olivia@contoso.com"), na.UserHasNoPasswordError),
        (lambda: client.get_access_token(["api://x/y"]), na.NoAccountError),
    ]
    for call, cls in cases:
        with pytest.raises(cls) as e:
            call()
        assert e.value.code == cls.code and e.value.message
        assert isinstance(e.value, na.NativeAuthError)
    with pytest.raises(na.NoAccountError):
        client.get_access_token(["api://x/y"])
    assert isinstance(client.sign_in(ANN, ANN_PW), na.SignedIn)
    with pytest.raises(na.InvalidScopeError) as e:
        client.get_access_token(["api://99999999-0000-0000-0000-000000000000/X"])
    assert isinstance(e.value, ValueError) and e.value.server is not None and e.value.server.error == "invalid_scope"
    emulator.control("POST", "users/revoke", {"email": ANN})
    with pytest.raises(na.InteractionRequiredError):
        client.get_access_token([emulator.apis["Notes"]["scopes"][0]])
    with na.Client(emulator.authority, emulator.client_id, challenge_types=["oob"]) as oob_only:
        with pytest.raises(na.BrowserRequiredError) as b:
            oob_only.sign_in(ANN)
        assert b.value.redirect_reason
    with na.Client(emulator.authority, emulator.ready["confidential_client_id"]) as confidential:
        with pytest.raises(na.InvalidClientError):
            confidential.sign_in(ANN)
    state = client.sign_in("olivia@contoso.com")
    assert isinstance(state, na.CodeRequired)
    emulator.control("POST", "clock", {"advance_seconds": 700})
    with pytest.raises(na.FlowExpiredError):
        state.submit_code("12345678")
    with pytest.raises(na.FlowInvalidError):
        state.resend_code()


def test_network_errors(emulator: Emulator) -> None:
    with na.Client("http://127.0.0.1:1/contoso.onmicrosoft.com", emulator.client_id) as dead:
        with pytest.raises(na.NetworkError) as e:
            dead.sign_in(ANN)
        assert isinstance(e.value, ConnectionError)
    emulator.control("POST", "faults", {"path": "/oauth2/v2.0/initiate", "delay_ms": 2000})
    with na.Client(emulator.authority, emulator.client_id, request_timeout_ms=200) as slow:
        with pytest.raises(na.RequestTimeoutError) as t:
            slow.sign_in(ANN)
        assert isinstance(t.value, TimeoutError)
    emulator.control("POST", "faults", {"path": "/oauth2/v2.0/initiate", "status": 500, "count": 2})
    with na.Client(emulator.authority, emulator.client_id) as c:
        with pytest.raises(na.ServerError) as s:
            c.sign_in(ANN)
        assert s.value.server is not None and s.value.server.http_status == 500


def test_bad_arguments_raise_clean_exceptions(emulator: Emulator, client: na.Client) -> None:
    # Wrong types on purpose: what the type checker refuses is refused at run time too.
    bad_calls: List[Callable[[], object]] = [
        lambda: client.sign_in(None),  # type: ignore[arg-type]
        lambda: client.sign_in(123),  # type: ignore[arg-type]
        lambda: client.sign_in(b"ann@contoso.com"),  # type: ignore[arg-type]
        lambda: client.sign_in(ANN, password=5),  # type: ignore[arg-type]
        lambda: client.sign_in("\udcff@contoso.com"),  # not encodable as UTF-8
        lambda: client.sign_in(ANN, scopes="api://x"),  # a str is a Sequence[str]: refused at run time only
        lambda: client.sign_in(ANN, scopes=[1, 2]),  # type: ignore[list-item]
        lambda: client.get_access_token("api://x"),  # a str is not a sequence of scopes (None: the sign-in's)
        lambda: client.call_api(None, ["x"]),  # type: ignore[arg-type]
        lambda: client.call_api("ftp://x/y", ["x"]),
        lambda: client.sign_up(ANN, attributes=["not", "a", "mapping"]),  # type: ignore[arg-type]
    ]
    for call in bad_calls:
        with pytest.raises(na.InvalidArgumentError) as e:
            call()
        assert isinstance(e.value, ValueError)
    with pytest.raises(na.InvalidUsernameError):
        client.sign_in("")
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, None)  # client_id is required
    with pytest.raises(na.InvalidArgumentError) as e:
        na.Client("http://example.com/t", emulator.client_id)
    assert "loopback" in e.value.message
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, log_level="loud")
    assert emulator.requests() == []  # none of it reached the server


def test_threads_share_one_client(emulator: Emulator, client: na.Client) -> None:
    notes = emulator.apis["Notes"]["scopes"][0]
    assert isinstance(client.sign_in(ANN, ANN_PW), na.SignedIn)
    tokens: List[str] = []
    errors: List[Exception] = []

    def work() -> None:
        try:
            tokens.append(client.get_access_token([notes]).access_token)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(tokens)) == 1
    assert len([r for r in emulator.requests("/oauth2/v2.0/token") if r["fields"].get("grant_type") == "refresh_token"]) == 1


def test_close_is_idempotent_and_safe_mid_call(emulator: Emulator) -> None:
    c = na.Client(emulator.authority, emulator.client_id)
    emulator.control("POST", "faults", {"path": "/oauth2/v2.0/initiate", "delay_ms": 500})
    started = threading.Event()
    outcome: List[Union[na.State, na.NativeAuthError]] = []

    def slow_call() -> None:
        started.set()
        try:
            outcome.append(c.sign_in(ANN))
        except na.NativeAuthError as e:
            outcome.append(e)

    t = threading.Thread(target=slow_call)
    t.start()
    started.wait()
    c.close()
    c.close()
    t.join()
    assert len(outcome) == 1  # the in-flight call finished one way or the other
    assert c.closed
    with pytest.raises(na.ClientClosedError):
        c.sign_in(ANN)


def test_logging_to_the_logging_module(emulator: Emulator, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    caplog.set_level(logging.DEBUG, logger="nativeauth")
    with na.Client(emulator.authority, emulator.client_id, log_level="verbose") as c:
        c.sign_in(ANN, ANN_PW)
    text = caplog.text
    assert "initiate" in text and "signed in" in text
    assert ANN not in text and ANN_PW not in text and "eyJ" not in text


def test_more_error_classes_from_server_answers(emulator: Emulator, client: na.Client) -> None:
    notes = emulator.apis["Notes"]["scopes"][0]
    reg = client.sign_in("rita@contoso.com", "Reg-Passw0rd!")
    assert isinstance(reg, na.RegistrationRequired)
    with pytest.raises(na.ContactBlockedError):
        reg.register_method("blocked@fabrikam.com")
    # an MFA method the service blocks
    mfa = client.sign_in("mike@contoso.com", "Mfa-Passw0rd!")
    assert isinstance(mfa, na.MfaRequired)
    emulator.control("POST", "faults", {"path": "/oauth2/v2.0/challenge", "status": 400,
                                        "body": {"error": "access_denied", "suberror": "provider_blocked_by_rep", "error_codes": [550024]}})
    with pytest.raises(na.AuthMethodBlockedError) as blocked:
        mfa.request_challenge()
    assert blocked.value.state is mfa
    # refresh answers
    assert isinstance(client.sign_in(ANN, ANN_PW), na.SignedIn)
    emulator.control("POST", "faults", {"path": "/oauth2/v2.0/token", "status": 400,
                                        "body": {"error": "invalid_grant", "error_codes": [50142]}})
    with pytest.raises(na.PasswordChangeRequiredError):
        client.get_access_token([notes])
    assert isinstance(client.sign_in(ANN, ANN_PW), na.SignedIn)
    emulator.control("POST", "clock", {"advance_seconds": 86401})
    with pytest.raises(na.RefreshTokenExpiredError) as expired:
        client.get_access_token([notes])
    assert isinstance(expired.value, na.InteractionRequiredError)


def test_tls(tls_emulator: Emulator) -> None:
    with na.Client(tls_emulator.authority, tls_emulator.client_id, ca_bundle=tls_emulator.ready["ca_file"]) as trusted:
        assert isinstance(trusted.sign_in(ANN, ANN_PW), na.SignedIn)
    with na.Client(tls_emulator.authority, tls_emulator.client_id, ca_bundle="/etc/ssl/certs/ca-certificates.crt") as untrusted:
        with pytest.raises(na.TLSError) as e:
            untrusted.sign_in(ANN)
        assert isinstance(e.value, ConnectionError)


def test_a_library_named_by_nativeauth_library_that_does_not_load_is_an_import_error(tmp_path: pathlib.Path) -> None:
    """NATIVEAUTH_LIBRARY is an override: when what it names does not load, the import fails saying so (it does not
    quietly load another library)."""
    import subprocess
    import sys

    src = str(pathlib.Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src, "NATIVEAUTH_LIBRARY": str(tmp_path / "missing.so")}
    r = subprocess.run([sys.executable, "-c", "import nativeauth"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert r.returncode != 0
    assert "ImportError: nativeauth: cannot load the library NATIVEAUTH_LIBRARY names" in r.stderr
    assert "missing.so: not found" in r.stderr
