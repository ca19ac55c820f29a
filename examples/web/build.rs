//! Embeds the workspace example's tiny model (examples/models/tiny_mlp.webnn, its SafeTensors
//! weights and lock) for `include_webnn_graph!` in src/lib.rs. On wasm32 the build helper
//! embeds the bytes with an aligned `include_bytes!`: a data segment of the module, hence
//! bytes in its linear memory.
fn main() {
    webnn_weights_build::compile_or_exit("../models/tiny_mlp.webnn");
}
