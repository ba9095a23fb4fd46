"""The type of the shared ``emulator`` and ``tls_emulator`` fixtures (``bindings/conftest.py``), for the annotations
of the tests: what they use of the emulator, as a protocol (the fixture module itself is shared with the C tests and
is not importable by name)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol


class Emulator(Protocol):
    """The emulator on an ephemeral port: its ready document and its controls (outbox, request log, settings)."""

    ready: Dict[str, Any]
    base: str
    authority: str
    client_id: str
    apis: Dict[str, Dict[str, Any]]
    users: Dict[str, Dict[str, Any]]

    def control(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]: ...

    def last_code(self, email: str) -> str: ...

    def requests(self, path: Optional[str] = None) -> List[Dict[str, Any]]: ...
