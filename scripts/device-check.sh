#!/usr/bin/env bash
# GPU machine check, one log: builds the engine and CLI against the LibTorch inside the machine's
# Python torch package (deps from .deps/, made by scripts/device-deps.sh on Debian), then runs
# `gllm version`, the GPU checks, a short DEPTH-6 run and the compile-to-standard check on GPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch.compiled_with_cxx11_abi())'

step "configure"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
abi=$(python3 -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))')
deps=$root/.deps/root/usr
if [ ! -d "$deps" ]; then echo "missing .deps/: run scripts/device-deps.sh on Debian and carry .deps"; exit 1; fi
export PKG_CONFIG_PATH=$deps/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
build=$root/build-device
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGLLM_BUILD_GUI=OFF -DGLLM_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$deps/share/eigen3/cmake;$deps/share/cmake;$deps/lib/cmake" \
  -DCMAKE_CXX_FLAGS="-D_GLIBCXX_USE_CXX11_ABI=$abi" || exit 1

step "build"
cmake --build "$build" -j "$(nproc)" --target gllm || exit 1
gllm=$build/app/gllm

step "gllm version"
"$gllm" version --json

step "gpu checks"
"$gllm" check gpu --json

step "short DEPTH-6 run (seed001-d6-00, 30 steps)"
GLLM_RUNS=$out/runs "$gllm" train seed001-d6-00 --steps 30 --eval-every 10 --out "$out/runs/d6" && \
  "$gllm" runs "$out/runs" --json

step "compile-to-standard on GPU"
"$gllm" compile "$out/runs/d6" --out "$out/compiled.safetensors" --device cuda

step "done"
