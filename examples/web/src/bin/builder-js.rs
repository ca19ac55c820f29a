//! Writes `webnn_weights_web::builder_module()` (the builder alone, an ES module exporting
//! `buildProgram`, `compute`, `describeGraph` and `WeightsFile`) to the file given, or to
//! standard output.
use std::process::ExitCode;

fn main() -> ExitCode {
    let js = webnn_weights_web::builder_module();
    match std::env::args_os().nth(1) {
        Some(path) => match std::fs::write(&path, js) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("builder-js: {}: {err}", path.to_string_lossy());
                ExitCode::FAILURE
            }
        },
        None => {
            print!("{js}");
            ExitCode::SUCCESS
        }
    }
}
