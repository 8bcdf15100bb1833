# PyTorch reference of the workbench GPT (baseline.md §1 + seed 000/001 parts), written from the
# papers independently of the C++ code; test_model_parity compares logits and losses with it.
#
# usage: model_reference.py MODEL.safetensors INPUTS.safetensors OUT.safetensors [MODEL INPUTS OUT ...]
#   MODEL: tensors by name + __metadata__ {"config": RunConfig JSON, "vocab_size": V, ...}
#   INPUTS: "idx" (B, T) I64, "targets" (B, T) I64
#   OUT: "logits" (B, T, V) F32, "loss" (), "reg" (), "nats" (B, T) per-target matched-tilt nats
import json
import math
import struct
import sys

import torch
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, e in header.items():
        s, t = e["data_offsets"]
        dt = DTYPES[e["dtype"]]
        if t > s:
            ten = torch.frombuffer(bytearray(raw[base + s:base + t]), dtype=dt)
        else:
            ten = torch.empty(0, dtype=dt)
        out[name] = ten.reshape(e["shape"]).clone()
    return out, meta


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        b = t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def norm(x):
    # F.rms_norm(x, (x.size(-1),)) with eps=None → float32 epsilon
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(torch.float32).eps)


class Reference:
    # sdpa=True: attention through F.scaled_dot_product_attention (the engine's CUDA kernel; same
    # function, for like-for-like timing in device_throughput.py); False: the explicit softmax.
    def __init__(self, W, meta, sdpa=False):
        self.W = W
        self.sdpa = sdpa
        cfg = json.loads(meta["config"])
        self.m, self.g = cfg["model"], cfg["grading"]
        m = self.m
        self.V = int(meta["vocab_size"])
        if m["depth"] > 0:
            self.L = m["depth"]
            self.d = math.ceil(m["depth"] * 64 / 128) * 128
            self.H = self.d // 128
        else:
            self.L, self.d, self.H = m["n_layer"], m["n_embd"], m["n_head"]
        self.Dh = self.d // self.H
        self.lam = self.g["lambda"] if self.g["lambda"] > 0 else math.exp(1.0 / self.Dh)
        self.out_lam = self.g["output_lambda"] if self.g["output_lambda"] > 0 else self.lam
        short = m["short_window"] if m["short_window"] > 0 else m["sequence_len"] // 2
        pat = m["window_pattern"]
        self.windows = []
        for i in range(self.L):
            c = "L" if i == self.L - 1 else pat[i % len(pat)]
            self.windows.append(m["sequence_len"] if c == "L" else short)
        # level dimensions (equal split, first levels take the remainder)
        dims = self.g["level_dims"]
        if not dims:
            k = self.g["levels"]
            dims = [self.d // k + (1 if l < self.d % k else 0) for l in range(k)]
        self.level_dims = dims
        # frozen query-scale mask
        self.qmask = torch.ones(self.L, self.H, self.Dh // 2)
        for l in m["query_scale_frozen_layers"]:
            self.qmask[l] = 0
        self.qmask[:, :, :m["query_scale_frozen_planes"]] = 0

    def has_ve(self, i):
        return self.m["value_embeds"] and i % 2 == (self.L - 1) % 2

    def graded_pe(self, T):
        W = self.W
        rows = torch.zeros(T, self.d)
        grades = W.get("mlge.level_grades", torch.zeros(self.d))
        j = 0
        for dl in self.level_dims:
            for i in range(dl):
                wl = 10000.0 ** (2 * (i // 2) / dl)
                for t in range(T):
                    val = math.sin(t / wl) if i % 2 == 0 else math.cos(t / wl)
                    rows[t, j] = val
                j += 1
        rows = rows * self.lam ** grades
        return rows @ W["mlge.proj"].t()  # level coordinate j ↦ column j of P

    def attn(self, i, x, idx):
        W, B, T, H, Dh = self.W, x.size(0), x.size(1), self.H, self.Dh
        p = "transformer.h.%d.attn." % i
        q = (x @ W[p + "c_q.weight"].t()).view(B, T, H, Dh)
        k = (x @ W[p + "c_k.weight"].t()).view(B, T, H, Dh)
        v = (x @ W[p + "c_v.weight"].t()).view(B, T, H, Dh)
        if self.has_ve(i):
            gw = W[p + "ve_gate.weight"]
            gate = 2 * torch.sigmoid(x[..., :gw.size(1)] @ gw.t())
            v = v + gate.unsqueeze(-1) * W["value_embeds.%d.weight" % i][idx].view(B, T, H, Dh)
        if self.m["positional"] == "rope":
            inv = 1.0 / (self.m["rope_base"] ** (torch.arange(0, Dh, 2, dtype=torch.float32) / Dh))
            fr = torch.outer(torch.arange(T, dtype=torch.float32), inv)
            cos, sin = fr.cos()[None, :, None, :], fr.sin()[None, :, None, :]

            def rope(z):
                z1, z2 = z[..., :Dh // 2], z[..., Dh // 2:]
                return torch.cat([z1 * cos + z2 * sin, -z1 * sin + z2 * cos], -1)
            q, k = rope(q), rope(k)
        if self.m["qk_norm"]:
            q, k = norm(q), norm(k)
        if "q_tau" in W:
            s = torch.exp(W["q_tau"][i] * self.qmask[i])
            q = q * torch.cat([s, s], -1)
        if "attn_grades" in W:
            gr = self.lam ** W["attn_grades"][i]
            mg = torch.cat([gr, gr], -1)
            q, k, v = q * mg, k * mg, v * mg
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        r = torch.arange(T)
        allowed = (r[None, :] <= r[:, None]) & ((r[:, None] - r[None, :]) <= self.windows[i])
        if self.sdpa:
            if self.windows[i] >= T - 1:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
            y = y.transpose(1, 2).reshape(B, T, H * Dh)
            return y @ W[p + "c_proj.weight"].t()
        att = (q @ k.transpose(-2, -1)) / math.sqrt(Dh)
        att = att.masked_fill(~allowed, float("-inf"))
        y = torch.softmax(att, -1) @ v
        y = y.transpose(1, 2).reshape(B, T, H * Dh)
        return y @ W[p + "c_proj.weight"].t()

    def mlp(self, i, x):
        W = self.W
        p = "transformer.h.%d.mlp." % i
        if self.m["mlp"] == "relu2":
            return F.relu(x @ W[p + "c_fc.weight"].t()).square() @ W[p + "c_proj.weight"].t()
        P = W["mlge.proj"]
        out = torch.zeros_like(x)
        off = 0
        for l, dl in enumerate(self.level_dims):
            Pl = P[:, off:off + dl]
            h = (x @ Pl) @ W[p + "c_fc.%d.weight" % l].t()
            a, b = h.chunk(2, -1)
            out = out + ((F.gelu(a) * b) @ W[p + "c_proj.%d.weight" % l].t()) @ Pl.t()
            off += dl
        return out

    def forward(self, idx):
        W, V, B, T = self.W, self.V, idx.size(0), idx.size(1)
        x = W["transformer.wte.weight"][idx]
        if self.g["mlge"]:
            P = W["mlge.proj"]
            G = sum(P[:, j:j + 1] @ P[:, j:j + 1].t() * self.lam ** W["mlge.level_grades"][j] for j in range(self.d))
            x = x @ G
        if self.m["oe_m"] > 0:
            mod = self.m["oe_m"]
            prev1 = F.pad(idx, (1, 0), value=V)[:, :T]
            prev2 = F.pad(idx, (2, 0), value=V)[:, :T]
            id2 = idx + (V + 1) * prev1
            id3 = id2 + (V + 1) ** 2 * prev2
            parts = [W["oe_tables.%d.weight" % j][(id2 if j < 2 else id3) % (mod + 2 * j)] for j in range(4)]
            x = x + torch.cat(parts, -1)
        if self.m["positional"] == "graded_sinusoidal":
            x = x + self.graded_pe(T)[None]
        if self.m["positional"] == "absolute":
            x = x + W["wpe"][:T][None]
        x = norm(x)
        x0 = x
        for i in range(self.L):
            x = W["resid_lambdas"][i] * x + W["x0_lambdas"][i] * x0
            x = x + self.attn(i, norm(x), idx)
            x = x + self.mlp(i, norm(x))
        logits = norm(x) @ W["lm_head.weight"].t()
        c = self.m["softcap"]
        if c > 0:
            logits = c * torch.tanh(logits / c)
        if "logit_bias" in W:
            logits = logits + W["logit_bias"]
        return logits

    def losses(self, idx, targets):
        W = self.W
        logits = self.forward(idx)
        V = logits.size(-1)
        flat_t = targets.reshape(-1)
        nll = F.cross_entropy(logits.reshape(-1, V), flat_t, ignore_index=-1, reduction="none")
        valid = (flat_t >= 0).float()
        if "output_grades" in W:
            w = (self.out_lam ** W["output_grades"])[flat_t.clamp(min=0)] * valid
            loss = (w * nll).sum() / w.sum()
            tilt = logits - W["output_grades"] * math.log(self.out_lam)
        else:
            loss = (nll * valid).sum() / valid.sum()
            tilt = logits
        nats = F.cross_entropy(tilt.reshape(-1, V), flat_t, ignore_index=-1, reduction="none").view_as(targets)
        reg = torch.zeros(())
        g = self.g
        if g["orth_weight"] > 0 and "mlge.proj" in W:
            P = W["mlge.proj"]
            tot = torch.zeros(())
            offs = [0]
            for dl in self.level_dims:
                offs.append(offs[-1] + dl)
            for a in range(len(self.level_dims)):
                for b in range(len(self.level_dims)):
                    blk = P[:, offs[a]:offs[a + 1]].t() @ P[:, offs[b]:offs[b + 1]]
                    if a == b:
                        blk = blk - torch.eye(blk.size(0))
                    tot = tot + blk.pow(2).sum()
            reg = reg + g["orth_weight"] * tot
        if g["diversity_weight"] > 0 and "attn_grades" in W:
            q = W["attn_grades"]
            for l in range(self.L):
                for h in range(self.H):
                    for h2 in range(h + 1, self.H):
                        reg = reg + g["diversity_weight"] * torch.exp(-(q[l, h] - q[l, h2]).pow(2).sum())
        if g["magnitude_weight"] > 0:
            mag = torch.zeros(())
            for n in ("attn_grades", "mlge.level_grades"):
                if n in W:
                    mag = mag + W[n].pow(2).sum()
            reg = reg + g["magnitude_weight"] * mag
        return logits, loss, reg, nats


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3 != 0:
        print("usage: model_reference.py MODEL INPUTS OUT [MODEL INPUTS OUT ...]", file=sys.stderr)
        return 2
    torch.set_grad_enabled(False)
    for i in range(0, len(args), 3):  # several models per call: torch's import is the slow part
        W, meta = read_safetensors(args[i])
        W = {k: (v.float() if v.is_floating_point() else v) for k, v in W.items()}
        inputs, _ = read_safetensors(args[i + 1])
        ref = Reference(W, meta)
        logits, loss, reg, nats = ref.losses(inputs["idx"].long(), inputs["targets"].long())
        write_safetensors(args[i + 2], {"logits": logits.float(), "loss": loss.float().reshape(()),
                                        "reg": reg.float().reshape(()), "nats": nats.float()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
