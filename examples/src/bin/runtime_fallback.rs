//! The run-time fallback: `models/blob/tiny_mlp.webnn` is prepared with
//! `Builder::embedding(Embedding::Runtime)` in build.rs, so the binary holds the graph
//! structure and the sidecar's location only. The weights are resolved from the WGWT blob on
//! first use, with the same checks as at build time; a missing or changed file is an error
//! value.
//!
//! ```sh
//! cargo run -p webnn-weights-examples --bin runtime_fallback
//! ```
//!
//! Any embedded graph switches to this mode without code changes when built with
//! `WEBNN_WEIGHTS_EMBED=0`.

use std::process::ExitCode;
use webnn_weights_examples::{model, TINY_MLP_BLOB};

fn main() -> ExitCode {
    println!(
        "graph {:?}: weights {}",
        TINY_MLP_BLOB.name().unwrap_or("?"),
        if TINY_MLP_BLOB.is_embedded() {
            "embedded"
        } else {
            "resolved from the sidecar on first use"
        }
    );
    // Errors are values: a deleted or changed sidecar does not panic here.
    let constants = match TINY_MLP_BLOB.try_constants() {
        Ok(constants) => constants,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    for c in constants {
        println!(
            "  {:<12} {:<8} {:?} ({} bytes, 64-byte aligned: {})",
            c.name(),
            c.data_type().json_name(),
            c.shape(),
            c.bytes().len(),
            c.bytes().as_ptr() as usize % 64 == 0
        );
    }
    match model::forward(&TINY_MLP_BLOB, &model::INPUT) {
        Ok(y) => {
            println!("y = {y:?}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
