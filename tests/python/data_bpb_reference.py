# Independent BPB reference (Python stdlib only): reads {"token_bytes", "nats", "targets"} as JSON
# on stdin and prints {"bpb", "nats", "bytes"} computed as the baseline's evaluate_bpb does.
import json
import math
import sys

d = json.load(sys.stdin)
tb = d["token_bytes"]
nats = 0.0
nbytes = 0
for loss, t in zip(d["nats"], d["targets"]):
    if t < 0:
        continue
    b = tb[t]
    if b > 0:
        nats += loss
        nbytes += b
print(json.dumps({"bpb": nats / (math.log(2) * nbytes), "nats": nats, "bytes": nbytes}))
