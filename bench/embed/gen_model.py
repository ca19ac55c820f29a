#!/usr/bin/env python3
"""Writes a benchmark model: DIR/models/model.webnn, DIR/models/model.safetensors (TENSORS
float32 [2048, 1024] tensors, 8 MiB each) and DIR/weights.bin (the same tensor bytes,
concatenated, for the include_bytes! app). Prints the checksum the apps print: the sum of
every 4096th byte of the tensor data.

Usage: gen_model.py DIR TENSORS            generate
       gen_model.py DIR TENSORS --touch    rewrite the first 4 KiB of tensor 0 in both files
"""
import json
import os
import struct
import sys

ROWS, COLS = 2048, 1024
TENSOR_BYTES = ROWS * COLS * 4


def header(n):
    tensors = {}
    for i in range(n):
        tensors[f"layers.{i:04}.weight"] = {
            "dtype": "F32", "shape": [ROWS, COLS],
            "data_offsets": [i * TENSOR_BYTES, (i + 1) * TENSOR_BYTES]}
    text = json.dumps(tensors, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def graph(n):
    consts = "\n".join(
        f'    w{i:04}: f32[{ROWS}, {COLS}] @weights("layers.{i:04}.weight");' for i in range(n))
    return (f'webnn_graph "bench" v1 {{\n  inputs {{ x: f32[1, {ROWS}]; }}\n'
            f"  consts {{\n{consts}\n  }}\n"
            f"  nodes {{ y = matmul(x, w0000); }}\n  outputs {{ y; }}\n}}\n")


def checksum(path, offset, length):
    total = 0
    with open(path, "rb") as f:
        f.seek(offset)
        remaining = length
        while remaining:
            chunk = f.read(min(remaining, 64 << 20))
            remaining -= len(chunk)
            total += sum(chunk[::4096])
    return total


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    models = os.path.join(root, "models")
    os.makedirs(models, exist_ok=True)
    st, raw = os.path.join(models, "model.safetensors"), os.path.join(root, "weights.bin")
    head = header(n)
    if "--touch" in sys.argv:
        patch = os.urandom(4096)
        for path, at in ((st, len(head)), (raw, 0)):
            with open(path, "r+b") as f:
                f.seek(at)
                f.write(patch)
    else:
        with open(os.path.join(models, "model.webnn"), "w") as f:
            f.write(graph(n))
        with open(st, "wb") as f_st, open(raw, "wb") as f_raw:
            f_st.write(head)
            for _ in range(n):
                data = os.urandom(TENSOR_BYTES)
                f_st.write(data)
                f_raw.write(data)
    print(checksum(raw, 0, n * TENSOR_BYTES))


main()
