#!/usr/bin/env bash
# Builds the four Debian packages from binaries the Makefile already built (make packages):
#   libnativeauth1, libnativeauth-dev, nativeauth, nativeauth-emulator  →  $OUT/*.deb
# with Debian's own tools: dpkg-shlibdeps computes Depends from the binaries, dpkg-gensymbols writes (and checks
# against packaging/debian/libnativeauth1.symbols) the library's symbols file, dpkg-gencontrol writes each control
# file from packaging/debian/control and changelog, dpkg-deb builds with root:root ownership.
# Usage: build-debs.sh LIBRARY CLI EMULATOR OUT   (run from the repository's top directory)
set -euo pipefail
lib=$1 cli=$2 emulator=$3 out=$4
here=packaging
version=$(sed -n 's/^#define NA_VERSION_STRING "\(.*\)"/\1/p' include/nativeauth.h)
debversion=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
[ "${debversion%-*}" = "$version" ] || {
    echo "build-debs: packaging/debian/changelog is at $debversion, the header at $version: add a changelog entry"
    exit 1
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
date=$(date -u -d "@$(dpkg-parsechangelog -l "$here/debian/changelog" -S Timestamp)" +%Y-%m-%d)
export SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Timestamp)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umask 022
mkdir -p "$work/debian" "$out"
cp "$here/debian/control" "$here/debian/changelog" "$here/debian/copyright" "$work/debian/"
top=$PWD
libdir=usr/lib/$multiarch

# Documentation every package carries: copyright, and the changelog compressed as Debian names it.
docs() {  # PACKAGE
    local d="$work/debian/$1/usr/share/doc/$1"
    install -d "$d"
    install -m 0644 "$here/debian/copyright" "$d/copyright"
    gzip -9n < "$here/debian/changelog" > "$d/changelog.Debian.gz"
    chmod 0644 "$d/changelog.Debian.gz"
}
# SwiftPM links with RUNPATH $ORIGIN; an installed library finds its dependencies in the system directories.
strip_lib() { strip --strip-unneeded --remove-section=.comment --remove-section=.note "$1"; patchelf --remove-rpath "$1"; }
strip_exe() { strip --strip-all --remove-section=.comment --remove-section=.note "$1"; patchelf --remove-rpath "$1"; }

# --- libnativeauth1: the shared library -----------------------------------------------------------------------
p=$work/debian/libnativeauth1
install -D -m 0644 "$lib" "$p/$libdir/libnativeauth.so.$version"
strip_lib "$p/$libdir/libnativeauth.so.$version"
ln -s "libnativeauth.so.$version" "$p/$libdir/libnativeauth.so.1"
docs libnativeauth1
install -d "$p/DEBIAN"
echo "libnativeauth 1 libnativeauth1 (>= $version)" > "$p/DEBIAN/shlibs"
printf 'activate-noawait ldconfig\n' > "$p/DEBIAN/triggers"

# --- libnativeauth-dev: header, link, pkg-config file, documentation ------------------------------------------
p=$work/debian/libnativeauth-dev
install -D -m 0644 include/nativeauth.h "$p/usr/include/nativeauth.h"
install -d "$p/$libdir/pkgconfig"
ln -s libnativeauth.so.1 "$p/$libdir/libnativeauth.so"
sed -e "s|@VERSION@|$version|g" -e "s|@MULTIARCH@|$multiarch|g" "$here/nativeauth.pc.in" \
    > "$p/$libdir/pkgconfig/nativeauth.pc"
chmod 0644 "$p/$libdir/pkgconfig/nativeauth.pc"
docs libnativeauth-dev
(cd docs && find . -type f -name '*.md' -print0 | while IFS= read -r -d '' f; do
    install -D -m 0644 "$f" "$p/usr/share/doc/libnativeauth-dev/$f"
done)

# --- nativeauth: the command, its docker-credential link, manual pages, completions ---------------------------
p=$work/debian/nativeauth
install -D -m 0755 "$cli" "$p/usr/bin/nativeauth"
strip_exe "$p/usr/bin/nativeauth"
ln -s nativeauth "$p/usr/bin/docker-credential-nativeauth"
"$cli" --experimental-dump-help > "$work/dump.json"
python3 "$here/manpages.py" "$work/dump.json" "$work/man" "$version" "$date" "$here/man"
install -d "$p/usr/share/man/man1"
for page in "$work"/man/*.1; do
    gzip -9n < "$page" > "$p/usr/share/man/man1/$(basename "$page").gz"
done
# Sourced, not run: no "#!" line (lintian bash-completion-with-hashbang).
"$cli" --generate-completion-script bash | sed "1{/^#!/d}" > "$work/bash"
"$cli" --generate-completion-script zsh > "$work/zsh"
"$cli" --generate-completion-script fish > "$work/fish"
install -D -m 0644 "$work/bash" "$p/usr/share/bash-completion/completions/nativeauth"
install -D -m 0644 "$work/zsh" "$p/usr/share/zsh/vendor-completions/_nativeauth"
install -D -m 0644 "$work/fish" "$p/usr/share/fish/vendor_completions.d/nativeauth.fish"
install -D -m 0644 "$here/lintian/nativeauth" "$p/usr/share/lintian/overrides/nativeauth"
docs nativeauth

# --- nativeauth-emulator ----------------------------------------------------------------------------------------
p=$work/debian/nativeauth-emulator
install -D -m 0755 "$emulator" "$p/usr/bin/nativeauth-emulator"
strip_exe "$p/usr/bin/nativeauth-emulator"
install -d "$p/usr/share/man/man1"
sed -e "s|@VERSION@|$version|g" -e "s|@DATE@|$date|g" "$here/man/nativeauth-emulator.1" \
    | gzip -9n > "$p/usr/share/man/man1/nativeauth-emulator.1.gz"
docs nativeauth-emulator

# --- control files, checksums, .deb -----------------------------------------------------------------------------
cd "$work"
# libcurl is loaded with dlopen at the first request (Sources/CCurl), so dpkg-shlibdeps cannot see it: it is named
# here, at the version that has every function the library looks up (curl_multi_wakeup: 7.68.0).
curl_dep="libcurl4 (>= 7.68.0)"
dpkg-gensymbols -q -plibnativeauth1 -Pdebian/libnativeauth1 -v"$debversion" -c4 \
    -I"$top/$here/debian/libnativeauth1.symbols" -edebian/libnativeauth1/$libdir/libnativeauth.so.$version
for pkg in libnativeauth1 nativeauth nativeauth-emulator; do
    bins=$(find debian/$pkg -type f \( -path '*/usr/bin/*' -o -name '*.so.*' \))
    # A library dpkg-shlibdeps cannot find (the Swift runtime of a build not linked with -static-stdlib) is a
    # dependency no Debian package satisfies: fail.
    dpkg-shlibdeps -Tdebian/$pkg.substvars $bins 2> "$work/shlibdeps.err" || { cat "$work/shlibdeps.err"; exit 1; }
    if grep 'cannot find library' "$work/shlibdeps.err"; then
        echo "build-debs: $pkg needs libraries no Debian package provides"
        exit 1
    fi
done
for pkg in libnativeauth1 nativeauth; do
    sed -i "s/^shlibs:Depends=\(.*\)$/shlibs:Depends=\1, $curl_dep/" debian/$pkg.substvars
done
for pkg in libnativeauth1 libnativeauth-dev nativeauth nativeauth-emulator; do
    touch debian/$pkg.substvars
    install -d debian/$pkg/DEBIAN
    dpkg-gencontrol -p$pkg -Pdebian/$pkg -Tdebian/$pkg.substvars -Vmisc:Depends=
    (cd debian/$pkg && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z \
        | xargs -0 -r md5sum > DEBIAN/md5sums)
    chmod 0644 debian/$pkg/DEBIAN/*
    find debian/$pkg -type d -exec chmod 0755 {} +
    dpkg-deb --root-owner-group -Zxz --build debian/$pkg "$top/$out/${pkg}_${debversion}_${arch}.deb" >/dev/null
    echo "build-debs: $out/${pkg}_${debversion}_${arch}.deb"
done
