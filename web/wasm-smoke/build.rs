//! Embeds the quickstart's model (SafeTensors sidecar found by discovery, verified against
//! its weights lock). On wasm32 the build helper takes the portable path: an aligned
//! `include_bytes!` of data.bin.
fn main() {
    webnn_weights_build::compile_or_exit("../../examples/models/tiny_mlp.webnn");
}
