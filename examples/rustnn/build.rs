//! Embeds the example model (models/mlp.webnn, its SafeTensors weights found by discovery),
//! and with feature `bench` the large model `bench/rustnn-handover.sh` generates.

fn main() {
    webnn_weights_build::compile_or_exit("models/mlp.webnn");
    if std::env::var_os("CARGO_FEATURE_BENCH").is_some() {
        webnn_weights_build::compile_or_exit("bench/big.webnn");
    }
}
