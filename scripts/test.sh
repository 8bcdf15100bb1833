#!/usr/bin/env bash
# Sets up, builds and runs every test (labels unit, slow, gui, gpu; gpu tests skip without CUDA).
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L unit]. CI (.ci/run) sets
# GLLM_COMPILE_CHECKS=1, which scripts/setup.sh and scripts/build.sh read, and CI=true, which makes
# missing test references fail. Unformatted C++ (scripts/check-format.sh) fails after the build, before the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GLLM_BUILD_DIR:-$root/build}

export GLLM_DEV_TOOLS=1  # scripts/setup.sh then installs clang-format as well
"$root/scripts/build.sh"
"$root/scripts/check-format.sh"

export QT_QPA_PLATFORM=offscreen
cd "$build"
ctest --output-on-failure -j "${GLLM_TEST_JOBS:-2}" "$@"
