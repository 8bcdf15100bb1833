# Writes llm.c token shards as llm.c's dev/data/data_common.py writes them (Python stdlib only), from
# sentencepiece's own spm_encode output: shards made elsewhere, for `gllm data import` to read.
#
# usage: llmc_shard_writer.py IDS PIECES PREFIX SHARD_TOKENS BOS
#   IDS     spm_encode --output_format=id output, one document a line
#   PIECES  spm_encode --output_format=piece output of the same lines
#   PREFIX  shards are PREFIX_000000.bin, PREFIX_000001.bin, … of SHARD_TOKENS tokens (the last
#           shorter); each document is BOS then its ids, and documents run across shard ends
# Prints JSON: documents, tokens (BOS included), bytes (each piece's UTF-8 bytes with U+2581 as one
# space, <0xNN> byte pieces one, <unk> <s> </s> none), shards, and per document its tokens and bytes.
import array
import json
import re
import sys

MAGIC, VERSION, HEADER_INTS = 20240520, 1, 256
CONTROL = {"<unk>", "<s>", "</s>", "<pad>"}
BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")


def piece_bytes(piece):
    if piece in CONTROL:
        return 0
    if BYTE_PIECE.match(piece):
        return 1
    return len(piece.replace("\u2581", " ").encode("utf-8"))


def write_shard(path, tokens):
    header = array.array("i", [0] * HEADER_INTS)
    header[0], header[1], header[2] = MAGIC, VERSION, len(tokens)
    body = array.array("H", tokens)
    if sys.byteorder != "little":
        header.byteswap()
        body.byteswap()
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(body.tobytes())


def main():
    ids_path, pieces_path, prefix, shard_tokens, bos = sys.argv[1:6]
    shard_tokens, bos = int(shard_tokens), int(bos)
    with open(ids_path, encoding="utf-8") as f:
        id_lines = f.read().splitlines()
    with open(pieces_path, encoding="utf-8") as f:
        piece_lines = f.read().splitlines()
    assert len(id_lines) == len(piece_lines), "ids and pieces differ in lines"
    stream, doc_tokens, doc_bytes = [], [], []
    for ids, pieces in zip(id_lines, piece_lines):
        toks = [int(t) for t in ids.split()]
        ps = pieces.split()
        assert len(toks) == len(ps), "a line's ids and pieces differ in count"
        stream.append(bos)
        stream.extend(toks)
        doc_tokens.append(1 + len(toks))
        doc_bytes.append(sum(piece_bytes(p) for p in ps))
    shards = 0
    for start in range(0, len(stream), shard_tokens):
        write_shard("%s_%06d.bin" % (prefix, shards), stream[start:start + shard_tokens])
        shards += 1
    print(json.dumps({
        "documents": len(doc_tokens),
        "tokens": len(stream),
        "bytes": sum(doc_bytes),
        "shards": shards,
        "doc_tokens": doc_tokens,
        "doc_bytes": doc_bytes,
    }))


if __name__ == "__main__":
    main()
