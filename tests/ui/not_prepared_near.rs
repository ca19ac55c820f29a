static MODEL: webnn_weights_runtime::EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("model.webnn");

fn main() {
    let _ = &MODEL;
}
