"""A browser sign-in's ID token is checked against the provider's signing keys (JWKS), loaded as a request of its own
before the sign-in is stored: a provider whose key set fails, hangs, answers garbage, lacks the token's key or names
it twice never leaves a stored account, and nothing secret reaches the error."""
import json
import threading
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import pytest

import nativeauth
from browser_support import redirect_from_another_device
from emulator_protocol import Emulator
from nativeauth import BrowserPending, Client, SignedIn

JWKS = "/discovery/v2.0/keys"


def pasted_redirect(client: Client, emulator: Emulator) -> Tuple[BrowserPending, str]:
    """A browser="none" sign-in and the redirect the user pastes back (the code not redeemed yet)."""
    ann = emulator.users["password"]
    pending = client.sign_in_interactive(browser="none", login_hint=ann["email"])
    assert isinstance(pending, BrowserPending)
    return pending, redirect_from_another_device(pending.authorization_url, ann["email"], ann["password"])


def secrets_of(redirect: str) -> List[str]:
    """What must never appear in an error: the authorization code and the state."""
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect).query))
    return [q["code"], q["state"]]


def key_requests(emulator: Emulator) -> int:
    return len(emulator.requests(JWKS))


def refused(client: Client, emulator: Emulator, error: Any) -> None:
    """Completes a sign-in expecting `error`; checks nothing was stored and nothing secret was said."""
    pending, redirect = pasted_redirect(client, emulator)
    with pytest.raises(error) as e:
        pending.submit_redirect(redirect)
    for secret in secrets_of(redirect):
        assert secret not in str(e.value)
    assert client.accounts == []


def real_key(emulator: Emulator) -> Dict[str, Any]:
    """The provider's published key (the emulator has one)."""
    with urllib.request.urlopen(emulator.authority + JWKS, timeout=10) as r:  # noqa: S310 - the local emulator
        keys = json.loads(r.read())
    assert len(keys["keys"]) == 1
    return dict(keys["keys"][0])


def test_a_key_set_that_fails_or_answers_garbage_stores_nothing(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id) as client:
        for fault in ({"status": 500}, {"body": "not a key set", "content_type": "text/plain"},
                      {"body": {"keys": "none"}}, {"drop": True}):
            # A failed GET is sent again (idempotent): every try fails.
            emulator.control("POST", "faults", {"path": JWKS, "count": 5, **fault})
            refused(client, emulator, (nativeauth.ServerError, nativeauth.NetworkError, nativeauth.InternalError))
            emulator.control("DELETE", "faults")
        # Nothing was cached from those answers: the next sign-in fetches the keys again and is stored.
        before = key_requests(emulator)
        pending, redirect = pasted_redirect(client, emulator)
        assert isinstance(pending.submit_redirect(redirect), SignedIn)
        assert key_requests(emulator) == before + 1


def test_a_token_naming_a_key_the_set_lacks_is_refused_and_the_right_one_still_signs_in(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id) as client:
        emulator.control("POST", "token_answers", {"grant_type": "authorization_code",
                                                   "id_token_header": {"kid": "rotated-away"}})
        refused(client, emulator, nativeauth.IdTokenInvalidError)
        fetched = key_requests(emulator)
        assert fetched == 1
        # The key set the first sign-in cached holds the provider's real key: the next sign-in needs no request.
        pending, redirect = pasted_redirect(client, emulator)
        assert isinstance(pending.submit_redirect(redirect), SignedIn)
        assert key_requests(emulator) == fetched
        # A second unknown key within the refetch interval: refused without another request (the throttle).
        emulator.control("POST", "token_answers", {"grant_type": "authorization_code",
                                                   "id_token_header": {"kid": "another"}})
        pending, redirect = pasted_redirect(client, emulator)
        with pytest.raises(nativeauth.IdTokenInvalidError):
            pending.submit_redirect(redirect)
        assert key_requests(emulator) == fetched


def test_two_keys_by_one_name_and_a_key_set_without_the_signing_key(emulator: Emulator) -> None:
    real = real_key(emulator)
    impostor = dict(real, n=real["n"][:-4] + ("AAAA" if not real["n"].endswith("AAAA") else "BBBB"))
    with Client(emulator.authority, emulator.client_id) as client:
        # The first key by the token's name is the one it must verify with: an impostor listed first refuses it.
        emulator.control("POST", "faults", {"path": JWKS, "body": {"keys": [impostor, real]}})
        refused(client, emulator, nativeauth.IdTokenInvalidError)
    with Client(emulator.authority, emulator.client_id) as client:
        # A set holding only other keys.
        emulator.control("POST", "faults", {"path": JWKS, "body": {"keys": [dict(impostor, kid="other")]}})
        refused(client, emulator, nativeauth.IdTokenInvalidError)
    with Client(emulator.authority, emulator.client_id) as client:
        # A token without a kid against a set of two keys: no key can be chosen.
        emulator.control("POST", "faults", {"path": JWKS, "body": {"keys": [real, dict(impostor, kid="other")]}})
        emulator.control("POST", "token_answers", {"grant_type": "authorization_code",
                                                   "id_token_header": {"kid": None}})
        refused(client, emulator, nativeauth.IdTokenInvalidError)


def test_a_token_that_is_not_rs256_is_refused_as_such_whatever_the_key_set_answers(emulator: Emulator) -> None:
    """An ID token whose header already refuses it (not RS256, or critical parameters) is id_token_invalid: a key
    set that cannot be had meanwhile does not turn that into a server or network error (and is not asked for)."""
    with Client(emulator.authority, emulator.client_id) as client:
        for header in ({"alg": "HS256"}, {"alg": "none"}, {"crit": ["exp"]}):
            emulator.control("POST", "faults", {"path": JWKS, "status": 500, "count": 5})
            emulator.control("POST", "token_answers", {"grant_type": "authorization_code", "id_token_header": header})
            refused(client, emulator, nativeauth.IdTokenInvalidError)
            emulator.control("DELETE", "faults")
        assert key_requests(emulator) == 0


def test_a_key_set_that_hangs_ends_with_the_cancel_and_stores_nothing(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id) as client:
        pending, redirect = pasted_redirect(client, emulator)
        emulator.control("POST", "faults", {"path": JWKS, "hold": True, "count": 5})
        outcome: Dict[str, Optional[BaseException]] = {}

        def submit() -> None:
            try:
                pending.submit_redirect(redirect)
                outcome["error"] = None
            except BaseException as e:  # noqa: BLE001 - recorded for the assertion
                outcome["error"] = e

        t = threading.Thread(target=submit)
        t.start()
        deadline = threading.Event()
        for _ in range(2000):  # readiness: the key request reached the emulator and is held
            if emulator.control("GET", "faults").get("held", 0) >= 1:
                break
            deadline.wait(0.01)
        assert emulator.control("GET", "faults").get("held", 0) >= 1
        pending.cancel()
        t.join(30)
        assert not t.is_alive()
        emulator.control("POST", "faults/release")
        error = outcome.get("error")
        assert isinstance(error, (nativeauth.CancelledError, nativeauth.FlowInvalidError)), repr(error)
        for secret in secrets_of(redirect):
            assert secret not in str(error)
        assert client.accounts == []


def test_a_key_set_that_hangs_past_the_request_timeout_stores_nothing(emulator: Emulator) -> None:
    with Client(emulator.authority, emulator.client_id, request_timeout_ms=1500) as client:
        emulator.control("POST", "faults", {"path": JWKS, "hold": True, "count": 5})
        refused(client, emulator, nativeauth.NetworkError)
        emulator.control("POST", "faults/release")


def test_nothing_secret_reaches_the_log_when_the_key_check_fails(emulator: Emulator) -> None:
    lines: List[str] = []

    def log(level: int, message: str, correlation_id: Optional[str]) -> None:
        lines.append(message)

    with Client(emulator.authority, emulator.client_id, log_level="verbose", log_handler=log) as client:
        redirects: List[str] = []
        emulator.control("POST", "faults", {"path": JWKS, "status": 500, "count": 5})
        pending, redirect = pasted_redirect(client, emulator)
        redirects.append(redirect)
        with pytest.raises(nativeauth.ServerError):
            pending.submit_redirect(redirect)
        emulator.control("DELETE", "faults")
        emulator.control("POST", "token_answers", {"grant_type": "authorization_code",
                                                   "id_token_header": {"kid": "rotated-away"}})
        pending, redirect = pasted_redirect(client, emulator)
        redirects.append(redirect)
        with pytest.raises(nativeauth.IdTokenInvalidError):
            pending.submit_redirect(redirect)
    assert lines
    for redirect in redirects:
        for secret in secrets_of(redirect):
            assert not any(secret in line for line in lines)
    assert not any("rotated-away" in line or "eyJ" in line for line in lines)
