"""One process of `make bench`'s shared-refresh rows: a Client on a shared cache file that, in each round, waits for
the round's go file and asks once for a token whose cached copy has expired. Prints one JSON line per round:
{"round", "ok", "code"?, "ms"}.

    python refresh_worker.py CONFIG_JSON     {"authority", "client_id", "cache_path", "scope", "go", "rounds"}
"""
from __future__ import annotations

import json
import os
import sys
import time

import nativeauth as na


def main() -> None:
    cfg = json.loads(sys.argv[1])
    with na.Client(cfg["authority"], cfg["client_id"], cache_path=cfg["cache_path"]) as client:
        print(json.dumps({"ready": True}), flush=True)
        for r in range(cfg["rounds"]):
            go = f"{cfg['go']}-{r}"
            while not os.path.exists(go):
                time.sleep(0.0005)
            t0 = time.perf_counter()
            try:
                client.get_access_token([cfg["scope"]])
                doc = {"round": r, "ok": True}
            except na.NativeAuthError as e:
                doc = {"round": r, "ok": False, "code": e.code}
            doc["ms"] = (time.perf_counter() - t0) * 1e3
            print(json.dumps(doc), flush=True)


if __name__ == "__main__":
    main()
