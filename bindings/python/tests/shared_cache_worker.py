"""One process of the shared-cache tests: a Client on a shared cache file, `threads` threads each asking for a token
`calls` times (or until a stop file appears), all starting when a go file appears. Prints one JSON line per finished
call on stdout ({"ok": true} or {"ok": false, "code": …}), flushed, then {"done": true}.

    python shared_cache_worker.py CONFIG_JSON
CONFIG_JSON: {"authority", "client_id", "cache_path", "scope", "threads", "calls", "force_refresh", "go", "stop"?,
              "watch_sign_out"?: true — instead: ask until no_account is answered, print {"signed_out_at": monotonic},
              "stall_on_refresh"?: true — the first refresh prints {"stalled": true} and waits to be killed, holding
              the refresh lock before its request is sent}
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Dict, Optional

import nativeauth as na

lock = threading.Lock()


def emit(doc: Dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()


def wait_for(path: str) -> None:
    while not os.path.exists(path):  # readiness of the whole test, polled: not a fixed delay
        time.sleep(0.002)


def main() -> int:
    cfg = json.loads(sys.argv[1])
    stall = cfg.get("stall_on_refresh", False)

    def on_log(_level: int, message: str, _correlation: Optional[str]) -> None:
        # "stall_on_refresh": the first refresh stops here, holding the cache file's refresh lock before its request
        # is sent, until the test kills this process.
        if stall and message.startswith("refreshing an access token"):
            emit({"stalled": True})
            while True:
                time.sleep(60)

    client = na.Client(cfg["authority"], cfg["client_id"], cache_path=cfg["cache_path"], log_level="info",
                       log_handler=on_log)
    if cfg.get("watch_sign_out"):
        client.get_access_token([cfg["scope"]])
        emit({"ready": True})
        while True:
            try:
                client.get_access_token([cfg["scope"]])
            except na.NoAccountError:
                emit({"signed_out_at": time.monotonic()})
                return 0
            except na.NativeAuthError as e:
                emit({"ok": False, "code": e.code})
                return 1
    emit({"ready": True})
    wait_for(cfg["go"])
    stop = cfg.get("stop")

    def work() -> None:
        for _ in range(cfg["calls"]):
            if stop and os.path.exists(stop):
                return
            try:
                client.get_access_token([cfg["scope"]], force_refresh=cfg["force_refresh"])
                emit({"ok": True})
            except na.NativeAuthError as e:
                emit({"ok": False, "code": e.code, "message": e.message})

    threads = [threading.Thread(target=work) for _ in range(cfg["threads"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    emit({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
