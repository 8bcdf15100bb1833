#!/bin/sh
# Fetches the headers of LibTorch 2.x releases (Debian's libtorch-dev) for the LibTorch 2.x compile
# check (cmake/GllmTorch2Check.cmake), each verified InRelease → Packages.xz → .deb:
#   trixie → .deps/libtorch2       (2.6, Debian 13's)
#   sid    → .deps/libtorch2-sid   (the newest Debian offers: 2.14 in December 2026; a GPU machine's
#                                   pip torch is a 2.x in between, 2.11 on the lent H200)
# The npm registry, the only other one reachable here, has no LibTorch headers; PyPI is not reachable.
#
# usage: scripts/fetch-torch2-headers.sh [SUITE...]   (default: trixie sid; GLLM_DEBIAN_MIRROR override)
# Headers only: nothing is installed into the system and nothing here links against them. A suite
# that fails to fetch is reported and the others still come; the exit status says whether all came.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
mirror=${GLLM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
version_h=usr/include/torch/csrc/api/include/torch/version.h

for tool in curl gpgv xz sha256sum dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "fetch-torch2-headers: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
[ -f "$keyring" ] || { echo "fetch-torch2-headers: no $keyring (install debian-archive-keyring)" >&2; exit 1; }

get() { curl -fsSL --retry 3 --connect-timeout 20 -o "$2" "$1"; }

# --one SUITE DEST: the suite's libtorch-dev headers into DEST (kept when present). Its own
# process, so that `set -e` holds (a shell ignores it inside a function called before `||`).
if [ "${1:-}" = --one ]; then
  suite=$2
  dest=$3
  if [ -f "$dest/$version_h" ]; then
    echo "LibTorch 2.x headers: $dest (present)"
    exit 0
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # The suite's signed index, then the package list it names, then the package the list names.
  get "$mirror/dists/$suite/InRelease" "$tmp/InRelease"
  gpgv --keyring "$keyring" --output "$tmp/Release" "$tmp/InRelease" 2>"$tmp/gpgv.log" || {
    cat "$tmp/gpgv.log" >&2
    echo "fetch-torch2-headers: $suite's InRelease does not verify against $keyring" >&2
    exit 1
  }
  packages_sha=$(awk '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == "main/binary-amd64/Packages.xz" { print $1 }' "$tmp/Release")
  [ -n "$packages_sha" ] || { echo "fetch-torch2-headers: $suite's Release lists no main/binary-amd64/Packages.xz" >&2; exit 1; }
  get "$mirror/dists/$suite/main/binary-amd64/Packages.xz" "$tmp/Packages.xz"
  echo "$packages_sha  $tmp/Packages.xz" | sha256sum -c --quiet -

  xz -dc "$tmp/Packages.xz" | awk 'BEGIN { RS = ""; FS = "\n" } $1 == "Package: libtorch-dev" { print; exit }' >"$tmp/entry"
  field() { sed -n "s/^$1: //p" "$tmp/entry" | head -n 1; }
  filename=$(field Filename)
  sha=$(field SHA256)
  version=$(field Version)
  [ -n "$filename" ] && [ -n "$sha" ] || { echo "fetch-torch2-headers: $suite has no libtorch-dev" >&2; exit 1; }
  get "$mirror/$filename" "$tmp/libtorch-dev.deb"
  echo "$sha  $tmp/libtorch-dev.deb" | sha256sum -c --quiet -

  dpkg-deb -x "$tmp/libtorch-dev.deb" "$tmp/root"
  [ -f "$tmp/root/$version_h" ] || { echo "fetch-torch2-headers: libtorch-dev $version has no $version_h" >&2; exit 1; }
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest.partial"
  mv "$tmp/root" "$dest.partial"
  mv "$dest.partial" "$dest"
  echo "LibTorch 2.x headers: $dest (libtorch-dev $version from $suite)"
  exit 0
fi

status=0
[ $# -gt 0 ] || set -- trixie sid
for suite in "$@"; do
  case $suite in
    trixie) dest=${GLLM_TORCH2_DIR:-$root/.deps/libtorch2} ;;
    *) dest=$root/.deps/libtorch2-$suite ;;
  esac
  sh "$0" --one "$suite" "$dest" || { echo "fetch-torch2-headers: no headers from $suite" >&2; status=1; }
done
exit $status
