# Throughput of tests/python/model_reference.py, the PyTorch twin of the engine's GPT, under
# torch.compile on a GPU: the side scripts/device-check.sh compares the engine with (same weights,
# batch shape and machine).
#
# usage: device_throughput.py CHECKPOINT --batch B [--seq T] [--steps N] [--warmup W]
#                             [--device cuda|cpu] [--no-compile]
#   CHECKPOINT: an engine weights file (step_NNNNNN.safetensors; its __metadata__ holds the config
#               and vocab_size)
# One step: forward and loss under bf16 autocast (the engine's train.dtype bf16), backward, a fused
# AdamW update (standing in for MuonAdamW), gradients set to None. Tokens are random. The last
# stdout line is one JSON object: {"tokens_per_s", "median_step_s", "compile_s", "batch", "seq",
# "loss", "compiled", "device", "torch_version", …}. On an out-of-memory error the batch is halved
# (and reported) until it fits.
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_reference as mr  # noqa: E402


def run(args, batch):
    dev = torch.device(args.device)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device(dev)  # the reference builds masks and tables with factory calls
    W, meta = mr.read_safetensors(args.checkpoint)
    W = {k: (v.float().to(dev).requires_grad_() if v.is_floating_point() else v.to(dev))
         for k, v in W.items()}
    ref = mr.Reference(W, meta)
    T = args.seq or ref.m["sequence_len"]
    params = [v for v in W.values() if v.requires_grad]
    fused = {"fused": True} if dev.type == "cuda" else {}
    opt = torch.optim.AdamW(params, lr=1e-4, **fused)

    def loss_of(idx, targets):
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            _, loss, reg, _ = ref.losses(idx, targets)
            return loss + reg

    compiled = not args.no_compile and hasattr(torch, "compile")
    fn = torch.compile(loss_of) if compiled else loss_of
    gen = torch.Generator(device=dev).manual_seed(0)
    idx = torch.randint(0, ref.V, (batch, T), generator=gen, device=dev)
    targets = torch.randint(0, ref.V, (batch, T), generator=gen, device=dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def step():
        loss = fn(idx, targets)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t0 = time.perf_counter()
    loss = step()  # compiles the forward and backward graphs
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
            "compiled": compiled, "device": str(dev), "torch_version": torch.__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, default=0,
                    help="tokens per row (default: the config's sequence_len)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--no-compile", action="store_true",
                    help="eager (a torch without torch.compile runs eager)")
    args = ap.parse_args()
    batch = args.batch
    while True:
        try:
            out = run(args, batch)
            break
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
            if "out of memory" not in str(e).lower() or batch == 1:
                raise
            print(f"out of memory at batch {batch}; trying {batch // 2}", file=sys.stderr)
            batch //= 2
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
    out["requested_batch"] = args.batch
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
