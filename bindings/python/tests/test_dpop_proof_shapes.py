"""Many DPoP proofs through ``Client.dpop_proof`` (``na_dpop_proof``) with random methods, URLs (IPv6 and upper-case
hosts, default and other ports, quotes and backslashes in long paths, queries), nonces (up to the 1024-byte bound)
and access tokens: each is three base64url parts without padding, a header and claims that are JSON objects with
exactly the documented members, ``htu`` the URL as RFC 9449 names it, and a signature that verifies with the header's
key (checked with the ``cryptography`` package, not the library). A nonce that is not ``1*NQCHAR`` of at most 1024
bytes is refused before anything is signed."""
from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import time
import urllib.parse
from typing import Optional

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from test_dpop import Provider, jwt_parts, thumbprint

B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
TCHAR = "!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits
NQCHAR = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"\\")


def expected_htu(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    default = 443 if parts.scheme == "https" else 80
    port = "" if parts.port in (None, default) else f":{parts.port}"
    return f"{parts.scheme}://{host.lower()}{port}{parts.path or '/'}"


def random_url(rng: random.Random) -> str:
    host = rng.choice(["127.0.0.1", "[::1]", "[2001:db8::a]", "API.Example.COM", "localhost"])
    # Plain http only to loopback hosts (a token goes nowhere else in clear).
    scheme = rng.choice(["http", "https"]) if host in ("127.0.0.1", "[::1]", "localhost") else "https"
    port = rng.choice(["", ":80", ":443", ":8443", ":1", ":65535"])
    path = "/" + "".join(rng.choice("abcXYZ019-._~!$&'()*+,;=:@\"\\/") for _ in range(rng.choice([0, 5, 40, 2000])))
    return scheme + "://" + host + port + path + rng.choice(["", "?q=1", '?a="b"&c=\\'])


def check(proof: str, method: str, url: str, token: Optional[str], nonce: Optional[str], jkt: str) -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    parts = proof.split(".")
    assert len(parts) == 3 and all(B64URL.match(p) for p in parts), "base64url, no padding"
    header, claims, signed, signature = jwt_parts(proof)
    assert set(header) == {"typ", "alg", "jwk"} and thumbprint(header["jwk"]) == jkt
    expected = {"jti", "htm", "htu", "iat"} | ({"nonce"} if nonce else set()) | ({"ath"} if token is not None else set())
    assert set(claims) == expected
    assert claims["htm"] == method and claims["htu"] == expected_htu(url)
    assert len(base64.urlsafe_b64decode(claims["jti"] + "==")) == 16
    assert isinstance(claims["iat"], int) and abs(claims["iat"] - time.time()) < 120
    if nonce:
        assert claims["nonce"] == nonce
    if token is not None:
        digest = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        assert claims["ath"] == digest
    jwk = header["jwk"]
    key = ec.EllipticCurvePublicNumbers(int.from_bytes(base64.urlsafe_b64decode(jwk["x"] + "=="), "big"),
                                        int.from_bytes(base64.urlsafe_b64decode(jwk["y"] + "=="), "big"),
                                        ec.SECP256R1()).public_key()
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
    json.dumps(claims)  # a JSON object that round-trips


def test_random_proofs_are_well_formed_and_verify(emulator: Emulator) -> None:
    p = Provider(emulator)
    rng = random.Random()
    with p.client() as client:
        p.sign_in(client)
        token = client.get_access_token([p.todo])
        jkt = p.introspect(token.access_token)["cnf"]["jkt"]
        for _ in range(300):
            method = "".join(rng.choice(TCHAR) for _ in range(rng.randint(1, 16)))
            url = random_url(rng)
            nonce = rng.choice([None, "".join(rng.choice(NQCHAR) for _ in range(rng.choice([1, 30, 1024])))])
            access = rng.choice([None, token.access_token, "x" * rng.randint(0, 300) + "é✓"])
            proof = client.dpop_proof(method, url, access, nonce=nonce)
            check(proof, method, url, access, nonce, jkt)


@pytest.mark.parametrize("nonce", ["", "n" * 1025, "a b", 'a"b', "a\\b", "é", "a\u007fb", "a\nb"])
def test_a_nonce_that_is_not_one_is_refused(emulator: Emulator, nonce: str) -> None:
    p = Provider(emulator)
    with p.client() as client:
        p.sign_in(client)
        with pytest.raises(na.InvalidArgumentError):
            client.dpop_proof("GET", p.todo_url, nonce=nonce)
