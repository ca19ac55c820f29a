//! The expected output: the embedded tiny model computed in plain Rust on the host
//! (examples/src/model.rs's interpreter, reading this crate's embedded constants), printed
//! as JSON with every float's bit pattern: `{"x": [...], "y": [...], "yBits": ["3e300000", ...]}`.
use std::process::ExitCode;
use webnn_weights_examples::model;
use webnn_weights_web_example::MODEL;

fn main() -> ExitCode {
    let x = model::INPUT;
    let y = match model::forward(&MODEL, &x) {
        Ok(y) => y,
        Err(err) => {
            eprintln!("native: {err}");
            return ExitCode::FAILURE;
        }
    };
    let bits: Vec<String> = y.iter().map(|v| format!("{:08x}", v.to_bits())).collect();
    let out = serde_json::json!({ "x": x, "y": y, "yBits": bits });
    println!("{out}");
    ExitCode::SUCCESS
}
