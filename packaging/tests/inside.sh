#!/usr/bin/env bash
# Runs inside the clean Debian root of packaging/test-packages.sh (as root, chrooted). Each step says what it checks;
# the first failure ends the run.
set -euo pipefail
step() { echo; echo "== test-packages: $*"; }
fail() { echo "test-packages: FAILED: $*"; exit 1; }

step "0. no Swift toolchain or runtime anywhere in this root"
if command -v swift swiftc >/dev/null 2>&1; then fail "a Swift toolchain is on the PATH"; fi
found=$(find / -xdev \( -name 'libswift*' -o -name 'libFoundation*.so*' -o -name 'libdispatch.so*' \) -print -quit)
[ -z "$found" ] || fail "a Swift runtime library is here: $found"

step "1. apt-get install ./dist/*.deb resolves every dependency from Debian"
apt-get update -qq
apt-get install -y -qq --no-install-recommends /tmp/dist/*.deb > /tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "apt"; }
for p in libnativeauth1 libnativeauth-dev nativeauth nativeauth-emulator; do
    dpkg-query -W -f='${Package} ${Version} ${Status}\n' "$p" | grep -q 'install ok installed' || fail "$p"
done
dpkg-query -W -f='${Package}: ${Depends}\n' libnativeauth1 nativeauth nativeauth-emulator
found=$(find / -xdev \( -name 'libswift*' -o -name 'libFoundation*.so*' -o -name 'libdispatch.so*' \) -print -quit)
[ -z "$found" ] || fail "the packages brought a Swift runtime library: $found"
for f in /usr/bin/nativeauth /usr/bin/nativeauth-emulator /usr/lib/x86_64-linux-gnu/libnativeauth.so.1; do
    if LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 "$f" | grep -E 'not found|swift'; then
        fail "$f needs a library this system does not have"
    fi
done
# The files of the packages, to check that purging removes them all (step 6).
dpkg -L libnativeauth1 libnativeauth-dev nativeauth nativeauth-emulator | sort -u > /tmp/package-files
# The tools the remaining steps use (not dependencies of the packages).
apt-get install -y -qq --no-install-recommends man-db bash-completion gcc libc6-dev pkgconf python3 python3-venv \
    > /tmp/apt-tools.log 2>&1 || { cat /tmp/apt-tools.log; fail "apt (test tools)"; }

step "2. nativeauth --version; man nativeauth renders; the bash completion completes a subcommand"
nativeauth --version
nativeauth --version | grep -q "libnativeauth" || fail "--version does not name the library's version"
man -P cat nativeauth > /tmp/man.txt 2> /tmp/man.err || { cat /tmp/man.err; fail "man nativeauth"; }
grep -q "git-credential" /tmp/man.txt || fail "man nativeauth has no commands"
man -P cat nativeauth-token | grep -q -- "--scope" || fail "man nativeauth-token lists no --scope"
man -P cat nativeauth-emulator | grep -q -- "--ready-file" || fail "man nativeauth-emulator"
man -P cat docker-credential-nativeauth | grep -q "credential" || fail "man docker-credential-nativeauth"
completions=$(bash -c '
    source /usr/share/bash-completion/bash_completion
    _completion_loader nativeauth
    fn=$(complete -p nativeauth | sed -E "s/.*-F ([^ ]+).*/\1/")
    COMP_WORDS=(nativeauth lo); COMP_CWORD=1; COMP_LINE="nativeauth lo"; COMP_POINT=${#COMP_LINE}
    "$fn" nativeauth lo nativeauth
    printf "%s\n" "${COMPREPLY[@]}"')
echo "completions of 'nativeauth lo': $(echo $completions)"
echo "$completions" | grep -qx login || fail "bash completion does not complete 'lo' to login"
echo "$completions" | grep -qx logout || fail "bash completion does not complete 'lo' to logout"

step "3. the packaged emulator; nativeauth login (password on stdin) and token; the docker helper"
nativeauth-emulator --quiet --port 0 --ready-file /tmp/ready.json > /dev/null 2> /tmp/emulator.log &
emulator=$!
trap 'kill $emulator 2>/dev/null || true' EXIT
for _ in $(seq 1 3000); do [ -s /tmp/ready.json ] && break; sleep 0.01; done
[ -s /tmp/ready.json ] || { cat /tmp/emulator.log; fail "the emulator did not become ready"; }
eval "$(python3 /tmp/tests/ready_env.py /tmp/ready.json)"
export NATIVEAUTH_AUTHORITY NATIVEAUTH_CLIENT_ID
# No keyring in a chroot: the cache key comes from the environment.
export NATIVEAUTH_CACHE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
printf '%s\n' "$PASSWORD" | nativeauth login -u "$USERNAME" --password-stdin
token=$(nativeauth token --scope "$API1_SCOPE")
[ "${#token}" -gt 100 ] || fail "nativeauth token printed no token"
nativeauth call "$API1_URL" --scope "$API1_SCOPE" > /tmp/api1.txt || fail "nativeauth call"
mkdir -p /root/.config/nativeauth
cat > /root/.config/nativeauth/config.toml <<TOML
[profiles.default]
registries = { "registry.contoso.test" = ["$API2_SCOPE"] }
TOML
chmod 0600 /root/.config/nativeauth/config.toml
answer=$(printf 'registry.contoso.test' | docker-credential-nativeauth get)
echo "$answer" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["Secret"]) > 100, d' \
    || fail "docker-credential-nativeauth get: $answer"

step "4. a C program built with gcc \$(pkg-config --cflags --libs nativeauth) signs in and gets a token"
flags=$(pkg-config --cflags --libs nativeauth)
echo "pkg-config: $flags"
case "$flags" in *rpath*|*/build*|*.build*) fail "the .pc file points at a build tree: $flags";; esac
gcc -std=c99 -Wall -Wextra -Werror /tmp/tests/hello.c -o /tmp/hello $flags
/tmp/hello "$NATIVEAUTH_AUTHORITY" "$NATIVEAUTH_CLIENT_ID" "$USERNAME" "$PASSWORD" "$API1_SCOPE"

step "5. a virtual environment with the manylinux wheel alone signs in from Python"
python3 -m venv /tmp/venv
/tmp/venv/bin/pip install -q --no-index --disable-pip-version-check /tmp/dist/nativeauth-*.whl
(cd /tmp && /tmp/venv/bin/python /tmp/tests/wheel_sign_in.py "$NATIVEAUTH_AUTHORITY" "$NATIVEAUTH_CLIENT_ID" \
    "$USERNAME" "$PASSWORD" "$API1_SCOPE" "$API1_URL")
kill "$emulator"; wait "$emulator" 2>/dev/null || true

step "6. apt-get purge of the four packages leaves none of their files behind"
apt-get purge -y -qq libnativeauth1 libnativeauth-dev nativeauth nativeauth-emulator > /tmp/purge.log 2>&1 \
    || { cat /tmp/purge.log; fail "purge"; }
left=$(while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done < /tmp/package-files || true)
[ -z "$left" ] || fail "files left after purge: $left"
echo
echo "== test-packages: every step succeeded"
