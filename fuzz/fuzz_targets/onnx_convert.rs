//! ONNX models: decoding and converting arbitrary bytes never panics; a model that converts
//! gives a graph that passes the runtime's checks and the WebNN table (the converter's
//! promise), and `read_tensor_proto` never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = webnn_weights_onnx::read_tensor_proto(data);
    let options = webnn_weights_onnx::ConvertOptions::new().override_dim("N", 2);
    let Ok(conversion) =
        webnn_weights_onnx::convert_bytes(bytes::Bytes::copy_from_slice(data), None, &options)
    else {
        return;
    };
    conversion
        .graph
        .validate()
        .expect("a converted graph validates");
    webnn_weights_web::WebGraph::new(&conversion.graph).expect("a converted graph is WebNN");
});
