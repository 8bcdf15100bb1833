# PyTorch eager training step of the workbench GPT for `gllm bench train --vs-python`: the same model
# (weights and config read from the engine's export), batch, threads and BLAS; prints tokens/s as JSON.
#
# usage: bench_train_reference.py MODEL.safetensors BATCH.safetensors --steps N [--warmup W]
#                                 [--threads K] [--profile]
#   MODEL: the engine's model-weights file (tensors by name, __metadata__ config + vocab_size)
#   BATCH: "idx" (B, T) I64 and "targets" (B, T) I64
# One step = forward, loss (the engine's objective: graded or plain CE plus the regularisers),
# backward, gradients set to None. The last stdout line is one JSON object:
#   {"tokens_per_s", "step_s": [...], "median_step_s", "loss", "reference_loss", "implementation",
#    "threads", "torch_version", "allocator", "blas", "profile": [[op, self_ms_per_step, calls_per_step], ...]}
# "implementation" is "eager" for the hand-written module below (rope, QK-norm, query scale,
# EG-MHSA grades, value embeddings, ReLU² MLP, softcap, absolute positions, logit bias) and
# "reference" when the config uses parts only model_reference.py has (its autograd is then timed).
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_reference as mr  # noqa: E402


def norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(torch.float32).eps)


class EagerGPT:
    """The engine's GPT written the way a PyTorch user writes it: F.embedding, F.linear, additive
    masks and RoPE tables built once, cross_entropy on the flattened logits."""

    SUPPORTED = "rope/absolute positions, relu2 MLP, no MLGE, no hashed tables, no graded loss"

    def __init__(self, ref, W):
        self.ref, self.W = ref, W
        m, g = ref.m, ref.g
        self.ok = (m["mlp"] == "relu2" and not g["mlge"] and m["oe_m"] == 0 and
                   m["positional"] in ("rope", "absolute") and "output_grades" not in W and
                   g["orth_weight"] == 0)
        self.cache = {}

    def tables(self, T):
        if T in self.cache:
            return self.cache[T]
        ref, Dh = self.ref, self.ref.Dh
        masks = []
        r = torch.arange(T)
        for w in ref.windows:
            allowed = (r[None, :] <= r[:, None]) & ((r[:, None] - r[None, :]) <= w)
            masks.append(torch.zeros(T, T).masked_fill(~allowed, float("-inf")))  # (T, T)
        inv = 1.0 / (ref.m["rope_base"] ** (torch.arange(0, Dh, 2, dtype=torch.float32) / Dh))
        fr = torch.outer(torch.arange(T, dtype=torch.float32), inv)  # (T, Dh/2)
        out = (masks, fr.cos()[None, :, None, :], fr.sin()[None, :, None, :])
        self.cache[T] = out
        return out

    def loss(self, idx, targets):
        ref, W, m, g = self.ref, self.W, self.ref.m, self.ref.g
        B, T = idx.shape
        H, Dh = ref.H, ref.Dh
        masks, cos, sin = self.tables(T)
        x = F.embedding(idx, W["transformer.wte.weight"])  # (B, T, d)
        if m["positional"] == "absolute":
            x = x + W["wpe"][:T][None]
        x = norm(x)
        x0 = x
        for i in range(ref.L):
            p = "transformer.h.%d." % i
            x = W["resid_lambdas"][i] * x + W["x0_lambdas"][i] * x0
            h = norm(x)
            q = F.linear(h, W[p + "attn.c_q.weight"]).view(B, T, H, Dh)  # (B, T, H, Dh)
            k = F.linear(h, W[p + "attn.c_k.weight"]).view(B, T, H, Dh)
            v = F.linear(h, W[p + "attn.c_v.weight"]).view(B, T, H, Dh)
            if ref.has_ve(i):
                gw = W[p + "attn.ve_gate.weight"]
                gate = 2 * torch.sigmoid(F.linear(h[..., :gw.size(1)], gw))  # (B, T, H)
                ve = F.embedding(idx, W["value_embeds.%d.weight" % i]).view(B, T, H, Dh)
                v = v + gate.unsqueeze(-1) * ve
            if m["positional"] == "rope":
                q1, q2 = q[..., :Dh // 2], q[..., Dh // 2:]
                k1, k2 = k[..., :Dh // 2], k[..., Dh // 2:]
                q = torch.cat([q1 * cos + q2 * sin, -q1 * sin + q2 * cos], -1)
                k = torch.cat([k1 * cos + k2 * sin, -k1 * sin + k2 * cos], -1)
            if m["qk_norm"]:
                q, k = norm(q), norm(k)
            if "q_tau" in W:
                s = torch.exp(W["q_tau"][i] * ref.qmask[i])
                q = q * torch.cat([s, s], -1)
            if "attn_grades" in W:
                gr = ref.lam ** W["attn_grades"][i]
                mg = torch.cat([gr, gr], -1)  # (H, Dh)
                q, k, v = q * mg, k * mg, v * mg
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, Dh)
            att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(Dh)) + masks[i]  # (B, H, T, T)
            y = torch.matmul(torch.softmax(att, -1), v)  # (B, H, T, Dh)
            y = y.transpose(1, 2).reshape(B, T, H * Dh)  # (B, T, d)
            x = x + F.linear(y, W[p + "attn.c_proj.weight"])
            h = norm(x)
            x = x + F.linear(F.relu(F.linear(h, W[p + "mlp.c_fc.weight"])).square(), W[p + "mlp.c_proj.weight"])
        logits = F.linear(norm(x), W["lm_head.weight"])  # (B, T, V)
        c = m["softcap"]
        if c > 0:
            logits = c * torch.tanh(logits / c)
        if "logit_bias" in W:
            logits = logits + W["logit_bias"]
        data = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return data + regularisers(ref, W, g)


def regularisers(ref, W, g):
    reg = torch.zeros(())
    if g["diversity_weight"] > 0 and "attn_grades" in W and ref.H > 1:
        q = W["attn_grades"]
        k = torch.exp(-(q.unsqueeze(2) - q.unsqueeze(1)).pow(2).sum(-1))  # (L, H, H)
        reg = reg + g["diversity_weight"] * torch.triu(k, 1).sum()
    if g["magnitude_weight"] > 0:
        for n in ("attn_grades", "mlge.level_grades"):
            if n in W:
                reg = reg + g["magnitude_weight"] * W[n].pow(2).sum()
    return reg


def reference_loss(ref, idx, targets):
    _, loss, reg, _ = ref.losses(idx, targets)
    return loss + reg


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model")
    ap.add_argument("batch")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    raw, meta = mr.read_safetensors(a.model)
    cfg = json.loads(meta["config"])
    trainable_frozen = {"attn_grades", "mlge.level_grades"} if not cfg["grading"]["grades_trainable"] else set()
    W = {}
    for k, v in raw.items():
        v = v.float() if v.is_floating_point() else v
        if v.is_floating_point() and k not in trainable_frozen and k not in ("output_grades", "logit_bias"):
            v.requires_grad_(True)
        W[k] = v
    batch, _ = mr.read_safetensors(a.batch)
    idx, targets = batch["idx"].long(), batch["targets"].long()
    ref = mr.Reference(W, meta)
    with torch.no_grad():
        ref_loss = float(reference_loss(ref, idx, targets))
    eager = EagerGPT(ref, W)
    impl = "eager" if eager.ok else "reference"
    step_fn = eager.loss if eager.ok else (lambda i, t: reference_loss(ref, i, t))
    params = [v for v in W.values() if v.requires_grad]

    def step():
        loss = step_fn(idx, targets)
        loss.backward()
        for p in params:
            p.grad = None
        return loss

    loss = None
    for _ in range(a.warmup):
        loss = step()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - t0)
    prof = []
    if a.profile:
        n = max(1, min(a.steps, 3))
        with torch.autograd.profiler.profile() as pr:
            for _ in range(n):
                step()
        for e in sorted(pr.key_averages(), key=lambda e: -e.self_cpu_time_total)[:25]:
            prof.append([e.key, e.self_cpu_time_total / 1000.0 / n, e.count / n])
    med = statistics.median(times)
    tokens = idx.numel()
    out = {"tokens_per_s": tokens / med, "step_s": times, "median_step_s": med, "tokens_per_step": tokens,
           "loss": float(loss), "reference_loss": ref_loss, "implementation": impl,
           "threads": torch.get_num_threads(), "torch_version": torch.__version__,
           "allocator": os.environ.get("GLIBC_TUNABLES", "glibc defaults"),
           "blas": next((ln.strip() for ln in torch.__config__.show().splitlines() if "BLAS" in ln), ""),
           "profile": prof}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
