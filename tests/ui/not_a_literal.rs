static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!(models / model);

fn main() {
    let _ = &MODEL;
}
