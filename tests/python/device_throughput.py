# Training throughput of tests/python/model_reference.py, the PyTorch twin of the engine's GPT, like
# for like with the engine: the side scripts/device-check.sh compares it with (same weights, shape, machine).
#
# usage: device_throughput.py CHECKPOINT --batch B [--seq T] [--steps N] [--warmup W]
#                             [--device cuda|cpu] [--dtype bf16|fp32] [--modes eager,compile]
#                             [--out FILE]
#   CHECKPOINT: an engine weights file (step_NNNNNN.safetensors; its __metadata__ holds the config
#               and vocab_size)
# Like for like: the same architecture, the attention through PyTorch's SDPA (the engine's CUDA
# kernel; is_causal for full windows, the boolean window mask otherwise), the engine's precision
# policy (--dtype bf16: forward and loss under bf16 autocast over fp32 master weights; backward and
# the update outside it), timed after warm-up with torch.cuda.synchronize around every timed step.
# One step: forward and loss, backward, a fused AdamW update (standing in for MuonAdamW), gradients
# set to None. Tokens are random. Each mode (eager, then torch.compile) builds its own model; its
# figures: tokens_per_s, median_step_s, peak_mem_mib (CUDA allocator peak, or process RSS growth
# on the CPU), compile_s. The result, one JSON object {"eager": {...}, "compile": {...},
# "attention", "precision", "torch_version", ...}, is the last stdout line and, with --out, a file
# rewritten after each mode (so a mode cut by a time limit leaves the earlier ones). On an
# out-of-memory error the batch is halved (and reported) until it fits.
import argparse
import json
import os
import resource
import signal
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_reference as mr  # noqa: E402

HAVE_SDPA = hasattr(F, "scaled_dot_product_attention")


def peak_mib(dev):
    if dev.type == "cuda":
        return torch.cuda.max_memory_allocated(dev) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run(args, batch, compiled):
    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(dev)  # the reference builds masks and tables with factory calls
    W, meta = mr.read_safetensors(args.checkpoint)
    # fp32 master weights (the engine's bf16-stored tables are widened, as its lookups do).
    W = {k: (v.float().to(dev).requires_grad_() if v.is_floating_point() else v.to(dev))
         for k, v in W.items()}
    ref = mr.Reference(W, meta, sdpa=HAVE_SDPA)
    T = args.seq or ref.m["sequence_len"]
    params = [v for v in W.values() if v.requires_grad]
    fused = {"fused": True} if dev.type == "cuda" else {}
    opt = torch.optim.AdamW(params, lr=1e-4, **fused)
    bf16 = args.dtype == "bf16"

    def loss_of(idx, targets):
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
            _, loss, reg, _ = ref.losses(idx, targets)
            return loss + reg

    fn = torch.compile(loss_of) if compiled else loss_of
    gen = torch.Generator(device=dev).manual_seed(0)
    idx = torch.randint(0, ref.V, (batch, T), generator=gen, device=dev)
    targets = torch.randint(0, ref.V, (batch, T), generator=gen, device=dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def step():
        loss = fn(idx, targets)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    rss0 = peak_mib(dev) if dev.type == "cpu" else 0.0
    sync()
    t0 = time.perf_counter()
    loss = step()  # compiles the forward and backward graphs under torch.compile
    sync()
    compile_s = time.perf_counter() - t0
    for _ in range(args.warmup):
        step()
    sync()
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    return {"tokens_per_s": batch * T / med, "median_step_s": med, "step_s": times,
            "compile_s": compile_s, "batch": batch, "seq": T, "loss": float(loss.detach().float()),
            "peak_mem_mib": peak_mib(dev) - rss0, "requested_batch": args.batch}


def sdpa_check(args):
    """|loss(SDPA) − loss(explicit softmax)| on one row in fp32: the timed model computes the function
    test_model_parity checks, not just something as fast."""
    dev = torch.device(args.device)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(dev)
    W, meta = mr.read_safetensors(args.checkpoint)
    W = {k: (v.float().to(dev) if v.is_floating_point() else v.to(dev)) for k, v in W.items()}
    a, b = mr.Reference(W, meta, sdpa=True), mr.Reference(W, meta, sdpa=False)
    T = args.seq or a.m["sequence_len"]
    gen = torch.Generator(device=dev).manual_seed(1)
    idx = torch.randint(0, a.V, (1, T), generator=gen, device=dev)
    with torch.no_grad():
        la = float(a.losses(idx, idx.roll(-1, 1))[1])
        lb = float(b.losses(idx, idx.roll(-1, 1))[1])
    if abs(la - lb) > 1e-3 * max(1.0, abs(lb)):
        raise SystemExit(f"SDPA and explicit attention disagree: loss {la} vs {lb}")
    return abs(la - lb)


def with_oom_fallback(args, compiled):
    batch = args.batch
    while True:
        try:
            return run(args, batch, compiled)
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
            if "out of memory" not in str(e).lower() or batch == 1:
                raise
            print(f"out of memory at batch {batch}; trying {batch // 2}", file=sys.stderr)
            batch //= 2
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()


def on_alarm(signum, frame):
    raise TimeoutError


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, default=0,
                    help="tokens per row (default: the config's sequence_len)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"],
                    help="the engine run's train.dtype: bf16 = autocast over fp32 master weights")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--out", default="", help="also write the JSON here, after each mode")
    ap.add_argument("--deadline", type=float, default=0,
                    help="Unix time by which to stop: a mode still running then (torch.compile "
                         "compiling, say) is reported cut and the earlier modes are kept")
    args = ap.parse_args()
    result = {"attention": "sdpa" if HAVE_SDPA else
              f"masked matmul (torch {torch.__version__} has no scaled_dot_product_attention)",
              "precision": ("bf16 autocast, fp32 master weights" if args.dtype == "bf16"
                            else "fp32"),
              "device": args.device, "torch_version": torch.__version__}

    def emit():
        line = json.dumps(result)
        if args.out:
            with open(args.out + ".tmp", "w") as f:
                f.write(line + "\n")
            os.replace(args.out + ".tmp", args.out)
        return line

    if HAVE_SDPA:
        result["sdpa_vs_explicit_loss_diff"] = sdpa_check(args)
    for mode in [m for m in args.modes.split(",") if m]:
        if mode == "compile" and not hasattr(torch, "compile"):
            result[mode] = {"skipped": f"torch {torch.__version__} has no torch.compile"}
        elif mode not in ("eager", "compile"):
            raise SystemExit(f"--modes: unknown mode '{mode}'; use eager and/or compile")
        else:
            left = args.deadline - time.time() if args.deadline else 0
            if args.deadline and left < 5:
                result[mode] = {"skipped": "not started: the step's time limit is reached"}
                emit()
                continue
            if args.deadline:
                signal.signal(signal.SIGALRM, on_alarm)
                signal.alarm(max(1, int(left)))
            t0 = time.time()
            try:
                result[mode] = with_oom_fallback(args, mode == "compile")
            except Exception as e:  # torch.compile may wrap the alarm's TimeoutError in its own
                if not (isinstance(e, TimeoutError) or (args.deadline and time.time() >= args.deadline - 1)):
                    raise
                result[mode] = {"skipped": f"cut after {time.time() - t0:.0f} s (the step's time limit)"}
                print(f"{mode}: {result[mode]['skipped']}", file=sys.stderr)
                emit()
                continue
            finally:
                signal.alarm(0)
            m = result[mode]
            print(f"{mode}: {m['tokens_per_s']:,.0f} tokens/s, median step {m['median_step_s']:.4f} s, "
                  f"peak {m['peak_mem_mib']:.0f} MiB, first step {m['compile_s']:.1f} s", file=sys.stderr)
        emit()
    print(emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
