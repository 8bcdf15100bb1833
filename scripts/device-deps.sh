#!/usr/bin/env bash
# Prepares .deps/ (git-ignored) on a Debian machine: the header-only and small libraries the engine
# needs (Eigen, nlohmann_json, CLI11, sentencepiece), unpacked from Debian packages, so that
# scripts/device-check.sh can build on a GPU machine whose only LibTorch is Python's torch package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps=$root/.deps
mkdir -p "$deps/debs" "$deps/root"
cd "$deps/debs"
pkgs=(libeigen3-dev nlohmann-json3-dev libcli11-dev libsentencepiece-dev libsentencepiece0)
apt-get download "${pkgs[@]}" >/dev/null
for deb in ./*.deb; do dpkg-deb -x "$deb" "$deps/root"; done
# Point sentencepiece's pkg-config file at the unpacked prefix.
for pc in "$deps"/root/usr/lib/x86_64-linux-gnu/pkgconfig/sentencepiece*.pc; do
  sed -i "s|^prefix=.*|prefix=$deps/root/usr|" "$pc"
done
du -sh "$deps/root"
echo "device-deps: ready in $deps (carry it with the working tree: carry=[\".deps\"])"
