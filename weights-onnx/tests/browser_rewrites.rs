//! Rewrites for what WebNN allows and Chromium's CPU backend refuses (8-bit and uint32
//! arithmetic and comparisons computed in a wider type, gatherElements of computed indices as
//! a gather, int32 scatter indices), graph inputs and constants without elements, and the
//! other fixes found by the browser node tests: small models converted, their operations and
//! types checked, and every graph accepted by the WebNN table.

mod common;

use common::*;
use webnn_weights_onnx::proto::TensorProto;
use webnn_weights_onnx::Conversion;

/// The WebNN type of every operand an `op` node reads, by the operands' declarations.
fn types_into(c: &Conversion, op: &str) -> Vec<String> {
    let g = webnn_weights_web::WebGraph::new(&c.graph).unwrap();
    let _ = g;
    let mut out = Vec::new();
    for n in c.graph.nodes.iter().filter(|n| n.op.as_str() == op) {
        for i in &n.inputs {
            out.push(type_of(c, i.as_str()));
        }
    }
    out
}

/// The data type of operand `name`: an input's or constant's, else the `to` of the cast that
/// made it, else its first input's.
fn type_of(c: &Conversion, name: &str) -> String {
    if let Some(d) = c.graph.inputs.get(name) {
        return d.data_type.json_name().to_string();
    }
    if let Some(d) = c.graph.consts.get(name) {
        return d.data_type.json_name().to_string();
    }
    let n = c
        .graph
        .nodes
        .iter()
        .find(|n| n.produced().iter().any(|p| p.as_str() == name))
        .unwrap_or_else(|| panic!("no producer of {name}"));
    match n.op.as_str() {
        "cast" => n.options["to"].as_str().unwrap().to_string(),
        "equal" | "greater" | "greaterOrEqual" | "lesser" | "lesserOrEqual" | "notEqual" => {
            "uint8".into()
        }
        "where" => type_of(c, n.inputs[1].as_str()),
        _ => type_of(c, n.inputs[0].as_str()),
    }
}

#[test]
fn small_integer_arithmetic_is_computed_wider() {
    for (elem, op) in [
        (INT8, "Add"),
        (UINT8, "Sub"),
        (INT8, "Mul"),
        (UINT8, "Div"),
        (UINT32, "Add"),
        (UINT32, "Sub"),
    ] {
        let c = Graph::new(21)
            .input("a", elem, &[2, 3])
            .input("b", elem, &[3])
            .output("y")
            .node(op, &["a", "b"], &["y"])
            .ok();
        let webnn = op.to_lowercase();
        let wide = if elem == UINT32 { "int64" } else { "float32" };
        assert_eq!(types_into(&c, &webnn)[..2], [wide, wide], "{op} of {elem}");
        // cast back to the model's type at the end
        assert_eq!(ops(&c).last(), Some(&"cast"), "{op}: {:?}", ops(&c));
    }
    // int8 division truncates toward zero, then wraps (-128 / -1)
    let c = Graph::new(21)
        .input("a", INT8, &[4])
        .input("b", INT8, &[4])
        .output("y")
        .node("Div", &["a", "b"], &["y"])
        .ok();
    for op in ["ceil", "floor", "where"] {
        assert!(ops(&c).contains(&op), "{:?}", ops(&c));
    }
    // uint32 multiplication stays (Chromium has it)
    let c = Graph::new(21)
        .input("a", UINT32, &[4])
        .input("b", UINT32, &[4])
        .output("y")
        .node("Mul", &["a", "b"], &["y"])
        .ok();
    assert_eq!(ops(&c), ["mul"]);
}

#[test]
fn small_integer_comparisons_are_computed_wider() {
    for (elem, wide) in [(INT8, "int32"), (UINT8, "int32"), (UINT32, "int64")] {
        for op in ["Equal", "Greater", "LessOrEqual"] {
            let c = Graph::new(21)
                .input("a", elem, &[3])
                .input("b", elem, &[3])
                .output("y")
                .node(op, &["a", "b"], &["y"])
                .ok();
            let webnn = match op {
                "Equal" => "equal",
                "Greater" => "greater",
                _ => "lesserOrEqual",
            };
            assert_eq!(types_into(&c, webnn), [wide, wide], "{op} of {elem}");
            assert_eq!(ops(&c).last(), Some(&webnn));
        }
    }
    // bool equality compares int32
    let c = Graph::new(21)
        .input("a", BOOL, &[3])
        .input("b", BOOL, &[3])
        .output("y")
        .node("Equal", &["a", "b"], &["y"])
        .ok();
    assert_eq!(types_into(&c, "equal"), ["int32", "int32"]);
    // uint32 max and min through int64; int32 untouched
    let c = Graph::new(21)
        .input("a", UINT32, &[3])
        .input("b", UINT32, &[3])
        .output("y")
        .node("Max", &["a", "b"], &["y"])
        .ok();
    assert_eq!(types_into(&c, "max"), ["int64", "int64"]);
    let c = Graph::new(21)
        .input("a", INT32, &[3])
        .input("b", INT32, &[3])
        .output("y")
        .node("Add", &["a", "b"], &["y"])
        .ok();
    assert_eq!(ops(&c), ["add"]);
}

#[test]
fn gather_elements_of_computed_indices_is_a_flat_gather() {
    let c = Graph::new(21)
        .input("x", FLOAT, &[3, 4])
        .input("i", INT64, &[3, 2])
        .output("y")
        .node("GatherElements", &["x", "i"], &["y"])
        .attr(attr_int("axis", 1))
        .ok();
    assert!(!ops(&c).contains(&"gatherElements"), "{:?}", ops(&c));
    let g = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == "gather")
        .unwrap();
    assert_eq!(g.options["axis"], 0);
    // the indices are int32 and one-dimensional; the result is reshaped to theirs
    assert_eq!(type_of(&c, g.inputs[1].as_str()), "int32");
    assert_eq!(ops(&c).last(), Some(&"reshape"));
    // constant indices keep gatherElements (Chromium has it for them)
    let c = Graph::new(21)
        .input("x", FLOAT, &[3, 4])
        .init(int64s("i", &[1, 4], &[0, 2, -1, 1]))
        .output("y")
        .node("GatherElements", &["x", "i"], &["y"])
        .ok();
    assert_eq!(ops(&c), ["gatherElements"]);
}

#[test]
fn computed_scatter_indices_are_int32_tuples() {
    let c = Graph::new(21)
        .input("x", FLOAT, &[3, 4])
        .input("i", INT64, &[2, 4])
        .input("u", FLOAT, &[2, 4])
        .output("y")
        .node("ScatterElements", &["x", "i", "u"], &["y"])
        .attr(attr_int("axis", 0))
        .ok();
    assert!(!ops(&c).contains(&"scatterElements"), "{:?}", ops(&c));
    let s = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == "scatterND")
        .unwrap();
    assert_eq!(type_of(&c, s.inputs[1].as_str()), "int32");
    let c = Graph::new(21)
        .input("x", FLOAT, &[3, 4])
        .input("i", INT64, &[2, 1])
        .input("u", FLOAT, &[2, 4])
        .output("y")
        .node("ScatterND", &["x", "i", "u"], &["y"])
        .ok();
    let s = c
        .graph
        .nodes
        .iter()
        .find(|n| n.op.as_str() == "scatterND")
        .unwrap();
    assert_eq!(type_of(&c, s.inputs[1].as_str()), "int32");
}

#[test]
fn strided_slices_give_webnn_the_extent_read() {
    // x[20:0:-1, 10:0:-3, 4:1:-2] of [20, 10, 5] is [19, 3, 2]
    let c = Graph::new(21)
        .input("x", FLOAT, &[20, 10, 5])
        .init(int64_vector("s", &[20, 10, 4]))
        .init(int64_vector("e", &[0, 0, 1]))
        .init(int64_vector("a", &[0, 1, 2]))
        .init(int64_vector("p", &[-1, -3, -2]))
        .output("y")
        .node("Slice", &["x", "s", "e", "a", "p"], &["y"])
        .ok();
    assert_eq!(ops(&c), ["reverse", "slice"]);
    let s = &c.graph.nodes[1].options;
    assert_eq!(s["strides"], serde_json::json!([1, 3, 2]));
    // 19 elements of stride 1, 3 of stride 3 (extent 7), 2 of stride 2 (extent 3)
    assert_eq!(s["sizes"], serde_json::json!([19, 7, 3]));
    assert_eq!(s["starts"], serde_json::json!([0, 0, 0]));
}

#[test]
fn lp_normalization_of_zeros_is_zero() {
    let c = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .output("y")
        .node("LpNormalization", &["x"], &["y"])
        .attr(attr_int("axis", 0))
        .ok();
    assert_eq!(ops(&c), ["reduceL2", "equal", "where", "div"]);
}

#[test]
fn empty_inputs_and_constants_are_refused_by_name() {
    let e = Graph::new(21)
        .input("x", FLOAT, &[2, 0, 4])
        .init(int64_vector("pads", &[0, 1, 0, 0, 1, 0]))
        .output("y")
        .node("Pad", &["x", "pads"], &["y"])
        .convert()
        .unwrap_err();

    let p = e.problems().last().unwrap();
    assert!(p.message.contains("[2, 0, 4]"), "{}", p.message);
    assert!(
        p.message.contains("WebNN has no empty tensors"),
        "{}",
        p.message
    );
    // the harness (and any caller) can give the empty value as a constant
    assert_eq!(e.inputs_needed_as_constants(), ["x"]);
    assert_eq!(e.problems().len(), 1, "{e}");
    // an empty input only the type of which is read is left out
    let c = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .input("like", INT32, &[0])
        .output("y")
        .node("CastLike", &["x", "like"], &["y"])
        .ok();
    assert_eq!(c.inputs.len(), 1);
    // an empty input nothing reads is left out
    let c = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .input("unused", FLOAT, &[0])
        .output("y")
        .node("Relu", &["x"], &["y"])
        .ok();
    assert_eq!(c.inputs.len(), 1);
    // an empty output
    let e = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .init(int64_vector("s", &[0]))
        .init(int64_vector("e", &[0]))
        .output("y")
        .node("Slice", &["x", "s", "e"], &["y"])
        .err();
    assert!(
        e.contains("output \"y\" has shape [0, 3], with no elements: WebNN has no empty tensors"),
        "{e}"
    );
}

#[test]
fn eight_bit_max_pools_pool_float32() {
    let c = Graph::new(21)
        .input("x", UINT8, &[1, 1, 4, 4])
        .output("y")
        .node("MaxPool", &["x"], &["y"])
        .attr(attr_ints("kernel_shape", &[2, 2]))
        .ok();
    assert_eq!(ops(&c), ["cast", "maxPool2d", "cast"]);
    assert_eq!(types_into(&c, "maxPool2d"), ["float32"]);
    assert_eq!(c.graph.nodes[2].options["to"], "uint8");
}

#[test]
fn dropout_for_inference_is_the_identity() {
    let c = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .output("y")
        .output("mask")
        .node("Dropout", &["x"], &["y", "mask"])
        .ok();
    // both outputs bound through identities: the input and a constant mask of true
    assert_eq!(ops(&c), ["identity", "identity"]);
    let mask = c.graph.nodes[1].inputs[0].as_str();
    assert_eq!(c.graph.consts[mask].shape, [2, 3]);
    // training with a nonzero ratio is random: refused, naming the fix
    let e = Graph::new(21)
        .input("x", FLOAT, &[2, 3])
        .init(TensorProto {
            name: Some("t".into()),
            data_type: Some(BOOL),
            int32_data: vec![1],
            ..Default::default()
        })
        .output("y")
        .node("Dropout", &["x", "", "t"], &["y"])
        .err();
    assert!(e.contains("training_mode is true with ratio 0.5"), "{e}");
    assert!(e.contains("WebNN has no random numbers"), "{e}");
}
