//! The bridge's trap, shown on rustnn itself: a graph whose constants are still
//! `@weights("…")` references (read with `read_graph_file`, not resolved) goes through the
//! lossless `From` unresolved, and rustnn 0.6.0's `webnn_json::from_graph_json_owned`
//! accepts it with every such constant **empty**; the checked
//! `GraphJson::try_into_webnn_graph` refuses the same graph, naming each constant and its
//! reference. A resolved graph (`load_graph`) reaches rustnn whole either way.
//!
//! No ONNX Runtime needed: rustnn is only asked to take the graph, not to compute on it.
//! `bash run.sh` runs it (`cargo +nightly test --release --test trap`).

use rustnn::webnn_json::from_graph_json_owned;
use rustnn::GraphInfo;
use std::collections::BTreeMap;
use std::path::PathBuf;
use webnn_weights_runtime::{load_graph, read_graph_file};

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/mlp.webnn")
}

/// The bytes rustnn holds for each constant, by name.
fn constant_bytes(graph: &GraphInfo) -> BTreeMap<String, usize> {
    graph
        .constant_operand_ids_to_handles
        .iter()
        .map(|(id, data)| {
            let name = graph.operands[*id as usize]
                .name
                .clone()
                .expect("a named constant");
            (name, data.data.len())
        })
        .collect()
}

/// mlp.webnn's constants: float32 [16], [3], [4, 16], [16, 3].
fn declared() -> BTreeMap<String, usize> {
    [("b1", 64), ("b2", 12), ("w1", 256), ("w2", 192)]
        .into_iter()
        .map(|(name, len)| (name.to_string(), len))
        .collect()
}

#[test]
fn through_from_rustnn_takes_an_unresolved_graph_with_empty_constants() {
    let unresolved = read_graph_file(model()).unwrap();
    // rustnn accepts it without a word...
    let graph = from_graph_json_owned(unresolved.into()).expect("rustnn accepts the graph");
    // ...and every constant is empty: the graph would compute on no weights.
    let empty: BTreeMap<String, usize> = declared().into_keys().map(|n| (n, 0)).collect();
    assert_eq!(constant_bytes(&graph), empty);

    // The same graph resolved first reaches rustnn whole.
    let resolved = load_graph(model()).unwrap();
    let graph = from_graph_json_owned(resolved.into()).unwrap();
    assert_eq!(constant_bytes(&graph), declared());
}

#[test]
fn the_checked_conversion_refuses_it_naming_every_constant() {
    let unresolved = read_graph_file(model()).unwrap();
    let err = unresolved.try_into_webnn_graph().unwrap_err();
    assert_eq!(
        err.constants().collect::<Vec<_>>(),
        [("b1", "b1"), ("b2", "b2"), ("w1", "w1"), ("w2", "w2")]
    );
    let message = err.to_string();
    for name in ["b1", "b2", "w1", "w2"] {
        assert!(
            message.contains(&format!("`{name}` (@weights(\"{name}\"))")),
            "{message}"
        );
    }
    assert!(message.starts_with("graph \"mlp\": 4 constants are still `@weights` references"));
    assert!(
        message.ends_with(
            "resolve the graph first: load_graph, GraphLoader or resolve_external_weights"
        ),
        "{message}"
    );

    // Resolved, the checked conversion passes it, and rustnn holds every byte.
    let resolved = load_graph(model()).unwrap().try_into_webnn_graph().unwrap();
    let graph = from_graph_json_owned(resolved).unwrap();
    assert_eq!(constant_bytes(&graph), declared());
}
