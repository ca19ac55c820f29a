//! Prepares the example models for `include_webnn_graph!` (see src/lib.rs).

fn main() {
    // SafeTensors sidecar found by discovery (models/tiny_mlp.safetensors): float32, a BF16
    // tensor declared float32, packed int4 with its marker, int8.
    webnn_weights_build::compile_or_exit("models/tiny_mlp.webnn");
    // The same model with a WGWT `.weights` blob and its manifest, not embedded: resolved
    // from the files on first use (the `runtime_fallback` binary).
    webnn_weights_build::Builder::new("models/blob/tiny_mlp.webnn")
        .weights("tiny_mlp.weights")
        .manifest("tiny_mlp.manifest.json")
        .embedding(webnn_weights_build::Embedding::Runtime)
        .compile_or_exit();
}
