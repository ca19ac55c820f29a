//! GraphJson: parsing never panics; a parsed graph validates or not without panicking;
//! JSON always round trips, text round trips whenever the text writer accepts the graph.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, to_webnn_text,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(graph) = parse_graph_json(text) else {
        return;
    };
    let _ = graph.validate();
    let json = graph.to_json_string().expect("GraphJson serializes");
    let back = parse_graph_json(&json).expect("written GraphJson parses");
    assert_eq!(back, graph, "JSON round trip of:\n{json}");
    if let Ok(written) = to_webnn_text(&graph) {
        let back = parse_webnn(&written).expect("written text parses");
        assert_eq!(back, graph, "text round trip of:\n{written}");
    }
});
