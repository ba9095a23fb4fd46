"""Shell assignments from the emulator's ready document (packaging/tests/inside.sh evals them)."""
import json
import shlex
import sys

ready = json.load(open(sys.argv[1]))
user = next(u for u in ready["users"] if u["kind"] == "password")
values = {"NATIVEAUTH_AUTHORITY": ready["authority"], "NATIVEAUTH_CLIENT_ID": ready["client_id"],
          "USERNAME": user["email"], "PASSWORD": user["password"], "API1_URL": ready["apis"][0]["url"],
          "API1_SCOPE": ready["apis"][0]["scopes"][0], "API2_SCOPE": ready["apis"][1]["scopes"][0]}
for name, value in values.items():
    print(f"{name}={shlex.quote(value)}")
