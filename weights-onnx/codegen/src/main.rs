//! Regenerates `weights-onnx/src/proto/onnx.rs` from `weights-onnx/proto/onnx-ml.proto`.
//!
//! `protox` compiles the `.proto` file in pure Rust (no `protoc` anywhere) and `prost-build`
//! writes the Rust types. Every `bytes` field is generated as `bytes::Bytes`, so that a model
//! decoded from a `Bytes` over a mapped file keeps its initializers' `raw_data` as views of
//! that mapping instead of copies.
//!
//! Run with `bash weights-onnx/codegen/generate.sh` (it runs this program and rustfmt).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("codegen has no parent folder")?
        .to_path_buf();
    let proto_dir = crate_dir.join("proto");
    let out_dir = crate_dir.join("src").join("proto");
    let descriptors = protox::compile([proto_dir.join("onnx-ml.proto")], [&proto_dir])?;
    prost_build::Config::new()
        .bytes(["."])
        .out_dir(&out_dir)
        .compile_fds(descriptors)?;
    println!("wrote {}", out_dir.join("onnx.rs").display());
    Ok(())
}
