# An independent reader of llm.c's token-shard format (Python stdlib only), written as llm.c's
# dev/data/data_common.py and modded-nanogpt's _load_data_shard read it; prints a JSON summary.
#
# Format: a header of 256 little-endian int32 — [0] magic 20240520, [1] version 1, [2] token count,
# the rest zero — then that many uint16 token ids, little-endian, and nothing after them.
import array
import json
import os
import sys

HEADER_INTS = 256


def read_shard(path):
    with open(path, "rb") as f:
        header = array.array("i")
        header.frombytes(f.read(HEADER_INTS * 4))
        if sys.byteorder != "little":
            header.byteswap()
        assert header[0] == 20240520, "magic number mismatch in the data .bin file"
        assert header[1] == 1, "unsupported version"
        ntok = header[2]
        tokens = array.array("H")
        tokens.frombytes(f.read())
        if sys.byteorder != "little":
            tokens.byteswap()
    # modded-nanogpt: "number of tokens read does not match header"
    assert len(tokens) == ntok, "number of tokens read does not match header"
    assert os.path.getsize(path) == HEADER_INTS * 4 + 2 * ntok
    return header, tokens


def main():
    bos = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    header, tokens = read_shard(sys.argv[1])
    print(json.dumps({
        "magic": header[0],
        "version": header[1],
        "tokens": header[2],
        "header_rest_zero": all(v == 0 for v in header[3:]),
        "sum": sum(tokens),
        "max": max(tokens) if tokens else -1,
        "first": list(tokens[:16]),
        "last": list(tokens[-16:]),
        "bos_count": sum(1 for t in tokens if t == bos),
    }))


if __name__ == "__main__":
    main()
