# Validates safetensors files with the Python standard library only: 8-byte little-endian header
# length, a JSON header of {name: {dtype, shape, data_offsets}}, offsets covering the buffer exactly.
#
# usage: safetensors_check.py FILE...   prints one JSON line per file; exit 1 on the first violation
import json
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
         "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1}


def check(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"header length {n} runs past the end of the file ({len(raw)} bytes)")
    text = raw[8:8 + n].decode("utf-8")
    if not text.startswith("{"):
        raise ValueError("header does not start with '{'")
    header = json.loads(text)
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None:
        if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
            raise ValueError("__metadata__ must map strings to strings")
    data_len = len(raw) - 8 - n
    spans = []
    for name, e in header.items():
        if set(e) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"{name}: entry keys {sorted(e)} are not dtype/shape/data_offsets")
        if e["dtype"] not in SIZES:
            raise ValueError(f"{name}: unknown dtype {e['dtype']}")
        shape = e["shape"]
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"{name}: bad shape {shape}")
        begin, end = e["data_offsets"]
        numel = 1
        for d in shape:
            numel *= d
        if end - begin != numel * SIZES[e["dtype"]]:
            raise ValueError(f"{name}: {end - begin} bytes for shape {shape} of {e['dtype']}")
        if not 0 <= begin <= end <= data_len:
            raise ValueError(f"{name}: offsets [{begin}, {end}) outside the data section of {data_len} bytes")
        spans.append((begin, end, name))
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            raise ValueError(f"{name}: starts at {begin} but the previous tensor ends at {pos} (gap or overlap)")
        pos = end
    if pos != data_len:
        raise ValueError(f"tensors cover {pos} of {data_len} data bytes (trailing bytes)")
    return {"file": path, "ok": True, "tensors": len(spans), "header_bytes": n, "data_bytes": data_len,
            "metadata_keys": sorted(meta) if meta else []}


def main():
    if len(sys.argv) < 2:
        print("usage: safetensors_check.py FILE...", file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        try:
            print(json.dumps(check(path)))
        except Exception as exc:  # report the rule that failed and stop
            print(json.dumps({"file": path, "ok": False, "error": str(exc)}))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
