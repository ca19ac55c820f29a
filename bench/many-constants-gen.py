#!/usr/bin/env python3
"""Writes a graph of many small constants for bench/many-constants.sh.

Usage: many-constants-gen.py DIR COUNT
       many-constants-gen.py DIR COUNT --touch   new bytes for the last tensor, in both files

DIR/models/model.webnn declares COUNT constants `c00000: f32[64] @weights("layers.00000.w")`
(one node uses the first), DIR/models/model.safetensors holds them (F32, 256 bytes each), and
DIR/weights.bin holds the same tensor bytes concatenated (for the include_bytes! app). Prints
the checksum both apps print: the sum of all tensor bytes.
"""
import json
import os
import random
import struct
import sys

ELEMENTS = 64
TENSOR_BYTES = ELEMENTS * 4


def touch(root, n):
    """Rewrites the last tensor (a retrained bias, say) in the archive and in weights.bin."""
    archive = os.path.join(root, "models", "model.safetensors")
    raw = os.path.join(root, "weights.bin")
    patch = os.urandom(TENSOR_BYTES)
    with open(archive, "r+b") as f:
        (head_len,) = struct.unpack("<Q", f.read(8))
        f.seek(8 + head_len + (n - 1) * TENSOR_BYTES)
        f.write(patch)
    with open(raw, "r+b") as f:
        f.seek((n - 1) * TENSOR_BYTES)
        f.write(patch)
    with open(raw, "rb") as f:
        print(sum(f.read()))


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    if "--touch" in sys.argv:
        return touch(root, n)
    models = os.path.join(root, "models")
    os.makedirs(models, exist_ok=True)
    rng = random.Random(n)
    tensors = {}
    for i in range(n):
        tensors[f"layers.{i:05}.w"] = {
            "dtype": "F32", "shape": [ELEMENTS],
            "data_offsets": [i * TENSOR_BYTES, (i + 1) * TENSOR_BYTES]}
    head = json.dumps(tensors, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    data = rng.randbytes(n * TENSOR_BYTES)
    with open(os.path.join(models, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + data)
    with open(os.path.join(root, "weights.bin"), "wb") as f:
        f.write(data)
    consts = "\n".join(
        f'    c{i:05}: f32[{ELEMENTS}] @weights("layers.{i:05}.w");' for i in range(n))
    with open(os.path.join(models, "model.webnn"), "w") as f:
        f.write(f'webnn_graph "many" v1 {{\n  inputs {{ x: f32[{ELEMENTS}]; }}\n'
                f"  consts {{\n{consts}\n  }}\n"
                f"  nodes {{ y = add(x, c00000); }}\n  outputs {{ y; }}\n}}\n")
    print(sum(data))


main()
