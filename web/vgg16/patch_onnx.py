"""Works around webnn-graph 0.4.0's convert-onnx on tf2onnx's Keras flatten.

usage: python3 patch_onnx.py IN.onnx OUT.onnx

tf2onnx writes Flatten as Reshape(x, Cast(Concat(Slice(Cast(Gather(Shape(x), perm))), [25088])))
for its dynamic batch. convert-onnx 0.4.0 does not fold that chain: its Reshape falls back to
`[d0, d1, d2 * d3 * ...]` of the data's shape, i.e. newShape=[1, 7, 3584] instead of
[1, 25088], and the graph it writes is wrong (the next matmul takes [25088, 64]; the softmax
after it gets axis=0 from a wrong rank). This script computes every Reshape's shape operand
that is not an initializer with ONNX Runtime (batch 1), makes it an int64 initializer and drops
the nodes nobody reads any more. Nothing else changes: ONNX Runtime gives the same outputs
bit for bit on the original and the patched model with graph optimizations off (checked at the end).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

src, dst = sys.argv[1], sys.argv[2]
model = onnx.load(src)
graph = model.graph
inits = {i.name for i in graph.initializer}
targets = [n.input[1] for n in graph.node if n.op_type == "Reshape" and n.input[1] not in inits]

# Evaluate the shape operands: expose them as extra outputs of a copy of the model.
probe = onnx.ModelProto()
probe.CopyFrom(model)
for name in targets:
    probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None))
session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
(inp,) = session.get_inputs()
shape = [d if isinstance(d, int) else 1 for d in inp.shape]
x = np.random.default_rng(0).random(shape, dtype=np.float32)
values = dict(zip([o.name for o in session.get_outputs()], session.run(None, {inp.name: x})))

for k, name in enumerate(targets):
    folded = f"folded_reshape_shape_{k}"
    graph.initializer.append(numpy_helper.from_array(values[name].astype(np.int64), folded))
    for n in graph.node:
        if n.op_type == "Reshape" and n.input[1] == name:
            n.input[1] = folded
    print(f"Reshape shape {name} -> initializer {folded} = {values[name].tolist()}")

# Drop the nodes whose outputs nobody reads (the shape chain), to a fixed point.
while True:
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    dead = [n for n in graph.node if not any(o in used for o in n.output)]
    if not dead:
        break
    for n in dead:
        graph.node.remove(n)
    print("dropped", ", ".join(f"{n.op_type} {n.name}" for n in dead))
used = {i for n in graph.node for i in n.input}
for init in [i for i in graph.initializer if i.name not in used]:
    graph.initializer.remove(init)
onnx.checker.check_model(model)
onnx.save(model, dst)

# The patched model computes exactly what the original does: bit for bit with ONNX Runtime's
# graph optimizations off (with them on, the constant shape lets ORT fuse differently: the
# outputs then differ by a few 1e-9).
plain = ort.SessionOptions()
plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
for opts, what in ((plain, "optimizations off"), (ort.SessionOptions(), "default optimizations")):
    a = ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"]).run(None, {inp.name: x})
    b = ort.InferenceSession(dst, opts, providers=["CPUExecutionProvider"]).run(None, {inp.name: x})
    diff = max(float(np.abs(p - q).max()) for p, q in zip(a, b))
    print(f"ORT {what}: patched vs original max abs diff {diff:.3g}")
    if opts is plain:
        assert all(np.array_equal(p, q) for p, q in zip(a, b)), "patched model differs"
print(f"{dst}: {len(graph.node)} nodes")
