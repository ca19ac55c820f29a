//! SafeTensors planning: arbitrary archive bytes (after a byte choosing the graph) are
//! planned against a fixed graph; planning either fails cleanly or gives a plan whose
//! materialized constants have exactly their declared lengths and the archive's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webnn_weights_fuzz::{check_plan, put, safetensors_graphs, scratch};
use webnn_weights_runtime::plan_external_weights;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, archive)) = data.split_first() else {
        return;
    };
    let graphs = safetensors_graphs();
    let graph = &graphs[usize::from(selector) % graphs.len()];
    put("model.safetensors", archive);
    let graph_path = scratch().join("model.webnn");
    if let Ok(plan) = plan_external_weights(graph, &graph_path, None, None) {
        check_plan(graph, &plan, archive);
    }
});
