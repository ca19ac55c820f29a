"""Writes mlp.webnn and mlp.safetensors: y = relu(x @ w1 + b1) @ w2 + b2, float32.

The weights are a fixed function of their position (no randomness), so the files are the same
on every run: `python3 make_mlp.py` in this folder rewrites them byte for byte.
"""
import json
import math
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHAPES = {"w1": [4, 16], "b1": [16], "w2": [16, 3], "b2": [3]}


def values(name, count):
    seed = sum(map(ord, name))
    return [round(math.sin(seed + 0.7 * i) * 0.5, 6) for i in range(count)]


def main():
    header, data = {}, b""
    for name in sorted(SHAPES):
        count = math.prod(SHAPES[name])
        raw = struct.pack(f"<{count}f", *values(name, count))
        header[name] = {"dtype": "F32", "shape": SHAPES[name],
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    (HERE / "mlp.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
    consts = "\n".join(
        f"    {name}: f32[{', '.join(map(str, SHAPES[name]))}] @weights(\"{name}\");"
        for name in sorted(SHAPES))
    (HERE / "mlp.webnn").write_text(f"""webnn_graph "mlp" v2 {{
  inputs {{
    x: f32[1, 4];
  }}
  consts {{
{consts}
  }}
  nodes {{
    h = matmul(x, w1);
    hb = add(h, b1);
    a = relu(hb);
    o = matmul(a, w2);
    y = add(o, b2);
  }}
  outputs {{ y; }}
}}
""")


if __name__ == "__main__":
    main()
