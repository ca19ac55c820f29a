"""Reference outputs of the VGG16 ONNX model on ONNX Runtime (CPUExecutionProvider).

usage: python3 reference.py MODEL.onnx OUT_DIR

Writes OUT_DIR/input.json and OUT_DIR/expected.json ({name: {dataType, shape, data}}, data a
flat list), and OUT_DIR/input.bin (the input's float32 little-endian bytes, for the rustnn
run). The input is deterministic: numpy seed 0, uniform [0, 1), float32, the model's shape with
its dynamic batch dimension set to 1.
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort

model, out = sys.argv[1], sys.argv[2]
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
(inp,) = session.get_inputs()
shape = [d if isinstance(d, int) else 1 for d in inp.shape]
x = np.random.default_rng(0).random(shape, dtype=np.float32)  # seed 0, uniform [0, 1)
start = time.perf_counter()
results = session.run(None, {inp.name: x})
elapsed = time.perf_counter() - start


def entry(a):
    a = np.ascontiguousarray(a)
    assert a.dtype == np.float32, a.dtype
    return {"dataType": "float32", "shape": list(a.shape), "data": [float(v) for v in a.ravel()]}


with open(f"{out}/input.json", "w") as f:
    json.dump({inp.name: entry(x)}, f)
x.astype("<f4").tofile(f"{out}/input.bin")
expected = {o.name: entry(r) for o, r in zip(session.get_outputs(), results)}
with open(f"{out}/expected.json", "w") as f:
    json.dump(expected, f)
for name, e in expected.items():
    print(f"ORT {ort.__version__} {name} {e['shape']}: {e['data']} ({elapsed * 1000:.0f} ms)")
