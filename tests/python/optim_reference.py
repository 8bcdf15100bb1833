# Reference for test_optim_muon_adamw: the baseline MuonAdamW step (baseline.md §2) and the seed-001
# Tier-1 changes written directly in PyTorch, on deterministic inputs; prints the final tensors as JSON.
import json
import math
import sys

import torch

COEFFS = [
    (8.156554524902461, -22.48329292557795, 15.878769915207462),
    (4.042929935166739, -2.808917465908714, 0.5000178451051316),
    (3.8916678022926607, -2.772484153217685, 0.5060648178503393),
    (3.285753657755655, -2.3681294933425376, 0.46449024233003106),
    (2.3465413258596377, -1.7097828382687081, 0.42323551169305323),
]


def det(shape, seed):
    """Deterministic values shared with the C++ test: sin(1.618·seed + 0.731·i) + 0.3·cos(0.117·i·(seed mod 7 + 1))."""
    n = 1
    for s in shape:
        n *= s
    vals = [math.sin(1.618 * seed + 0.731 * i) + 0.3 * math.cos(0.117 * i * (seed % 7 + 1)) for i in range(n)]
    return torch.tensor(vals, dtype=torch.float64).to(torch.float32).reshape(shape)


def ramp(t, tau):
    return min(t / tau, 1.0) ** 2


def progress(step, total):
    return min(max(step, 0) / total, 1.0)


def lr_mult(step, total, warmdown=0.5):
    p = progress(step, total)
    return 1.0 if p < 1 - warmdown else (1 - p) / warmdown


def momentum(step, total, warmup, cooldown):
    f = min(step / warmup, 1.0)
    mu = (1 - f) * 0.85 + f * 0.95
    p = progress(step, total)
    if cooldown and p >= 0.5:
        frac = min((p - 0.5) / 0.5, 1.0)
        mu = mu + (0.85 - mu) * frac
    return mu


def weight_decay(step, total, cosine):
    p = progress(step, total)
    return 0.2 * 0.5 * (1 + math.cos(math.pi * p)) if cosine else 0.2 * (1 - p)


def polar(g):
    x = g / (g.norm(dim=(-2, -1), keepdim=True) * 1.02 + 1e-6)
    for a, b, c in COEFFS:
        if g.size(-2) > g.size(-1):
            A = x.mT @ x
            x = a * x + x @ (b * A + c * A @ A)
        else:
            A = x @ x.mT
            x = a * x + (b * A + c * A @ A) @ x
    return x


def equilibrate(g, alpha, passes=2):
    for _ in range(passes):
        g = g * g.square().mean(-1, keepdim=True).sqrt().clamp_min(1e-30).pow(-alpha)
        g = g * g.square().mean(-2, keepdim=True).sqrt().clamp_min(1e-30).pow(-alpha)
    return g


def normuon(g, buf, beta2):
    red = -1 if g.size(-2) >= g.size(-1) else -2
    v_mean = g.square().mean(dim=red, keepdim=True)
    n = g.size(red)
    v_norm = (v_mean.sum(dim=(-2, -1), keepdim=True) * n).sqrt()
    buf.lerp_(v_mean, 1 - beta2)
    step = buf.clamp_min(1e-10).rsqrt()
    v_new = ((v_mean * n) * step.square()).sum(dim=(-2, -1), keepdim=True).sqrt()
    return g * (step * (v_norm / v_new.clamp_min(1e-10)))


def muon_case(tier1):
    total, warmup = 10, 4
    shapes = [(8, 4), (8, 4), (4, 8), (6, 6)]
    params = [det(s, 11 + k) * 0.2 for k, s in enumerate(shapes)]
    groups = {}
    for k, s in enumerate(shapes):
        groups.setdefault(s, []).append(k)
    mom = {s: torch.zeros((len(m),) + s) for s, m in groups.items()}
    sec = {s: torch.zeros((len(m), s[0], 1) if s[0] >= s[1] else (len(m), 1, s[1])) for s, m in groups.items()}
    for step in range(total):
        mu = momentum(step, total, warmup, tier1)
        wd = weight_decay(step, total, tier1)
        lr = 0.04 * lr_mult(step, total)
        t = step + 1
        for s in sorted(groups):
            members = groups[s]
            g = torch.stack([det(s, 100 + 10 * step + k) for k in members])
            P = torch.stack([params[k] for k in members])
            mom[s].lerp_(g, 1 - mu)
            g = g.lerp(mom[s], mu)
            if tier1:
                g = equilibrate(g, ramp(t, 3))
            x = polar(g)
            x = normuon(x, sec[s], 0.95)
            lr_eff = lr * max(1.0, s[0] / s[1]) ** 0.5
            mask = ((x * P) >= 0).float()
            P = P - (lr_eff * x + lr_eff * wd * P * mask)
            for i, k in enumerate(members):
                params[k] = P[i]
    return [p.flatten().tolist() for p in params]


def neumann(g, alpha):
    mu = g.mean(0, keepdim=True)
    u = g - mu
    gram = u.T @ u
    return mu + u - 0.5 * alpha * (u @ gram) / (gram.norm() + 1e-30)


def adamw_case(use_neumann):
    total = 10
    s = (384 / 768) ** -0.5
    lr0 = 0.6 * s
    p = det((16, 4), 5)
    m = torch.zeros_like(p)
    v = torch.zeros_like(p)
    b1, b2, eps = 0.8, 0.95, 1e-10
    for step in range(total):
        t = step + 1
        g = det((16, 4), 200 + step) * 0.01
        if use_neumann:
            g = neumann(g, ramp(t, 4))
        lr = lr0 * lr_mult(step, total)
        m.lerp_(g, 1 - b1)
        v.lerp_(g.square(), 1 - b2)
        denom = (v / (1 - b2 ** t)).sqrt() + eps
        p = p - (lr / (1 - b1 ** t)) * m / denom
    return p.flatten().tolist()


def main():
    out = {
        "muon_baseline": muon_case(False),
        "muon_tier1": muon_case(True),
        "adamw": adamw_case(False),
        "adamw_neumann": adamw_case(True),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
