"""Max abs difference between expected.json and raw float32 outputs.

usage: python3 maxdiff.py EXPECTED.json DIR [LABEL]

For each output `name` of EXPECTED.json ({name: {dataType, shape, data}}), reads DIR/name.bin
(little-endian float32) and prints the max abs difference; exits with status 1 when a file is
missing or has the wrong length.
"""
import json
import sys

import numpy as np

expected = json.load(open(sys.argv[1]))
label = sys.argv[3] if len(sys.argv) > 3 else sys.argv[2]
worst = 0.0
for name, e in expected.items():
    want = np.asarray(e["data"], dtype=np.float32)
    got = np.fromfile(f"{sys.argv[2]}/{name}.bin", dtype="<f4")
    if got.shape != want.shape:
        sys.exit(f"{label}: {name} has {got.size} values, expected {want.size}")
    diff = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    worst = max(worst, diff)
    print(f"{label}: {name} max abs diff vs ONNX Runtime {diff:.3g}")
print(f"{label}: max abs diff {worst:.3g}")
