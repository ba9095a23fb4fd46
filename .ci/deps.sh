#!/usr/bin/env bash
# Installs what building and testing NativeAuth needs on a fresh Debian/Ubuntu machine with Swift 6 already
# present. Idempotent: packages already installed are not fetched again.
set -euo pipefail
# chromium + chromium-driver: the browser sign-in test drives a real Chromium (headless, offline) with Selenium.
# golang-go: the Go binding (bindings/go, make test-go; Debian's Go, no modules downloaded).
# gnome-keyring + dbus + libsecret-tools (secret-tool) + keyutils (keyctl): the keyring-protected cache's tests run a
# real Secret Service on a private session bus and use the kernel's persistent keyring.
# git + kubernetes-client (kubectl): the credential helpers' tests (test_credential_helpers.py) clone and push with
# git through `nativeauth git-credential` (git http-backend serves) and run kubectl with `nativeauth
# kubectl-credential` as its exec plugin. Their servers' certificate and JWT checks use the cryptography package,
# which comes with msal (below); no openssl command is needed.
# libgtk-4-dev + xvfb + xauth: the GTK sample app (bindings/c/gtk, make test-gtk) is built and runs on a virtual X
# display.
apt_packages=(libjansson-dev libcurl4-openssl-dev libssl-dev pkg-config valgrind make gcc binutils curl chromium
              chromium-driver golang-go gnome-keyring dbus libsecret-tools keyutils git libgtk-4-dev xvfb xauth)
# Debian's kubectl only when there is none: another one (the Google Cloud SDK's kubectl package) owns
# /usr/bin/kubectl too, and the two cannot be installed together.
command -v kubectl >/dev/null || apt_packages+=(kubernetes-client)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "deps: installing ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Python packages for the interop tests (MSAL for Python is the independent client), the bindings' tests, make lint
# (mypy) and make docs (pdoc).
pip_install() { PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check "$@"; }
# pexpect: the command line's tests sign in through a pseudo-terminal.
pip_packages=(pytest msal requests selenium mypy pdoc pexpect)
if ! python3 -c "import pytest, msal, requests, selenium, mypy, pdoc, pexpect" 2>/dev/null; then
    # A Debian-managed Python refuses user installs (PEP 668); these are test-only packages, so allow it there.
    pip_install "${pip_packages[@]}" || pip_install --break-system-packages "${pip_packages[@]}"
fi
command -v swift >/dev/null || { echo "deps: Swift 6 is required (https://www.swift.org/install/linux/)"; exit 1; }
echo "deps: ok ($(swift --version 2>&1 | head -1))"
