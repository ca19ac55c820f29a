//! Manifest planning: arbitrary manifest JSON and blob bytes (after a byte choosing the
//! graph and a u16 manifest length) are planned against a fixed graph; planning either
//! fails cleanly or gives a plan whose constants have exactly their declared lengths and
//! the blob's bytes at the manifest's ranges.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webnn_weights_fuzz::{blob_graphs, check_plan, put, scratch, split3};
use webnn_weights_runtime::plan_external_weights;

fuzz_target!(|data: &[u8]| {
    let Some((selector, manifest, blob)) = split3(data) else {
        return;
    };
    let graphs = blob_graphs();
    let graph = &graphs[usize::from(selector) % graphs.len()];
    put("model.weights", blob);
    put("model.manifest.json", manifest);
    let graph_path = scratch().join("model.webnn");
    if let Ok(plan) = plan_external_weights(graph, &graph_path, None, None) {
        check_plan(graph, &plan, blob);
    }
});
