//! The table's reading of GraphJson, as rustnn 0.6.0's `webnn_json` reads it, and every
//! problem it reports before a page runs.

use serde_json::{json, Value};
use webnn_weights_runtime::{parse_webnn, GraphJson};
use webnn_weights_web::WebGraph;

fn graph(nodes: &str) -> GraphJson {
    let text = format!(
        r#"webnn_graph "t" v1 {{
  inputs {{ x: f32[1, 3, 4, 4]; y: f32[1, 3, 4, 4]; i: i32[2]; }}
  consts {{ w: f32[3, 3, 3, 3] @weights("w"); b: f32[3] @weights("b"); s: f32[] @scalar(0.5); }}
  nodes {{ {nodes} }}
  outputs {{ out; }}
}}"#
    );
    parse_webnn(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The lowered program's calls, as JSON.
fn calls(nodes: &str) -> Vec<Value> {
    let program = WebGraph::new(&graph(nodes)).unwrap_or_else(|e| panic!("{nodes}: {e}"));
    let value: Value = serde_json::from_str(&program.to_json()).unwrap();
    value["nodes"].as_array().unwrap().clone()
}

fn problems(nodes: &str) -> Vec<String> {
    WebGraph::new(&graph(nodes))
        .expect_err(nodes)
        .problems()
        .to_vec()
}

#[test]
fn rustnns_writer_single_outputs_and_operand_options() {
    // rustnn 0.6.0's writer: `[y] = op(...)` for a single output, operand options by name,
    // empty strings and nulls for absent values.
    let c = calls(
        r#"[c] = conv2d(x, w, bias="b", padding=[1, 1, 1, 1], strides=[1, 1], groups=1, inputLayout="nchw", filterLayout="oihw");
           [out] = averagePool2d(c, windowDimensions=[2, 2], layout="", outputSizes=null, outputShapeRounding="floor");"#,
    );
    assert_eq!(c[0]["method"], "conv2d");
    assert_eq!(c[0]["outputs"], json!(["c"]));
    assert_eq!(c[0]["sequence"], false);
    assert_eq!(
        c[0]["args"],
        json!([
            {"operand": "x"}, {"operand": "w"},
            {"options": {"bias": {"operand": "b"}, "padding": [1, 1, 1, 1], "strides": [1, 1],
                         "groups": 1, "inputLayout": "nchw", "filterLayout": "oihw"}}
        ])
    );
    // layout="" and outputSizes=null are absent; the rounding goes under both spellings.
    assert_eq!(
        c[1]["args"][1],
        json!({"options": {"windowDimensions": [2, 2], "outputShapeRounding": "floor", "roundingType": "floor"}})
    );
}

#[test]
fn positional_parameters_come_from_the_options() {
    let c = calls(
        r#"r = reshape(x, newShape=[3, 16]);
           sl = slice(r, starts=[0, 2], sizes=[3, 4], strides=[1, 2]);
           k = cast(sl, to="int32");
           m = softmax(r, axis=1);
           cc = concat(x, y, axis=1);
           p = pad(x, beginningPadding=[0, 0, 1, 1], endingPadding=[0, 0, 1, 1], mode="edge");
           t = tile(i, repetitions=[2]);
           e = expand(s, newShape=[2, 2]);
           a = argMax(m, axis=1, keepDimensions=true);
           cs = cumulativeSum(m, axis=0, reversed=true);
           out = identity(cc);"#,
    );
    let args = |i: usize| c[i]["args"].clone();
    assert_eq!(
        args(0),
        json!([{"operand": "x"}, {"value": [3, 16]}, {"options": {}}])
    );
    assert_eq!(
        args(1),
        json!([{"operand": "r"}, {"value": [0, 2]}, {"value": [3, 4]}, {"options": {"strides": [1, 2]}}])
    );
    assert_eq!(
        args(2),
        json!([{"operand": "sl"}, {"value": "int32"}, {"options": {}}])
    );
    assert_eq!(
        args(3),
        json!([{"operand": "r"}, {"value": 1}, {"options": {}}])
    );
    // concat's inputs are one sequence, its axis positional.
    assert_eq!(
        args(4),
        json!([{"operands": ["x", "y"]}, {"value": 1}, {"options": {}}])
    );
    assert_eq!(
        args(5),
        json!([{"operand": "x"}, {"value": [0, 0, 1, 1]}, {"value": [0, 0, 1, 1]}, {"options": {"mode": "edge"}}])
    );
    assert_eq!(
        args(6),
        json!([{"operand": "i"}, {"value": [2]}, {"options": {}}])
    );
    assert_eq!(
        args(7),
        json!([{"operand": "s"}, {"value": [2, 2]}, {"options": {}}])
    );
    assert_eq!(
        args(8),
        json!([{"operand": "m"}, {"value": 1}, {"options": {"keepDimensions": true}}])
    );
    assert_eq!(
        args(9),
        json!([{"operand": "m"}, {"value": 0}, {"options": {"reversed": true}}])
    );
}

#[test]
fn rustnns_defaults_where_webnn_has_none_or_another() {
    let c = calls(
        r#"m = softmax(x);
           cc = concat(x, y);
           k = cast(x);
           [h] = gru(x, w, w, steps=1, hiddenSize=3);
           out = argMin(x);"#,
    );
    // rustnn reads a missing axis as 0 and a missing cast type as float32.
    assert_eq!(c[0]["args"][1], json!({"value": 0}));
    assert_eq!(c[1]["args"][1], json!({"value": 0}));
    assert_eq!(c[2]["args"][1], json!({"value": "float32"}));
    assert_eq!(c[4]["args"][1], json!({"value": 0}));
    // GRU: rustnn resets after by default (WebNN's default is the other way).
    assert_eq!(c[3]["args"][5], json!({"options": {"resetAfter": false}}));
    assert_eq!(c[3]["sequence"], true);
}

#[test]
fn inputs_rustnn_reads_as_options() {
    let c = calls(
        r#"out = conv2d(x, w, b, padding=[1, 1, 1, 1]);
           q = dequantizeLinear(x, s);"#,
    );
    assert_eq!(c[0]["args"][2]["options"]["bias"], json!({"operand": "b"}));
    // rustnn 0.6.0's writer gives a conv2d's bias as third input and as option.
    let c2 = calls(r#"[out] = conv2d(x, w, b, bias="b");"#);
    assert_eq!(
        c2[0]["args"],
        c[0]["args"]
            .as_array()
            .map(|a| {
                let mut a = a.clone();
                a[2] = json!({"options": {"bias": {"operand": "b"}}});
                Value::Array(a)
            })
            .unwrap()
    );
    let found = problems(r#"out = conv2d(x, w, b, bias="s");"#);
    assert!(
        found[0]
            .contains("input 3 (\"b\") and option bias=\"s\" give two different values of bias"),
        "{found:?}"
    );
    // A missing zero point is null: the builder's adapter supplies zeros.
    assert_eq!(c[1]["args"][2], Value::Null);
    assert_eq!(c[1]["adapter"], "quantize");
    assert_eq!(calls("out = round(x);")[0]["method"], "roundEven");
}

#[test]
fn multi_output_operations_bind_outputs_in_order() {
    let c = calls(
        r#"[a, b2, c] = split(x, splits=[1, 1, 2], axis=3);
           [d, e] = split(x, splits=2, axis=2);
           [h, hs] = gru(x, w, w, steps=1, hiddenSize=3, returnSequence=true);
           [lh, lc] = lstm(x, w, w, steps=1, hiddenSize=3);
           [ch, cc] = lstmCell(x, w, w, y, y, hiddenSize=3);
           out = add(a, d);"#,
    );
    assert_eq!(c[0]["outputs"], json!(["a", "b2", "c"]));
    assert_eq!(c[0]["args"][1], json!({"value": [1, 1, 2]}));
    assert_eq!(c[1]["outputs"], json!(["d", "e"]));
    assert_eq!(c[2]["outputs"], json!(["h", "hs"]));
    assert!(c.iter().take(5).all(|call| call["sequence"] == true));
}

#[test]
fn every_problem_is_reported_at_once_naming_its_node() {
    let found = problems(
        r#"a = relu(x, alpah=1);
           bb = frobnicate(x);
           c = squeeze(x, axes=[0]);
           d = reshape(x);
           e = add(x, y, w);
           f = conv2d(x, w, padding=[1, -1]);
           g = mul(x, later);
           [h1, h2] = split(x, splits=[1, 1, 2], axis=3);
           k = relu(x, label=3);
           out = gemm(x, y, c="nowhere", bTranspose="yes");"#,
    );
    let expected = [
        "node \"a\" (relu): unknown option \"alpah\"",
        "node \"bb\" (frobnicate): unknown operation \"frobnicate\"",
        "node \"c\" (squeeze): \"squeeze\" is no WebNN operation (fix: write it as reshape",
        "node \"d\" (reshape): newShape is missing; reshape takes it as a positional argument (fix: add newShape=",
        "node \"e\" (add): 3 inputs, add takes 2 inputs",
        "node \"f\" (conv2d): padding=[1,-1]: expected an array of unsigned integers",
        "node \"g\" (mul): input b \"later\" is not defined before this node",
        "node \"h1\" (split): 2 output names, split returns 3 here",
        "node \"k\" (relu): label=3: expected a string",
        "node \"out\" (gemm): option c \"nowhere\" is not defined before this node",
        "node \"out\" (gemm): bTranspose=\"yes\": expected true or false",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (problem, start) in found.iter().zip(expected) {
        assert!(
            problem.starts_with(start),
            "{problem:?} should start with {start:?}"
        );
    }
}

#[test]
fn options_webnn_does_not_have_are_refused() {
    // rustnn drops matmul's bTranspose without a word; WebNN's matmul has no options.
    let found = problems("out = matmul(x, y, bTranspose=true);");
    assert_eq!(found.len(), 1);
    assert!(
        found[0].contains("unknown option \"bTranspose\"; matmul reads only label"),
        "{found:?}"
    );
    let found = problems("out = gather(x, i, batchDimensions=1);");
    assert!(found[0].contains("WebNN's gather has no batch dimensions"));
    assert!(
        calls("out = gather(x, i, batchDimensions=0, axis=1);")[0]["args"][2]["options"]
            .get("batchDimensions")
            .is_none()
    );
}

#[test]
fn misspelt_operations_get_a_suggestion() {
    let found = problems("out = lesserOrEquals(x, y);");
    assert!(
        found[0].contains("did you mean \"lesserOrEqual\"?"),
        "{found:?}"
    );
}

#[test]
fn dynamic_inputs_and_graphs_without_outputs_are_refused() {
    let g = parse_webnn(
        r#"webnn_graph "t" v1 { inputs { x: f32[dyn("batch", 8), 4]; } nodes { y = relu(x); } outputs { y; } }"#,
    )
    .unwrap();
    let e = WebGraph::new(&g).unwrap_err();
    assert!(e.problems()[0].starts_with("input \"x\": dimension dyn(\"batch\", 8) is dynamic"));
    let g = parse_webnn(r#"webnn_graph "t" v1 { inputs { x: f32[4]; } }"#).unwrap();
    let e = WebGraph::new(&g).unwrap_err();
    assert!(e.to_string().contains("the graph has no outputs"));
}

#[test]
fn scalars_expand_as_rustnn_does() {
    let g = parse_webnn(
        r#"webnn_graph "t" v1 {
  inputs { x: i8[3]; }
  consts { k: i8[3] @scalar(-2.7); f: f16[2] @scalar(1.5); }
  nodes { out = add(x, k); }
  outputs { out; }
}"#,
    )
    .unwrap();
    let program: Value = serde_json::from_str(&WebGraph::new(&g).unwrap().to_json()).unwrap();
    let bytes = |name: &str| {
        let c = program["constants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone();
        c["bytes"].as_str().unwrap().to_string()
    };
    // -2.7 as f32, then `as i8` (truncation): -2 = 0xfe, three times.
    assert_eq!(bytes("k"), "/v7+");
    // 1.5 as f16 is 0x3e00, little-endian, twice.
    assert_eq!(bytes("f"), "AD4APg==");
}

#[test]
fn digests_are_set_per_reference() {
    let g = graph("out = add(x, y);");
    let mut program = WebGraph::new(&g).unwrap();
    assert_eq!(program.references(), ["b", "w"]);
    program.set_digests(|r| (r == "w").then_some([0xab; 32]));
    let value: Value = serde_json::from_str(&program.to_json()).unwrap();
    let constants = value["constants"].as_array().unwrap();
    let w = constants.iter().find(|c| c["name"] == "w").unwrap();
    assert_eq!(w["sha256"], "ab".repeat(32));
    assert!(constants.iter().find(|c| c["name"] == "b").unwrap()["sha256"].is_null());
}
