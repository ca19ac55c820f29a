//! Prepares every fixture kind for `include_webnn_graph!` in src/lib.rs.

use std::path::PathBuf;
use webnn_weights_build::{compile_or_exit, Builder, Embedding};

// The generated archive of fixtures/pieces (shared with the tests, which check its bytes).
#[path = "src/pieces.rs"]
mod pieces;

fn main() {
    // SafeTensors with the packed 4-bit marker, by discovery (<stem>.safetensors).
    compile_or_exit("fixtures/packed4/quant.webnn");
    // SafeTensors found as model.safetensors; normalized names; float16, int64, uint8.
    compile_or_exit("fixtures/hf-safetensors/encoder.webnn");
    // Explicit SafeTensors path; BF16 stored for a float32 declaration.
    Builder::new("fixtures/hf-safetensors/head.webnn")
        .weights("lm_head.safetensors")
        .compile_or_exit();
    // A sharded Hugging Face archive found by discovery (model.safetensors.index.json), and
    // the same tensors in one archive (explicit path).
    compile_or_exit("fixtures/hf-sharded/encoder.webnn");
    Builder::new("fixtures/hf-sharded/encoder_single.webnn")
        .weights("all.safetensors")
        .compile_or_exit();
    // The sharded archive in run-time mode (resolved from the shards on first use).
    Builder::new("fixtures/hf-sharded/small.webnn")
        .embedding(Embedding::Runtime)
        .compile_or_exit();
    // WGWT blob (offsets from 8) with a discovered <stem>.manifest.json.
    compile_or_exit("fixtures/resnet-head/resnet_head.webnn");
    // Headerless blob (offsets from 0), constants without annotation; portable path.
    Builder::new("fixtures/onnx-layout/model.webnn")
        .embedding(Embedding::IncludeBytes)
        .compile_or_exit();
    // Explicit blob and manifest paths on a GraphJson graph; portable path.
    Builder::new("fixtures/tiny-extract/tiny.extracted.json")
        .weights("tiny.weights")
        .manifest("tiny.manifest.json")
        .embedding(Embedding::IncludeBytes)
        .compile_or_exit();
    // Tied constants: three on one float32 tensor, two on one BF16 tensor (embedded once).
    compile_or_exit("fixtures/tied/tied.webnn");
    // 36 MiB of data, more than two of the pieces an ELF static library splits data into:
    // the archive is generated here (too large to keep in the repository).
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let archive = out_dir.join(pieces::ARCHIVE);
    let bytes = pieces::safetensors();
    // Written only when it differs: a rewrite would leave it newer than this run, and cargo
    // would run this script (and rebuild the crate) again on every build.
    if std::fs::read(&archive).ok().as_deref() != Some(&bytes[..]) {
        if let Err(err) = std::fs::write(&archive, &bytes) {
            eprintln!("error: cannot write {}: {err}", archive.display());
            std::process::exit(1);
        }
    }
    Builder::new("fixtures/pieces/pieces.webnn")
        .weights(&archive)
        .compile_or_exit();
    // Weights locks (tied.webnn.lock, runtime.webnn.lock): verified while embedding, and by
    // the program on first use in run-time mode; the digests reach EmbeddedConstant::sha256.
    compile_or_exit("fixtures/locked/tied.webnn");
    Builder::new("fixtures/locked/runtime.webnn")
        .weights("tied.safetensors")
        .embedding(Embedding::Runtime)
        .compile_or_exit();
    // An ONNX model converted at build time (feature `onnx`): one weight in the model file,
    // one in its external data file, one small enough to stay inline; its symbolic dim given
    // here; verified against tiny.onnx.lock beside it.
    Builder::new("fixtures/onnx-model/tiny.onnx")
        .override_dim("batch", 1)
        .compile_or_exit();
    // No @weights constants at all: no sidecar, no data.
    compile_or_exit("fixtures/embed-none/plain.webnn");
    // Embedding switched off: resolved from the sidecar at run time.
    Builder::new("fixtures/embed-runtime/quant.webnn")
        .embedding(Embedding::Runtime)
        .compile_or_exit();
    // A copy of tied/ in run-time mode: shared constants share one range of the buffer.
    Builder::new("fixtures/embed-runtime/tied.webnn")
        .embedding(Embedding::Runtime)
        .compile_or_exit();
}
