"""DPoP (RFC 9449) through the Python package against the emulator's generic OpenID Connect provider: sign-ins bind
their tokens to the account's key, proofs go with every token request and API call, nonces are answered once, the
key stays with the account in the cache file (a restart and a second process use it) and leaves at sign-out.

The proofs are checked here with code of this test's own (the JWK thumbprint of RFC 7638 with hashlib, the ES256
signature with the ``cryptography`` package), not with the library's."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from nativeauth.aio import AsyncClient


def b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def jwt_parts(token: str) -> Tuple[Dict[str, Any], Dict[str, Any], bytes, bytes]:
    header, claims, signature = token.split(".")
    return json.loads(b64url(header)), json.loads(b64url(claims)), f"{header}.{claims}".encode(), b64url(signature)


def thumbprint(jwk: Dict[str, Any]) -> str:
    """RFC 7638: SHA-256 of the required members in lexicographic order, without whitespace."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def verify_proof(proof: str, method: str, url: str, access_token: Optional[str]) -> str:
    """Checks a proof as a resource server would (with the cryptography package); returns its key's thumbprint."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    header, claims, signed, signature = jwt_parts(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    jwk = header["jwk"]
    key = ec.EllipticCurvePublicNumbers(int.from_bytes(b64url(jwk["x"]), "big"), int.from_bytes(b64url(jwk["y"]), "big"),
                                        ec.SECP256R1()).public_key()
    assert len(signature) == 64, "JWS ES256: r ‖ s, 32 bytes each"
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    key.verify(der, signed, ec.ECDSA(hashes.SHA256()))  # raises when it does not verify
    parts = urllib.parse.urlsplit(url)
    assert claims["htm"] == method and claims["htu"] == f"{parts.scheme}://{parts.netloc}{parts.path}"
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16 and abs(claims["iat"] - time.time()) < 120
    if access_token is None:
        assert "ath" not in claims
    else:
        digest = base64.urlsafe_b64encode(hashlib.sha256(access_token.encode()).digest()).rstrip(b"=").decode()
        assert claims["ath"] == digest
    return thumbprint(jwk)


class Provider:
    """The emulator's generic provider, as these tests use it."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.oidc: Dict[str, Any] = emulator.ready["oidc"]
        self.todo: str = self.oidc["apis"][0]["scopes"][0]
        self.todo_url: str = self.oidc["apis"][0]["url"]

    def client(self, **kwargs: Any) -> na.Client:
        kwargs.setdefault("dpop", True)
        return na.Client(self.oidc["authority"], self.oidc["client_id"], authority_type="oidc", **kwargs)

    def sign_in(self, client: na.Client) -> na.SignedIn:
        state = client.sign_in_device_code([self.todo])
        assert isinstance(state, na.DeviceCodeRequired)
        self.emulator.control("POST", "device/approve", {"user_code": state.user_code, "email": "ann@contoso.com"})
        signed = state.wait(timeout=30)
        assert isinstance(signed, na.SignedIn)
        return signed

    def introspect(self, token: str) -> Dict[str, Any]:
        data = urllib.parse.urlencode({"token": token, "client_id": self.oidc["client_id"]}).encode()
        with urllib.request.urlopen(self.oidc["issuer"] + "/introspect", data, timeout=10) as r:
            result: Dict[str, Any] = json.loads(r.read())
            return result

    def outcomes(self, place: str) -> List[str]:
        return [p["outcome"] for p in self.emulator.control("GET", "dpop")["proofs"] if p["place"] == place]

    def get(self, url: str, headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()


def test_a_device_code_sign_in_binds_the_tokens_to_the_accounts_key(emulator: Emulator) -> None:
    p = Provider(emulator)
    emulator.control("POST", "settings", {"oidc_dpop_nonce": "required", "api_dpop_nonce": "required"})
    with p.client() as client:
        signed = p.sign_in(client)
        assert signed.token.token_type == "DPoP"
        assert p.outcomes("token")[-2:] == ["use_dpop_nonce", "accepted"], "the poll's nonce challenge, answered once"
        token = client.get_access_token([p.todo])
        assert token.token_type == "DPoP" and token.from_cache
        proof = client.dpop_proof("GET", p.todo_url, token.access_token)
        jkt = verify_proof(proof, "GET", p.todo_url, token.access_token)
        assert p.introspect(token.access_token)["cnf"] == {"jkt": jkt}
        response = client.call_api(p.todo_url, [p.todo])
        assert response.status == 200 and response.body["user"] == "ann@contoso.com"
        assert p.outcomes("resource") == ["use_dpop_nonce", "accepted"]


def test_requests_the_app_sends_itself_with_dpop_proof(emulator: Emulator) -> None:
    p = Provider(emulator)
    emulator.control("POST", "settings", {"api_dpop_nonce": "required"})
    with p.client() as client:
        p.sign_in(client)
        token = client.get_access_token([p.todo])
        auth = {"Authorization": f"DPoP {token.access_token}"}
        # As a bearer token it is refused: it is worth nothing without the key.
        assert p.get(p.todo_url, {"Authorization": f"Bearer {token.access_token}"})[0] == 401
        status, headers, _ = p.get(p.todo_url, {**auth, "DPoP": client.dpop_proof("GET", p.todo_url, token.access_token)})
        assert status == 401 and 'error="use_dpop_nonce"' in headers["WWW-Authenticate"]
        challenge = na.parse_www_authenticate(headers["WWW-Authenticate"])
        assert challenge.challenges[0].scheme == "DPoP" and challenge.challenges[0].params["error"] == "use_dpop_nonce"
        nonce = headers["DPoP-Nonce"]
        proof = client.dpop_proof("GET", p.todo_url + "?page=2", token.access_token, nonce=nonce)
        assert jwt_parts(proof)[1]["nonce"] == nonce
        status, _, body = p.get(p.todo_url + "?page=2", {**auth, "DPoP": proof})
        assert status == 200 and json.loads(body)["api"] == "ToDoList"
        # The same proof again is a replay.
        assert p.get(p.todo_url + "?page=2", {**auth, "DPoP": proof})[0] == 401
        # Bad arguments are refused before anything is signed.
        with pytest.raises(na.InvalidArgumentError) as bad:
            client.dpop_proof("GET", "http://api.example/x")
        assert bad.value.details.get("field") == "url"
        with pytest.raises(na.InvalidArgumentError):
            client.dpop_proof("GET", p.todo_url, nonce='"quoted"')


def test_a_restart_and_a_second_process_use_the_same_key(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    p = Provider(emulator)
    cache = tmp_path / "cache.json"
    key = bytes(range(32))
    with p.client(cache_path=cache, cache_encryption_key=key) as first:
        p.sign_in(first)
        jkt = verify_proof(first.dpop_proof("GET", p.todo_url), "GET", p.todo_url, None)
    # A second process: the package in another interpreter, the same file and key.
    program = textwrap.dedent("""
        import json, sys
        import nativeauth as na
        cfg = json.loads(sys.argv[1])
        with na.Client(cfg["authority"], cfg["client_id"], authority_type="oidc", dpop=True,
                       cache_path=cfg["cache"], cache_encryption_key=bytes(range(32))) as c:
            t = c.get_access_token([cfg["scope"]], force_refresh=True)
            api = c.call_api(cfg["url"], [cfg["scope"]])
            print(json.dumps({"type": t.token_type, "token": t.access_token, "status": api.status,
                              "proof": c.dpop_proof("GET", cfg["url"])}))
    """)
    cfg = {"authority": p.oidc["authority"], "client_id": p.oidc["client_id"], "cache": str(cache), "scope": p.todo,
           "url": p.todo_url}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", program, json.dumps(cfg)], capture_output=True, text=True, env=env,
                         timeout=60, check=True)
    second = json.loads(out.stdout)
    assert second["type"] == "DPoP" and second["status"] == 200
    assert p.introspect(second["token"])["cnf"] == {"jkt": jkt}, "refreshed in another process with the same key"
    assert verify_proof(second["proof"], "GET", p.todo_url, None) == jkt
    assert b"DPoP" not in cache.read_bytes(), "the key is sealed with the file"
    with p.client(cache_path=cache, cache_encryption_key=key) as restarted:
        assert restarted.get_access_token([p.todo]).from_cache, "the second process's token, cached"
        assert verify_proof(restarted.dpop_proof("GET", p.todo_url), "GET", p.todo_url, None) == jkt


def test_signing_out_removes_the_key(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    p = Provider(emulator)
    cache = tmp_path / "cache.json"
    with p.client(cache_path=cache) as client:
        p.sign_in(client)
        assert json.loads(cache.read_text())["NativeAuthDPoPKey"]
        assert client.sign_out()
        doc = json.loads(cache.read_text())
        assert not any(doc.get(s) for s in ("NativeAuthDPoPKey", "NativeAuthDPoPAccessToken",
                                            "NativeAuthDPoPRefreshToken"))
        with pytest.raises(na.NoAccountError):
            client.dpop_proof("GET", p.todo_url)


def test_dpop_unsupported(emulator: Emulator) -> None:
    p = Provider(emulator)
    with pytest.raises(na.DPoPUnsupportedError) as entra:
        na.Client(emulator.authority, emulator.client_id, dpop=True)
    assert entra.value.details.get("field") == "dpop"
    emulator.control("POST", "settings", {"oidc_dpop": False})
    with p.client() as client:
        with pytest.raises(na.DPoPUnsupportedError):
            client.sign_in_device_code([p.todo])
    with p.client(dpop=False) as bearer:
        p.sign_in(bearer)
        assert bearer.get_access_token([p.todo]).token_type == "Bearer"
        with pytest.raises(na.DPoPUnsupportedError):
            bearer.dpop_proof("GET", p.todo_url)


def test_a_server_that_always_wants_a_new_nonce_gets_one_resend(emulator: Emulator) -> None:
    p = Provider(emulator)
    with p.client() as client:
        p.sign_in(client)
        emulator.control("POST", "settings", {"oidc_dpop_nonce": "always", "api_dpop_nonce": "always"})
        with pytest.raises(na.ServerError):
            client.get_access_token([p.todo], force_refresh=True)
        assert p.outcomes("token")[-2:] == ["use_dpop_nonce", "use_dpop_nonce"]
        assert p.outcomes("token").count("use_dpop_nonce") == 2
        response = client.call_api(p.todo_url, [p.todo])
        assert response.status == 401 and p.outcomes("resource") == ["use_dpop_nonce", "use_dpop_nonce"]


def test_the_async_client_makes_proofs_too(emulator: Emulator) -> None:
    p = Provider(emulator)
    with p.client() as client:
        p.sign_in(client)

    async def main() -> None:
        async with AsyncClient(p.oidc["authority"], p.oidc["client_id"], authority_type="oidc", dpop=True) as c:
            with pytest.raises(na.NoAccountError):
                c.dpop_proof("GET", p.todo_url)

    asyncio.run(main())
