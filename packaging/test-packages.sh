#!/usr/bin/env bash
# make test-packages: the packages of dist/ on a Debian that has never seen Swift.
# A clean `debootstrap --variant=minbase bookworm` root (kept as a tarball in $NATIVEAUTH_DEBOOTSTRAP_CACHE, default
# /var/cache/nativeauth, when that directory can be written; built fresh otherwise), unpacked into a temporary
# directory and entered with chroot inside a private mount namespace (nothing stays mounted when this ends), runs
# packaging/tests/inside.sh: apt installs the four .deb files (dependencies from Debian), then the command, its man
# page and completion, the emulator, a C program built with pkg-config, the manylinux wheel in a virtual
# environment, and a purge that must leave no file of the packages behind.
# Needs root (chroot, mounts), debootstrap, and the Debian mirror the host's apt uses.
set -euo pipefail
dist=$(realpath "${1:-dist}")
here=$(dirname "$(realpath "$0")")
[ "$(id -u)" -eq 0 ] || { echo "test-packages: needs root (debootstrap, chroot)"; exit 1; }
command -v debootstrap >/dev/null || { echo "test-packages: needs debootstrap (make deps-test installs it)"; exit 1; }
shopt -s nullglob
debs=("$dist"/*.deb)
wheels=("$dist"/nativeauth-*-manylinux_*.whl)
[ "${#debs[@]}" -eq 4 ] && [ "${#wheels[@]}" -ge 1 ] || {
    echo "test-packages: expected 4 .deb files and a manylinux wheel in $dist (make packages)"; exit 1; }

# The mirror the host's apt uses (deb822 or one-line sources), else Debian's.
mirror=${NATIVEAUTH_DEBIAN_MIRROR:-$( { grep -hsoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list || true; } | head -1 | awk '{print $2}')}
mirror=${mirror:-http://deb.debian.org/debian}
cache_dir=${NATIVEAUTH_DEBOOTSTRAP_CACHE:-/var/cache/nativeauth}
tarball=$cache_dir/bookworm-minbase.tar
work=$(mktemp -d /var/tmp/nativeauth-packages.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
root=$work/root
mkdir -p "$root"
if [ -s "$tarball" ]; then
    echo "test-packages: Debian root from $tarball"
    tar -C "$root" -xf "$tarball"
else
    echo "test-packages: debootstrap --variant=minbase bookworm ($mirror)"
    debootstrap --variant=minbase bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log"; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb
    if mkdir -p "$cache_dir" 2>/dev/null && [ -w "$cache_dir" ]; then
        tar -C "$root" -cf "$tarball.tmp.$$" . && mv "$tarball.tmp.$$" "$tarball"
    fi
fi
# Name resolution as the host has it (the mirror may be named in /etc/hosts).
cp /etc/resolv.conf /etc/hosts "$root/etc/"
mkdir -p "$root/tmp/dist" "$root/tmp/tests"
cp "${debs[@]}" "${wheels[0]}" "$root/tmp/dist/"
cp "$here"/tests/* "$root/tmp/tests/"
# A private mount namespace: /proc, /dev and /dev/pts for the chroot vanish with it.
unshare --mount --fork -- bash -c '
    set -e
    root=$1
    mount --make-rprivate /
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive bash /tmp/tests/inside.sh
' _ "$root"
