#!/usr/bin/env bash
# GPU machine check, one log ($OUT/device-check.log): builds the engine and CLI against the LibTorch inside the
# machine's Python torch package (deps and corpus from .deps/, made by scripts/device-deps.sh on Debian), then runs
# `gllm version`, the GPU checks (those of tests/gpu/test_engine_cuda), a short DEPTH-6 run (tokens/s, MFU, peak VRAM,
# BPB trend), a 2-process smoke run and compile-to-standard of the run's checkpoint. The whole script keeps to
# GLLM_DEVICE_BUDGET_S seconds (default 520), so one command with a 560 s limit runs it all: bash scripts/device-check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee "$log") 2>&1
tee_pid=$!
t0=$SECONDS
budget=${GLLM_DEVICE_BUDGET_S:-520}
status=0
on_exit() {
  local rc=$?
  echo
  echo "=== exit $rc after $((SECONDS - t0)) s"
  exec 1>&- 2>&-
  wait "$tee_pid" 2>/dev/null  # the log is complete before $OUT is collected
  exit "$rc"
}
trap on_exit EXIT
step() { echo; echo "=== $* ($(date -u +%H:%M:%S), $((SECONDS - t0)) s)"; }
# limited CAP CMD...: runs CMD for at most CAP seconds and never past the budget; 124 = ran out of time.
limited() {
  local cap=$1 left=$((budget - (SECONDS - t0)))
  shift
  [ "$cap" -gt "$left" ] && cap=$left
  if [ "$cap" -lt 15 ]; then echo "skipped: the ${budget} s budget is spent"; return 124; fi
  timeout -k 5 "$cap" "$@"
  local rc=$?
  [ "$rc" = 124 ] && echo "stopped after ${cap} s (time limit)"
  return "$rc"
}
py=${GLLM_DEVICE_PYTHON:-python3}
work=${GLLM_DEVICE_WORK:-${TMPDIR:-/tmp}/gllm-device-check}  # run folders and checkpoints: too large for $OUT
rm -rf "$work"
mkdir -p "$work"

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch.compiled_with_cxx11_abi(), "gpus", torch.cuda.device_count())' || {
  echo "no Python torch package: nothing to build against"; exit 1; }
echo "cores $(nproc), cmake $(cmake --version 2>/dev/null | head -1), $(c++ --version 2>/dev/null | head -1)"

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
if [ ! -d "$deps" ] || [ ! -d "$root/.deps/data/brown" ]; then
  echo "missing .deps/ (libraries and corpus): run scripts/device-deps.sh on Debian and carry .deps"; exit 1
fi
export PKG_CONFIG_PATH=$deps/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}  # pkgconf's library; sentencepiece (dlopen'ed)
export GLLM_DATA=$root/.deps/data  # the corpus and token cache: no network here
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DGLLM_BUILD_GUI=OFF -DGLLM_BUILD_TESTS=OFF
            "-DCMAKE_PREFIX_PATH=$torch_prefix;$deps")
command -v pkg-config >/dev/null || cmake_args+=("-DPKG_CONFIG_EXECUTABLE=$deps/bin/pkgconf")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
# Torch's CMake config looks for the CUDA toolkit (nvcc) to set up its CUDA targets.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then cmake_args+=(-DCUDAToolkit_ROOT=/usr/local/cuda); fi
cxxflags="-D_GLIBCXX_USE_CXX11_ABI=$abi"
# A CUDA torch: compile the CUDA-only parts (allocator statistics, NCCL process groups). NCCL's header comes
# from pip's nvidia-nccl-cu* package (nvidia/nccl/include) unless the CUDA toolkit has one.
if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)'; then
  cxxflags="$cxxflags -DGLLM_WITH_CUDA=1"
  nccl_inc=$("$py" -c '
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
hits = [h for r in roots for h in sorted(glob.glob(os.path.join(r, "*", "include", "nccl.h")))]
print(os.path.dirname(hits[0]) if hits else "")' 2>/dev/null)
  if [ -n "$nccl_inc" ]; then cxxflags="$cxxflags -I$nccl_inc"; echo "NCCL headers: $nccl_inc"; else echo "no pip NCCL headers"; fi
fi
build=$root/build-device
limited 120 cmake -S "$root" -B "$build" "${cmake_args[@]}" -DCMAKE_CXX_FLAGS="$cxxflags" || exit 1
grep -E "GLLM_TORCH_HAS_CUDA|GLLM_CUDA" "$build/CMakeCache.txt" | grep -v "^//" || true

step "build (gllm)"
limited 330 cmake --build "$build" -j "$(nproc)" --target gllm || exit 1
gllm=$build/app/gllm

step "gllm version"
limited 30 "$gllm" version --json || status=1

step "gpu checks (the checks of tests/gpu/test_engine_cuda: graded GPT CUDA vs CPU, bf16, compile_to_standard, SDPA, peak memory)"
limited 150 "$gllm" check gpu --json >"$out/gpu-check.json"
rc=$?
cat "$out/gpu-check.json"
if [ "$rc" != 0 ]; then status=1; fi
# `check gpu` exits 0 with "skipped" when it sees no CUDA device: on this machine that is a failure.
if grep -q '"skipped"' "$out/gpu-check.json"; then echo "FAIL: the GPU checks were skipped (no CUDA device seen by this build)"; status=1; fi

preset=seed001-d6-00-dense-native
step "short DEPTH-6 run ($preset, 30 steps, val BPB every 10)"
d6=$work/runs/d6
limited 180 "$gllm" train "$preset" --steps 30 --eval-every 10 --out "$d6" --quiet --json || status=1
cp "$d6/summary.json" "$out/d6-summary.json" 2>/dev/null
cp "$d6/metrics.jsonl" "$out/d6-metrics.jsonl" 2>/dev/null
# tokens/s, MFU against the bf16 dense peak (H200: 989 TFLOP/s; GLLM_PEAK_TFLOPS for another GPU), peak VRAM
# (CUDA caching allocator), BPB trend.
"$py" - "$d6" "${GLLM_PEAK_TFLOPS:-989}" <<'EOF' || status=1
import json, sys
run, peak = sys.argv[1], float(sys.argv[2])
s = json.load(open(run + "/summary.json"))
fpt = s["memory_estimate"]["flops_per_token"]
tps = s["tokens_per_s"]
print(f"status {s['status']}, device {s['device']}, {s['step']} steps, {s['tokens']} tokens, {s['wall_s']:.1f} s")
print(f"tokens/s {tps:,.0f}; {fpt / 1e6:.1f} MFLOP/token; MFU {100 * fpt * tps / (peak * 1e12):.2f}% of {peak:g} TFLOP/s")
print(f"peak VRAM {s['peak_mem_mib']:.0f} MiB allocated (analytic estimate {s['analytic_mem_mib']:.0f} MiB)")
rows = [json.loads(l) for l in open(run + "/metrics.jsonl") if l.strip()]
val = [(r["step"], r["val_bpb"]) for r in rows if "val_bpb" in r]
ho = s["heldout_bpb"]
print("val BPB by step: " + ", ".join(f"{st}: {b:.4f}" for st, b in val) + "; held-out " + (f"{ho:.4f}" if ho is not None else "none"))
losses = [r["loss"] for r in rows if r.get("loss") is not None and "val_bpb" not in r]
if losses: print(f"train loss: first {losses[0]:.4f}, last {losses[-1]:.4f}")
ok = s["status"] == "completed" and s["device"] == "cuda" and len(val) >= 2 and val[-1][1] < val[0][1]
print("BPB falls over the run" if ok else "FAIL: the run did not complete on CUDA with a falling val BPB")
sys.exit(0 if ok else 1)
EOF

step "data parallel smoke run (2 processes, DEPTH-6)"
ngpu=$("$py" -c 'import torch; print(torch.cuda.device_count())')
dp_log=$work/dp.log
if [ "$ngpu" -ge 2 ]; then
  limited 120 "$gllm" train "$preset" --steps 10 --eval-every 0 --nproc 2 --out "$work/runs/d6-dp2" --quiet --json >"$dp_log" 2>&1
  rc=$?
else
  # NCCL refuses two ranks on one GPU; Gloo (with CUDA tensors) can share it. This checks the data-parallel
  # path, not its speed.
  echo "one GPU: both ranks share it over Gloo"
  limited 120 env GLLM_DIST_BACKEND=gloo "$gllm" train "$preset" --steps 4 --eval-every 0 --nproc 2 \
    --out "$work/runs/d6-dp2" --quiet --json >"$dp_log" 2>&1
  rc=$?
fi
cat "$dp_log"
if [ "$rc" != 0 ]; then
  if grep -q "no Gloo process group" "$dp_log"; then
    echo "skipped: this LibTorch has no Gloo headers, and NCCL needs one GPU per rank"
  else
    status=1
  fi
fi

# The GPU comparison of graded and compiled logits is check gpu's compile_to_standard (above); this step checks
# that the CLI folds the run's checkpoint and reproduces its logits (a CPU probe).
step "compile-to-standard of the DEPTH-6 checkpoint"
ck=
for f in "$d6"/checkpoints/step_*.safetensors; do
  case $f in *.optim.safetensors) ;; *) [ -f "$f" ] && ck=$f ;; esac  # the newest weights file, in name order
done
if [ -n "$ck" ]; then
  limited 90 "$gllm" compile "$ck" --out "$work/compiled.safetensors" --probe-len 256 --json || status=1
else
  echo "no checkpoint in $d6/checkpoints"; status=1
fi

step "done (status $status)"
exit $status
