from typing import Iterator

import pytest

from emulator_protocol import Emulator
from nativeauth import Client


@pytest.fixture
def client(emulator: Emulator) -> Iterator[Client]:
    with Client(emulator.authority, emulator.client_id, capabilities=["mfa_required", "registration_required"]) as c:
        yield c
