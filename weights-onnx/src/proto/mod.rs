//! The ONNX protobuf messages, generated from the `onnx-ml.proto` of the onnx 1.22.0 wheel
//! (`weights-onnx/proto/`) by `weights-onnx/codegen` (protox and prost-build: pure Rust, no
//! `protoc`; `bash weights-onnx/codegen/generate.sh` regenerates `onnx.rs`). Every `bytes`
//! field is a [`bytes::Bytes`], so a model decoded from a mapped file keeps `raw_data` as views
//! of the mapping.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

include!("onnx.rs");
