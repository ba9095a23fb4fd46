"""A flow's "cancel" from another thread while its step is on the wire (include/nativeauth.h, na_flow_submit
"cancel"): the blocking call answers `cancelled` promptly — while the server still holds its answer — and nothing of
the late answer is kept. Here the step is a paste-back's code redemption (`browser="none"` + `submit_redirect`),
the token endpoint holding its answer. (Was: the flow's cancel only marked the flow; the request went on until the
server answered or the request timeout ran out, and the call answered `timeout`.)"""
from __future__ import annotations

import threading
import time
from typing import Dict, Union

import nativeauth as na
from browser_support import redirect_from_another_device
from emulator_protocol import Emulator


def test_cancel_aborts_a_redemption_on_the_wire(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    with na.Client(emulator.authority, emulator.client_id, request_timeout_ms=200_000) as client:
        pending = client.sign_in_interactive(browser="none")
        assert isinstance(pending, na.BrowserPending)
        address = redirect_from_another_device(pending.authorization_url, ann["email"], ann["password"])
        emulator.control("POST", "faults", {"path": "/oauth2/v2.0/token", "hold": True})
        outcome: Dict[str, Union[na.State, BaseException]] = {}

        def redeem() -> None:
            try:
                outcome["state"] = pending.submit_redirect(address)
            except BaseException as e:  # noqa: B036 (the test looks at whatever it was)
                outcome["state"] = e

        thread = threading.Thread(target=redeem)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while emulator.control("GET", "faults").get("held", 0) == 0:  # the redemption is on the wire
                assert time.monotonic() < deadline, "the code was not redeemed"
                time.sleep(0.02)
            pending.cancel()
            thread.join(60)
            assert not thread.is_alive(), "the call waited for the server's answer"
            assert emulator.control("GET", "faults").get("held", 0) == 1, "answered before the server did"
            assert isinstance(outcome["state"], na.CancelledError), outcome
        finally:
            emulator.control("POST", "faults/release")
            emulator.control("DELETE", "faults")
            thread.join(60)
        assert client.accounts == []
