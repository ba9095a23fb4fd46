"""Second factors by SMS, blocked methods and contacts, and which parameter an AADSTS90100 names — through the
Python package against the emulator (issue 28)."""
import urllib.parse

import pytest

import nativeauth as na
from emulator_protocol import Emulator

SAM, SAM_PW, SAM_PHONE = "sam@contoso.com", "Sam-Passw0rd!", "+15555550123"


def add_sam(emulator: Emulator, **extra: str) -> None:
    user = {"email": SAM, "password": SAM_PW, "mfa_email": "sam.backup@fabrikam.com", "mfa_phone": SAM_PHONE}
    user.update(extra)
    assert emulator.control("POST", "users", user)["ok"]


def sms_code(emulator: Emulator, phone: str) -> str:
    messages = emulator.control("GET", "outbox?to=" + urllib.parse.quote(phone))["messages"]
    assert messages and messages[-1]["channel"] == "sms"
    return str(messages[-1]["code"])


def test_mfa_by_sms(emulator: Emulator, client: na.Client) -> None:
    add_sam(emulator)
    state = client.sign_in(SAM, SAM_PW)
    assert isinstance(state, na.MfaRequired)
    assert [m.channel for m in state.methods] == ["email", "sms"]
    sms = state.methods[1]
    assert sms.login_hint is not None and "0123" not in sms.login_hint
    code = state.request_challenge(sms)
    assert code.channel == "sms" and code.code_length == 8 and "0123" not in code.sent_to
    with pytest.raises(na.InvalidCodeError):
        code.submit_code("00000000")
    assert isinstance(code.submit_code(sms_code(emulator, SAM_PHONE)), na.SignedIn)


def test_a_blocked_method_surfaces_auth_method_blocked_and_keeps_the_flow(emulator: Emulator,
                                                                          client: na.Client) -> None:
    add_sam(emulator, mfa_phone="+15555550100")  # a number the emulator refuses to text
    state = client.sign_in(SAM, SAM_PW)
    assert isinstance(state, na.MfaRequired)
    with pytest.raises(na.AuthMethodBlockedError) as blocked:
        state.request_challenge(state.methods[1])
    assert blocked.value.state is state
    assert blocked.value.server is not None and blocked.value.server.suberror == "provider_blocked_by_rep"
    code = state.request_challenge(state.methods[0])  # the email method still works
    assert isinstance(code.submit_code(emulator.last_code("sam.backup@fabrikam.com")), na.SignedIn)


def test_registering_a_phone_number(emulator: Emulator, client: na.Client) -> None:
    state = client.sign_in("rita@contoso.com", "Reg-Passw0rd!")
    assert isinstance(state, na.RegistrationRequired)
    sms = next(m for m in state.methods if m.channel == "sms")
    with pytest.raises(na.InvalidContactError):
        state.register_method("555-0177", sms)
    with pytest.raises(na.ContactBlockedError):
        state.register_method("+15555550100", sms)
    code = state.register_method("+15555550177", sms)
    assert isinstance(code, na.CodeRequired) and code.channel == "sms" and code.sent_to == "+15555550177"
    assert isinstance(code.submit_code(sms_code(emulator, "+15555550177")), na.SignedIn)
    # The next sign-in's second factor is that phone.
    again = client.sign_in("rita@contoso.com", "Reg-Passw0rd!")
    assert isinstance(again, na.MfaRequired) and [m.channel for m in again.methods] == ["sms"]


def test_ninety_one_hundred_names_the_username_or_the_client(emulator: Emulator, client: na.Client) -> None:
    with pytest.raises(na.InvalidUsernameError):
        client.sign_in("not-an-email")
    with na.Client(emulator.authority, "not-a-guid") as malformed:
        with pytest.raises(na.InvalidClientError) as e:
            malformed.sign_in("ann@contoso.com")
        assert e.value.server is not None and e.value.server.error_codes == (90100,)
