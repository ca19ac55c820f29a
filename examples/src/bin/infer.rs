//! The smallest use of an embedded model: one inference on the weights in the binary.
//!
//! It calls nothing of the runtime but the embedded graph's constants, so the binary links
//! no resolver (no sidecar reader, no SafeTensors or JSON parser for weights): the bytes and
//! the constant table are all it carries (checked by `tests/binary.rs`).
//!
//! ```sh
//! cargo run -p webnn-weights-examples --bin infer
//! ```

use std::process::ExitCode;
use webnn_weights_examples::{model, TINY_MLP};

fn main() -> ExitCode {
    match model::forward(&TINY_MLP, &model::INPUT) {
        Ok(y) => {
            println!("x = {:?}", model::INPUT);
            println!("y = {y:?}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
