//! Activations, normalizations and reductions: small models converted, the emitted WebNN
//! operations and shapes checked, and every graph accepted by the WebNN table.

use prost::Message as _;
use webnn_weights_onnx::proto::*;
use webnn_weights_onnx::{convert_bytes, Conversion, ConvertError};

fn tensor_type(elem: i32, dims: &[i64]) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
                        ..Default::default()
                    })
                    .collect(),
            }),
        })),
        ..Default::default()
    }
}

fn info(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(tensor_type(elem, dims)),
        ..Default::default()
    }
}

const FLOAT: i32 = 1;
const INT64: i32 = 7;

fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    }
}

fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn attr_string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec().into()),
        ..Default::default()
    }
}

fn floats(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(FLOAT),
        float_data: v.to_vec(),
        ..Default::default()
    }
}

fn ints(name: &str, dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(INT64),
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

/// A one-node model: `op(inputs) -> outputs` at `opset`.
struct One {
    op: &'static str,
    opset: i64,
    inputs: Vec<ValueInfoProto>,
    node_inputs: Vec<&'static str>,
    init: Vec<TensorProto>,
    attrs: Vec<AttributeProto>,
    outputs: Vec<ValueInfoProto>,
}

impl One {
    fn new(op: &'static str, opset: i64, x: &[i64]) -> One {
        One {
            op,
            opset,
            inputs: vec![info("x", FLOAT, x)],
            node_inputs: vec!["x"],
            init: vec![],
            attrs: vec![],
            outputs: vec![info("y", FLOAT, &[])],
        }
    }

    fn input(mut self, name: &'static str) -> One {
        self.node_inputs.push(name);
        self
    }

    fn init(mut self, t: TensorProto) -> One {
        self.init.push(t);
        self
    }

    fn attr(mut self, a: AttributeProto) -> One {
        self.attrs.push(a);
        self
    }

    fn convert(self) -> Result<Conversion, ConvertError> {
        let outputs: Vec<String> = self
            .outputs
            .iter()
            .map(|o| o.name.clone().unwrap())
            .collect();
        let model = ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(self.opset),
            }],
            graph: Some(GraphProto {
                node: vec![NodeProto {
                    op_type: Some(self.op.into()),
                    input: self.node_inputs.iter().map(|s| s.to_string()).collect(),
                    output: outputs,
                    attribute: self.attrs,
                    ..Default::default()
                }],
                input: self.inputs,
                initializer: self.init,
                output: self.outputs,
                ..Default::default()
            }),
            ..Default::default()
        };
        let c = convert_bytes(model.encode_to_vec().into(), None, &Default::default())?;
        webnn_weights_web::WebGraph::new(&c.graph).expect("the WebNN table accepts the graph");
        Ok(c)
    }

    fn ok(self) -> Conversion {
        self.convert().expect("converts")
    }
}

fn ops(c: &Conversion) -> Vec<&str> {
    c.graph.nodes.iter().map(|n| n.op.as_str()).collect()
}

fn option<'a>(c: &'a Conversion, op: &str, key: &str) -> &'a serde_json::Value {
    let node = c.graph.nodes.iter().find(|n| n.op.as_str() == op).unwrap();
    node.options.get(key).unwrap()
}

fn error(r: Result<Conversion, ConvertError>) -> String {
    r.expect_err("refused").to_string()
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
        let c = One::new(onnx, 20, &[2, 3]).ok();
        assert_eq!(ops(&c), [webnn], "{onnx}");
    }
    let c = One::new("LeakyRelu", 17, &[2])
        .attr(attr_float("alpha", 0.25))
        .ok();
    assert_eq!(option(&c, "leakyRelu", "alpha"), 0.25);
    let c = One::new("HardSigmoid", 17, &[2]).ok();
    assert_eq!(
        option(&c, "hardSigmoid", "alpha").as_f64().unwrap() as f32,
        0.2
    );
}

#[test]
fn decomposed_activations_convert() {
    for op in ["Selu", "Celu", "Mish", "ThresholdedRelu", "Shrink", "Swish"] {
        let c = One::new(op, 24, &[2, 3]).ok();
        assert!(c.graph.nodes.len() >= 2, "{op}: {:?}", ops(&c));
        // the result keeps the ONNX output's name; intermediates take the others
        assert_eq!(c.graph.outputs["y"], "y", "{op}");
        assert_eq!(c.graph.nodes.last().unwrap().id.as_str(), "y", "{op}");
    }
    let c = One::new("Gelu", 20, &[4])
        .attr(attr_string("approximate", "tanh"))
        .ok();
    assert!(ops(&c).contains(&"tanh"), "{:?}", ops(&c));
    let e = error(
        One::new("Gelu", 20, &[4])
            .attr(attr_string("approximate", "erf"))
            .convert(),
    );
    assert!(e.contains("approximate"), "{e}");
}

#[test]
fn prelu_checks_the_slope_broadcast() {
    let c = One::new("PRelu", 16, &[1, 3, 2, 2])
        .input("s")
        .init(floats("s", &[3, 1, 1], &[0.1, 0.2, 0.3]))
        .ok();
    assert_eq!(ops(&c), ["prelu"]);
    let e = error(
        One::new("PRelu", 16, &[3])
            .input("s")
            .init(floats("s", &[2, 3], &[0.0; 6]))
            .convert(),
    );
    assert!(e.contains("does not broadcast"), "{e}");
}

#[test]
fn clip_bounds_from_attributes_inputs_and_the_graph() {
    let c = One::new("Clip", 7, &[4])
        .attr(attr_float("min", -1.0))
        .attr(attr_float("max", 6.0))
        .ok();
    assert_eq!(ops(&c), ["clamp"]);
    assert_eq!(option(&c, "clamp", "maxValue"), 6.0);
    let c = One::new("Clip", 13, &[4])
        .input("lo")
        .init(floats("lo", &[], &[0.0]))
        .ok();
    assert_eq!(ops(&c), ["clamp"]);
    assert!(c.graph.nodes[0].options.get("maxValue").is_none());
    // a bound computed by the graph: max/min
    let mut m = One::new("Clip", 13, &[4]).input("lo");
    m.inputs.push(info("lo", FLOAT, &[]));
    assert_eq!(ops(&m.ok()), ["max"]);
    // min > max gives max everywhere: not a clamp WebNN would refuse
    let c = One::new("Clip", 13, &[4])
        .input("lo")
        .input("hi")
        .init(floats("lo", &[], &[2.0]))
        .init(floats("hi", &[], &[1.0]))
        .ok();
    assert_eq!(ops(&c), ["max", "min"]);
}

#[test]
fn softmax_before_opset_13_flattens() {
    let c = One::new("Softmax", 11, &[2, 3, 4]).ok();
    assert_eq!(ops(&c), ["reshape", "softmax", "reshape"]);
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([2, 12])
    );
    assert_eq!(option(&c, "softmax", "axis"), 1);
    let c = One::new("Softmax", 13, &[2, 3, 4]).ok();
    assert_eq!(ops(&c), ["softmax"]);
    assert_eq!(option(&c, "softmax", "axis"), 2);
    let c = One::new("LogSoftmax", 13, &[2, 3]).ok();
    assert_eq!(ops(&c), ["reduceMax", "sub", "reduceLogSumExp", "sub"]);
    let c = One::new("Hardmax", 13, &[2, 3]).ok();
    assert_eq!(ops(&c), ["argMax", "equal", "cast"]);
}

#[test]
fn batch_normalization_inference_only() {
    let stats = |b: One| {
        b.input("s")
            .input("b")
            .input("m")
            .input("v")
            .init(floats("s", &[2], &[1.0, 2.0]))
            .init(floats("b", &[2], &[0.0, 1.0]))
            .init(floats("m", &[2], &[0.5, 0.5]))
            .init(floats("v", &[2], &[1.0, 4.0]))
    };
    let c = stats(One::new("BatchNormalization", 15, &[1, 2, 3, 3])).ok();
    assert_eq!(ops(&c), ["batchNormalization"]);
    assert_eq!(c.graph.nodes[0].inputs.len(), 3);
    assert_eq!(option(&c, "batchNormalization", "axis"), 1);
    let e = error(
        stats(One::new("BatchNormalization", 15, &[1, 2, 3, 3]))
            .attr(attr_int("training_mode", 1))
            .convert(),
    );
    assert!(e.contains("training_mode"), "{e}");
}

#[test]
fn instance_and_layer_normalization() {
    let c = One::new("InstanceNormalization", 7, &[1, 2, 5])
        .input("s")
        .input("b")
        .init(floats("s", &[2], &[1.0, 2.0]))
        .init(floats("b", &[2], &[0.0, 1.0]))
        .ok();
    assert_eq!(ops(&c), ["reshape", "instanceNormalization", "reshape"]);
    let c = One::new("LayerNormalization", 17, &[2, 3, 4])
        .input("s")
        .init(floats("s", &[4], &[1.0; 4]))
        .ok();
    assert_eq!(ops(&c), ["layerNormalization"]);
    assert_eq!(
        option(&c, "layerNormalization", "axes"),
        &serde_json::json!([2])
    );
    let mut m = One::new("LayerNormalization", 17, &[2, 3])
        .input("s")
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
    let c = One::new("GroupNormalization", 21, &[2, 4, 3])
        .input("s")
        .input("b")
        .init(floats("s", &[4], &[1.0; 4]))
        .init(floats("b", &[4], &[0.0; 4]))
        .attr(attr_int("num_groups", 2))
        .ok();
    assert!(ops(&c).contains(&"layerNormalization"), "{:?}", ops(&c));
    let c = One::new("LRN", 13, &[1, 5, 2, 2])
        .attr(attr_int("size", 3))
        .ok();
    assert!(ops(&c).contains(&"averagePool2d"), "{:?}", ops(&c));
    assert_eq!(
        option(&c, "pad", "beginningPadding"),
        &serde_json::json!([0, 0, 1, 0])
    );
    let c = One::new("MeanVarianceNormalization", 13, &[2, 3, 2, 2]).ok();
    assert_eq!(ops(&c).last(), Some(&"div"));
    let c = One::new("LpNormalization", 13, &[2, 3])
        .attr(attr_int("p", 1))
        .ok();
    assert_eq!(ops(&c), ["reduceL1", "equal", "where", "div"]);
}

#[test]
fn reductions_axes_from_attributes_and_inputs() {
    let c = One::new("ReduceMean", 13, &[2, 3, 4])
        .attr(attr_ints("axes", &[-1]))
        .attr(attr_int("keepdims", 0))
        .ok();
    assert_eq!(ops(&c), ["reduceMean"]);
    assert_eq!(option(&c, "reduceMean", "axes"), &serde_json::json!([2]));
    assert_eq!(option(&c, "reduceMean", "keepDimensions"), false);
    let c = One::new("ReduceSum", 13, &[2, 3])
        .input("a")
        .init(ints("a", &[1], &[0]))
        .ok();
    assert_eq!(option(&c, "reduceSum", "axes"), &serde_json::json!([0]));
    // no axes: every axis; with noop_with_empty_axes: identity
    let c = One::new("ReduceMax", 18, &[2, 3]).ok();
    assert_eq!(option(&c, "reduceMax", "axes"), &serde_json::json!([0, 1]));
    let c = One::new("ReduceMax", 18, &[2, 3])
        .attr(attr_int("noop_with_empty_axes", 1))
        .ok();
    assert_eq!(ops(&c), ["identity"]);
    // axes the graph computes are refused, naming the input
    let mut m = One::new("ReduceSum", 13, &[2, 3]).input("a");
    m.inputs.push(info("a", INT64, &[1]));
    let e = m.convert().unwrap_err();
    assert_eq!(e.inputs_needed_as_constants(), ["a"]);
}

#[test]
fn reductions_of_constants_fold() {
    // ReduceProd of a shape, as shape arithmetic does
    let mut m = One::new("ReduceProd", 13, &[3]);
    m.inputs.clear();
    m.init.push(ints("x", &[3], &[2, 3, 4]));
    m.attrs.push(attr_int("keepdims", 0));
    m.outputs = vec![info("y", INT64, &[])];
    let c = m.ok();
    assert_eq!(ops(&c), ["identity"]);
    let cst = c.graph.consts.values().next().unwrap();
    assert!(cst.shape.is_empty());
}

#[test]
fn arg_extremes_and_cumsum() {
    let c = One::new("ArgMax", 13, &[2, 3])
        .attr(attr_int("axis", 1))
        .ok();
    assert_eq!(ops(&c), ["argMax"]);
    assert_eq!(option(&c, "argMax", "outputDataType"), "int64");
    let c = One::new("ArgMin", 13, &[2, 3])
        .attr(attr_int("select_last_index", 1))
        .ok();
    assert_eq!(ops(&c), ["reverse", "argMin", "sub"]);
    let c = One::new("CumSum", 14, &[2, 3])
        .input("a")
        .init(ints("a", &[], &[-1]))
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
