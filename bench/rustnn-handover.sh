#!/usr/bin/env bash
# Hand-over of a large graph to rustnn, side by side in one run: rustnn's own
# load_graph_from_path against our owned, mapped and embedded graphs through the
# webnn-graph bridge, and against the JSON-text route (our graph -> GraphJson text ->
# serde_json into webnn-graph's type). Each way runs in a fresh process; the figure is the
# time until `rustnn::webnn_json::from_graph_json_owned` returns, and the process's peak
# resident set (VmHWM).
#
# Usage: bash bench/rustnn-handover.sh [MIB] [ROUNDS]   (defaults 256 MiB, 5 rounds; medians)
# Needs what examples/rustnn needs to build (protoc, the nightly toolchain); not ONNX Runtime.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
app=$here/../examples/rustnn
mib=${1:-256}
rounds=${2:-5}
command -v protoc >/dev/null || { apt-get update -qq && apt-get install -y -qq protobuf-compiler; }

# The model: a chain of matmuls over [1024, 1024] float32 weights, `mib` MiB in all.
mkdir -p "$app/bench"
python3 - "$app/bench" "$mib" <<'PY'
import json, struct, sys
from pathlib import Path
out, mib = Path(sys.argv[1]), int(sys.argv[2])
layers = max(1, mib // 4)
n = 1024 * 1024
block = struct.pack(f"<{1024}f", *[((i % 97) - 48) / 4096 for i in range(1024)]) * 1024
header, offset = {}, 0
for i in range(layers):
    header[f"w{i}"] = {"dtype": "F32", "shape": [1024, 1024], "data_offsets": [offset, offset + 4 * n]}
    offset += 4 * n
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
target = out / "big.safetensors"
if not (target.exists() and target.stat().st_size == 8 + len(text) + offset):
    with open(str(target) + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for i in range(layers):
            f.write(struct.pack("<f", float(i)) + block[4:])
    Path(str(target) + ".tmp").replace(target)
consts = "\n".join(f'    w{i}: f32[1024, 1024] @weights("w{i}");' for i in range(layers))
nodes = "\n".join(f"    h{i + 1} = matmul(h{i}, w{i});" for i in range(layers))
graph = f"""webnn_graph "big" v2 {{
  inputs {{ h0: f32[1, 1024]; }}
  consts {{
{consts}
  }}
  nodes {{
{nodes}
  }}
  outputs {{ h{layers}; }}
}}
"""
path = out / "big.webnn"
if not path.exists() or path.read_text() != graph:
    path.write_text(graph)
PY

cd "$app"
toolchain=${WEBNN_RUSTNN_TOOLCHAIN:-+nightly}
cargo $toolchain build --release --quiet --features bench --bin handover
bin=$app/target/release/handover
graph=$app/bench/big.webnn
ways=(rustnn owned mapped embedded json)
results=$(mktemp)
log=$(mktemp)
for round in $(seq "$rounds"); do
  # A new random order every round: no way always runs after another.
  for way in $(printf '%s\n' "${ways[@]}" | shuf); do
    # webnn-graph's resolver writes to stderr on every call: kept out of the table.
    "$bin" "$way" "$graph" >> "$results" 2>"$log" || { cat "$log" >&2; exit 1; }
  done
done
rm -f "$log"
python3 - "$results" "$mib" "$rounds" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for way, secs, peak, consts in rows:
    by.setdefault(way, []).append((float(secs), int(peak)))
base_t = statistics.median(t for t, _ in by["rustnn"])
base_m = statistics.median(m for _, m in by["rustnn"])
labels = {
    "rustnn": "rustnn's own load_graph_from_path",
    "owned": "ours: load_graph + From (bridge)",
    "mapped": "ours: load_graph_mapped + From (bridge)",
    "embedded": "ours: embedded, to_webnn_graph()",
    "json": "ours: load_graph -> JSON text -> serde_json",
}
print(f"hand-over to rustnn::webnn_json::from_graph_json_owned, {sys.argv[2]} MiB of float32 "
      f"weights, median of {sys.argv[3]} fresh processes per way")
print(f"{'way':44} {'time':>9} {'x rustnn':>9} {'peak RSS':>11} {'x rustnn':>9}")
for way in ["rustnn", "owned", "mapped", "embedded", "json"]:
    t = statistics.median(t for t, _ in by[way])
    m = statistics.median(m for _, m in by[way])
    print(f"{labels[way]:44} {t:8.3f}s {t / base_t:8.2f}x {m / 2**20:8.0f} MiB {m / base_m:8.2f}x")
PY
rm -f "$results"
