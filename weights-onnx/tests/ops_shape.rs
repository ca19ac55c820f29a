//! The shape and data movement operators: emitted WebNN nodes and shapes, host folding of
//! shape subgraphs, refusals with their reasons. Every converted graph is checked against the
//! WebNN table.

use prost::Message as _;
use webnn_weights_onnx::proto::*;
use webnn_weights_onnx::{convert_bytes, Conversion, ConvertError, ConvertOptions};

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

fn ints_init(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![v.len() as i64],
        data_type: Some(7),
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Int as i32),
        i: Some(v),
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

fn attr_str(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec().into()),
        ..Default::default()
    }
}

struct Model {
    opset: i64,
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
}

impl Model {
    fn new(opset: i64) -> Model {
        Model {
            opset,
            nodes: vec![],
            inputs: vec![],
            outputs: vec![],
            inits: vec![],
        }
    }
    fn input(mut self, name: &str, elem: i32, dims: &[i64]) -> Model {
        self.inputs.push(info(name, elem, dims));
        self
    }
    fn output(mut self, name: &str) -> Model {
        self.outputs.push(ValueInfoProto {
            name: Some(name.into()),
            ..Default::default()
        });
        self
    }
    fn init(mut self, t: TensorProto) -> Model {
        self.inits.push(t);
        self
    }
    fn node(mut self, n: NodeProto) -> Model {
        self.nodes.push(n);
        self
    }
    fn convert(self) -> Result<Conversion, ConvertError> {
        let model = ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(self.opset),
            }],
            graph: Some(GraphProto {
                node: self.nodes,
                input: self.inputs,
                output: self.outputs,
                initializer: self.inits,
                ..Default::default()
            }),
            ..Default::default()
        };
        let c = convert_bytes(
            bytes::Bytes::from(model.encode_to_vec()),
            None,
            &ConvertOptions::new(),
        )?;
        if let Err(e) = webnn_weights_web::WebGraph::new(&c.graph) {
            panic!(
                "the WebNN table refuses the graph: {e}\n{:#?}",
                c.graph.nodes
            );
        }
        Ok(c)
    }
}

fn ops(c: &Conversion) -> Vec<&str> {
    c.graph.nodes.iter().map(|n| n.op.as_str()).collect()
}

fn option<'a>(c: &'a Conversion, op: &str, key: &str) -> &'a serde_json::Value {
    let n = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == op)
        .expect(op);
    n.options
        .get(key)
        .unwrap_or_else(|| panic!("{op} has no {key}"))
}

fn err(r: Result<Conversion, ConvertError>) -> String {
    match r {
        Ok(c) => panic!("converted: {:?}", ops(&c)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn shape_subgraph_folds_into_reshape() {
    // x: [2, 3, 4]; Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape
    let c = Model::new(13)
        .input("x", 1, &[2, 3, 4])
        .init(ints_init("zero", &[0]))
        .init(ints_init("minus1", &[-1]))
        .init(TensorProto {
            name: Some("i0".into()),
            data_type: Some(7),
            int64_data: vec![0],
            ..Default::default()
        })
        .init(ints_init("ax", &[0]))
        .node(node("Shape", &["x"], &["s"], vec![]))
        .node(node("Gather", &["s", "i0"], &["g"], vec![]))
        .node(node("Unsqueeze", &["g", "ax"], &["u"], vec![]))
        .node(node(
            "Concat",
            &["u", "minus1"],
            &["shape"],
            vec![attr_int("axis", 0)],
        ))
        .node(node("Reshape", &["x", "shape"], &["y"], vec![]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["reshape"]);
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([2, 12])
    );
}

/// Converts every ONNX node test of this family found in `$ONNX_NODE_TESTS` (the
/// `onnx/backend/test/data/node` folder of an onnx wheel), with the inputs the converter asks
/// for fixed from `input_N.pb`; prints each case's outcome and fails on a panic or on a graph
/// the WebNN table refuses. `cargo test -p webnn-weights-onnx --test ops_shape -- --ignored
/// --nocapture`
#[test]
#[ignore]
fn onnx_node_tests() {
    const FAMILY: &[&str] = &[
        "Cast",
        "CastLike",
        "Compress",
        "Concat",
        "ConstantOfShape",
        "DepthToSpace",
        "Expand",
        "EyeLike",
        "Flatten",
        "Gather",
        "GatherElements",
        "GatherND",
        "OneHot",
        "Pad",
        "Range",
        "Reshape",
        "Resize",
        "Scatter",
        "ScatterElements",
        "ScatterND",
        "Shape",
        "Size",
        "Slice",
        "SpaceToDepth",
        "Split",
        "Squeeze",
        "Tile",
        "Transpose",
        "Trilu",
        "Unsqueeze",
        "Upsample",
    ];
    let Ok(root) = std::env::var("ONNX_NODE_TESTS") else {
        eprintln!("ONNX_NODE_TESTS is not set: nothing to run");
        return;
    };
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let (mut ok, mut refused, mut bad) = (0, 0, Vec::new());
    for dir in dirs {
        let path = dir.join("model.onnx");
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(model) = ModelProto::decode(&bytes[..]) else {
            continue;
        };
        let graph = model.graph.clone().unwrap_or_default();
        let ours = graph
            .node
            .iter()
            .any(|n| FAMILY.contains(&n.op_type.as_deref().unwrap_or("")));
        if !ours || dir.to_string_lossy().ends_with("_expanded") {
            continue;
        }
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        let result = std::panic::catch_unwind(|| {
            let mut options = ConvertOptions::new();
            let mut r = webnn_weights_onnx::convert(&path, &options);
            // each round fixes the inputs the failing nodes asked for
            for _ in 0..4 {
                let Err(e) = &r else { break };
                let needed: Vec<String> = e
                    .inputs_needed_as_constants()
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                if needed.is_empty() {
                    break;
                }
                for (i, input) in graph.input.iter().enumerate() {
                    let name = input.name.clone().unwrap_or_default();
                    if needed.contains(&name) {
                        let pb = std::fs::read(dir.join(format!("test_data_set_0/input_{i}.pb")))
                            .unwrap();
                        let t = webnn_weights_onnx::read_tensor_proto(&pb).unwrap();
                        options = options.constant_input(name, t);
                    }
                }
                r = webnn_weights_onnx::convert(&path, &options);
            }
            r.map(|c| webnn_weights_web::WebGraph::new(&c.graph).map_err(|e| e.to_string()))
        });
        match result {
            Ok(Ok(Ok(_))) => {
                ok += 1;
                println!("ok      {case}");
            }
            Ok(Ok(Err(e))) => {
                println!("INVALID {case}: {e}");
                bad.push(case);
            }
            Ok(Err(e)) => {
                refused += 1;
                println!("refused {case}: {}", e.to_string().replace('\n', " "));
            }
            Err(_) => {
                println!("PANIC   {case}");
                bad.push(case);
            }
        }
    }
    println!(
        "{ok} converted, {refused} refused, {} panicked or invalid: {bad:?}",
        bad.len()
    );
    assert!(bad.is_empty());
}

fn scalar_init(name: &str, v: i64) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(7),
        int64_data: vec![v],
        ..Default::default()
    }
}

/// The shape of the constant behind graph output `name` (a folded result).
fn const_output(c: &Conversion, name: &str) -> Vec<u32> {
    let node = &c.graph.outputs[name];
    let n = c
        .graph
        .nodes
        .iter()
        .find(|n| n.id.as_str() == node)
        .expect("output node");
    assert_eq!(n.op.as_str(), "identity", "{:?}", ops(c));
    c.graph.consts[n.inputs[0].as_str()].shape.clone()
}

#[test]
fn slice_with_negative_step_reverses_then_slices() {
    // x[::-2] over axis 1 of [2, 5]: elements 4, 2, 0
    let c = Model::new(13)
        .input("x", 1, &[2, 5])
        .init(ints_init("s", &[-1]))
        .init(ints_init("e", &[i64::MIN]))
        .init(ints_init("a", &[1]))
        .init(ints_init("st", &[-2]))
        .node(node("Slice", &["x", "s", "e", "a", "st"], &["y"], vec![]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["reverse", "slice"]);
    assert_eq!(option(&c, "reverse", "axes"), &serde_json::json!([1]));
    assert_eq!(option(&c, "slice", "starts"), &serde_json::json!([0, 0]));
    // WebNN's sizes are the extent read (output ceil(sizes / strides) = 3)
    assert_eq!(option(&c, "slice", "sizes"), &serde_json::json!([2, 5]));
    assert_eq!(option(&c, "slice", "strides"), &serde_json::json!([1, 2]));
}

#[test]
fn slice_attributes_before_opset_10_and_clamping() {
    let c = Model::new(9)
        .input("x", 1, &[4, 6])
        .node(node(
            "Slice",
            &["x"],
            &["y"],
            vec![
                attr_ints("starts", &[1, -100]),
                attr_ints("ends", &[1000, -1]),
            ],
        ))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "slice", "starts"), &serde_json::json!([1, 0]));
    assert_eq!(option(&c, "slice", "sizes"), &serde_json::json!([3, 5]));
}

#[test]
fn split_num_outputs_and_split_attribute() {
    let outs = ["a", "b", "c"];
    let c = Model::new(18)
        .input("x", 1, &[5, 2])
        .node(node(
            "Split",
            &["x"],
            &outs,
            vec![attr_int("num_outputs", 3)],
        ))
        .output("a")
        .output("b")
        .output("c")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "split", "splits"), &serde_json::json!([2, 2, 1]));
    let c = Model::new(11)
        .input("x", 1, &[2, 6])
        .node(node(
            "Split",
            &["x"],
            &["a", "b"],
            vec![attr_int("axis", -1), attr_ints("split", &[4, 2])],
        ))
        .output("a")
        .output("b")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "split", "splits"), &serde_json::json!([4, 2]));
    assert_eq!(option(&c, "split", "axis"), &serde_json::json!(1));
}

#[test]
fn squeeze_and_unsqueeze_across_opsets() {
    let c = Model::new(11)
        .input("x", 1, &[1, 3, 1])
        .node(node(
            "Squeeze",
            &["x"],
            &["s"],
            vec![attr_ints("axes", &[-1])],
        ))
        .node(node(
            "Unsqueeze",
            &["s"],
            &["y"],
            vec![attr_ints("axes", &[0, 3])],
        ))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([1, 3])
    );
    let last = c.graph.nodes.last().unwrap();
    assert_eq!(last.options["newShape"], serde_json::json!([1, 1, 3, 1]));
    let e = err(Model::new(13)
        .input("x", 1, &[2, 3])
        .init(ints_init("ax", &[0]))
        .node(node("Squeeze", &["x", "ax"], &["y"], vec![]))
        .output("y")
        .convert());
    assert!(e.contains("axis 0 of shape [2, 3] has size 2"), "{e}");
}

#[test]
fn gather_indices_constant_normalized_or_wrapped_in_the_graph() {
    let c = Model::new(13)
        .input("x", 1, &[4, 3])
        .init(ints_init("i", &[-1, 0]))
        .node(node("Gather", &["x", "i"], &["y"], vec![]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["gather"]);
    let idx = &c.graph.nodes[0].inputs[1];
    assert_eq!(c.graph.consts[idx.as_str()].shape, [2]);
    let c = Model::new(13)
        .input("x", 1, &[4, 3])
        .input("i", 7, &[2])
        .node(node(
            "Gather",
            &["x", "i"],
            &["y"],
            vec![attr_int("axis", 1)],
        ))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["lesser", "add", "where", "gather"]);
    let e = err(Model::new(13)
        .input("x", 1, &[4, 3])
        .init(ints_init("i", &[4]))
        .node(node("Gather", &["x", "i"], &["y"], vec![]))
        .output("y")
        .convert());
    assert!(e.contains("holds 4, out of range"), "{e}");
}

#[test]
fn pad_negative_crops_and_wrap_is_refused() {
    let c = Model::new(13)
        .input("x", 1, &[1, 4])
        .init(ints_init("p", &[0, -1, 0, 2]))
        .node(node(
            "Pad",
            &["x", "p"],
            &["y"],
            vec![attr_str("mode", "reflect")],
        ))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["slice", "pad"]);
    assert_eq!(option(&c, "pad", "mode"), &serde_json::json!("reflection"));
    assert_eq!(
        option(&c, "pad", "endingPadding"),
        &serde_json::json!([0, 2])
    );
    let e = err(Model::new(19)
        .input("x", 1, &[1, 4])
        .init(ints_init("p", &[0, 1, 0, 1]))
        .node(node(
            "Pad",
            &["x", "p"],
            &["y"],
            vec![attr_str("mode", "wrap")],
        ))
        .output("y")
        .convert());
    assert!(e.contains("mode \"wrap\" is not supported"), "{e}");
}

#[test]
fn cast_folds_exactly_and_casts_to_bool_by_comparison() {
    let big = (1i64 << 60) + 1;
    let c = Model::new(13)
        .init(ints_init("v", &[big]))
        .node(node("Cast", &["v"], &["w"], vec![attr_int("to", 7)]))
        .node(node("Range", &["z", "n", "one"], &["r"], vec![]))
        .init(scalar_init("z", 0))
        .init(scalar_init("n", 5))
        .init(scalar_init("one", 2))
        .output("w")
        .output("r")
        .convert()
        .unwrap();
    assert_eq!(const_output(&c, "r"), [3]);
    let c = Model::new(13)
        .input("x", 1, &[3])
        .node(node("Cast", &["x"], &["y"], vec![attr_int("to", 9)]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["notEqual"]);
    let e = err(Model::new(13)
        .input("x", 1, &[3])
        .node(node("Cast", &["x"], &["y"], vec![attr_int("to", 11)]))
        .output("y")
        .convert());
    assert!(e.contains("to double is not supported"), "{e}");
}

#[test]
fn constant_of_shape_and_expand_fold() {
    let c = Model::new(13)
        .init(ints_init("s", &[2, 3]))
        .node(node("ConstantOfShape", &["s"], &["y"], vec![]))
        .node(node("Expand", &["y", "t"], &["z"], vec![]))
        .init(ints_init("t", &[4, 1, 1]))
        .output("z")
        .convert()
        .unwrap();
    assert_eq!(const_output(&c, "z"), [4, 2, 3]);
}

#[test]
fn reshape_rules_and_errors() {
    let c = Model::new(14)
        .input("x", 1, &[2, 3, 4])
        .init(ints_init("s", &[0, -1]))
        .node(node("Reshape", &["x", "s"], &["y"], vec![]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([2, 12])
    );
    let e = err(Model::new(14)
        .input("x", 1, &[2, 3, 4])
        .init(ints_init("s", &[5, -1]))
        .node(node("Reshape", &["x", "s"], &["y"], vec![]))
        .output("y")
        .convert());
    assert!(e.contains("cannot take the 24 elements"), "{e}");
    let e = err(Model::new(14)
        .input("x", 1, &[2, 3, 4])
        .input("s", 7, &[2])
        .node(node("Reshape", &["x", "s"], &["y"], vec![]))
        .output("y")
        .convert());
    assert!(
        e.contains("the new shape (input 1, \"s\") must be known"),
        "{e}"
    );
}

#[test]
fn resize_nearest_matches_or_is_refused() {
    let scales = TensorProto {
        name: Some("sc".into()),
        dims: vec![4],
        data_type: Some(1),
        float_data: vec![1.0, 1.0, 2.0, 2.0],
        ..Default::default()
    };
    let model = |coord: &str, mode: &str| {
        Model::new(13)
            .input("x", 1, &[1, 1, 3, 3])
            .init(scales.clone())
            .node(node(
                "Resize",
                &["x", "", "sc"],
                &["y"],
                vec![
                    attr_str("coordinate_transformation_mode", coord),
                    attr_str("mode", mode),
                ],
            ))
            .output("y")
            .convert()
    };
    let c = model("half_pixel", "nearest").unwrap();
    assert_eq!(
        option(&c, "resample2d", "sizes"),
        &serde_json::json!([6, 6])
    );
    assert_eq!(option(&c, "resample2d", "axes"), &serde_json::json!([2, 3]));
    model("asymmetric", "nearest").unwrap();
    model("half_pixel", "linear").unwrap();
    let e = err(model("align_corners", "linear"));
    assert!(
        e.contains("coordinate_transformation_mode \"align_corners\""),
        "{e}"
    );
}

#[test]
fn depth_to_space_and_transpose() {
    let c = Model::new(13)
        .input("x", 1, &[1, 8, 2, 3])
        .node(node(
            "DepthToSpace",
            &["x"],
            &["d"],
            vec![attr_int("blocksize", 2)],
        ))
        .node(node("Transpose", &["d"], &["y"], vec![]))
        .output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["reshape", "transpose", "reshape", "transpose"]);
    assert_eq!(
        c.graph.nodes[2].options["newShape"],
        serde_json::json!([1, 2, 4, 6])
    );
    assert_eq!(
        c.graph.nodes[3].options["permutation"],
        serde_json::json!([3, 2, 1, 0])
    );
}

#[test]
fn split_with_empty_parts_emits_only_the_others() {
    let c = Model::new(13)
        .input("x", 1, &[4])
        .init(ints_init("s", &[0, 4, 0]))
        .node(node("Split", &["x", "s"], &["a", "b", "c"], vec![]))
        .output("b")
        .convert()
        .unwrap();
    assert!(!ops(&c).contains(&"split"), "{:?}", ops(&c));
}
