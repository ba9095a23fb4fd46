import pytest


@pytest.fixture
def client(emulator):
    from nativeauth import Client
    with Client(emulator.authority, emulator.client_id, capabilities=["mfa_required", "registration_required"]) as c:
        yield c
