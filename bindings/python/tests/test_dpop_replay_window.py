"""The emulator's DPoP replay check when its window is widened at run time (``oidc_dpop_iat_window``, a setting the
tests change): a proof it accepted under a short window is acceptable again by its ``iat`` under the wider one, and
must still be refused as a replay — seen proofs are kept for the widest window used, not the one of their time."""
from __future__ import annotations

import json
from typing import Dict

from emulator_protocol import Emulator
from test_dpop import Provider


def test_a_wider_window_does_not_make_an_accepted_proof_replayable(emulator: Emulator) -> None:
    p = Provider(emulator)
    emulator.control("POST", "settings", {"oidc_dpop_iat_window": 60, "api_dpop_nonce": "off"})
    with p.client() as client:
        p.sign_in(client)
        token = client.get_access_token([p.todo])
        assert token.token_type == "DPoP"
        proof = client.dpop_proof("GET", p.todo_url, token.access_token)
    headers: Dict[str, str] = {"Authorization": f"DPoP {token.access_token}", "DPoP": proof}
    status, _, body = p.get(p.todo_url, headers)
    assert status == 200 and json.loads(body)["api"] == "ToDoList"
    emulator.control("POST", "clock", {"advance_seconds": 100})
    assert p.get(p.todo_url, headers)[0] == 401  # out of the 60 s window
    emulator.control("POST", "settings", {"oidc_dpop_iat_window": 300})
    status, response_headers, _ = p.get(p.todo_url, headers)
    assert status == 401, "the same proof accepted twice"
    assert p.outcomes("resource")[-1] == "invalid_dpop_proof: the proof was replayed (its jti was seen before)."
