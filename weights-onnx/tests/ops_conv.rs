//! Convolutions, pools, matrix products, quantization, recurrent networks and the
//! com.microsoft operators: small models converted and checked against the WebNN table.

mod common;

use common::*;

/// The ONNX node tests of this file's operators, from the folder in `ONNX_NODE_TESTS` (the
/// `onnx/backend/test/data/node` folder of an onnx wheel): every case converts or is refused
/// with a message, none panics, and every converted graph is valid by the WebNN table.
/// `ONNX_NODE_TESTS=… cargo test -p webnn-weights-onnx --test ops_conv -- --ignored --nocapture`
#[test]
#[ignore = "needs ONNX_NODE_TESTS (the node tests of an onnx wheel)"]
fn onnx_node_tests() {
    const PREFIXES: &[&str] = &[
        "test_conv",
        "test_basic_conv",
        "test_convtranspose",
        "test_averagepool",
        "test_maxpool",
        "test_globalaveragepool",
        "test_globalmaxpool",
        "test_lppool",
        "test_matmul",
        "test_gemm",
        "test_einsum",
        "test_quantizelinear",
        "test_dequantizelinear",
        "test_lstm",
        "test_gru",
        "test_rnn",
        "test_simple_rnn",
        "test_convinteger",
        "test_matmulinteger",
    ];
    let Ok(dir) = std::env::var("ONNX_NODE_TESTS") else {
        eprintln!("ONNX_NODE_TESTS is not set; nothing to do");
        return;
    };
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| PREFIXES.iter().any(|p| n.starts_with(p)) && !n.ends_with("_expanded"))
        .collect();
    cases.sort();
    let (mut converted, mut refused, mut invalid) = (0, 0, 0);
    for case in &cases {
        let path = std::path::Path::new(&dir).join(case).join("model.onnx");
        let result =
            std::panic::catch_unwind(|| webnn_weights_onnx::convert(&path, &Default::default()));
        match result {
            Err(_) => panic!("{case}: panicked"),
            Ok(Ok(c)) => match webnn_weights_web::WebGraph::new(&c.graph) {
                Ok(_) => {
                    converted += 1;
                    println!("ok       {case}");
                }
                Err(e) => {
                    invalid += 1;
                    println!("INVALID  {case}: {e}");
                }
            },
            Ok(Err(e)) => {
                refused += 1;
                println!("refused  {case}: {e}");
            }
        }
    }
    println!(
        "{converted} converted, {refused} refused, {invalid} invalid, of {}",
        cases.len()
    );
    assert_eq!(invalid, 0);
}

#[test]
fn conv_same_upper_pads_explicitly() {
    let c = Model::new("Conv", &["x", "w", "b"])
        .input("x", &[1, 2, 5, 5])
        .init(floats("w", &[4, 1, 3, 3], &[0.5; 36]))
        .init(floats("b", &[4], &[1.0; 4]))
        .attr(attr_string("auto_pad", "SAME_UPPER"))
        .attr(attr_ints("strides", &[2, 2]))
        .attr(attr_int("group", 2))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["conv2d"]);
    assert_eq!(
        option(&c, "conv2d", "padding"),
        &serde_json::json!([1, 1, 1, 1])
    );
    assert_eq!(option(&c, "conv2d", "groups"), &serde_json::json!(2));
    assert!(option(&c, "conv2d", "bias").is_string());
}

#[test]
fn conv_1d_goes_through_2d() {
    let c = Model::new("Conv", &["x", "w"])
        .input("x", &[1, 3, 10])
        .init(floats("w", &[2, 3, 3], &[0.1; 18]))
        .attr(attr_ints("pads", &[1, 0]))
        .attr(attr_ints("dilations", &[2]))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["reshape", "conv2d", "reshape"]);
    assert_eq!(
        option(&c, "conv2d", "padding"),
        &serde_json::json!([0, 0, 1, 0])
    );
    assert_eq!(
        option(&c, "conv2d", "dilations"),
        &serde_json::json!([1, 2])
    );
    // (10 + 1 - 5) / 1 + 1 = 7
    let last = c.graph.nodes.last().unwrap();
    assert_eq!(last.options["newShape"], serde_json::json!([1, 2, 7]));
    // the weights were reshaped on the host
    assert_eq!(c.graph.consts.values().next().unwrap().shape, [2, 3, 1, 3]);
}

#[test]
fn conv_refuses_bad_groups_and_3d() {
    let e = Model::new("Conv", &["x", "w"])
        .input("x", &[1, 3, 5, 5])
        .input("w", &[4, 1, 3, 3])
        .attr(attr_int("group", 2))
        .output("y")
        .err();
    assert!(e.contains("group 2"), "{e}");
    let e = Model::new("Conv", &["x", "w"])
        .input("x", &[1, 3, 5, 5, 5])
        .input("w", &[4, 3, 3, 3, 3])
        .output("y")
        .err();
    assert!(e.contains("3-D"), "{e}");
    let e = Model::new("Conv", &["x", "w"])
        .input("x", &[1, 3, 2, 2])
        .input("w", &[4, 3, 3, 3])
        .output("y")
        .err();
    assert!(e.contains("spans 3"), "{e}");
}

#[test]
fn conv_transpose_output_shape_becomes_output_padding() {
    let c = Model::new("ConvTranspose", &["x", "w"])
        .input("x", &[1, 1, 3, 3])
        .input("w", &[1, 2, 3, 3])
        .attr(attr_ints("strides", &[3, 2]))
        .attr(attr_ints("output_shape", &[10, 8]))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["convTranspose2d"]);
    assert_eq!(
        option(&c, "convTranspose2d", "outputPadding"),
        &serde_json::json!([1, 1])
    );
    assert_eq!(
        option(&c, "convTranspose2d", "padding"),
        &serde_json::json!([0, 0, 0, 0])
    );
}

#[test]
fn pools() {
    let c = Model::new("MaxPool", &["x"])
        .input("x", &[1, 1, 4, 4])
        .attr(attr_ints("kernel_shape", &[3, 3]))
        .attr(attr_ints("strides", &[2, 2]))
        .attr(attr_int("ceil_mode", 1))
        .output("y")
        .ok();
    assert_eq!(
        option(&c, "maxPool2d", "outputShapeRounding"),
        &serde_json::json!("ceil")
    );
    let c = Model::new("AveragePool", &["x"])
        .input("x", &[1, 1, 4, 4])
        .attr(attr_ints("kernel_shape", &[3, 3]))
        .attr(attr_ints("pads", &[1, 1, 1, 1]))
        .attr(attr_int("count_include_pad", 1))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["pad", "averagePool2d"]);
    assert_eq!(
        option(&c, "averagePool2d", "padding"),
        &serde_json::json!([0, 0, 0, 0])
    );
    let c = Model::new("GlobalAveragePool", &["x"])
        .input("x", &[1, 3, 4, 4, 4])
        .output("y")
        .ok();
    assert_eq!(
        option(&c, "reduceMean", "axes"),
        &serde_json::json!([2, 3, 4])
    );
    let e = Model::new("MaxPool", &["x"])
        .input("x", &[1, 1, 4, 4])
        .attr(attr_ints("kernel_shape", &[2, 2]))
        .output("y")
        .output("i")
        .err();
    assert!(e.contains("Indices"), "{e}");
}

#[test]
fn matmul_vectors_and_batches() {
    let c = Model::new("MatMul", &["a", "b"])
        .input("a", &[3])
        .input("b", &[2, 3, 4])
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["reshape", "matmul", "reshape"]);
    assert_eq!(
        c.graph.nodes[0].options["newShape"],
        serde_json::json!([1, 1, 3])
    );
    assert_eq!(
        c.graph.nodes[2].options["newShape"],
        serde_json::json!([2, 4])
    );
    let c = Model::new("MatMul", &["a", "b"])
        .input("a", &[2, 1, 5, 3])
        .input("b", &[4, 3, 6])
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["reshape", "matmul"]);
    let e = Model::new("MatMul", &["a", "b"])
        .input("a", &[2, 3])
        .input("b", &[4, 5])
        .output("y")
        .err();
    assert!(e.contains("3 columns, B has 4 rows"), "{e}");
}

#[test]
fn gemm_options() {
    let c = Model::new("Gemm", &["a", "b", "c"])
        .input("a", &[4, 3])
        .input("b", &[5, 4])
        .init(floats("c", &[5], &[1.0; 5]))
        .attr(attr_int("transA", 1))
        .attr(attr_int("transB", 1))
        .attr(attr_float("alpha", 0.5))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["gemm"]);
    assert_eq!(option(&c, "gemm", "alpha"), &serde_json::json!(0.5));
    assert_eq!(option(&c, "gemm", "aTranspose"), &serde_json::json!(true));
    let e = Model::new("Gemm", &["a", "b", "c"])
        .input("a", &[3, 4])
        .input("b", &[4, 5])
        .input("c", &[4])
        .output("y")
        .err();
    assert!(e.contains("does not broadcast"), "{e}");
}

#[test]
fn quantize_per_axis_and_int4() {
    const INT4: i32 = 22;
    let c = Model::new("DequantizeLinear", &["x", "s", "z"])
        .typed_input("x", INT4, &[2, 4])
        .init(floats("s", &[2], &[0.5, 0.25]))
        .init(raw("z", INT4, &[2], &[0x1f]))
        .attr(attr_int("axis", 0))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["dequantizeLinear"]);
    assert!(c
        .graph
        .consts
        .values()
        .any(|d| d.shape == [2, 1] && d.data_type == webnn_weights_runtime::DataType::Int4));
    let c = Model::new("QuantizeLinear", &["x", "s"])
        .input("x", &[2, 4])
        .init(floats("s", &[], &[0.5]))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["quantizeLinear"]);
    let e = Model::new("DequantizeLinear", &["x", "s"])
        .typed_input("x", 3, &[2, 5])
        .input("s", &[2, 3])
        .attr(attr_int("axis", 1))
        .attr(attr_int("block_size", 2))
        .output("y")
        .err();
    assert!(e.contains("does not divide"), "{e}");
}

#[test]
fn lstm_bidirectional_batch_first() {
    let h = 2;
    let c = Model::new("LSTM", &["x", "w", "r", "b", "", "h0"])
        .input("x", &[3, 5, 4])
        .input("w", &[2, 4 * h, 4])
        .input("r", &[2, 4 * h, h])
        .init(floats("b", &[2, 8 * h], &[0.0; 32]))
        .input("h0", &[3, 2, h])
        .attr(attr_string("direction", "bidirectional"))
        .attr(attr_int("layout", 1))
        .output("y")
        .output("y_h")
        .ok();
    assert_eq!(
        ops(&c),
        ["transpose", "transpose", "lstm", "transpose", "transpose"]
    );
    assert_eq!(option(&c, "lstm", "steps"), &serde_json::json!(5));
    assert_eq!(option(&c, "lstm", "direction"), &serde_json::json!("both"));
    assert_eq!(
        option(&c, "lstm", "returnSequence"),
        &serde_json::json!(true)
    );
    let lstm = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == "lstm")
        .unwrap();
    assert_eq!(lstm.outputs.as_ref().unwrap().len(), 3);
}

#[test]
fn gru_reset_after_and_refusals() {
    let c = Model::new("GRU", &["x", "w", "r", "b"])
        .input("x", &[3, 1, 4])
        .input("w", &[1, 6, 4])
        .input("r", &[1, 6, 2])
        .input("b", &[1, 12])
        .attr(attr_int("linear_before_reset", 1))
        .output("")
        .output("y_h")
        .convert();
    let c = c.unwrap();
    webnn_weights_web::WebGraph::new(&c.graph).unwrap();
    assert_eq!(ops(&c), ["slice", "slice", "gru"]);
    assert_eq!(option(&c, "gru", "resetAfter"), &serde_json::json!(true));
    assert_eq!(
        option(&c, "gru", "returnSequence"),
        &serde_json::json!(false)
    );
    let e = Model::new("GRU", &["x", "w", "r"])
        .input("x", &[3, 1, 4])
        .input("w", &[1, 6, 4])
        .input("r", &[1, 6, 2])
        .attr(attr_float("clip", 1.0))
        .output("y")
        .err();
    assert!(e.contains("clip"), "{e}");
}

fn contrib(op: &'static str, inputs: &[&'static str]) -> Model {
    let mut m = Model::new(op, inputs);
    m.domain = "com.microsoft";
    m
}

#[test]
fn gelu_variants() {
    let c = contrib("BiasGelu", &["x", "b"])
        .input("x", &[2, 4])
        .init(floats("b", &[4], &[0.1; 4]))
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["add", "gelu"]);
    let c = contrib("FastGelu", &["x"])
        .input("x", &[2, 4])
        .output("y")
        .ok();
    assert!(ops(&c).contains(&"tanh"));
    let c = contrib("QuickGelu", &["x"])
        .input("x", &[2, 4])
        .output("y")
        .ok();
    assert_eq!(ops(&c), ["mul", "sigmoid", "mul"]);
}

#[test]
fn skip_layer_normalization() {
    let c = contrib("SkipLayerNormalization", &["x", "s", "g", "b", "bias"])
        .input("x", &[1, 3, 4])
        .input("s", &[1, 3, 4])
        .init(floats("g", &[4], &[1.0; 4]))
        .init(floats("b", &[4], &[0.0; 4]))
        .init(floats("bias", &[4], &[0.5; 4]))
        .output("y")
        .output("")
        .output("")
        .output("sum")
        .ok();
    assert_eq!(ops(&c), ["add", "add", "layerNormalization"]);
    assert_eq!(
        option(&c, "layerNormalization", "axes"),
        &serde_json::json!([2])
    );
    assert_eq!(c.outputs.len(), 2);
    let e = contrib("SkipLayerNormalization", &["x", "s", "g"])
        .input("x", &[1, 3, 4])
        .input("s", &[1, 3, 4])
        .init(floats("g", &[4], &[1.0; 4]))
        .output("y")
        .output("mean")
        .err();
    assert!(e.contains("output 1"), "{e}");
}

#[test]
fn matmul_nbits_dequantizes_packed_weights() {
    // K = 40 (two blocks of 32, the second partial), N = 3
    let (k, n, block) = (40i64, 3i64, 32i64);
    let blocks = 2;
    let b: Vec<u8> = (0..n * blocks * block / 2).map(|i| i as u8).collect();
    let c = contrib("MatMulNBits", &["a", "b", "s", "z"])
        .input("a", &[2, 5, k])
        .init(raw("b", 2, &[n, blocks, block / 2], &b))
        .init(floats("s", &[n * blocks], &[0.1; 6]))
        .init(raw("z", 2, &[n], &[0x21, 0x43, 0x65]))
        .attr(attr_int("K", k))
        .attr(attr_int("N", n))
        .attr(attr_int("bits", 4))
        .attr(attr_int("block_size", block))
        .output("y")
        .ok();
    assert_eq!(
        ops(&c),
        [
            "dequantizeLinear",
            "slice",
            "transpose",
            "reshape",
            "matmul"
        ]
    );
    let q = c.graph.consts.get("b").unwrap();
    assert_eq!(q.data_type, webnn_weights_runtime::DataType::Uint4);
    assert_eq!(q.shape, [3, 64]);
    let e = contrib("MatMulNBits", &["a", "b", "s"])
        .input("a", &[2, k])
        .input("b", &[n, blocks, block / 2])
        .input("s", &[n * blocks])
        .attr(attr_int("K", k))
        .attr(attr_int("N", n))
        .attr(attr_int("block_size", block))
        .output("y")
        .err();
    assert!(e.contains("must be known"), "{e}");
}
