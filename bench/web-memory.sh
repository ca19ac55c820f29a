#!/usr/bin/env bash
# The page's peak memory loading a model written by `webnn-weights web`, streamed (`load`)
# against the blob loaded whole (`WeightsFile.load` + `buildGraph`), in headless Chromium.
#   bash bench/web-memory.sh [MIB] [RUNS]    (default: a 1024 MiB model, 3 runs per mode)
# The model: MIB/64 float32 [4096, 4096] matrices chained by matmul (64 MiB each).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
mib=${1:-1024}
runs=${2:-3}
bash "$top/web/setup.sh" >/dev/null
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$mib" <<'PY'
import json, struct, sys
import numpy as np
work, mib = sys.argv[1], int(sys.argv[2])
n, size = mib // 64, 4096
consts, nodes, header, offset = [], [], {}, 0
for i in range(n):
    consts.append(f"    w{i}: f32[{size}, {size}] @weights(\"w{i}\");")
    nodes.append(f"    y{i} = matmul({'x' if i == 0 else f'y{i-1}'}, w{i});")
    header[f"w{i}"] = {"dtype": "F32", "shape": [size, size], "data_offsets": [offset, offset + size * size * 4]}
    offset += size * size * 4
open(f"{work}/big.webnn", "w").write(
    'webnn_graph "big" v1 {\n  inputs { x: f32[1, %d]; }\n  consts {\n%s\n  }\n  nodes {\n%s\n  }\n  outputs { y%d; }\n}\n'
    % (size, "\n".join(consts), "\n".join(nodes), n - 1))
head = json.dumps(header).encode()
head += b" " * (-len(head) % 8)
block = np.full((size, size), 1.0 / size, dtype="<f4").tobytes()
with open(f"{work}/big.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head)
    for i in range(n):
        f.write(block)
PY
cargo build -q --release -p webnn-weights-cli --manifest-path "$top/Cargo.toml"
"$top/target/release/webnn-weights" -q web "$work/big.webnn" -o "$work/site"
rm "$work/big.safetensors"
node "$here/web-memory.mjs" "$work/site" big "$runs"
