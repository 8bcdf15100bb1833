#!/usr/bin/env bash
# GPU machine check, one log ($OUT/device-check.log): builds the engine and CLI (target gllm; no Qt,
# no tests) against the LibTorch inside the machine's Python torch package (deps and corpus from
# .deps/device, made by scripts/device-deps.sh on Debian), then runs `gllm version`, `gllm check
# gpu`, a short DEPTH-6 run (tokens/s, MFU, peak VRAM; val BPB must fall below the corpus's unigram
# BPB and the train loss clearly), the engine's throughput beside tests/python/model_reference.py
# under torch.compile on the same batch shape, a 2-process data-parallel run sized to the card
# (gllm --nproc 2, then the same through torchrun --no_python), and compile-to-standard of the run's
# checkpoint. The whole script keeps to GLLM_DEVICE_BUDGET_S seconds (default 450), so one command
# with a 480 s limit runs it all: bash scripts/device-check.sh   (carry=[".deps/device"]).
# GLLM_DEVICE_NCCL=1 also compiles the NCCL process group (nccl.h from pip's nvidia-nccl package);
# by default data-parallel ranks reduce over Gloo, which also serves two ranks sharing one GPU.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-logs}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee "$log") 2>&1
tee_pid=$!
t0=$SECONDS
budget=${GLLM_DEVICE_BUDGET_S:-450}
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
carried=$root/.deps/device
deps=$carried/root/usr
if [ ! -d "$deps" ] || [ ! -d "$carried/data/brown" ]; then
  echo "missing .deps/device (libraries and corpus): run scripts/device-deps.sh on Debian and carry"
  echo "it with the working tree: carry=[\".deps/device\"]"
  exit 1
fi
export PKG_CONFIG_PATH=$deps/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}  # pkgconf's library; sentencepiece (dlopen'ed)
# The corpus and token cache (no network here), copied so runs may write beside them.
export GLLM_DATA=$work/data
cp -a "$carried/data" "$GLLM_DATA"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DGLLM_BUILD_GUI=OFF -DGLLM_BUILD_TESTS=OFF
            "-DCMAKE_PREFIX_PATH=$torch_prefix;$deps")
command -v pkg-config >/dev/null || cmake_args+=("-DPKG_CONFIG_EXECUTABLE=$deps/bin/pkgconf")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
# Torch's CMake config looks for the CUDA toolkit (nvcc) to set up its CUDA targets.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then cmake_args+=(-DCUDAToolkit_ROOT=/usr/local/cuda); fi
cxxflags="-D_GLIBCXX_USE_CXX11_ABI=$abi"
# A CUDA torch: compile the CUDA-only parts (allocator statistics, set_device per rank). NCCL only
# on request (GLLM_DEVICE_NCCL=1); its header comes from pip's nvidia-nccl-cu* package.
if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)'; then
  cxxflags="$cxxflags -DGLLM_WITH_CUDA=1"
  if [ "${GLLM_DEVICE_NCCL:-0}" = 1 ]; then
    nccl_inc=$("$py" -c '
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
hits = [h for r in roots for h in sorted(glob.glob(os.path.join(r, "*", "include", "nccl.h")))]
print(os.path.dirname(hits[0]) if hits else "")' 2>/dev/null)
    if [ -n "$nccl_inc" ]; then
      cxxflags="$cxxflags -I$nccl_inc"
      cmake_args+=(-DGLLM_WITH_NCCL=ON)
      echo "NCCL: compiled (headers $nccl_inc)"
    else
      echo "GLLM_DEVICE_NCCL=1 but no pip NCCL headers: NCCL not compiled"
    fi
  else
    echo "NCCL: not compiled (GLLM_DEVICE_NCCL=1 compiles it); data parallel uses Gloo"
  fi
fi
build=$root/build-device
limited 120 cmake -S "$root" -B "$build" "${cmake_args[@]}" -DCMAKE_CXX_FLAGS="$cxxflags" || exit 1
grep -E "GLLM_TORCH_HAS_CUDA|GLLM_CUDA" "$build/CMakeCache.txt" | grep -v "^//" || true

step "build (gllm: the engine and the CLI, cold, $(nproc) jobs)"
t_build=$SECONDS
limited 300 cmake --build "$build" -j "$(nproc)" --target gllm || exit 1
echo "built in $((SECONDS - t_build)) s"
gllm=$build/app/gllm

step "gllm version"
limited 30 "$gllm" version --json || status=1

step "gpu checks (the checks of tests/gpu/test_engine_cuda: graded GPT CUDA vs CPU, bf16, compile_to_standard, SDPA, peak memory)"
limited 100 "$gllm" check gpu --json >"$out/gpu-check.json"
rc=$?
cat "$out/gpu-check.json"
if [ "$rc" != 0 ]; then status=1; fi
# `check gpu` exits 0 with "skipped" when it sees no CUDA device: on this machine that is a failure.
if grep -q '"skipped"' "$out/gpu-check.json"; then echo "FAIL: the GPU checks were skipped (no CUDA device seen by this build)"; status=1; fi

preset=seed001-d6-00-dense-native
step "short DEPTH-6 run ($preset, 30 steps, val BPB every 10)"
d6=$work/runs/d6
limited 100 "$gllm" train "$preset" --steps 30 --eval-every 10 --out "$d6" --quiet --json ||
  status=1
cp "$d6/summary.json" "$out/d6-summary.json" 2>/dev/null
cp "$d6/metrics.jsonl" "$out/d6-metrics.jsonl" 2>/dev/null
# tokens/s, MFU against the bf16 dense peak (H200: 989 TFLOP/s; GLLM_PEAK_TFLOPS for another GPU),
# peak VRAM (CUDA caching allocator); the pass test: the last val BPB below the corpus's unigram BPB
# (the best context-free model) and a clear fall of the train loss (the last three steps' mean at
# most 85 % of the first three's, and at least 1 nat lower).
peak=${GLLM_PEAK_TFLOPS:-989}
"$py" - "$d6" "$peak" <<'EOF' || status=1
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
uni = s.get("unigram_bpb")
fmt = lambda x: f"{x:.4f}" if x is not None else "none"
print("val BPB by step: " + ", ".join(f"{st}: {b:.4f}" for st, b in val) + "; held-out " + fmt(ho)
      + "; unigram " + fmt(uni))
losses = [r["loss"] for r in rows if r.get("loss") is not None and "val_bpb" not in r]
first = sum(losses[:3]) / max(1, len(losses[:3]))
last = sum(losses[-3:]) / max(1, len(losses[-3:]))
if losses:
    print(f"train loss: first three {first:.4f}, last three {last:.4f} ({len(losses)} steps)")
checks = {
    "completed on CUDA": s["status"] == "completed" and s["device"] == "cuda",
    "val BPB below the unigram BPB": bool(val) and uni is not None and val[-1][1] < uni,
    "train loss fell clearly": len(losses) >= 6 and last <= 0.85 * first and first - last >= 1.0,
}
for name, ok in checks.items():
    print(("ok   " if ok else "FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
EOF

ck=  # the newest weights file, in name order
for f in "$d6"/checkpoints/step_*.safetensors; do
  case $f in *.optim.safetensors) ;; *) [ -f "$f" ] && ck=$f ;; esac
done

step "throughput: the engine against model_reference.py under torch.compile (same batch, this GPU)"
# The engine's figure is the DEPTH-6 run's training tokens/s (forward, backward, MuonAdamW,
# micro-steps of device_batch x sequence_len); the reference times forward, backward and a fused
# AdamW on the same shape.
if [ -n "$ck" ]; then
  rows=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["train"]["device_batch"])' \
    "$d6/config.json")
  limited 120 "$py" "$root/tests/python/device_throughput.py" "$ck" --batch "$rows" --steps 5 \
    --warmup 2 >"$out/reference-throughput.json" 2>"$work/throughput.err"
  rc=$?
  tail -n 5 "$work/throughput.err"
  if [ "$rc" = 0 ]; then
    "$py" - "$d6" "$out/reference-throughput.json" "$peak" <<'EOF' || status=1
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
r = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
peak = float(sys.argv[3]) * 1e12
fpt = s["memory_estimate"]["flops_per_token"]
e, p = s["tokens_per_s"], r["tokens_per_s"]
how = "torch.compile" if r["compiled"] else "eager"
print(f"throughput: engine {e:,.0f} tokens/s (MFU {100 * fpt * e / peak:.1f}%), "
      f"model_reference.py {how} {p:,.0f} tokens/s (MFU {100 * fpt * p / peak:.1f}%, "
      f"batch {r['batch']} x {r['seq']}, compile {r['compile_s']:.0f} s, "
      f"torch {r['torch_version']}): ratio engine/reference {e / p:.2f}")
EOF
  else
    echo "FAIL: the reference throughput run failed (exit $rc)"
    status=1
  fi
else
  echo "no checkpoint in $d6/checkpoints: no throughput comparison"
  status=1
fi

step "data parallel smoke run (2 processes, DEPTH-6, sized to the card)"
# The global batch is shared, not copied: 4 micro-steps of `rows` x 2048 tokens, two per process.
# Two processes on one GPU each hold one micro-batch; `rows` follows the card's memory.
ngpu=$("$py" -c 'import torch; print(torch.cuda.device_count())')
mem_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 1)
rows=8
[ "${mem_mib:-0}" -ge 40000 ] && rows=16
[ "${mem_mib:-0}" -ge 120000 ] && rows=32
cat >"$work/dp.json" <<EOF
{"base": "$root/presets/$preset.json", "name": "dp-smoke",
 "train": {"device_batch": $rows, "total_batch_tokens": $((4 * rows * 2048)), "steps": 4,
           "eval_every": 0, "eval_tokens": 65536, "heldout_tokens": 65536}}
EOF
echo "$ngpu GPU(s), ${mem_mib:-?} MiB each: micro-batches of $rows x 2048 tokens," \
  "global batch $((4 * rows * 2048)) tokens"
dp_log=$work/dp.log
limited 90 "$gllm" train "$work/dp.json" --nproc 2 --out "$work/runs/dp2" --quiet --json \
  >"$dp_log" 2>&1
rc=$?
cat "$dp_log"
if [ "$rc" != 0 ]; then
  if grep -q "no Gloo process group" "$dp_log"; then
    echo "skipped: this LibTorch has no Gloo headers (and NCCL needs one GPU per rank)"
  else
    status=1
  fi
fi

step "torchrun launch (the same run, 2 steps; ranks join from RANK, WORLD_SIZE, MASTER_ADDR, ...)"
limited 60 "$py" -m torch.distributed.run --standalone --nproc_per_node 2 --no_python \
  "$gllm" train "$work/dp.json" --steps 2 --out "$work/runs/dp-torchrun" --quiet --json \
  >"$work/torchrun.log" 2>&1
rc=$?
tail -n 25 "$work/torchrun.log"
[ "$rc" = 0 ] || { echo "FAIL: the torchrun launch exited $rc"; status=1; }

# The GPU comparison of graded and compiled logits is check gpu's compile_to_standard (above); this step checks
# that the CLI folds the run's checkpoint and reproduces its logits (a CPU probe).
step "compile-to-standard of the DEPTH-6 checkpoint"
if [ -n "$ck" ]; then
  limited 45 "$gllm" compile "$ck" --out "$work/compiled.safetensors" --probe-len 256 --json ||
    status=1
else
  echo "no checkpoint in $d6/checkpoints"; status=1
fi

step "done (status $status)"
exit $status
