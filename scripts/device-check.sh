#!/usr/bin/env bash
# The GPU machine check in one command, in budget: build, `gllm check gpu`, a smoke run with its BPB
# check, throughput beside a like-for-like PyTorch reference, compile-to-standard, then the rest.
#
# usage: scripts/device-check.sh [--device cuda|cpu] [--build-only]
#   cuda (default): on the GPU machine, with .deps/device carried beside the tree (made by
#         scripts/device-deps.sh):  bash scripts/device-check.sh   (carry=[".deps/device"],
#         a command limit of 560 s: the budget below is 500 s)
#   cpu:  the rehearsal CI runs (tests/slow/test_cli_device_rehearsal): the same script, steps,
#         budget and report on the CPU, the same build flags minus CUDA, with --device cpu.
# Writes to $OUT (default ./device-logs): device-check.log (everything), device-report.md and
# device-report.json (one row per step: cap, seconds used, result), gpu-check.json,
# smoke-summary.json, smoke-metrics.jsonl, reference-throughput.json. The report is written on any
# exit, a step cut by its time limit included. Environment: GLLM_DEVICE_BUDGET_S (500),
# GLLM_DEVICE_PYTHON (python3), GLLM_LIBTORCH (an unpacked LibTorch instead of Python's),
# GLLM_PEAK_TFLOPS (bf16 dense peak; 989 = H200), GLLM_DEVICE_NCCL=1 (compile NCCL from pip's
# headers), GLLM_DEVICE_WORK (run folders; default $TMPDIR/gllm-device-check), GLLM_DEVICE_CAP_<STEP>
# (a step's cap, e.g. GLLM_DEVICE_CAP_SMOKE=3: the rehearsal's test of a cut step). --build-only
# stops after the build (the rehearsal primes its ccache-backed build with it, outside the budget).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=cuda
build_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --device) mode=${2:-}; shift 2 || shift ;;
    --build-only) build_only=1; shift ;;
    --device=*) mode=${1#*=}; shift ;;
    -h | --help) sed -n "2,24p" "$0"; exit 0 ;;
    *) echo "device-check: unknown argument '$1'; usage: scripts/device-check.sh [--device cuda|cpu]" >&2; exit 2 ;;
  esac
done
case $mode in cuda | cpu) ;; *) echo "device-check: --device is '$mode'; use cuda or cpu" >&2; exit 2 ;; esac

out=${OUT:-$root/device-logs}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee "$log") 2>&1
tee_pid=$!
t0=$SECONDS
budget=${GLLM_DEVICE_BUDGET_S:-500}
py=${GLLM_DEVICE_PYTHON:-python3}
peak=${GLLM_PEAK_TFLOPS:-989}
work=${GLLM_DEVICE_WORK:-${TMPDIR:-/tmp}/gllm-device-check}  # run folders and checkpoints: too large for $OUT
rm -rf "$work"
mkdir -p "$work"

# The steps in order of value, each with its cap in seconds. Their sum stays 10 % under the budget:
# the margin covers the report, the checks between steps and the machine's slower moments.
order=(configure build version check_gpu smoke throughput compile dp torchrun)
declare -A cap=([configure]=25 [build]=210 [version]=10 [check_gpu]=40 [smoke]=50 [throughput]=80
                [compile]=15 [dp]=10 [torchrun]=10)
declare -A title=([configure]="configure (cmake)" [build]="build (target gllm)" [version]="gllm version"
                  [check_gpu]="gllm check gpu" [smoke]="smoke run and BPB check"
                  [throughput]="throughput vs reference" [compile]="compile-to-standard"
                  [dp]="data parallel (2 ranks)" [torchrun]="torchrun launch (2 ranks)")
declare -A used=() result=() note=()
caps_sum=0
for s in "${order[@]}"; do
  v=GLLM_DEVICE_CAP_${s^^}
  [ -n "${!v:-}" ] && cap[$s]=${!v}
  caps_sum=$((caps_sum + cap[$s]))
done
status=0

write_report() {
  local md=$out/device-report.md json=$out/device-report.json s first=1 r
  for s in "${order[@]}"; do  # a failed or cut step fails the check; n/a does not
    case ${result[$s]:-} in FAIL | cut) status=1 ;; esac
  done
  {
    echo "# device check ($mode): status $status after $((SECONDS - t0)) s of the $budget s budget"
    echo
    echo "| step | cap s | used s | result | note |"
    echo "|---|---:|---:|---|---|"
    for s in "${order[@]}"; do
      echo "| ${title[$s]} | ${cap[$s]} | ${used[$s]:--} | ${result[$s]:-not reached} | ${note[$s]:-} |"
    done
    echo "| **sum of caps** | $caps_sum | | | budget $budget s |"
  } >"$md"
  {
    printf '{"mode": "%s", "status": %d, "wall_s": %d, "budget_s": %d, "caps_sum_s": %d, "steps": [' \
      "$mode" "$status" "$((SECONDS - t0))" "$budget" "$caps_sum"
    for s in "${order[@]}"; do
      r=${result[$s]:-not reached}
      [ $first = 1 ] || printf ', '
      first=0
      printf '{"step": "%s", "cap_s": %d, "used_s": %s, "result": "%s", "note": "%s"}' "$s" "${cap[$s]}" \
        "${used[$s]:-null}" "$r" "$(printf '%s' "${note[$s]:-}" | tr '"\\' "''")"
    done
    printf ']}\n'
  } >"$json"
  echo
  cat "$md"
}
on_exit() {
  local rc=$?
  [ "$rc" != 0 ] && [ "$status" = 0 ] && status=$rc
  write_report
  echo
  echo "=== exit $status after $((SECONDS - t0)) s"
  exec 1>&- 2>&-
  wait "$tee_pid" 2>/dev/null  # the log is complete before $OUT is collected
  exit "$status"
}
trap on_exit EXIT

# run STEP CMD...: CMD under the step's cap, never past the budget; records seconds and result.
# Returns CMD's status (124: cut by time).
run() {
  local s=$1 c left rc t
  shift
  c=${cap[$s]}
  left=$((budget - (SECONDS - t0)))
  echo >&2
  echo "=== ${title[$s]} (cap $c s; $((SECONDS - t0)) s of $budget s used, $(date -u +%H:%M:%S))" >&2
  if [ "$left" -lt 5 ]; then
    result[$s]="cut"
    note[$s]="not started: the $budget s budget is spent"
    echo "${note[$s]}" >&2
    return 124
  fi
  [ "$c" -gt "$left" ] && c=$left
  t=$SECONDS
  timeout -k 5 "$c" "$@"
  rc=$?
  used[$s]=$((SECONDS - t))
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    result[$s]="cut"
    note[$s]="stopped after $c s (its time limit)${note[$s]:+; ${note[$s]}}"
    echo "CUT: ${title[$s]} ${note[$s]}" >&2
    return 124
  fi
  if [ "$rc" = 0 ]; then
    result[$s]=${result[$s]:-ok}
  else
    result[$s]="FAIL"
    note[$s]="exit $rc (device-check.log has its output)${note[$s]:+; ${note[$s]}}"
  fi
  return "$rc"
}
# na STEP WHY / skip STEP WHY: a step that does not apply here (not a failure) / could not run.
na() { result[$1]="n/a"; note[$1]="not applicable on this machine: $2"; echo; echo "=== ${title[$1]}: ${note[$1]}"; }
skip() { result[$1]="FAIL"; note[$1]="not run: $2"; echo; echo "=== ${title[$1]}: ${note[$1]}"; }

echo "=== machine ($mode mode; budget $budget s; the caps sum to $caps_sum s)"
if [ "$caps_sum" -gt $((budget * 9 / 10)) ]; then
  echo "FAIL: the steps' caps sum to $caps_sum s, over 90 % of the $budget s budget; lower a cap"
  status=1
  exit 1
fi
if [ "$build_only" = 1 ]; then  # priming a (maybe cold) build: no time limits
  budget=86400 cap[configure]=3600 cap[build]=86400
fi
if [ "$mode" = cuda ]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
fi
"$py" -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count() if torch.version.cuda else 0)' ||
  { echo "no Python torch package ($py): the reference cannot run"; [ "$mode" = cuda ] && exit 1; }
echo "cores $(nproc), $(cmake --version 2>/dev/null | head -1), $(c++ --version 2>/dev/null | head -1)"

# ----- configure -----
# LibTorch: $GLLM_LIBTORCH (an unpacked libtorch zip), else Python's torch package when it ships its
# CMake files (pip wheels do), else the system's (Debian's libtorch-dev, the CPU rehearsal).
torch_prefix=
if [ -n "${GLLM_LIBTORCH:-}" ]; then
  torch_prefix=$GLLM_LIBTORCH/share/cmake
else
  p=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
  [ -n "$p" ] && [ -f "$p/Torch/TorchConfig.cmake" ] && torch_prefix=$p
fi
if [ -n "$torch_prefix" ] && grep -q "_GLIBCXX_USE_CXX11_ABI=0" "$torch_prefix/Torch/TorchConfig.cmake" 2>/dev/null; then
  # Debian's sentencepiece (and every other C++ library in .deps) uses the C++11 string ABI.
  echo "this LibTorch ($torch_prefix) uses the pre-C++11 ABI, but .deps/device is Debian's C++11-ABI build."
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
# The verified corpus (no network here), copied so the first run may prepare its dataset beside it.
export GLLM_DATA=$work/data
export GLLM_PRESETS=$root/presets
cp -a "$carried/data" "$GLLM_DATA"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DGLLM_BUILD_GUI=OFF -DGLLM_BUILD_TESTS=OFF
            "-DCMAKE_PREFIX_PATH=${torch_prefix:+$torch_prefix;}$deps")
command -v pkg-config >/dev/null || cmake_args+=("-DPKG_CONFIG_EXECUTABLE=$deps/bin/pkgconf")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
cxxflags=
if [ "$mode" = cuda ]; then
  # Torch's CMake config runs find_package(CUDAToolkit) and enable_language(CUDA): name nvcc, from
  # PATH, CUDA_HOME, /usr/local/cuda, or the pip packages beside torch (nvidia-cuda-nvcc-*).
  nvcc=$(command -v nvcc || true)
  for c in "${CUDA_HOME:-}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
    [ -z "$nvcc" ] && [ -x "$c" ] && nvcc=$c
  done
  if [ -z "$nvcc" ]; then
    nvcc=$("$py" -c '
import glob, os
roots = []
try:
    import nvidia
    roots += list(nvidia.__path__)
except ImportError:
    pass
import torch
roots.append(os.path.dirname(torch.__file__))
hits = [h for r in roots for pat in ("*/bin/nvcc", "bin/nvcc", "*/*/bin/nvcc") for h in sorted(glob.glob(os.path.join(r, pat)))]
print(hits[0] if hits else "")' 2>/dev/null)
  fi
  if [ -n "$nvcc" ]; then
    cuda_root=$(cd "$(dirname "$nvcc")/.." && pwd)
    echo "CUDA compiler: $nvcc ($("$nvcc" --version 2>/dev/null | tail -n 1))"
    cmake_args+=("-DCMAKE_CUDA_COMPILER=$nvcc" "-DCUDAToolkit_ROOT=$cuda_root")
    export CUDA_HOME=${CUDA_HOME:-$cuda_root} CUDACXX=$nvcc
  else
    echo "no nvcc on PATH, in CUDA_HOME, /usr/local/cuda or beside torch: torch's CMake may refuse"
  fi
  if "$py" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)'; then
    cxxflags="-DGLLM_WITH_CUDA=1"
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
      fi
    fi
  fi
fi
build=$root/build-device
[ -n "$cxxflags" ] && cmake_args+=("-DCMAKE_CXX_FLAGS=$cxxflags")
run configure cmake -S "$root" -B "$build" "${cmake_args[@]}" || exit 1
grep -E "^(Torch_DIR|GLLM_TORCH_HAS_CUDA|GLLM_WITH)" "$build/CMakeCache.txt" || true
note[configure]="LibTorch $(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt")"

# ----- build -----
run build cmake --build "$build" -j "$(nproc)" --target gllm || exit 1
note[build]="$(nproc) jobs"
gllm=$build/app/gllm
if [ "$build_only" = 1 ]; then
  for s in "${order[@]}"; do [ -n "${result[$s]:-}" ] || { result[$s]="n/a"; note[$s]="--build-only"; }; done
  exit 0
fi

run version "$gllm" version --json

# ----- gllm check gpu -----
# On the CPU the same checks run against the CPU as a self-test (--device cpu).
run check_gpu "$gllm" check gpu --json --device "$mode" >"$out/gpu-check.json"
cat "$out/gpu-check.json"
# `check gpu` exits 0 with a top-level "skipped" when it sees no CUDA device: a failure here.
why=$("$py" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j.get("skipped") or ("" if j.get("passed") else "checks failed"))' "$out/gpu-check.json" 2>/dev/null || echo "no JSON report")
if [ -n "$why" ] && [ "${result[check_gpu]:-}" = ok ]; then
  result[check_gpu]="FAIL"; note[check_gpu]=$why
elif [ -z "$why" ]; then
  note[check_gpu]=$("$py" -c 'import json, sys; c = json.load(open(sys.argv[1]))["checks"]; print("%d of %d checks pass; %s" % (sum(x["status"] == "pass" for x in c), len(c), ", ".join(x["name"] + " " + x["status"] for x in c if x["status"] != "pass")))' "$out/gpu-check.json" 2>/dev/null)
fi

# ----- smoke run: val BPB below the unigram BPB, a clear fall of the train loss -----
if [ "$mode" = cuda ]; then
  base=$root/presets/seed001-d6-00-dense-native.json
  smoke='"steps": 30, "eval_every": 10, "eval_tokens": 1048576, "heldout_tokens": 1048576, "checkpoint_every": 0'
else
  # The same recipe at a shape a CPU trains in a fraction of a second a step (2 x 64, 128 tokens),
  # on one thread: on a CI runner shared with other jobs, OpenMP threads spinning on two busy cores
  # made 30 steps take ten times longer (84 s instead of 9 s measured). 100 steps: on the prepared
  # Brown dataset 30 steps reached val BPB 2.69, still above its unigram 2.55; 100 reach 2.43 (8.6 s).
  base=$root/presets/seed001-tiny-00-dense-native.json
  smoke='"steps": 100, "device_batch": 8, "eval_every": 25, "eval_tokens": 8192, "heldout_tokens": 8192, "checkpoint_every": 0, "threads": 1'
  shape='"model": {"n_layer": 2, "n_embd": 64, "n_head": 2, "sequence_len": 128}, '
fi
cat >"$work/smoke.json" <<EOF
{"base": "$base", "name": "device-smoke", ${shape:-}"train": {$smoke}}
EOF
run_dir=$work/runs/smoke
# Run from $work with the file's bare name: a preset chain's bases then resolve in $GLLM_PRESETS.
run smoke env -C "$work" "$gllm" train smoke.json --device "$mode" --out "$run_dir" --quiet --json
cp "$run_dir/summary.json" "$out/smoke-summary.json" 2>/dev/null
cp "$run_dir/metrics.jsonl" "$out/smoke-metrics.jsonl" 2>/dev/null
if [ -f "$run_dir/summary.json" ] && [ "${result[smoke]:-}" != cut ]; then
  verdict=$("$py" - "$run_dir" "$peak" "$mode" <<'EOF'
import json, sys
run, peak, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
s = json.load(open(run + "/summary.json"))
fpt = s["memory_estimate"]["flops_per_token"]
tps = s["tokens_per_s"]
print(f"status {s['status']}, device {s['device']}, {s['step']} steps, {s['tokens']} tokens, {s['wall_s']:.1f} s", file=sys.stderr)
print(f"tokens/s {tps:,.0f} (after warm-up, synchronised); {fpt / 1e6:.1f} MFLOP/token; MFU {100 * fpt * tps / (peak * 1e12):.2f}% of {peak:g} TFLOP/s", file=sys.stderr)
print(f"peak memory {s['peak_mem_mib']:.0f} MiB (analytic estimate {s['analytic_mem_mib']:.0f} MiB)", file=sys.stderr)
rows = [json.loads(l) for l in open(run + "/metrics.jsonl") if l.strip()]
val = [(r["step"], r["val_bpb"]) for r in rows if "val_bpb" in r]
uni = s.get("unigram_bpb")
losses = [r["loss"] for r in rows if r.get("loss") is not None and "val_bpb" not in r and "bpb" not in r]
first = sum(losses[:3]) / max(1, len(losses[:3]))
last = sum(losses[-3:]) / max(1, len(losses[-3:]))
print("val BPB by step: " + ", ".join(f"{st}: {b:.4f}" for st, b in val) + f"; unigram {uni}", file=sys.stderr)
print(f"train loss: first three {first:.4f}, last three {last:.4f} ({len(losses)} steps)", file=sys.stderr)
checks = {
    "completed on " + mode: s["status"] == "completed" and s["device"] == mode,
    "val BPB below the unigram BPB": bool(val) and uni is not None and val[-1][1] < uni,
    "train loss fell clearly": len(losses) >= 6 and last <= 0.85 * first and first - last >= 1.0,
}
for name, ok in checks.items():
    print(("ok   " if ok else "FAIL ") + name, file=sys.stderr)
bpb = f"{val[-1][1]:.3f}" if val else "none"
print(f"val BPB {bpb} (unigram {uni if uni is None else round(uni, 3)}), loss {first:.2f} -> {last:.2f}, {tps:,.0f} tokens/s"
      + ("" if all(checks.values()) else "; FAILED: " + ", ".join(k for k, v in checks.items() if not v)))
sys.exit(0 if all(checks.values()) else 1)
EOF
  )
  rc=$?
  note[smoke]="${note[smoke]:+${note[smoke]}; }$verdict"
  if [ "$rc" != 0 ] && [ "${result[smoke]}" = ok ]; then result[smoke]="FAIL"; fi
fi
ck=  # the newest weights file, in name order
for f in "$run_dir"/checkpoints/step_*.safetensors; do
  case $f in *.optim.safetensors) ;; *) [ -f "$f" ] && ck=$f ;; esac
done

# ----- throughput: the engine's smoke run beside the like-for-like reference -----
# The reference (tests/python/device_throughput.py) is the same architecture from the same weights,
# the same attention kernel (SDPA) and precision policy (the run's dtype: bf16 autocast over fp32
# master weights), timed after warm-up with CUDA synchronisation, eager then under torch.compile.
if [ -n "$ck" ]; then
  cfg=$run_dir/config.json
  read -r rows seq dtype < <("$py" -c 'import json, sys; c = json.load(open(sys.argv[1])); print(c["train"]["device_batch"], c["model"]["sequence_len"], c["train"]["dtype"])' "$cfg")
  # A mode still running 10 s before the cap (torch.compile compiling, say) is reported cut inside
  # the step; the eager figures are kept.
  left=$((budget - (SECONDS - t0)))
  c=${cap[throughput]}
  [ "$c" -gt "$left" ] && c=$left
  run throughput "$py" "$root/tests/python/device_throughput.py" "$ck" --batch "$rows" --seq "$seq" \
    --dtype "$dtype" --device "$mode" --steps 5 --warmup 2 --out "$out/reference-throughput.json" \
    --deadline "$(($(date +%s) + c - 10))"
  if [ -f "$out/reference-throughput.json" ]; then
    line=$("$py" - "$run_dir" "$out/reference-throughput.json" "$peak" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
r = json.load(open(sys.argv[2]))
peak = float(sys.argv[3]) * 1e12
fpt = s["memory_estimate"]["flops_per_token"]
e = s["tokens_per_s"]
parts = [f"engine {e:,.0f} tokens/s (MFU {100 * fpt * e / peak:.2f}%, peak {s['peak_mem_mib']:.0f} MiB)"]
for mode in ("eager", "compile"):
    m = r.get(mode)
    if not m:
        continue
    if "tokens_per_s" not in m:
        parts.append(f"reference {mode}: {m.get('skipped', 'not run')}")
        continue
    p = m["tokens_per_s"]
    parts.append(f"reference {mode} {p:,.0f} tokens/s (MFU {100 * fpt * p / peak:.2f}%, peak "
                 f"{m['peak_mem_mib']:.0f} MiB, batch {m['batch']}x{m['seq']}): engine/reference {e / p:.2f}")
parts.append(f"attention {r.get('attention')}, {r.get('precision')}, torch {r.get('torch_version')}")
print("; ".join(parts))
EOF
    )
    note[throughput]="$line"
    echo "$line"
  fi
else
  skip throughput "the smoke run left no checkpoint"
fi

# ----- compile-to-standard of the smoke run's checkpoint (a CPU probe of its logits) -----
if [ -n "$ck" ]; then
  probe=256
  [ "$mode" = cpu ] && probe=128  # the CPU smoke run's sequence_len
  run compile "$gllm" compile "$ck" --out "$work/compiled.safetensors" --probe-len "$probe" --json
else
  skip compile "the smoke run left no checkpoint"
fi

# ----- the rest: steps that need two devices (Gloo or NCCL across two GPUs) -----
# One GPU: two ranks would share it over Gloo, which a pip torch does not ship headers for, and
# NCCL needs one GPU per rank. The CPU rehearsal mirrors the one-GPU machine (GLLM_DEVICE_RANKS=2
# runs the two CPU ranks over Gloo instead).
if [ "$mode" = cuda ]; then
  ngpu=$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
else
  ngpu=${GLLM_DEVICE_RANKS:-1}
fi
if [ "${ngpu:-0}" -lt 2 ]; then
  na dp "$ngpu $mode device(s); these steps need 2"
  na torchrun "$ngpu $mode device(s); these steps need 2"
else
  cat >"$work/dp.json" <<EOF
{"base": "$base", "name": "dp-smoke", "train": {"steps": 4, "eval_every": 0, "eval_tokens": 32768,
 "heldout_tokens": 32768, "checkpoint_every": 0}}
EOF
  run dp env -C "$work" "$gllm" train dp.json --device "$mode" --nproc 2 --out "$work/runs/dp2" --quiet --json
  if [ "${result[dp]}" = FAIL ] && grep -q "no Gloo process group" "$log"; then
    result[dp]="n/a"; note[dp]="not applicable on this machine: this LibTorch has no Gloo"
  fi
  run torchrun "$py" -m torch.distributed.run --standalone --nproc_per_node 2 --no_python \
    env -C "$work" "$gllm" train dp.json --device "$mode" --steps 2 --out "$work/runs/dp-torchrun" --quiet --json
fi

echo
echo "=== done"
exit "$status"
