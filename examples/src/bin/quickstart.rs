//! The embedded example model: its constants, one inference in plain Rust, and a check that
//! the embedded graph equals the run-time resolver's result for the same files.
//!
//! ```sh
//! cargo run -p webnn-weights-examples --bin quickstart
//! ```

use std::path::Path;
use std::process::ExitCode;
use webnn_weights_examples::{model, TINY_MLP};
use webnn_weights_runtime::{load_graph, EmbeddedConstant};

fn first_values(c: &EmbeddedConstant) -> String {
    let show = |v: Vec<String>| {
        let more = if v.len() > 4 { ", …" } else { "" };
        format!(
            "[{}{more}]",
            v.into_iter().take(4).collect::<Vec<_>>().join(", ")
        )
    };
    if let Some(v) = c.as_f32() {
        return show(v.iter().map(|x| format!("{x}")).collect());
    }
    if let Some(v) = c.as_i8() {
        return show(v.iter().map(|x| x.to_string()).collect());
    }
    if let Some(v) = c.unpack_int4() {
        return show(v.iter().map(|x| x.to_string()).collect());
    }
    if let Some(v) = c.unpack_uint4() {
        return show(v.iter().map(|x| x.to_string()).collect());
    }
    show(c.bytes().iter().map(|b| format!("0x{b:02x}")).collect())
}

fn alignment(bytes: &[u8]) -> usize {
    let addr = bytes.as_ptr() as usize;
    // The largest power of two dividing the address, shown up to 4096.
    1usize << addr.trailing_zeros().min(12)
}

fn main() -> ExitCode {
    let constants = match TINY_MLP.try_constants() {
        Ok(constants) => constants,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "graph {:?} ({}): {} inputs, {} nodes, {} outputs, weights {}",
        TINY_MLP.name().unwrap_or("?"),
        TINY_MLP.path(),
        TINY_MLP.inputs().len(),
        TINY_MLP.nodes().len(),
        TINY_MLP.outputs().len(),
        if TINY_MLP.is_embedded() {
            "embedded in the binary"
        } else {
            "resolved at run time (WEBNN_WEIGHTS_EMBED=0)"
        }
    );
    println!();
    println!(
        "{:<12} {:<8} {:<8} {:>6} {:>6}  first values",
        "constant", "dtype", "shape", "bytes", "align"
    );
    for c in constants {
        println!(
            "{:<12} {:<8} {:<8} {:>6} {:>6}  {}",
            c.name(),
            c.data_type().json_name(),
            format!("{:?}", c.shape()),
            c.bytes().len(),
            alignment(c.bytes()),
            first_values(c)
        );
    }

    // models/tiny_mlp.webnn.lock pins the weights: verified at build time, digests embedded.
    if let Some((name, digest)) = constants
        .first()
        .and_then(|c| Some((c.name(), c.sha256()?)))
    {
        let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        println!();
        println!(
            "weights pinned by {}.lock, verified at build time ({name}: sha256 {hex}…)",
            TINY_MLP.path()
        );
    }

    let y = match model::forward(&TINY_MLP, &model::INPUT) {
        Ok(y) => y,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!();
    println!("x = {:?}", model::INPUT);
    println!("y = {y:?}");

    // The same files through the run-time resolver.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/tiny_mlp.webnn");
    let resolved = match load_graph(&path) {
        Ok(graph) => graph,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    match TINY_MLP.try_to_graph_json() {
        Ok(embedded) if embedded == resolved => {
            println!("embedded graph == load_graph({}): yes", path.display());
            ExitCode::SUCCESS
        }
        Ok(_) => {
            eprintln!(
                "error: the embedded graph differs from load_graph({})",
                path.display()
            );
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
