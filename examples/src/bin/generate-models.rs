//! Rewrites the example models in `examples/models/` (deterministic: the same bytes on
//! every run).
//!
//! ```sh
//! cargo run -p webnn-weights-examples --bin generate-models
//! ```

use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    match webnn_weights_examples::model::write_models(&dir) {
        Ok(files) => {
            for file in files {
                println!("wrote {}", file.display());
            }
        }
        Err(err) => {
            eprintln!(
                "error: cannot write the example models in {}: {err}",
                dir.display()
            );
            std::process::exit(1);
        }
    }
}
