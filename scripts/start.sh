#!/usr/bin/env bash
# Sets up, builds and starts the workbench. Without a display it runs the default preset headless
# instead (progress bar in the terminal) and writes PNG plots of its curves next to the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GLLM_BUILD_DIR:-$root/build}

# A user's first build: the CLI and the workbench, not the tests (scripts/test.sh builds those).
GLLM_BUILD_TARGETS=${GLLM_BUILD_TARGETS:-gllm gllm-workbench} "$root/scripts/build.sh"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/app/gllm-workbench" ]; then
  exec "$build/app/gllm-workbench" "$@"
fi

echo "start: no display — training the default preset (tiny-cpu) headless"
run_dir=${GLLM_RUNS:-$root/runs}/tiny-cpu-$(date +%Y%m%d-%H%M%S)
t0=$SECONDS
"$build/app/gllm" train tiny-cpu --out "$run_dir"
echo "start: training $((SECONDS - t0)) s"
if [ -x "$build/app/gllm-workbench" ]; then
  QT_QPA_PLATFORM=offscreen "$build/app/gllm-workbench" --plot "$run_dir" --out "$run_dir/plots"
  echo "start: plots written to $run_dir/plots"
else
  echo "start: Qt 6 not available — no plots; the run is in $run_dir"
fi
