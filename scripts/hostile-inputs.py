#!/usr/bin/python3
# Replays careless and hostile inputs against a build of gllm and gllm-workbench and classifies
# each outcome (clear error, warning, success, data lost, crash, hang, internal error, silent).
"""Usage: /usr/bin/python3 scripts/hostile-inputs.py [--build build] [--out FILE.json] [--md FILE]

Every case builds its input in a scratch folder (a small trained run, its checkpoints edited, FIFOs,
links, bad options), runs one command under a timeout and judges the result:

  clear error      the command refused (exit != 0) with a short message that is not an internal
                   error, and every file the case protects is byte for byte as it was
  warning          the command went on (exit 0) and said what it did about the input
  success          the input was valid or harmless and the command did the right thing
  data lost        a protected file changed, vanished, or something was written outside its folder
  crash            killed by a signal
  hang             still running at the timeout
  internal error   exit 3 ("unexpected error"), or a raw library message (bad_alloc, c10, …)
  silent           exit 0 where the input should have been refused or reported

The table printed at the end counts the outcomes per category.
"""
import argparse
import collections
import json
import os
import shutil
import struct
import sys
import tempfile

from hostile_support import (ROOT, Runner, edit_safetensors, fill_f32, free_port, judge, put_f32,
                             read_header, sha512_hex, snapshot, tiny_config, write,
                             write_safetensors)

# --- the cases ----------------------------------------------------------------------------------

def build_cases(R):
    """(category, name, expect, names, action) where action returns (result, intact)."""
    cases = []

    def case(category, name, expect, names=()):
        def add(fn):
            cases.append({"category": category, "name": name, "expect": expect,
                          "names": list(names), "action": fn})
            return fn
        return add

    done = R.train(tiny_config(6), R.path("runs/done"))
    deep = R.train(tiny_config(3, n_layer=2, name="deep"), R.path("runs/deep"))
    weights = os.path.join(done, "checkpoints/step_000006.safetensors")

    def copy_run(name, interrupted=True):
        d = R.path("work", name)
        shutil.copytree(done, d, symlinks=True)
        if interrupted:  # killed after step 4: summary gone, the step-6 checkpoint never written
            os.remove(os.path.join(d, "summary.json"))
            for suffix in (".json", ".safetensors", ".optim.safetensors"):
                os.remove(os.path.join(d, "checkpoints/step_000006" + suffix))
        return d

    def unchanged(d, action, also=()):
        before = snapshot(d)
        extra = {p: (open(p, "rb").read() if os.path.isfile(p) else None) for p in also}
        r = action()
        held = snapshot(d) == before and all(
            (open(p, "rb").read() if os.path.isfile(p) else None) == v for p, v in extra.items())
        return r, held

    def fifo(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.remove(path)
        os.mkfifo(path)
        return path

    # Data lost ----------------------------------------------------------------------------------
    @case("data lost", "checkpoints/ is a regular file; resume --steps 8", "error", ["checkpoints"])
    def _():
        d = copy_run("store-file")
        shutil.move(os.path.join(d, "checkpoints"), os.path.join(d, "elsewhere"))
        write(os.path.join(d, "checkpoints"), "a copy gone wrong")
        return unchanged(d, lambda: R.cli("resume", d, "--steps", "8"))

    @case("data lost", "checkpoints/ is a dangling symlink; resume", "error", ["checkpoints"])
    def _():
        d = copy_run("store-link")
        shutil.move(os.path.join(d, "checkpoints"), os.path.join(d, "elsewhere"))
        os.symlink(os.path.join(d, "unmounted"), os.path.join(d, "checkpoints"))
        return unchanged(d, lambda: R.cli("resume", d))

    for label, value in (("INT64_MIN", -2**63), ("1e15", 1e15)):
        @case("data lost", "optimizer step counters " + label + " (sidecar matching); resume",
              "error", ["optimizer step counter"])
        def _(value=value, label=label):
            d = copy_run("optim-" + label)
            side_path = os.path.join(d, "checkpoints/step_000003.json")
            opt = os.path.join(d, "checkpoints/step_000003.optim.safetensors")
            h, data = read_header(opt)
            scalars = json.loads(h["__metadata__"]["scalar_state"])
            for k in scalars["steps"]:
                scalars["steps"][k] = value
            h["__metadata__"]["scalar_state"] = json.dumps(scalars)
            write_safetensors(opt, h, data)
            side = json.load(open(side_path))
            side["optimizer"]["bytes"] = os.path.getsize(opt)
            side["optimizer"]["sha512"] = sha512_hex(opt)
            write(side_path, json.dumps(side))
            return unchanged(d, lambda: R.cli("resume", d))

    @case("data lost", "run.lock is a symlink to another run's summary.json; resume", "any")
    def _():
        d = copy_run("lock-link")
        other = os.path.join(done, "summary.json")
        lock = os.path.join(d, "run.lock")
        if os.path.lexists(lock):
            os.remove(lock)
        os.symlink(other, lock)
        return unchanged(done, lambda: R.cli("resume", d, "--quiet"))

    @case("data lost", "only the step_*.json sidecars removed; resume", "error", ["sidecar"])
    def _():
        d = copy_run("no-sidecars")
        os.remove(os.path.join(d, "checkpoints/step_000003.json"))
        return unchanged(d, lambda: R.cli("resume", d))

    @case("data lost", "extension whose checkpoint write fails (completed run kept)", "error",
          ["left as it was"])
    def _():
        d = copy_run("extend-fail", interrupted=False)
        os.mkdir(os.path.join(d, "checkpoints/step_000009.safetensors"))
        return unchanged(d, lambda: R.cli("resume", d, "--steps", "9", "--quiet"))

    @case("data lost", "extension at learning rates 100 (keep_checkpoints 1; completes or leaves the run)", "any")
    def _():
        d = copy_run("extend-diverge", interrupted=False)
        cfg_path = os.path.join(d, "config.json")
        cfg = json.load(open(cfg_path))
        cfg["optim"] = dict(cfg.get("optim", {}), matrix_lr=100, embedding_lr=100,
                            unembedding_lr=100, scalar_lr=100)
        cfg["train"]["keep_checkpoints"] = 1
        write(cfg_path, json.dumps(cfg))
        final = os.path.join(d, "checkpoints/step_000006.safetensors")
        summary = os.path.join(d, "summary.json")
        before = {p: open(p, "rb").read() for p in (final, summary)}
        r = R.cli("resume", d, "--steps", "12", "--allow-config-change", "--quiet")
        text = open(summary).read() if os.path.isfile(summary) else ""
        if r["rc"] == 0 and '"completed"' in text and '"step": 12' in text:
            return r, True  # it did not diverge: a real extension to 12 steps
        # Diverged or failed: the completed run's summary and final checkpoint are as they were.
        held = all(os.path.isfile(p) and open(p, "rb").read() == v for p, v in before.items())
        return r, held

    def sweep(name, arm_name, preset=None, set_=None):
        s = {"arms": [{"preset": preset or R.path("done.config.json"), "name": arm_name}],
             "seeds": [1], "steps": 1}
        if set_:
            s["arms"][0]["set"] = set_
        write(R.path(name + ".sweep.json"), json.dumps(s))
        return R.path(name + ".sweep.json")

    for arm in ("../../escaped", "/abs/path/escaped"):
        @case("data lost", "sweep arm named " + arm, "ok")
        def _(arm=arm):
            out = R.path("sweeps", "s" + str(len(arm)))
            f = sweep("escape" + str(len(arm)), arm)
            outside_before = set(os.listdir(R.scratch)) | set(os.listdir(os.path.dirname(R.scratch)))
            r = R.cli("train", "--sweep", f, "--out", out, "--quiet")
            outside_after = set(os.listdir(R.scratch)) | set(os.listdir(os.path.dirname(R.scratch)))
            inside = os.listdir(out) if os.path.isdir(out) else []
            runs = [f for f in inside if os.path.isdir(os.path.join(out, f))]
            held = (not [f for f in outside_after - outside_before if "escaped" in f] and
                    len(runs) == 1 and not os.path.exists("/abs/path/escaped-s1"))
            if not held:
                r["err"] += "\n(made outside: %s; inside: %s)" % (
                    sorted(outside_after - outside_before), inside)
            return r, held

    @case("data lost", "sweep arm named like another preset's completed run", "error",
          ["not arm"])
    def _():
        out = R.path("sweeps", "impostor")
        r = R.cli("train", "--sweep", sweep("first", "shared"), "--out", out, "--quiet")
        if r["rc"] != 0:
            return r, True
        other = tiny_config(6, name="other")
        other["optim"] = {"matrix_lr": 0.5}
        write(R.path("other.config.json"), json.dumps(other))
        return unchanged(out, lambda: R.cli("train", "--sweep",
                                            sweep("second", "shared", R.path("other.config.json")),
                                            "--out", out, "--quiet"))

    # Hangs --------------------------------------------------------------------------------------
    for what in ("config.json", "metrics.jsonl", "checkpoints/step_000003.json"):
        for verb in ("runs", "resume"):
            # A listing goes on past a checkpoint sidecar that is a pipe, warning about it.
            listing = verb == "runs" and what.startswith("checkpoints/")
            @case("hang", "FIFO as a run's " + what + "; gllm " + verb,
                  "warning" if listing else "error", ["pipe"])
            def _(what=what, verb=verb):
                d = copy_run("fifo-" + verb + "-" + what.replace("/", "_"))
                fifo(os.path.join(d, what))
                return unchanged(d, lambda: R.cli(verb, d))

    @case("hang", "FIFO as a preset; gllm params", "error", ["pipe"])
    def _():
        return R.cli("params", fifo(R.path("fifo-preset.json"))), True

    @case("hang", "FIFO as a preset's base; gllm params", "error", ["pipe"])
    def _():
        base = fifo(R.path("fifo-base.json"))
        write(R.path("with-base.json"), json.dumps({"base": base, "name": "b"}))
        return R.cli("params", R.path("with-base.json")), True

    @case("hang", "FIFO as a sweep file; gllm train --sweep", "error", ["pipe"])
    def _():
        return R.cli("train", "--sweep", fifo(R.path("fifo-sweep.json"))), True

    @case("hang", "FIFO as the text corpus; gllm train", "error", ["pipe"])
    def _():
        c = tiny_config(2)
        c["data"]["corpus_path"] = fifo(R.path("fifo-corpus.txt"))
        write(R.path("fifo-corpus.json"), json.dumps(c))
        return R.cli("train", R.path("fifo-corpus.json"), "--out", R.path("work/fc")), True

    dist = {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
            "GLLM_DIST_JOIN_TIMEOUT_S": "10"}

    @case("hang", "distributed join whose peer never comes (join timeout 10 s)", "error",
          ["rank 1"])
    def _():
        return R.cli("train", R.path("done.config.json"), "--out", R.path("work/dist1"),
                     env=dist), True

    @case("hang", "distributed join whose MASTER_ADDR does not resolve", "error",
          ["does not resolve"])
    def _():
        return R.cli("train", R.path("done.config.json"), "--out", R.path("work/dist2"),
                     env=dict(dist, MASTER_ADDR="no-such-host.invalid")), True

    @case("hang", "distributed store file under /proc", "error", ["/proc"])
    def _():
        e = {"GLLM_DIST_WORLD_SIZE": "2", "GLLM_DIST_RANK": "0",
             "GLLM_DIST_STORE_FILE": "/proc/self/gllm-store", "GLLM_DIST_JOIN_TIMEOUT_S": "10"}
        return R.cli("train", R.path("done.config.json"), "--out", R.path("work/dist3"),
                     env=e), True

    @case("hang", "train.threads 1024 on this machine", "warning", ["train.threads is 1024"])
    def _():
        c = tiny_config(1)
        c["train"]["threads"] = 1024
        write(R.path("threads.json"), json.dumps(c))
        return R.cli("train", R.path("threads.json"), "--out", R.path("work/threads")), True

    # Crashes and blocks of the workbench ---------------------------------------------------------
    @case("crash", "workbench: queue file nested 200,000 deep", "ok")
    def _():
        q = R.path("deep-queue.json")
        write(q, '{"entries": [' + "[" * 200000 + "]" * 200000 + "]}")
        return R.shot(env={"GLLM_WORKBENCH_QUEUE": q}), True

    for size in ("100000x100000", "0x0", "-5x-5"):
        @case("crash", "workbench: --screenshot --size " + size, "error", ["--size"])
        def _(size=size):
            return R.shot("--size=" + size), True

    for what in ("config.json", "metrics.jsonl"):
        @case("crash", "workbench: FIFO as an opened run's " + what, "ok")
        def _(what=what):
            d = copy_run("wb-fifo-" + what)
            fifo(os.path.join(d, what))
            return R.shot(d), True

    @case("crash", "workbench: FIFO as the queue file", "ok")
    def _():
        return R.shot(env={"GLLM_WORKBENCH_QUEUE": fifo(R.path("fifo-queue.json"))}), True

    @case("crash", "workbench: FIFO as --profiles", "error", ["pipe"])
    def _():
        return R.shot("--profiles", fifo(R.path("fifo-profiles.json"))), True

    # Internal errors ----------------------------------------------------------------------------
    def edited(name, fn, src=weights):
        return edit_safetensors(src, R.path("st", name + ".safetensors"), fn)

    os.makedirs(R.path("st"), exist_ok=True)

    def meta(key, value):
        def fn(h, data):
            h["__metadata__"][key] = value
        return fn

    def config_edit(**model):
        def fn(h, data):
            c = json.loads(h["__metadata__"]["config"])
            c["model"].update(model)
            h["__metadata__"]["config"] = json.dumps(c)
        return fn

    for verb in ("compile", "profiles"):
        def command(f, verb=verb):
            if verb == "compile":
                return R.cli("compile", f, "--out", R.path("st", "out.safetensors"))
            return R.cli("profiles", "--checkpoint", f, "--out", R.path("st", "p.json"))

        @case("internal error", "metadata vocab_size 1e9 over small tensors; " + verb, "error",
              ["vocab_size"])
        def _(command=command, verb=verb):
            return command(edited("vocab-" + verb, meta("vocab_size", "1000000000"))), True

        @case("internal error", "stored config n_embd 8192 over small tensors; " + verb, "error")
        def _(command=command, verb=verb):
            return command(edited("embd-" + verb, config_edit(n_embd=8192, n_head=64))), True

    @case("internal error", "compile --probe-len 60000", "error", ["--probe-len"])
    def _():
        return R.cli("compile", weights, "--out", R.path("st", "o.safetensors"), "--probe-len",
                     "60000"), True

    # Silently accepted --------------------------------------------------------------------------
    def compile_of(f):
        out = R.path("st", "compiled.safetensors")
        if os.path.exists(out):
            os.remove(out)
        r = R.cli("compile", f, "--out", out)
        return r, r["rc"] == 0 or not os.path.exists(out)

    def relabel(dtype, drop_format=False, double=False):
        def fn(h, data):
            if drop_format:
                h["__metadata__"].pop("format", None)
            t = h["transformer.wte.weight"]
            t["dtype"] = dtype
            if double:
                t["shape"] = [t["shape"][0] * 2] + t["shape"][1:]
        return fn

    silent = "silent acceptance"

    @case(silent, "safetensors dtype I32 where the model holds F32", "error", ["I32"])
    def _():
        return compile_of(edited("i32", relabel("I32")))

    @case(silent, "safetensors dtype I32, no format key", "error", ["Int"])
    def _():
        return compile_of(edited("i32n", relabel("I32", drop_format=True)))

    @case(silent, "safetensors BF16 shape-reinterpreted bytes", "error", ["BF16"])
    def _():
        return compile_of(edited("bf16", relabel("BF16", double=True)))

    for label, prefix, pad in (("BOM", b"\xef\xbb\xbf", b" "), ("NUL padding", b"", b"\0")):
        @case(silent, "safetensors header with " + label, "error", ["header"])
        def _(prefix=prefix, pad=pad, label=label):
            h, data = read_header(weights)
            hs = prefix + json.dumps(h).encode()
            while len(hs) % 8:
                hs += pad
            hs += pad * 8
            f = R.path("st", label.replace(" ", "") + ".safetensors")
            with open(f, "wb") as fh:
                fh.write(struct.pack("<Q", len(hs)) + hs + bytes(data))
            return compile_of(f)

    for value in ("-5", "8192abc", "1", "1e9"):
        @case(silent, "metadata vocab_size \"" + value + "\"", "error", ["vocab_size"])
        def _(value=value):
            return compile_of(edited("vocab" + value, meta("vocab_size", value)))

    @case(silent, "checkpoint without lm_head.weight", "error", ["lm_head.weight"])
    def _():
        return compile_of(edited("nohead", lambda h, d: h.pop("lm_head.weight")))

    @case(silent, "checkpoint with a stray tensor", "error", ["stray.weight"])
    def _():
        return compile_of(edited("stray", lambda h, d: h.update(
            {"stray.weight": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}})))

    @case(silent, "400,000 zero-size entries", "error", ["tensors"])
    def _():
        def fn(h, d):
            for i in range(400000):
                h["z%d" % i] = {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
        return compile_of(edited("zeros", fn))

    for label, value in (("NaN", float("nan")), ("Inf", float("inf"))):
        @case(silent, "audit of " + label + " weights", "warning", ["nonfinite"])
        def _(value=value, label=label):
            f = edited("audit-" + label, lambda h, d: fill_f32(h, d, "transformer.wte.weight",
                                                                value))
            return R.cli("audit", f, "--json"), True

    @case(silent, "audit of a NaN grade", "warning", ["attn_grades"])
    def _():
        f = edited("audit-nan-grade", lambda h, d: put_f32(h, d, "attn_grades", float("nan")))
        return R.cli("audit", f, "--json"), True

    hp2 = {"format": "gllm-head-profiles/1", "layers": 2, "heads": 2, "planes": 8,
           "features": "keys", "meta": {},
           "heads_profiles": [{"layer": l, "head": k, "alpha": [0.125] * 8, "tau": [0.125] * 8,
                               "bc": 1.0, "bootstrap": []} for l in range(2) for k in range(2)]}
    write(R.path("heads-2x2.json"), json.dumps(hp2))
    hp1 = dict(hp2, layers=1, heads_profiles=hp2["heads_profiles"][:2])
    write(R.path("heads-1x2.json"), json.dumps(hp1))

    for value in (1e30, -5.0):
        for verb in ("certify", "compile"):
            @case(silent, verb + " of attention grades " + repr(value), "error", ["outside"])
            def _(value=value, verb=verb):
                f = edited("grades%s-%s" % (value, verb),
                           lambda h, d: put_f32(h, d, "attn_grades", value))
                if verb == "compile":
                    return compile_of(f)
                return R.cli("certify", f, "--profiles", R.path("heads-1x2.json")), True

    @case(silent, "preset with train.steps twice", "error", ["twice"])
    def _():
        write(R.path("dup1.json"), '{"name": "d", "train": {"steps": 5, "steps": 9}}')
        return R.cli("params", R.path("dup1.json")), True

    @case(silent, "preset with section model twice", "error", ["twice"])
    def _():
        write(R.path("dup2.json"), '{"name": "d", "model": {"n_layer": 1}, "model": {}}')
        return R.cli("params", R.path("dup2.json")), True

    @case(silent, "profile file with alpha twice", "error", ["twice"])
    def _():
        text = json.dumps(hp1).replace('"alpha": ', '"alpha": [0.5, 0.5], "alpha": ', 1)
        write(R.path("dup3.json"), text)
        return R.cli("certify", weights, "--profiles", R.path("dup3.json")), True

    for tensor in ("transformer.h.0.attn.c_q.weight", "transformer.h.0.attn.c_k.weight",
                   "transformer.wte.weight"):
        @case(silent, "profiles --checkpoint with NaN in " + tensor.split(".")[-2], "error",
              ["NaN"])
        def _(tensor=tensor):
            h, _ = read_header(weights)
            if tensor not in h:
                raise SystemExit("no tensor " + tensor + " in the scratch checkpoint")
            f = edited("nan-" + tensor, lambda h, d: put_f32(h, d, tensor, float("nan")))
            return R.cli("profiles", "--checkpoint", f, "--out", R.path("st", "pn.json")), True

    @case(silent, "resume with an emptied loader buffer", "error", ["buffered"])
    def _():
        d = copy_run("loader")
        sp = os.path.join(d, "checkpoints/step_000003.json")
        side = json.load(open(sp))
        side["loader"]["buffer"] = []
        write(sp, json.dumps(side))
        return unchanged(d, lambda: R.cli("resume", d))

    @case(silent, "resume with sidecar tokens 2^63-1", "error", ["tokens"])
    def _():
        d = copy_run("tokens")
        sp = os.path.join(d, "checkpoints/step_000003.json")
        side = json.load(open(sp))
        side["tokens"] = 2**63 - 1
        write(sp, json.dumps(side))
        return unchanged(d, lambda: R.cli("resume", d))

    for label, text in (("torn", '{"status": "compl'), ("missing", None)):
        @case(silent, "completed run with a " + label + " summary; resume", "warning",
              ["finished again"])
        def _(text=text, label=label):
            d = copy_run("summary-" + label, interrupted=False)
            if text is None:
                os.remove(os.path.join(d, "summary.json"))
            else:
                write(os.path.join(d, "summary.json"), text)
            ck = os.path.join(d, "checkpoints")
            return unchanged(ck, lambda: R.cli("resume", d))

    @case(silent, "gllm runs where the recorded pid is another process", "ok")
    def _():
        d = copy_run("pid")
        write(os.path.join(d, "summary.json"), json.dumps({"status": "running", "pid": 1}))
        r = R.cli("runs", d, "--json")
        if r["rc"] == 0 and '"running"' in r["out"]:
            r["verdict"] = "silent"  # a process that holds no lock is not this run
        return r, True

    @case(silent, "a run folder with invalid UTF-8 in its name; runs --json", "ok")
    def _():
        parent = R.path("utf8")
        os.makedirs(parent, exist_ok=True)
        shutil.copytree(done, os.path.join(parent, "ok"))
        shutil.copytree(done, os.path.join(parent.encode(), b"bad-\xff\xfe").decode(
            errors="surrogateescape"))
        r = R.cli("runs", parent, "--json")
        try:
            if len(json.loads(r["out"])["runs"]) != 2:
                r["verdict"] = "silent"
        except ValueError:
            r["verdict"] = "internal error"  # the listing is not JSON
        return r, True

    @case(silent, "ladder --seed -1", "error", ["--seed"])
    def _():
        return R.cli("ladder", "--profiles", R.path("heads-2x2.json"), "--seed", "-1"), True

    @case(silent, "cone --grades 1e308", "error", ["overflow"])
    def _():
        return R.cli("cone", "--geometric", "--nu", ".6", "--mu", ".3", "--grades",
                     "1e308,0,0,0"), True

    @case(silent, "ladder-report over one arm", "error")
    def _():
        return R.cli("ladder-report", R.path("sweeps/impostor")), True

    @case(silent, "certify 1-layer checkpoint with 2-layer head profiles", "error",
          ["do not belong together"])
    def _():
        return R.cli("certify", weights, "--profiles", R.path("heads-2x2.json")), True

    @case(silent, "certify 2-layer checkpoint with 1-layer head profiles", "error",
          ["do not belong together"])
    def _():
        w = os.path.join(deep, "checkpoints/step_000003.safetensors")
        return R.cli("certify", w, "--profiles", R.path("heads-1x2.json")), True

    @case(silent, "profiles --checkpoint --reference ppmi", "error", ["ppmi"])
    def _():
        return R.cli("profiles", "--checkpoint", weights, "--reference", "ppmi", "--out",
                     R.path("st", "pp.json")), True

    @case(silent, "ladder-report on a folder of non-ladder runs", "error", ["ladder"])
    def _():
        return R.cli("ladder-report", R.path("runs")), True

    @case(silent, "efficiency --target nan", "error", ["--target"])
    def _():
        return R.cli("efficiency", done, "--target", "nan"), True

    @case(silent, "efficiency --uniform naming no arm", "error", ["no arm"])
    def _():
        return R.cli("efficiency", done, "--target", "2.5", "--uniform", "no-such-arm"), True

    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", help="write every case's outcome as JSON here")
    ap.add_argument("--md", help="write the table as Markdown here")
    ap.add_argument("--only", help="run the cases whose name contains this text")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="gllm-hostile-")
    R = Runner(os.path.abspath(a.build), scratch)
    results = []
    try:
        for c in build_cases(R):
            if a.only and a.only not in c["name"]:
                continue
            r, intact = c["action"]()
            outcome = judge(c, r, intact)
            first = (r["err"].strip() or r["out"].strip()).splitlines()
            line = first[0][:160] if first else ""
            results.append({"category": c["category"], "case": c["name"], "outcome": outcome,
                            "rc": r["rc"], "seconds": r["seconds"], "message": line})
            print("%-15s %-62s %-15s %s" % (c["category"], c["name"][:62], outcome, line[:90]),
                  flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    table = collections.OrderedDict()
    for r in results:
        table.setdefault(r["category"], collections.Counter())[r["outcome"]] += 1
    kinds = ["clear error", "warning", "success", "data lost", "crash", "hang", "internal error",
             "silent", "unclear error", "wrong error"]
    lines = ["| category | cases | " + " | ".join(kinds) + " |",
             "|---|---:|" + "---:|" * len(kinds)]
    for cat, counts in table.items():
        lines.append("| %s | %d | %s |" % (cat, sum(counts.values()),
                                           " | ".join(str(counts[k]) for k in kinds)))
    total = collections.Counter(r["outcome"] for r in results)
    lines.append("| all | %d | %s |" % (len(results), " | ".join(str(total[k]) for k in kinds)))
    print("\n".join(lines))
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            json.dump({"cases": results}, f, indent=1)
        os.replace(a.out + ".tmp", a.out)
    if a.md:
        with open(a.md + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(a.md + ".tmp", a.md)
    bad = sum(total[k] for k in kinds[3:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
