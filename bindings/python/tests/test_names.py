"""docs/conventions.md, Python: an acronym in a class name is written in capitals (PEP 8: ``TLSError``, not
``TlsError``). Three public names released before the rule are kept as they are; any other offender fails here."""
from __future__ import annotations

import re

import nativeauth

ACRONYM_AS_A_WORD = re.compile(r"(?:Api|Id|Mfa|Tls|Http|Url|Uri|Json|Oidc|Jwt|Pkce|Sso)(?=[A-Z0-9]|$)")
KEPT = {"ApiResponse", "MfaRequired", "IdTokenInvalidError"}  # docs/conventions.md: kept for compatibility


def test_public_classes_write_acronyms_in_capitals() -> None:
    classes = [name for name in nativeauth.__all__ if isinstance(getattr(nativeauth, name), type)]
    assert "TLSError" in classes and "SignedIn" in classes
    offenders = {name for name in classes if ACRONYM_AS_A_WORD.search(name)}
    assert offenders == KEPT
