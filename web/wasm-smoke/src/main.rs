//! Prints every embedded constant's length, address in linear memory and alignment, and
//! fails unless each is 64-byte aligned and shared with `to_graph_json()`.
use wasm_smoke_lib::{fc1_bias_ok, rows, MODEL};

fn main() {
    println!(
        "graph {:?}: {} nodes, embedded: {}, {}-bit pointers",
        MODEL.name(),
        MODEL.nodes().len(),
        MODEL.is_embedded(),
        usize::BITS
    );
    let mut bad = 0;
    for r in rows() {
        let ok = r.aligned && r.matches_runtime_view;
        bad += usize::from(!ok);
        println!(
            "{:<12} {:>5} bytes at {:#010x}  align64 {}  shared with to_graph_json {}",
            r.name, r.len, r.address, r.aligned, r.matches_runtime_view
        );
    }
    let values = fc1_bias_ok();
    println!("fc1_bias starts [-0.5, -0.375, -0.25, -0.125]: {values}");
    if bad > 0 || !values || !MODEL.is_embedded() {
        eprintln!("wasm-smoke: FAILED");
        std::process::exit(1);
    }
    println!("wasm-smoke: ok");
}
