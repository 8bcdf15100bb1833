# Scratch inputs, the command runner and the outcome classes of scripts/hostile-inputs.py: a small
# trained run to edit, safetensors headers rewritten, folders snapshotted, commands under a timeout.
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 40

RAW_MESSAGES = ("bad_alloc", "c10::", "std::", "terminate called", "Exception raised from",
                "nlohmann", "unexpected error")


# --- scratch inputs -----------------------------------------------------------------------------

def tiny_config(steps, checkpoint_every=3, n_layer=1, name="hostile"):
    return {
        "name": name,
        "model": {"n_layer": n_layer, "n_embd": 32, "n_head": 2, "sequence_len": 32},
        "grading": {"attention": True},
        "data": {"corpus": "text",
                 "corpus_path": os.path.join(ROOT, "tests/fixtures/runs_corpus.txt"),
                 "vocab_size": 300, "val_fraction": 0.1, "heldout_fraction": 0.1},
        "train": {"steps": steps, "device_batch": 2, "eval_every": 0, "eval_tokens": 256,
                  "heldout_tokens": 256, "checkpoint_every": checkpoint_every,
                  "keep_checkpoints": 10, "device": "cpu", "threads": 1},
    }


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def read_header(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), bytearray(b[8 + n:])


def write_safetensors(path, header, data, raw_header=None):
    hs = raw_header if raw_header is not None else json.dumps(header).encode()
    while len(hs) % 8:
        hs += b" "
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hs)) + hs + bytes(data))


def edit_safetensors(src, dst, fn):
    h, data = read_header(src)
    fn(h, data)
    write_safetensors(dst, h, data)
    return dst


def put_f32(h, data, name, value, index=0):
    off = h[name]["data_offsets"][0] + 4 * index
    data[off:off + 4] = struct.pack("<f", value)


def fill_f32(h, data, name, value):
    a, b = h[name]["data_offsets"]
    for i in range(a, b, 4):
        data[i:i + 4] = struct.pack("<f", value)


def snapshot(folder):
    out = {}
    for base, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(base, f)
            if f == "run.lock" or os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def sha512_hex(path):
    with open(path, "rb") as f:
        return hashlib.sha512(f.read()).hexdigest()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- running and judging ------------------------------------------------------------------------

class Runner:
    def __init__(self, build, scratch):
        self.gllm = os.path.join(build, "app/gllm")
        self.workbench = os.path.join(build, "app/gllm-workbench")
        self.scratch = scratch
        self.env = dict(os.environ)
        self.env["GLLM_DATA"] = os.path.join(scratch, "cache")
        self.env["GLLM_RUNS"] = os.path.join(scratch, "runs")
        self.env["QT_QPA_PLATFORM"] = "offscreen"
        self.env["GLLM_WORKBENCH_SETTINGS"] = os.path.join(scratch, "workbench.conf")

    def path(self, *parts):
        return os.path.join(self.scratch, *parts)

    def run(self, argv, env=None, timeout=TIMEOUT_S):
        e = dict(self.env)
        e.update(env or {})
        t0 = time.time()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                             cwd=self.scratch, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            rc = None
        return {"rc": rc, "out": out.decode(errors="replace"), "err": err.decode(errors="replace"),
                "seconds": round(time.time() - t0, 2)}

    def cli(self, *args, env=None, timeout=TIMEOUT_S):
        return self.run([self.gllm] + list(args), env=env, timeout=timeout)

    def shot(self, *args, env=None, timeout=TIMEOUT_S):
        return self.run([self.workbench, "--screenshot", self.path("shot.png")] + list(args),
                        env=env, timeout=timeout)

    def train(self, config, folder, steps=None):
        cfg = self.path(os.path.basename(folder) + ".config.json")
        write(cfg, json.dumps(config))
        r = self.cli("train", cfg, "--out", folder, "--quiet")
        if r["rc"] != 0:
            raise SystemExit("could not train the scratch run " + folder + ":\n" + r["err"])
        return folder


def judge(case, r, intact):
    """The outcome class of one case from its result and whether its protected files held."""
    said = r["err"] + r["out"]
    if r["rc"] is None:
        return "hang"
    if r["rc"] < 0:
        return "crash"
    if not intact:
        return "data lost"
    if "verdict" in r:
        return r["verdict"]
    if r["rc"] == 3 or any(m in said for m in RAW_MESSAGES):
        return "internal error"
    expect = case["expect"]
    if r["rc"] != 0:
        if expect == "ok":
            return "wrong error"
        short = len(r["err"]) < 2000
        named = all(w.lower() in said.lower() for w in case.get("names", []))
        return "clear error" if short and named else "unclear error"
    if expect == "error":
        return "silent"
    if expect == "warning":
        named = all(w.lower() in said.lower() for w in case.get("names", []))
        return "warning" if named else "silent"
    return "success"
