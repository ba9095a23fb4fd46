"""Every flow through the Python surface, against the emulator."""
import pytest

import nativeauth as na
from emulator_protocol import Emulator

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"


def test_tutorial_two_apis(emulator: Emulator, client: na.Client) -> None:
    todo, notes = emulator.apis["ToDoList"], emulator.apis["Notes"]
    state = client.sign_in(ANN, ANN_PW, scopes=[todo["scopes"][0]])
    assert isinstance(state, na.SignedIn)
    assert state.account.username == ANN and state.account.home_account_id.endswith(".aaaabbbb-0000-cccc-1111-dddd2222eeee")
    assert "token=" not in repr(state.token)  # tokens stay out of reprs
    t1 = client.get_access_token([todo["scopes"][0]])
    assert t1.from_cache and t1.access_token == state.token.access_token
    r1 = client.call_api(todo["url"], [todo["scopes"][0]])
    assert r1.ok and r1.body["user"] == ANN
    t2 = client.get_access_token([notes["scopes"][0]])
    assert not t2.from_cache and notes["scopes"][0] in t2.scopes
    r2 = client.call_api(notes["url"], [notes["scopes"][0]])
    assert r2.status == 200 and r2.body["api"] == "Notes"
    created = client.call_api(todo["url"], [todo["scopes"][1]], method="POST", body={"title": "Buy milk"})
    assert created.status == 201 and created.body["created"]["title"] == "Buy milk"
    account = client.account
    assert account is not None and account.claims["preferred_username"] == ANN
    assert client.sign_out() is True
    assert client.account is None
    with pytest.raises(na.NoAccountError):
        client.get_access_token([todo["scopes"][0]])


def test_password_later_and_retry(client: na.Client) -> None:
    state = client.sign_in(ANN)
    assert isinstance(state, na.PasswordRequired)
    with pytest.raises(na.InvalidCredentialsError) as e:
        state.submit_password("wrong")
    assert e.value.state is state and e.value.server is not None and e.value.server.error_codes == (50126,)
    assert isinstance(state.submit_password(ANN_PW), na.SignedIn)
    with pytest.raises(na.InvalidCredentialsError) as e2:
        client.sign_in(ANN, "wrong")
    retry = e2.value.state
    assert isinstance(retry, na.PasswordRequired)  # retry the password on the same flow
    assert isinstance(retry.submit_password(ANN_PW), na.SignedIn)


def test_otp_sign_in_with_resend(emulator: Emulator, client: na.Client) -> None:
    state = client.sign_in("olivia@contoso.com")
    assert isinstance(state, na.CodeRequired) and state.code_length == 8 and "***" in state.sent_to
    old = emulator.last_code("olivia@contoso.com")
    state = state.resend_code()
    with pytest.raises(na.InvalidCodeError) as e:
        state.submit_code(old)
    assert e.value.state is state
    assert isinstance(state.submit_code(emulator.last_code("olivia@contoso.com")), na.SignedIn)


def test_sign_up_password_late_and_attributes(emulator: Emulator, client: na.Client) -> None:
    state = client.sign_up("py.user@contoso.com", attributes={"city": "Oslo"})
    assert isinstance(state, na.CodeRequired) and state.flow_type == "sign_up"
    password = state.submit_code(emulator.last_code("py.user@contoso.com"))
    assert isinstance(password, na.PasswordRequired)
    with pytest.raises(na.InvalidPasswordError) as weak:
        password.submit_password("weakweak")
    assert weak.value.reason == "password_too_weak"
    attributes = password.submit_password("Str0ng-Passw0rd!")
    assert isinstance(attributes, na.AttributesRequired)
    assert [a.name for a in attributes.required_attributes] == ["displayName"]
    with pytest.raises(na.AttributesInvalidError) as bad:
        attributes.submit_attributes({"displayName": "P", "postalCode": "no"})
    assert bad.value.attributes == ["postalCode"]
    done = attributes.submit_attributes({"displayName": "Py User"})
    assert isinstance(done, na.SignUpCompleted)
    signed_in = done.sign_in(scopes=[emulator.apis["Notes"]["scopes"][0]])
    assert isinstance(signed_in, na.SignedIn) and signed_in.account.username == "py.user@contoso.com"


def test_reset_password(emulator: Emulator, client: na.Client) -> None:
    emulator.control("POST", "settings", {"reset_poll_interval": 0})
    code = client.reset_password(ANN)
    assert isinstance(code, na.CodeRequired)
    state = code.submit_code(emulator.last_code(ANN))
    assert isinstance(state, na.PasswordRequired) and state.flow_type == "reset_password"
    done = state.submit_password("N3w-Passw0rd!")
    assert isinstance(done, na.PasswordResetCompleted)
    assert isinstance(done.sign_in(), na.SignedIn)
    assert isinstance(client.sign_in(ANN, "N3w-Passw0rd!"), na.SignedIn)


def test_mfa_and_registration(emulator: Emulator, client: na.Client) -> None:
    state = client.sign_in("mike@contoso.com", "Mfa-Passw0rd!")
    assert isinstance(state, na.MfaRequired) and state.methods[0].channel == "email"
    code = state.request_challenge(state.methods[0])
    assert isinstance(code.submit_code(emulator.last_code("mike.backup@fabrikam.com")), na.SignedIn)
    reg = client.sign_in("rita@contoso.com", "Reg-Passw0rd!")
    assert isinstance(reg, na.RegistrationRequired)
    with pytest.raises(na.InvalidContactError):
        reg.register_method("nope")
    registered = reg.register_method("rita.py@fabrikam.com")
    assert isinstance(registered, na.CodeRequired)
    assert isinstance(registered.submit_code(emulator.last_code("rita.py@fabrikam.com")), na.SignedIn)
