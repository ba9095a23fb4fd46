"""One step of the keyring-protected cache's tests, in a process of its own (as a second program of the user would
be): a Client on a file cache whose key is in a key store, one action, one JSON line on stdout.

    python keyring_worker.py < CONFIG_JSON
CONFIG_JSON: {"authority", "client_id", "cache_path", "key_store", "timeout_ms"?, "scope",
              "actions": ["sign_in" | "token" | "account", …], "username"?, "password"?}
Prints {"ok": true, "info": …, "steps": [{"ok": true, "token"?, "from_cache"?, "username"?} or
        {"ok": false, "code", "status", "message"}, …], "seconds", "logs": [...], "environ", "cmdline"}, or
        {"ok": false, "code", "status", "message", …} when the Client could not be made.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any, Dict, List, Optional

import nativeauth as na


def step(c: na.Client, cfg: Dict[str, Any], action: str) -> Dict[str, Any]:
    try:
        if action == "sign_in":
            state = c.sign_in(cfg["username"], cfg["password"], scopes=[cfg["scope"]])
            assert isinstance(state, na.SignedIn)
            return {"ok": True, "token": state.token.access_token}
        if action == "token":
            token = c.get_access_token([cfg["scope"]])
            return {"ok": True, "token": token.access_token, "from_cache": token.from_cache}
        account = c.account
        return {"ok": True, "username": account.username if account else None}
    except na.NativeAuthError as e:
        return {"ok": False, "code": e.code, "status": e.status, "message": str(e)}


def main() -> int:
    cfg = json.loads(sys.stdin.read())
    logs: List[str] = []

    def on_log(_level: int, message: str, _correlation: Optional[str]) -> None:
        logs.append(message)

    out: Dict[str, Any] = {"ok": True}
    started = time.monotonic()
    try:
        with na.Client(cfg["authority"], cfg["client_id"], cache_path=cfg["cache_path"],
                       cache_key_store=cfg["key_store"], cache_key_store_timeout_ms=cfg.get("timeout_ms"),
                       log_level="verbose", log_handler=on_log) as c:
            out["info"] = c.info["config"]["cache"]
            out["steps"] = [step(c, cfg, action) for action in cfg["actions"]]
    except na.NativeAuthError as e:
        out = {"ok": False, "code": e.code, "status": e.status, "message": str(e)}
    out["seconds"] = time.monotonic() - started
    out["logs"] = logs
    with open("/proc/self/environ", "rb") as f:
        out["environ"] = f.read().decode("utf-8", "replace")
    with open("/proc/self/cmdline", "rb") as f:
        out["cmdline"] = f.read().decode("utf-8", "replace")
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
