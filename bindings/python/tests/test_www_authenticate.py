"""nativeauth.parse_www_authenticate: a WWW-Authenticate header's challenges and claims challenge through the C ABI
(na_parse_www_authenticate), as typed values; bad input raises InvalidArgumentError. No client, no emulator."""
from __future__ import annotations

import base64
import dataclasses
import json

import pytest

import nativeauth as na
from nativeauth import _native

CLAIMS = '{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}'
GRAPH = ('Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", '
         'client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", '
         f'claims="{base64.b64encode(CLAIMS.encode()).decode()}"')


def test_microsoft_graph_claims_challenge() -> None:
    result = na.parse_www_authenticate(GRAPH)
    assert isinstance(result, na.WWWAuthenticate)
    assert result.claims == CLAIMS
    assert json.loads(result.claims) == {"access_token": {"nbf": {"essential": True, "value": "1604106651"}}}
    (challenge,) = result.challenges
    assert isinstance(challenge, na.Challenge)
    assert challenge.scheme == "Bearer" and challenge.is_scheme("bearer") and challenge.token68 is None
    assert challenge.params == {
        "realm": "", "authorization_uri": "https://login.microsoftonline.com/common/oauth2/authorize",
        "client_id": "00000003-0000-0000-c000-000000000000", "error": "insufficient_claims",
        "claims": base64.b64encode(CLAIMS.encode()).decode(),
    }
    assert challenge.claims == CLAIMS


def test_result_is_the_c_document() -> None:
    """Every member of the C document is a field of the same name, with the same value."""
    header = GRAPH + ', Negotiate abc==, Basic realm="a \\"b\\"", BASIC Realm=x, realm=y'
    rc, doc = _native.parse_www_authenticate(header.encode())
    assert rc == 0 and set(doc) == {"v", "challenges", "claims"}
    result = na.parse_www_authenticate(header)
    assert result.claims == doc["claims"]
    assert [dataclasses.asdict(c) for c in result.challenges] == [
        {"scheme": c["scheme"], "params": c["params"], "token68": c.get("token68"), "claims": c.get("claims")}
        for c in doc["challenges"]
    ]
    assert [(c.scheme, c.token68) for c in result.challenges] == \
        [("Bearer", None), ("Negotiate", "abc=="), ("Basic", None), ("BASIC", None)]
    assert result.challenges[2].params == {"realm": 'a "b"'}
    assert result.challenges[3].params == {"realm": "x"}  # the first of a name sent twice


def test_base64url_claims_and_other_challenges() -> None:
    claims = '{"access_token":{"acrs":{"essential":true,"value":"c1"},"x":"??>>"}}'
    url = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    assert "_" in url
    result = na.parse_www_authenticate(f'Basic realm="x", PoP claims="{url}", '
                                       f'Bearer error="insufficient_claims", claims="{url}"')
    assert [c.scheme for c in result.challenges] == ["Basic", "PoP", "Bearer"]
    assert [c.claims for c in result.challenges] == [None, claims, claims]
    assert result.claims == claims
    assert na.parse_www_authenticate('Basic realm="x", Bearer error="invalid_token"').claims is None
    undecodable = na.parse_www_authenticate('Bearer error="insufficient_claims", claims="not base64!"')
    assert undecodable.claims is None and undecodable.challenges[0].params["claims"] == "not base64!"


def test_empty_headers_have_no_challenges() -> None:
    for header in ("", "  ", ", ,,"):
        assert na.parse_www_authenticate(header) == na.WWWAuthenticate((), None)


@pytest.mark.parametrize("header, message", [
    ('Bearer error="insufficient_claims', "unterminated quoted string at byte 13"),
    ("Bearer a=b, =c", "a parameter without a name"),
    ("Negotiate abc==, realm=x", "a parameter after a token68"),
    ("Bearer a=\"\x01\"", "a control character"),
    ("Bearer " + "x" * 70_000, "larger than 65536 bytes"),
    ("Bearer a=\"x\0y\"", "NUL character"),
    ("Bearer a=\"\udc80\"", "UTF-8"),
])
def test_bad_headers_raise_invalid_argument(header: str, message: str) -> None:
    with pytest.raises(na.InvalidArgumentError) as caught:
        na.parse_www_authenticate(header)
    assert caught.value.code == "invalid_argument" and caught.value.status == -1
    assert message in str(caught.value)
    assert "insufficient" not in str(caught.value)  # the header is never quoted


def test_not_a_str() -> None:
    with pytest.raises(na.InvalidArgumentError, match="must be a str"):
        na.parse_www_authenticate(b"Bearer")  # type: ignore[arg-type]


def test_invalid_utf8_is_refused_by_the_library() -> None:
    rc, doc = _native.parse_www_authenticate(b'Basic realm="\xff"')
    assert rc == -1 and doc["error"]["code"] == "invalid_argument" and "UTF-8" in doc["error"]["message"]


def test_exported() -> None:
    for name in ("parse_www_authenticate", "WWWAuthenticate", "Challenge"):
        assert name in na.__all__
