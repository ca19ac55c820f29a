#!/usr/bin/env bash
# Runs the rustnn example: installs what it needs when missing (protoc from Debian's
# protobuf-compiler for rustnn's build script, ONNX Runtime's shared library from the PyPI
# wheel onnxruntime), builds with the nightly toolchain (rustnn needs rustc 1.97) and runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ORT_VERSION=1.27.0   # rustnn 0.6's ort 2.0.0-rc.13 uses the C API of ONNX Runtime 1.27

if ! command -v protoc >/dev/null; then
  apt-get update -qq && apt-get install -y -qq protobuf-compiler
fi
if ! python3 -c "import onnxruntime, sys; sys.exit(onnxruntime.__version__ != '$ORT_VERSION')" 2>/dev/null; then
  python3 -m pip install -q "onnxruntime==$ORT_VERSION"
fi
capi=$(python3 -c "import onnxruntime, os; print(os.path.join(os.path.dirname(onnxruntime.__file__), 'capi'))")
lib=$(ls "$capi"/libonnxruntime.so* | head -n 1)
export ORT_DYLIB_PATH=$lib

toolchain=${WEBNN_RUSTNN_TOOLCHAIN:-+nightly}
cd "$here"
cargo $toolchain run --release --quiet
# The bridge's trap on rustnn: an unresolved graph through From (rustnn takes it, its constants
# empty) and through the checked try_into_webnn_graph (refused, naming them).
cargo $toolchain test --release --quiet --test trap
