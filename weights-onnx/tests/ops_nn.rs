//! Activations, normalizations and reductions: small models converted, the emitted WebNN
//! operations and shapes checked, and every graph accepted by the WebNN table.

mod common;

use common::*;
use prost::Message as _;
use webnn_weights_onnx::proto::ModelProto;

/// A one-node model `op(x) -> y` at `opset`, `x` float32 of dims `x`.
fn one(op: &'static str, opset: i64, x: &[i64]) -> Model {
    Model {
        opset,
        ..Model::new(op, &["x"])
    }
    .input("x", x)
    .output("y")
}

#[test]
fn plain_activations_map_one_to_one() {
    for (onnx, webnn) in [
        ("Relu", "relu"),
        ("Sigmoid", "sigmoid"),
        ("Tanh", "tanh"),
        ("Softplus", "softplus"),
        ("Softsign", "softsign"),
        ("HardSwish", "hardSwish"),
        ("LeakyRelu", "leakyRelu"),
        ("Elu", "elu"),
        ("HardSigmoid", "hardSigmoid"),
        ("Gelu", "gelu"),
    ] {
        let c = one(onnx, 20, &[2, 3]).ok();
        assert_eq!(ops(&c), [webnn], "{onnx}");
    }
    let c = one("LeakyRelu", 17, &[2])
        .attr(attr_float("alpha", 0.25))
        .ok();
    assert_eq!(option(&c, "leakyRelu", "alpha"), 0.25);
    let c = one("HardSigmoid", 17, &[2]).ok();
    assert_eq!(
        option(&c, "hardSigmoid", "alpha").as_f64().unwrap() as f32,
        0.2
    );
}

#[test]
fn decomposed_activations_convert() {
    for op in ["Selu", "Celu", "Mish", "ThresholdedRelu", "Shrink", "Swish"] {
        let c = one(op, 24, &[2, 3]).ok();
        assert!(c.graph.nodes.len() >= 2, "{op}: {:?}", ops(&c));
        // the result keeps the ONNX output's name; intermediates take the others
        assert_eq!(c.graph.outputs["y"], "y", "{op}");
        assert_eq!(c.graph.nodes.last().unwrap().id.as_str(), "y", "{op}");
    }
    let c = one("Gelu", 20, &[4])
        .attr(attr_string("approximate", "tanh"))
        .ok();
    assert!(ops(&c).contains(&"tanh"), "{:?}", ops(&c));
    let e = refusal(
        one("Gelu", 20, &[4])
            .attr(attr_string("approximate", "erf"))
            .convert(),
    );
    assert!(e.contains("approximate"), "{e}");
}

#[test]
fn prelu_checks_the_slope_broadcast() {
    let c = one("PRelu", 16, &[1, 3, 2, 2])
        .node_input("s")
        .init(floats("s", &[3, 1, 1], &[0.1, 0.2, 0.3]))
        .ok();
    assert_eq!(ops(&c), ["prelu"]);
    let e = refusal(
        one("PRelu", 16, &[3])
            .node_input("s")
            .init(floats("s", &[2, 3], &[0.0; 6]))
            .convert(),
    );
    assert!(e.contains("does not broadcast"), "{e}");
}

#[test]
fn clip_bounds_from_attributes_inputs_and_the_graph() {
    let c = one("Clip", 7, &[4])
        .attr(attr_float("min", -1.0))
        .attr(attr_float("max", 6.0))
        .ok();
    assert_eq!(ops(&c), ["clamp"]);
    assert_eq!(option(&c, "clamp", "maxValue"), 6.0);
    let c = one("Clip", 13, &[4])
        .node_input("lo")
        .init(floats("lo", &[], &[0.0]))
        .ok();
    assert_eq!(ops(&c), ["clamp"]);
    assert!(c.graph.nodes[0].options.get("maxValue").is_none());
    // a bound computed by the graph: max/min
    let mut m = one("Clip", 13, &[4]).node_input("lo");
    m.inputs.push(info("lo", FLOAT, &[]));
    assert_eq!(ops(&m.ok()), ["max"]);
    // min > max gives max everywhere: not a clamp WebNN would refuse
    let c = one("Clip", 13, &[4])
        .node_input("lo")
        .node_input("hi")
        .init(floats("lo", &[], &[2.0]))
        .init(floats("hi", &[], &[1.0]))
        .ok();
    assert_eq!(ops(&c), ["max", "min"]);
}

#[test]
fn softmax_before_opset_13_flattens() {
    let c = one("Softmax", 11, &[2, 3, 4]).ok();
    assert_eq!(ops(&c), ["reshape", "softmax", "reshape"]);
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([2, 12])
    );
    assert_eq!(option(&c, "softmax", "axis"), 1);
    let c = one("Softmax", 13, &[2, 3, 4]).ok();
    assert_eq!(ops(&c), ["softmax"]);
    assert_eq!(option(&c, "softmax", "axis"), 2);
    let c = one("LogSoftmax", 13, &[2, 3]).ok();
    assert_eq!(ops(&c), ["reduceMax", "sub", "reduceLogSumExp", "sub"]);
    let c = one("Hardmax", 13, &[2, 3]).ok();
    assert_eq!(ops(&c), ["argMax", "equal", "cast"]);
}

#[test]
fn batch_normalization_inference_only() {
    let stats = |b: Model| {
        b.node_input("s")
            .node_input("b")
            .node_input("m")
            .node_input("v")
            .init(floats("s", &[2], &[1.0, 2.0]))
            .init(floats("b", &[2], &[0.0, 1.0]))
            .init(floats("m", &[2], &[0.5, 0.5]))
            .init(floats("v", &[2], &[1.0, 4.0]))
    };
    let c = stats(one("BatchNormalization", 15, &[1, 2, 3, 3])).ok();
    assert_eq!(ops(&c), ["batchNormalization"]);
    assert_eq!(c.graph.nodes[0].inputs.len(), 3);
    assert_eq!(option(&c, "batchNormalization", "axis"), 1);
    let e = refusal(
        stats(one("BatchNormalization", 15, &[1, 2, 3, 3]))
            .attr(attr_int("training_mode", 1))
            .convert(),
    );
    assert!(e.contains("training_mode"), "{e}");
}

#[test]
fn instance_and_layer_normalization() {
    let c = one("InstanceNormalization", 7, &[1, 2, 5])
        .node_input("s")
        .node_input("b")
        .init(floats("s", &[2], &[1.0, 2.0]))
        .init(floats("b", &[2], &[0.0, 1.0]))
        .ok();
    assert_eq!(ops(&c), ["reshape", "instanceNormalization", "reshape"]);
    let c = one("LayerNormalization", 17, &[2, 3, 4])
        .node_input("s")
        .init(floats("s", &[4], &[1.0; 4]))
        .ok();
    assert_eq!(ops(&c), ["layerNormalization"]);
    assert_eq!(
        option(&c, "layerNormalization", "axes"),
        &serde_json::json!([2])
    );
    let mut m = one("LayerNormalization", 17, &[2, 3])
        .node_input("s")
        .init(floats("s", &[3], &[1.0; 3]))
        .attr(attr_int("axis", 0));
    m.outputs.push(info("mean", FLOAT, &[]));
    m.outputs.push(info("inv", FLOAT, &[]));
    let c = m.ok();
    assert!(ops(&c).contains(&"reciprocal"), "{:?}", ops(&c));
    for name in ["y", "mean", "inv"] {
        assert_eq!(c.graph.outputs[name], name);
    }
}

#[test]
fn decomposed_normalizations_convert() {
    let c = one("GroupNormalization", 21, &[2, 4, 3])
        .node_input("s")
        .node_input("b")
        .init(floats("s", &[4], &[1.0; 4]))
        .init(floats("b", &[4], &[0.0; 4]))
        .attr(attr_int("num_groups", 2))
        .ok();
    assert!(ops(&c).contains(&"layerNormalization"), "{:?}", ops(&c));
    let c = one("LRN", 13, &[1, 5, 2, 2]).attr(attr_int("size", 3)).ok();
    assert!(ops(&c).contains(&"averagePool2d"), "{:?}", ops(&c));
    assert_eq!(
        option(&c, "pad", "beginningPadding"),
        &serde_json::json!([0, 0, 1, 0])
    );
    let c = one("MeanVarianceNormalization", 13, &[2, 3, 2, 2]).ok();
    assert_eq!(ops(&c).last(), Some(&"div"));
    let c = one("LpNormalization", 13, &[2, 3])
        .attr(attr_int("p", 1))
        .ok();
    assert_eq!(ops(&c), ["reduceL1", "equal", "where", "div"]);
}

#[test]
fn reductions_axes_from_attributes_and_inputs() {
    let c = one("ReduceMean", 13, &[2, 3, 4])
        .attr(attr_ints("axes", &[-1]))
        .attr(attr_int("keepdims", 0))
        .ok();
    assert_eq!(ops(&c), ["reduceMean"]);
    assert_eq!(option(&c, "reduceMean", "axes"), &serde_json::json!([2]));
    assert_eq!(option(&c, "reduceMean", "keepDimensions"), false);
    let c = one("ReduceSum", 13, &[2, 3])
        .node_input("a")
        .init(int64s("a", &[1], &[0]))
        .ok();
    assert_eq!(option(&c, "reduceSum", "axes"), &serde_json::json!([0]));
    // no axes: every axis; with noop_with_empty_axes: identity
    let c = one("ReduceMax", 18, &[2, 3]).ok();
    assert_eq!(option(&c, "reduceMax", "axes"), &serde_json::json!([0, 1]));
    let c = one("ReduceMax", 18, &[2, 3])
        .attr(attr_int("noop_with_empty_axes", 1))
        .ok();
    assert_eq!(ops(&c), ["identity"]);
    // axes the graph computes are refused, naming the input
    let mut m = one("ReduceSum", 13, &[2, 3]).node_input("a");
    m.inputs.push(info("a", INT64, &[1]));
    let e = m.convert().unwrap_err();
    assert_eq!(e.inputs_needed_as_constants(), ["a"]);
}

#[test]
fn reductions_of_constants_fold() {
    // ReduceProd of a shape, as shape arithmetic does
    let mut m = one("ReduceProd", 13, &[3]);
    m.inputs.clear();
    m.inits.push(int64s("x", &[3], &[2, 3, 4]));
    m.attrs.push(attr_int("keepdims", 0));
    m.outputs = vec![info("y", INT64, &[])];
    let c = m.ok();
    assert_eq!(ops(&c), ["identity"]);
    let cst = c.graph.consts.values().next().unwrap();
    assert!(cst.shape.is_empty());
}

#[test]
fn arg_extremes_and_cumsum() {
    let c = one("ArgMax", 13, &[2, 3]).attr(attr_int("axis", 1)).ok();
    assert_eq!(ops(&c), ["argMax"]);
    assert_eq!(option(&c, "argMax", "outputDataType"), "int64");
    let c = one("ArgMin", 13, &[2, 3])
        .attr(attr_int("select_last_index", 1))
        .ok();
    assert_eq!(ops(&c), ["reverse", "argMin", "sub"]);
    let c = one("CumSum", 14, &[2, 3])
        .node_input("a")
        .init(int64s("a", &[], &[-1]))
        .attr(attr_int("reverse", 1))
        .ok();
    assert_eq!(ops(&c), ["cumulativeSum"]);
    assert_eq!(option(&c, "cumulativeSum", "axis"), 1);
    assert_eq!(option(&c, "cumulativeSum", "reversed"), true);
}

/// Converts every ONNX node test named in `ONNX_NN_CASES` (a comma-separated list of prefixes)
/// under `ONNX_NODE_TESTS` (the `onnx/backend/test/data/node` folder of an onnx wheel), feeding
/// the inputs a node needs as constants from `test_data_set_0`; prints each case's result and
/// fails on a panic. Run with `cargo test --test ops_nn -- --ignored --nocapture`.
#[test]
#[ignore]
fn onnx_node_tests_convert_without_panics() {
    let Ok(root) = std::env::var("ONNX_NODE_TESTS") else {
        eprintln!("ONNX_NODE_TESTS is not set; nothing to do");
        return;
    };
    let prefixes = std::env::var("ONNX_NN_CASES").unwrap_or_default();
    let prefixes: Vec<&str> = prefixes.split(',').filter(|p| !p.is_empty()).collect();
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
        .collect();
    cases.sort();
    let (mut ok, mut refused, mut panics) = (0, 0, 0);
    for case in cases {
        let dir = std::path::Path::new(&root).join(&case);
        let result = std::panic::catch_unwind(|| convert_case(&dir));
        match result {
            Ok(Ok(())) => {
                ok += 1;
                println!("ok      {case}");
            }
            Ok(Err(e)) => {
                refused += 1;
                println!("refused {case}: {}", e.replace('\n', " "));
            }
            Err(_) => {
                panics += 1;
                println!("PANIC   {case}");
            }
        }
    }
    println!("converted {ok}, refused {refused}, panics {panics}");
    assert_eq!(panics, 0);
}

fn convert_case(dir: &std::path::Path) -> Result<(), String> {
    let model = dir.join("model.onnx");
    let mut options = webnn_weights_onnx::ConvertOptions::new();
    let mut result = webnn_weights_onnx::convert(&model, &options);
    if let Err(e) = &result {
        let needed: Vec<String> = e
            .inputs_needed_as_constants()
            .iter()
            .map(|s| s.to_string())
            .collect();
        if !needed.is_empty() {
            let proto = ModelProto::decode(&std::fs::read(&model).unwrap()[..]).unwrap();
            let graph = proto.graph.unwrap();
            for name in needed {
                let i = graph
                    .input
                    .iter()
                    .position(|v| v.name.as_deref() == Some(&name))
                    .unwrap();
                let pb = dir.join(format!("test_data_set_0/input_{i}.pb"));
                let t = webnn_weights_onnx::read_tensor_proto(&std::fs::read(pb).unwrap())
                    .map_err(|e| e.to_string())?;
                options = options.constant_input(name, t);
            }
            result = webnn_weights_onnx::convert(&model, &options);
        }
    }
    let c = result.map_err(|e| e.to_string())?;
    webnn_weights_web::WebGraph::new(&c.graph).map_err(|e| format!("WebGraph: {e}"))?;
    Ok(())
}
