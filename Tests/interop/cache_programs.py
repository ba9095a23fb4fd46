"""Programs that share one token cache file, each run as its own process by test_file_cache.py: NativeAuth (the C
ABI, through the Python package's ctypes binding) and MSAL for Python with a SerializableTokenCache.

usage: cache_programs.py COMMAND 'JSON ARGUMENTS'   → prints one JSON document
"""
import fcntl
import json
import os
import sys
import tempfile


def emulator_requests(a: dict) -> list:
    """The emulator's request log, less its own control calls."""
    import requests
    log = requests.get(a["controls"] + "/requests", headers={"X-Emulator-Token": a["control_token"]},
                       verify=a.get("ca")).json()["requests"]
    return [r for r in log if not r["path"].startswith("/_emulator")]


def nativeauth_client(a: dict):
    import nativeauth
    return nativeauth.Client(a["authority"], a["client_id"], ca_bundle=a.get("ca"), cache_path=a["path"],
                             cache_encryption_key=a.get("key"))


def na_sign_in(a: dict) -> dict:
    with nativeauth_client(a) as c:
        state = c.sign_in(a["username"], a["password"], scopes=a["scopes"])
        return {"access_token": state.token.access_token, "home_account_id": state.account.home_account_id}


def na_read(a: dict) -> dict:
    """Starts, lists the accounts and gets tokens — counting the requests that reached the emulator meanwhile."""
    import nativeauth
    before = len(emulator_requests(a))
    out: dict = {}
    with nativeauth_client(a) as c:
        out["accounts"] = [x.username for x in c.accounts]
        tokens = []
        for scopes in a["scopes"]:
            t = c.get_access_token(scopes)
            tokens.append({"access_token": t.access_token, "from_cache": t.from_cache})
        out["tokens"] = tokens
        out["info"] = c.info["config"]["cache"]
    out["requests"] = len(emulator_requests(a)) - before
    return out


def na_failure(a: dict) -> dict:
    """What an app sees when the cache file cannot be used: the error of the call that changed the cache, and a
    client that keeps working from memory."""
    import nativeauth
    out: dict = {}
    try:
        client = nativeauth_client(a)
    except nativeauth.NativeAuthError as e:
        return {"client_error": e.code, "status": e.status}
    with client as c:
        try:
            c.sign_in(a["username"], a["password"], scopes=a["scopes"])
            out["sign_in"] = "ok"
        except nativeauth.NativeAuthError as e:
            out["sign_in"], out["status"] = e.code, e.status
        t = c.get_access_token(a["scopes"])
        out["from_cache"] = t.from_cache
        out["problem"] = c.info["config"]["cache"].get("problem")
        try:
            c.sign_out()
            out["sign_out"] = "ok"
        except nativeauth.NativeAuthError as e:
            out["sign_out"] = e.code
        out["signed_in_after_sign_out"] = c.account is not None
    return out


def msal_app(a: dict):
    import msal
    cache = msal.SerializableTokenCache()
    if os.path.exists(a["path"]):
        with open(a["path"]) as f:
            cache.deserialize(f.read())
    app = msal.PublicClientApplication(a["client_id"], oidc_authority=a["oidc_authority"], verify=a["ca"],
                                       token_cache=cache)
    return app, cache


def msal_save(a: dict, cache) -> None:
    """Writes MSAL's cache back as msal-extensions would: under the same lock file, replaced atomically."""
    with open(a["path"] + ".lockfile", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(a["path"]))
        with os.fdopen(fd, "w") as f:
            f.write(cache.serialize())
        os.replace(tmp, a["path"])


def msal_read(a: dict) -> dict:
    """MSAL finds the account and the cached token with no request, then a new scope through the refresh token."""
    app, cache = msal_app(a)  # construction fetches OIDC discovery: counted from here on
    before = len(emulator_requests(a))
    accounts = app.get_accounts()
    out: dict = {"accounts": [x["username"] for x in accounts]}
    cached = app.acquire_token_silent(a["cached_scopes"], account=accounts[0]) if accounts else None
    out["cached"] = {k: cached.get(k) for k in ("access_token", "token_source", "error")} if cached else None
    out["requests_for_cached"] = len(emulator_requests(a)) - before
    fresh = app.acquire_token_silent(a["new_scopes"], account=accounts[0]) if accounts else None
    out["fresh"] = {k: fresh.get(k) for k in ("access_token", "token_source", "error")} if fresh else None
    token_requests = [r for r in emulator_requests(a)[before:] if r["path"].endswith("/oauth2/v2.0/token")]
    out["token_requests"] = len(token_requests)
    msal_save(a, cache)
    return out


def msal_sign_in(a: dict) -> dict:
    """MSAL signs in (authorization code + PKCE through the emulator's page) and serializes its cache to the file."""
    sys.path.insert(0, os.path.dirname(__file__))
    from test_msal_python import REDIRECT, sign_in_through_page
    app, cache = msal_app(a)
    flow = app.initiate_auth_code_flow(scopes=a["scopes"], redirect_uri=REDIRECT, login_hint=a["username"])
    ready = {"ca_file": a["ca"]}
    response = sign_in_through_page(ready, flow["auth_uri"], a["username"], a["password"])
    result = app.acquire_token_by_auth_code_flow(flow, response)
    msal_save(a, cache)
    os.chmod(a["path"], 0o600)
    return {"access_token": result.get("access_token"), "error": result.get("error")}


if __name__ == "__main__":
    command, arguments = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(globals()[command.replace("-", "_")](arguments)))
