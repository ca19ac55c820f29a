//! Computes a float32 WebNN graph with rustnn 0.6.0 on ONNX Runtime (`web/vgg16/make.sh`).
//!
//! ```text
//! compute GRAPH.webnn INPUT.bin OUT_DIR
//! ```
//!
//! The graph is loaded by rustnn's own `load_graph_from_path`; its one input is fed the
//! little-endian float32 bytes of `INPUT.bin`; each output `name` is written to
//! `OUT_DIR/name.bin` (little-endian float32). Needs `ORT_DYLIB_PATH` (see `run.sh`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;
use webnn_weights_rustnn_example::{compute, read_f32, Error};

fn run() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph_path, input_path, out_dir] = args.as_slice() else {
        return Err("usage: compute GRAPH.webnn INPUT.bin OUT_DIR".into());
    };
    let start = Instant::now();
    let graph = rustnn::load_graph_from_path(graph_path)?;
    let loaded = start.elapsed();
    let x = read_f32(input_path)?;
    let run = compute(graph, &x).map_err(|e| format!("{input_path}: {e}"))?;
    for output in &run.outputs {
        let bytes: Vec<u8> = output.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(
            Path::new(out_dir).join(format!("{}.bin", output.name)),
            bytes,
        )?;
        println!(
            "rustnn {graph_path}: {} {:?} = {:?}",
            output.name, output.shape, output.values
        );
    }
    println!(
        "rustnn timings: load {:.0} ms, build {:.0} ms, compute {:.0} ms",
        loaded.as_secs_f64() * 1e3,
        run.built.as_secs_f64() * 1e3,
        run.computed.as_secs_f64() * 1e3
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
