#!/usr/bin/env bash
# GPU machine check, one log: builds the engine and CLI against the LibTorch inside the machine's
# Python torch package (deps from .deps/, made by scripts/device-deps.sh on Debian), then runs
# `gllm version`, the GPU checks, a short DEPTH-6 run, a 2-process smoke run and compile-to-standard on GPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee "$log") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
py=${GLLM_DEVICE_PYTHON:-python3}

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch.compiled_with_cxx11_abi(), "gpus", torch.cuda.device_count())' || {
  echo "no Python torch package: nothing to build against"; exit 1; }

step "configure"
# LibTorch: $GLLM_LIBTORCH (an unpacked libtorch zip) wins over Python's torch package.
if [ -n "${GLLM_LIBTORCH:-}" ]; then
  torch_prefix=$GLLM_LIBTORCH/share/cmake
  abi=$(grep -q "_GLIBCXX_USE_CXX11_ABI=0" "$GLLM_LIBTORCH"/share/cmake/Torch/TorchConfig.cmake 2>/dev/null && echo 0 || echo 1)
else
  torch_prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  abi=$("$py" -c 'import torch; print(int(torch.compiled_with_cxx11_abi()))')
fi
if [ "$abi" = 0 ]; then
  # Debian's sentencepiece (and every other C++ library in .deps) uses the C++11 string ABI; a torch
  # built with the old ABI cannot link with it (undefined std::string symbols). Torch >= 2.7 wheels use
  # the new ABI; older ones need a cxx11-ABI LibTorch zip (GLLM_LIBTORCH=/path/libtorch).
  echo "this torch uses the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0), but .deps/ is Debian's C++11-ABI build."
  echo "Fix: set GLLM_LIBTORCH to an unpacked 'cxx11 ABI' LibTorch of the same CUDA version, or use torch >= 2.7."
  exit 2
fi
deps=$root/.deps/root/usr
if [ ! -d "$deps" ]; then echo "missing .deps/: run scripts/device-deps.sh on Debian and carry .deps"; exit 1; fi
export PKG_CONFIG_PATH=$deps/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cxxflags="-D_GLIBCXX_USE_CXX11_ABI=$abi"
# A CUDA torch: compile the CUDA-only parts (allocator statistics, NCCL process groups).
if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)'; then
  cxxflags="$cxxflags -DGLLM_WITH_CUDA=1"
  nccl_inc=$("$py" -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2>/dev/null || true)
  if [ -n "$nccl_inc" ] && [ -f "$nccl_inc/nccl.h" ]; then cxxflags="$cxxflags -I$nccl_inc"; echo "NCCL headers: $nccl_inc"; fi
fi
build=$root/build-device
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGLLM_BUILD_GUI=OFF -DGLLM_BUILD_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$deps/share/eigen3/cmake;$deps/share/cmake;$deps/lib/cmake" \
  -DCMAKE_CXX_FLAGS="$cxxflags" || exit 1

step "build"
cmake --build "$build" -j "$(nproc)" --target gllm || exit 1
gllm=$build/app/gllm
status=0

step "gllm version"
"$gllm" version --json

step "gpu checks (the checks of tests/gpu/test_engine_cuda)"
"$gllm" check gpu --json || status=1

step "short DEPTH-6 run (seed001-d6-00, 30 steps; tokens/s, MFU, peak VRAM, BPB trend)"
GLLM_RUNS=$out/runs "$gllm" train seed001-d6-00 --steps 30 --eval-every 10 --out "$out/runs/d6" --json || status=1
"$gllm" runs "$out/runs" --json

step "data parallel smoke run (2 processes, DEPTH-6, 10 steps)"
if [ "$("$py" -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ]; then
  "$gllm" train seed001-d6-00 --steps 10 --eval-every 0 --nproc 2 --out "$out/runs/d6-dp2" --json || status=1
else
  echo "one GPU: 2 processes share it (checks the NCCL/Gloo path, not speed)"
  "$gllm" train seed001-d6-00 --steps 4 --eval-every 0 --nproc 2 --out "$out/runs/d6-dp2" --json || status=1
fi

step "compile-to-standard of the DEPTH-6 checkpoint (the GPU max |dlogits| is check gpu's compile_to_standard)"
ck=$(ls "$out"/runs/d6/checkpoints/step_*.safetensors 2>/dev/null | grep -v optim | tail -1)
if [ -n "$ck" ]; then "$gllm" compile "$ck" --out "$out/compiled.safetensors" --json || status=1; else echo "no checkpoint"; status=1; fi

step "done (status $status)"
exit $status
