#!/usr/bin/env python3
"""Writes a benchmark model shaped like a real checkpoint: DIR/models/model.webnn,
DIR/models/model.safetensors and DIR/weights.bin (the resolved bytes, for the include_bytes!
apps). Prints the checksum the apps print: the sum of every 4096th byte of the resolved data.

The archive holds TENSORS tensors `layers.NNNN.weight`: float32 [2048, 1024] (8 MiB), except
every 8th, which is BF16 [1600, 1024] (3.125 MiB stored, declared float32 and so widened to
6.25 MiB when embedded: with 32 tensors, 12.5 MiB of the archive is BF16, about 5% of its
bytes), plus one packed int4 tensor `quant.weight` (i4[2048, 2048], 2 MiB of U8 with the
`rustnn.webnn.packed4` marker). Every resolved tensor is a multiple of 4096 bytes, so the
per-constant checksum of our apps equals the checksum of the concatenated weights.bin.

Usage: gen_model.py DIR TENSORS            generate
       gen_model.py DIR TENSORS --touch    rewrite the first 4 KiB of tensor 0 in both files
"""
import json
import os
import re
import struct
import sys

ROWS, COLS = 2048, 1024
BF16_ROWS = 1600
QUANT = (2048, 2048)


def tensors(n):
    """(name, stored dtype, stored shape, declaration, stored bytes) in archive order."""
    out = []
    for i in range(n):
        name = f"layers.{i:04}.weight"
        if i % 8 == 7:
            out.append((name, "BF16", [BF16_ROWS, COLS], f"f32[{BF16_ROWS}, {COLS}]",
                        BF16_ROWS * COLS * 2))
        else:
            out.append((name, "F32", [ROWS, COLS], f"f32[{ROWS}, {COLS}]", ROWS * COLS * 4))
    packed = QUANT[0] * QUANT[1] // 2
    out.append(("quant.weight", "U8", [packed], f"i4[{QUANT[0]}, {QUANT[1]}]", packed))
    return out


def header(specs):
    entries, at = {"__metadata__": {"rustnn.webnn.packed4": "1"}}, 0
    for name, dtype, shape, _, size in specs:
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + size]}
        at += size
    text = json.dumps(entries, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def graph(specs):
    consts = []
    for i, (name, _, _, decl, _) in enumerate(specs):
        const = "q" if name == "quant.weight" else f"w{i:04}"
        consts.append(f'    {const}: {decl} @weights("{name}");')
    return (f'webnn_graph "bench" v1 @quantized {{\n  inputs {{ x: f32[1, {ROWS}]; }}\n'
            f"  consts {{\n" + "\n".join(consts) + "\n  }\n"
            f"  nodes {{ y = matmul(x, w0000); }}\n  outputs {{ y; }}\n}}\n")


# A BF16 NaN, little-endian [lo, hi]: (hi & 0x7F) == 0x7F and lo > 0x80.
NAN = re.compile(rb"(?=[\x81-\xff][\x7f\xff])", re.DOTALL)


def widen_bf16(data):
    """BF16 -> float32 bits, little-endian: each value [lo, hi] becomes [0, 0, lo, hi], with a
    NaN's quiet bit (0x40 of lo) set, as the loader (and `half`) converts."""
    out = bytearray(2 * len(data))
    out[2::4] = data[0::2]
    out[3::4] = data[1::2]
    for m in NAN.finditer(data):
        if m.start() % 2 == 0:
            out[2 * m.start() + 2] |= 0x40
    return bytes(out)


def checksum(path):
    total = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(64 << 20)
            if not chunk:
                return total
            total += sum(chunk[::4096])


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    models = os.path.join(root, "models")
    os.makedirs(models, exist_ok=True)
    st, raw = os.path.join(models, "model.safetensors"), os.path.join(root, "weights.bin")
    specs = tensors(n)
    head = header(specs)
    if "--touch" in sys.argv:
        patch = os.urandom(4096)
        for path, at in ((st, len(head)), (raw, 0)):
            with open(path, "r+b") as f:
                f.seek(at)
                f.write(patch)
    else:
        with open(os.path.join(models, "model.webnn"), "w") as f:
            f.write(graph(specs))
        # weights.bin holds the resolved bytes in archive order.
        with open(st, "wb") as f_st, open(raw, "wb") as f_raw:
            f_st.write(head)
            for _, dtype, _, _, size in specs:
                data = os.urandom(size)
                f_st.write(data)
                f_raw.write(widen_bf16(data) if dtype == "BF16" else data)
    print(checksum(raw))


main()
