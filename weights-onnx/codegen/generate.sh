#!/usr/bin/env bash
# Regenerates weights-onnx/src/proto/onnx.rs from weights-onnx/proto/onnx-ml.proto (the file of
# the onnx 1.22.0 wheel on PyPI) with protox + prost-build: pure Rust, no protoc.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/../../target/onnx-codegen} \
  cargo run --quiet --manifest-path "$here/Cargo.toml"
rustfmt --edition 2021 "$here/../src/proto/onnx.rs"
