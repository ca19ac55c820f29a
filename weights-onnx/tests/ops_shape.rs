//! The shape and data movement operators: emitted WebNN nodes and shapes, host folding of
//! shape subgraphs, refusals with their reasons. Every converted graph is checked against the
//! WebNN table.

mod common;

use common::*;
use prost::Message as _;
use webnn_weights_onnx::proto::*;
use webnn_weights_onnx::{Conversion, ConvertOptions};

#[test]
fn shape_subgraph_folds_into_reshape() {
    // x: [2, 3, 4]; Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape
    let c = Graph::new(13)
        .input("x", 1, &[2, 3, 4])
        .init(int64_vector("zero", &[0]))
        .init(int64_vector("minus1", &[-1]))
        .init(TensorProto {
            name: Some("i0".into()),
            data_type: Some(7),
            int64_data: vec![0],
            ..Default::default()
        })
        .init(int64_vector("ax", &[0]))
        .push(node("Shape", &["x"], &["s"], vec![]))
        .push(node("Gather", &["s", "i0"], &["g"], vec![]))
        .push(node("Unsqueeze", &["g", "ax"], &["u"], vec![]))
        .push(node(
            "Concat",
            &["u", "minus1"],
            &["shape"],
            vec![attr_int("axis", 0)],
        ))
        .push(node("Reshape", &["x", "shape"], &["y"], vec![]))
        .untyped_output("y")
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
    let c = Graph::new(13)
        .input("x", 1, &[2, 5])
        .init(int64_vector("s", &[-1]))
        .init(int64_vector("e", &[i64::MIN]))
        .init(int64_vector("a", &[1]))
        .init(int64_vector("st", &[-2]))
        .push(node("Slice", &["x", "s", "e", "a", "st"], &["y"], vec![]))
        .untyped_output("y")
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
    let c = Graph::new(9)
        .input("x", 1, &[4, 6])
        .push(node(
            "Slice",
            &["x"],
            &["y"],
            vec![
                attr_ints("starts", &[1, -100]),
                attr_ints("ends", &[1000, -1]),
            ],
        ))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "slice", "starts"), &serde_json::json!([1, 0]));
    assert_eq!(option(&c, "slice", "sizes"), &serde_json::json!([3, 5]));
}

#[test]
fn split_num_outputs_and_split_attribute() {
    let outs = ["a", "b", "c"];
    let c = Graph::new(18)
        .input("x", 1, &[5, 2])
        .push(node(
            "Split",
            &["x"],
            &outs,
            vec![attr_int("num_outputs", 3)],
        ))
        .untyped_output("a")
        .untyped_output("b")
        .untyped_output("c")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "split", "splits"), &serde_json::json!([2, 2, 1]));
    let c = Graph::new(11)
        .input("x", 1, &[2, 6])
        .push(node(
            "Split",
            &["x"],
            &["a", "b"],
            vec![attr_int("axis", -1), attr_ints("split", &[4, 2])],
        ))
        .untyped_output("a")
        .untyped_output("b")
        .convert()
        .unwrap();
    assert_eq!(option(&c, "split", "splits"), &serde_json::json!([4, 2]));
    assert_eq!(option(&c, "split", "axis"), &serde_json::json!(1));
}

#[test]
fn squeeze_and_unsqueeze_across_opsets() {
    let c = Graph::new(11)
        .input("x", 1, &[1, 3, 1])
        .push(node(
            "Squeeze",
            &["x"],
            &["s"],
            vec![attr_ints("axes", &[-1])],
        ))
        .push(node(
            "Unsqueeze",
            &["s"],
            &["y"],
            vec![attr_ints("axes", &[0, 3])],
        ))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([1, 3])
    );
    let last = c.graph.nodes.last().unwrap();
    assert_eq!(last.options["newShape"], serde_json::json!([1, 1, 3, 1]));
    let e = refusal(
        Graph::new(13)
            .input("x", 1, &[2, 3])
            .init(int64_vector("ax", &[0]))
            .push(node("Squeeze", &["x", "ax"], &["y"], vec![]))
            .untyped_output("y")
            .convert(),
    );
    assert!(e.contains("axis 0 of shape [2, 3] has size 2"), "{e}");
}

#[test]
fn gather_indices_constant_normalized_or_wrapped_in_the_graph() {
    let c = Graph::new(13)
        .input("x", 1, &[4, 3])
        .init(int64_vector("i", &[-1, 0]))
        .push(node("Gather", &["x", "i"], &["y"], vec![]))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["gather"]);
    let idx = &c.graph.nodes[0].inputs[1];
    assert_eq!(c.graph.consts[idx.as_str()].shape, [2]);
    let c = Graph::new(13)
        .input("x", 1, &[4, 3])
        .input("i", 7, &[2])
        .push(node(
            "Gather",
            &["x", "i"],
            &["y"],
            vec![attr_int("axis", 1)],
        ))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["lesser", "add", "where", "gather"]);
    let e = refusal(
        Graph::new(13)
            .input("x", 1, &[4, 3])
            .init(int64_vector("i", &[4]))
            .push(node("Gather", &["x", "i"], &["y"], vec![]))
            .untyped_output("y")
            .convert(),
    );
    assert!(e.contains("holds 4, out of range"), "{e}");
}

#[test]
fn pad_negative_crops_and_wrap_is_refused() {
    let c = Graph::new(13)
        .input("x", 1, &[1, 4])
        .init(int64_vector("p", &[0, -1, 0, 2]))
        .push(node(
            "Pad",
            &["x", "p"],
            &["y"],
            vec![attr_string("mode", "reflect")],
        ))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["slice", "pad"]);
    assert_eq!(option(&c, "pad", "mode"), &serde_json::json!("reflection"));
    assert_eq!(
        option(&c, "pad", "endingPadding"),
        &serde_json::json!([0, 2])
    );
    let e = refusal(
        Graph::new(19)
            .input("x", 1, &[1, 4])
            .init(int64_vector("p", &[0, 1, 0, 1]))
            .push(node(
                "Pad",
                &["x", "p"],
                &["y"],
                vec![attr_string("mode", "wrap")],
            ))
            .untyped_output("y")
            .convert(),
    );
    assert!(e.contains("mode \"wrap\" is not supported"), "{e}");
}

#[test]
fn cast_folds_exactly_and_casts_to_bool_by_comparison() {
    let big = (1i64 << 60) + 1;
    let c = Graph::new(13)
        .init(int64_vector("v", &[big]))
        .push(node("Cast", &["v"], &["w"], vec![attr_int("to", 7)]))
        .push(node("Range", &["z", "n", "one"], &["r"], vec![]))
        .init(scalar_init("z", 0))
        .init(scalar_init("n", 5))
        .init(scalar_init("one", 2))
        .untyped_output("w")
        .untyped_output("r")
        .convert()
        .unwrap();
    assert_eq!(const_output(&c, "r"), [3]);
    let c = Graph::new(13)
        .input("x", 1, &[3])
        .push(node("Cast", &["x"], &["y"], vec![attr_int("to", 9)]))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(ops(&c), ["notEqual"]);
    let e = refusal(
        Graph::new(13)
            .input("x", 1, &[3])
            .push(node("Cast", &["x"], &["y"], vec![attr_int("to", 11)]))
            .untyped_output("y")
            .convert(),
    );
    assert!(e.contains("to double is not supported"), "{e}");
}

#[test]
fn constant_of_shape_and_expand_fold() {
    let c = Graph::new(13)
        .init(int64_vector("s", &[2, 3]))
        .push(node("ConstantOfShape", &["s"], &["y"], vec![]))
        .push(node("Expand", &["y", "t"], &["z"], vec![]))
        .init(int64_vector("t", &[4, 1, 1]))
        .untyped_output("z")
        .convert()
        .unwrap();
    assert_eq!(const_output(&c, "z"), [4, 2, 3]);
}

#[test]
fn reshape_rules_and_errors() {
    let c = Graph::new(14)
        .input("x", 1, &[2, 3, 4])
        .init(int64_vector("s", &[0, -1]))
        .push(node("Reshape", &["x", "s"], &["y"], vec![]))
        .untyped_output("y")
        .convert()
        .unwrap();
    assert_eq!(
        option(&c, "reshape", "newShape"),
        &serde_json::json!([2, 12])
    );
    let e = refusal(
        Graph::new(14)
            .input("x", 1, &[2, 3, 4])
            .init(int64_vector("s", &[5, -1]))
            .push(node("Reshape", &["x", "s"], &["y"], vec![]))
            .untyped_output("y")
            .convert(),
    );
    assert!(e.contains("cannot take the 24 elements"), "{e}");
    let e = refusal(
        Graph::new(14)
            .input("x", 1, &[2, 3, 4])
            .input("s", 7, &[2])
            .push(node("Reshape", &["x", "s"], &["y"], vec![]))
            .untyped_output("y")
            .convert(),
    );
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
        Graph::new(13)
            .input("x", 1, &[1, 1, 3, 3])
            .init(scales.clone())
            .push(node(
                "Resize",
                &["x", "", "sc"],
                &["y"],
                vec![
                    attr_string("coordinate_transformation_mode", coord),
                    attr_string("mode", mode),
                ],
            ))
            .untyped_output("y")
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
    let e = refusal(model("align_corners", "linear"));
    assert!(
        e.contains("coordinate_transformation_mode \"align_corners\""),
        "{e}"
    );
}

#[test]
fn depth_to_space_and_transpose() {
    let c = Graph::new(13)
        .input("x", 1, &[1, 8, 2, 3])
        .push(node(
            "DepthToSpace",
            &["x"],
            &["d"],
            vec![attr_int("blocksize", 2)],
        ))
        .push(node("Transpose", &["d"], &["y"], vec![]))
        .untyped_output("y")
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
    let c = Graph::new(13)
        .input("x", 1, &[4])
        .init(int64_vector("s", &[0, 4, 0]))
        .push(node("Split", &["x", "s"], &["a", "b", "c"], vec![]))
        .untyped_output("b")
        .convert()
        .unwrap();
    assert!(!ops(&c).contains(&"split"), "{:?}", ops(&c));
}
