//! Embeds the example model (models/mlp.webnn, its SafeTensors weights found by discovery),
//! with feature `bench` the large model `bench/rustnn-handover.sh` generates, and with feature
//! `vgg16` the ONNX model `vgg16.sh` downloads (converted here by the build helper's feature
//! `onnx`; its batch dim `unk__99` set to 1).

fn main() {
    webnn_weights_build::compile_or_exit("models/mlp.webnn");
    if std::env::var_os("CARGO_FEATURE_BENCH").is_some() {
        webnn_weights_build::compile_or_exit("bench/big.webnn");
    }
    if std::env::var_os("CARGO_FEATURE_VGG16").is_some() {
        webnn_weights_build::Builder::new("models/vgg16/vgg16.onnx")
            .override_dim("unk__99", 1)
            .compile_or_exit();
    }
}
