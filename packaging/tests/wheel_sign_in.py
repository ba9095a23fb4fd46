"""Signs in from Python with the manylinux wheel alone (packaging/tests/inside.sh, step 5)."""
import sys

import nativeauth as na

authority, client_id, username, password, scope, url = sys.argv[1:7]
print("nativeauth", na.__version__, "over libnativeauth", na.library_version)
with na.Client(authority, client_id) as client:
    state = client.sign_in(username, password=password, scopes=[scope])
    assert isinstance(state, na.SignedIn), state
    token = client.get_access_token([scope])
    assert len(token.access_token) > 100
    answer = client.call_api(url, [scope])
    assert answer.status == 200, answer.status
    client.sign_out()
# What the manylinux policy does not provide came from the wheel, not from this system's packages.
maps = open("/proc/self/maps").read().split("\n")
for name in ("libnativeauth", "libcurl", "libjansson", "libcrypto"):
    paths = {line.split()[-1] for line in maps if name in line.split("/")[-1]}
    assert paths and all("site-packages/nativeauth" in p for p in paths), f"{name} loaded from {paths}"
print("python: signed in as", username, "and called", url, "with libcurl, libjansson and libcrypto of the wheel")
