//! Unit tests of the `.webnn` reader and writer.

use super::*;
use crate::graph::{ConstInit, Dimension, GraphJson};
use serde_json::json;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/format/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn format_reference_matches_webnn_graph_json() {
    let parsed = parse_webnn(&fixture("format_reference.webnn")).unwrap();
    let expected: GraphJson = serde_json::from_str(&fixture("format_reference.json")).unwrap();
    assert_eq!(parsed, expected);
    // Also byte for byte as compact JSON.
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        fixture("format_reference.json").trim_end()
    );
    let text = to_webnn_text(&parsed).unwrap();
    assert_eq!(parse_webnn(&text).unwrap(), parsed);
}

#[test]
fn spec_example() {
    let g = parse_webnn(
        r#"# comment to end of line
webnn_graph "name" v2 @quantized {
  inputs {
    x: f32[dyn("batch", 8), 4];
  }
  consts {
    w: f32[4, 4] @weights("encoder.weight");
    eps: f32[] @scalar(0.00001);
    mask: u8[4] @bytes([1, 1, 0, 0]);
    bias: f32[4];                      # no annotation = @weights("bias")
  }
  nodes {
    s = add(x, eps, metadata={kind: "ref", axes: [1], enabled: true});
    [a, b] = split(s, splits=[2, 2], axis=1);
    y = concat(a, b, axis=1);
  }
  outputs { y; }
}
"#,
    )
    .unwrap();
    assert_eq!(g.name.as_deref(), Some("name"));
    assert!(g.quantized);
    assert_eq!(
        g.inputs["x"].shape,
        [
            Dimension::Dynamic {
                name: "batch".into(),
                max_size: 8
            },
            Dimension::Static(4)
        ]
    );
    assert_eq!(
        g.consts["bias"].init,
        ConstInit::Weights {
            r#ref: "bias".into()
        }
    );
    assert_eq!(
        g.consts["eps"].init,
        ConstInit::Scalar {
            value: json!(0.00001)
        }
    );
    assert_eq!(g.nodes[1].id, "a");
    assert_eq!(g.nodes[1].outputs, Some(vec!["a".into(), "b".into()]));
    assert_eq!(g.nodes[2].outputs, None);
    assert_eq!(
        serde_json::Value::from(g.nodes[0].options.clone()),
        json!({"metadata": {"kind": "ref", "axes": [1], "enabled": true}})
    );
}

/// Parses `src`, expecting an error; returns (line, column, message).
fn err(src: &str) -> (usize, usize, String) {
    match parse_webnn(src) {
        Ok(g) => panic!("expected an error for {src:?}, got {g:?}"),
        Err(e) => (e.line(), e.column(), e.message().to_string()),
    }
}

/// Asserts the error location and that the message contains every key word.
#[track_caller]
fn assert_err(src: &str, line: usize, column: usize, words: &[&str]) {
    let (l, c, message) = err(src);
    assert_eq!((l, c), (line, column), "location of {message:?} in {src:?}");
    for word in words {
        assert!(
            message.contains(word),
            "message {message:?} lacks {word:?} (source {src:?})"
        );
    }
}

fn graph(body: &str) -> GraphJson {
    let src = format!("webnn_graph \"g\" v2 {{\n{body}\n}}\n");
    parse_webnn(&src).unwrap_or_else(|e| panic!("{e}\n--- source:\n{src}"))
}

fn node_options(body: &str) -> serde_json::Value {
    let g = graph(&format!("nodes {{ y = op({body}); }}"));
    serde_json::Value::from(g.nodes[0].options.clone())
}

// ---------------------------------------------------------------- grammar

#[test]
fn minimal_graph_and_header_forms() {
    let g = parse_webnn("webnn_graph \"\" v1 {}").unwrap();
    assert_eq!(g.name.as_deref(), Some(""));
    assert_eq!(g.version, 1);
    assert_eq!(g.format, "webnn-graph-json");
    assert!(!g.quantized);
    assert!(g.inputs.is_empty() && g.consts.is_empty() && g.nodes.is_empty());
    assert!(g.outputs.is_empty());
    // `v` and the number may be separated; `@quantized` is optional.
    let g = parse_webnn("webnn_graph \"q\" v 2 @quantized {}").unwrap();
    assert_eq!((g.version, g.quantized), (2, true));
    let g = parse_webnn("webnn_graph\"tight\"v2{}").unwrap();
    assert_eq!(g.name.as_deref(), Some("tight"));
}

#[test]
fn comments_everywhere_and_crlf() {
    let src = "# before the header\r\n\r\n# again\r\nwebnn_graph # after keyword\r\n \"c\" # x\r\n v2 { # open\r\n  inputs { # in\r\n    x: # colon\r\n f32[ # dims\r\n 2 ]; # end\r\n  } # close\r\n  outputs { x; } # outs\r\n} # trailing comment without newline";
    let g = parse_webnn(src).unwrap();
    assert_eq!(g.inputs["x"].shape, [Dimension::Static(2)]);
    assert_eq!(g.outputs["x"], "x");
    // Error positions count CRLF as one line break; the CR is not shown.
    let e = parse_webnn("webnn_graph \"g\" v2 {\r\n  inputs {\r\n    x: f99[1];\r\n  }\r\n}\r\n")
        .unwrap_err();
    assert_eq!((e.line(), e.column()), (3, 8));
    assert_eq!(e.source_line(), "    x: f99[1];");
}

#[test]
fn blocks_in_any_order_and_optional() {
    let g = graph("outputs { y; }\nnodes { y = relu(w); }\nconsts { w: f32[1]; }\ninputs { }");
    assert_eq!(g.nodes[0].inputs, ["w"]);
    assert_eq!(g.outputs["y"], "y");
    assert!(g.inputs.is_empty());
}

#[test]
fn identifiers_with_dollar_slash_and_dot() {
    let g = graph(
        "inputs { $in: f32[1]; /abs/path: f32[1]; }
         consts { _w.0/k: f32[1] @weights(\"model/layer.0\"); }
         nodes { $t/x.y = add($in, /abs/path, _w.0/k); }
         outputs { $t/x.y; }",
    );
    assert!(g.inputs.contains_key("$in") && g.inputs.contains_key("/abs/path"));
    assert_eq!(g.nodes[0].id, "$t/x.y");
    assert_eq!(g.nodes[0].inputs, ["$in", "/abs/path", "_w.0/k"]);
    assert_eq!(
        g.consts["_w.0/k"].init,
        ConstInit::Weights {
            r#ref: "model/layer.0".into()
        }
    );
}

#[test]
fn quoted_operand_references_are_unescaped() {
    let g = graph(r#"nodes { y = concat("a \"b\"", x, ["c\\d", "plain", z], axis=0); }"#);
    assert_eq!(g.nodes[0].inputs, ["a \"b\"", "x", "c\\d", "plain", "z"]);
    assert_eq!(g.nodes[0].options["axis"], 0);
}

#[test]
fn keywords_are_not_reserved() {
    let g = graph(
        "inputs { inputs: f32[1]; dyn: f32[1]; }
         nodes { nodes = add(inputs, dyn, outputs=consts); true = relu(\"true\"); }
         outputs { nodes; true; }",
    );
    assert_eq!(g.nodes[0].inputs, ["inputs", "dyn"]);
    assert_eq!(g.nodes[0].options["outputs"], "consts");
    assert_eq!(g.nodes[1].id, "true");
    assert_eq!(g.nodes[1].inputs, ["true"]);
}

#[test]
fn input_types_and_shapes() {
    let g = graph(
        "inputs {
           a: f16[]; b: i4[1]; c: u4[2, 3]; d: i32[0]; e: u32[4294967295];
           f: i64[dyn(\"n \\\"q\\\" \\\\\", 4294967295), 1]; g: u64[1]; h: i8[1]; i: u8[1]; j: f32[007];
         }",
    );
    use crate::DataType::*;
    let types: Vec<_> = g.inputs.values().map(|d| d.data_type).collect();
    assert_eq!(
        types,
        [Float16, Int4, Uint4, Int32, Uint32, Int64, Uint64, Int8, Uint8, Float32]
    );
    assert!(g.inputs["a"].shape.is_empty());
    assert_eq!(g.inputs["e"].shape, [Dimension::Static(u32::MAX)]);
    assert_eq!(g.inputs["j"].shape, [Dimension::Static(7)]);
    assert_eq!(
        g.inputs["f"].shape[0],
        Dimension::Dynamic {
            name: "n \"q\" \\".into(),
            max_size: u32::MAX
        }
    );
}

#[test]
fn constant_annotations() {
    let g = graph(
        "consts {
           w: f32[2, 2] @weights(\"enc\\\\w \\\"x\\\"\");
           d: i8[3];
           s: f32[] @scalar(-2.5e-3);
           i: i64[] @scalar(-7);
           h: u64[] @scalar(18446744073709551615);
           e: f32[] @scalar(1E+2);
           b: u4[3] @bytes([0, 255]);
           z: u8[0] @bytes([]);
         }",
    );
    let init = |name: &str| g.consts[name].init.clone();
    assert_eq!(
        init("w"),
        ConstInit::Weights {
            r#ref: "enc\\w \"x\"".into()
        }
    );
    assert_eq!(g.consts["w"].shape, [2, 2]);
    assert_eq!(init("d"), ConstInit::Weights { r#ref: "d".into() });
    assert_eq!(
        init("s"),
        ConstInit::Scalar {
            value: json!(-2.5e-3)
        }
    );
    assert_eq!(init("i"), ConstInit::Scalar { value: json!(-7) });
    // Beyond i64: a float (the format's rule).
    assert_eq!(
        init("h"),
        ConstInit::Scalar {
            value: json!(18446744073709551615.0)
        }
    );
    assert_eq!(
        init("e"),
        ConstInit::Scalar {
            value: json!(100.0)
        }
    );
    assert_eq!(
        init("b"),
        ConstInit::InlineBytes {
            bytes: vec![0, 255].into()
        }
    );
    assert_eq!(
        init("z"),
        ConstInit::InlineBytes {
            bytes: vec![].into()
        }
    );
    assert!(g.consts["s"].shape.is_empty());
}

#[test]
fn numbers_are_integers_or_floats() {
    let v = node_options(
        "a=0, b=-0, c=9223372036854775807, d=-9223372036854775808, e=9223372036854775808,
         f=1.0, g=1e3, h=-0.0, i=1e-400, j=0.1",
    );
    assert!(v["a"].is_i64() && v["b"].is_i64() && v["c"].is_i64() && v["d"].is_i64());
    assert_eq!(v["c"], json!(i64::MAX));
    assert_eq!(v["d"], json!(i64::MIN));
    assert!(v["e"].is_f64());
    assert_eq!(v["e"].as_f64(), Some(9223372036854775808.0));
    assert!(v["f"].is_f64() && v["g"].is_f64() && v["h"].is_f64());
    assert_eq!(v["g"].as_f64(), Some(1000.0));
    // Underflow to zero is not an overflow.
    assert_eq!(v["i"].as_f64(), Some(0.0));
    assert_eq!(v["j"].as_f64(), Some(0.1));
}

#[test]
fn option_values_nested() {
    let v = node_options(
        "ident=relu, s=\"a \\\"b\\\"\", t=true, f=false, n=null, e=[], o={},
         nested=[1, [2.5, [x, \"y\"]], {k: [null]}],
         obj={plain: 1, \"quoted key\": {inner: [true]}, \"\": 0}",
    );
    assert_eq!(
        v,
        json!({
            "ident": "relu", "s": "a \"b\"", "t": true, "f": false, "n": null,
            "e": [], "o": {},
            "nested": [1, [2.5, ["x", "y"]], {"k": [null]}],
            "obj": {"plain": 1, "quoted key": {"inner": [true]}, "": 0}
        })
    );
}

#[test]
fn positional_arguments() {
    let g = graph(
        "nodes {
           a = concat([x, \"y z\", w], \"q\", r, axis=0);
           b = noinputs();
           c = only(axis=1);
           d = empty_list([], k);
         }",
    );
    assert_eq!(g.nodes[0].inputs, ["x", "y z", "w", "q", "r"]);
    assert_eq!(g.nodes[0].options["axis"], 0);
    assert!(g.nodes[1].inputs.is_empty() && g.nodes[1].options.is_empty());
    assert!(g.nodes[2].inputs.is_empty());
    assert_eq!(g.nodes[3].inputs, ["k"]);
}

#[test]
fn repeated_options_are_shared_and_read_as_if_read_anew() {
    let g = graph(
        "nodes {
           a = add(x, c, alpha=0.5, axes=[0, 1]);
           b = mul(a, c, alpha=0.5, axes=[0, 1]);
           d = add(b, c, alpha=0.5, axes=[0, 1]);
           e = add(d, c, alpha=0.5, axes=[0, 1] # a comment makes other text
           );
           f = add(e, c, alpha=0.5, axes=[0, 12]);
           g = add(f, c, alpha=0.5, axes=[0, 1], beta=2);
           h = add(g, c, alpha=0.5, axes=[0, 1]);
           [i, j] = split(h, axis=1);
           k = add(i, j, alpha=0.5, axes=[0, 1]);
           l = add(k, alpha=0.5, axes=[0, 1], c);
           m = add(l, alpha=0.5, axes=[0, 1], c);
           n = add(m, \"q\", alpha=0.5, axes=[0, 1]);
         }",
    );
    let id = |name: &str| g.nodes.iter().position(|n| n.id == name).unwrap();
    let options = |name: &str| &g.nodes[id(name)].options;
    let common = json!({"alpha": 0.5, "axes": [0, 1]});
    for name in ["a", "b", "d", "e", "h", "k", "l", "m", "n"] {
        assert_eq!(
            serde_json::Value::from(options(name).clone()),
            common,
            "{name}"
        );
    }
    assert_eq!(
        serde_json::Value::from(options("f").clone()),
        json!({"alpha": 0.5, "axes": [0, 12]})
    );
    assert_eq!(
        serde_json::Value::from(options("g").clone()),
        json!({"alpha": 0.5, "axes": [0, 1], "beta": 2})
    );
    // The same text shares, whatever the operation; another text, or options with an
    // operand after them are read anew.
    for name in ["b", "d", "h", "k", "n"] {
        assert!(options(name).shares_with(options("a")), "{name}");
    }
    for name in ["e", "f", "g", "l", "m"] {
        assert!(!options(name).shares_with(options("a")), "{name}");
    }
    assert!(
        !options("m").shares_with(options("l")),
        "an operand after them"
    );
    // Operand references all read, wherever they stand.
    assert_eq!(g.nodes[id("l")].inputs, ["k", "c"]);
    assert_eq!(g.nodes[id("m")].inputs, ["l", "c"]);
    assert_eq!(g.nodes[id("n")].inputs, ["m", "q"]);
    // A shared value changed in one node stays as it was in the others.
    let mut changed = g.clone();
    let a = id("a");
    *changed.nodes[a].options.get_mut("alpha").unwrap() = json!(9);
    assert_eq!(changed.nodes[id("d")].options["alpha"], 0.5);
    assert_eq!(changed.nodes[a].options["alpha"], 9);
}

#[test]
fn errors_after_shared_options_point_where_they_are() {
    // The reader skips the text of repeated options: what follows is still located
    // exactly, on its line and column.
    assert_err(
        "webnn_graph \"g\" v2 {\nnodes {\n  a = op(x, k=[1, 2]);\n  b = op(a, k=[1, 2]); c = op(b, k=[1, 2]) d\n}\n}\n",
        4,
        44,
        &["`;`"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\nnodes {\n  a = op(x, k=[1, 2]);\n  b = op(a, k=[1, 2]);\n  c = op(b, k=[1, 2], k=3);\n}\n}\n",
        5,
        23,
        &["`k` given twice"],
    );
}

#[test]
fn multi_output_statements() {
    let g = graph("nodes { [a] = one(x); [b, c, d] = split(x, splits=3); e = relu(a); }");
    assert_eq!(g.nodes[0].id, "a");
    assert_eq!(g.nodes[0].outputs, Some(vec!["a".into()]));
    assert_eq!(g.nodes[1].id, "b");
    assert_eq!(
        g.nodes[1].outputs,
        Some(vec!["b".into(), "c".into(), "d".into()])
    );
    assert_eq!(g.nodes[2].outputs, None);
}

#[test]
fn outputs_block_forms() {
    let g = graph("outputs { a; b, c; d e }");
    let keys: Vec<_> = g.outputs.keys().cloned().collect();
    assert_eq!(keys, ["a", "b", "c", "d", "e"]);
    assert!(g.outputs.iter().all(|(k, v)| k == v));
    assert!(graph("outputs { }").outputs.is_empty());
}

#[test]
fn unicode_in_strings_and_columns_in_characters() {
    let g = graph("consts { w: f32[1] @weights(\"gewicht/ä😀\"); }");
    assert_eq!(
        g.consts["w"].init,
        ConstInit::Weights {
            r#ref: "gewicht/ä😀".into()
        }
    );
    // The column after a non-ASCII string counts characters, not bytes.
    assert_err(
        "webnn_graph \"ä😀\" v9 {}",
        1,
        19,
        &["unsupported version 9"],
    );
}

// ------------------------------------------------------- strictness rules

#[test]
fn bytes_above_255() {
    assert_err(
        "webnn_graph \"g\" v2 {\n  consts {\n    m: u8[2] @bytes([1, 256]);\n  }\n}",
        3,
        25,
        &["@bytes value 256 is out of range 0..=255"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { consts { m: u8[1] @bytes([99999999999999999999999]); } }",
        1,
        48,
        &["@bytes value 99999999999999999999999", "0..=255"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { consts { m: u8[1] @bytes([-1]); } }",
        1,
        48,
        &["expected a byte value", "`-1`"],
    );
}

#[test]
fn numbers_overflowing_f64() {
    assert_err(
        "webnn_graph \"g\" v2 {\n consts { s: f32[] @scalar(1e999); }\n}",
        2,
        28,
        &["`1e999`", "overflows f64"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { nodes { y = op(x, a=[1, -2E400]); } }",
        1,
        46,
        &["`-2E400`", "overflows f64"],
    );
}

#[test]
fn integers_overflowing_u32() {
    assert_err(
        "webnn_graph \"g\" v2 { inputs { x: f32[1, 4294967296]; } }",
        1,
        41,
        &["dimension 4294967296 overflows u32"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { consts { x: f32[99999999999999999999999]; } }",
        1,
        38,
        &["dimension 99999999999999999999999 overflows u32"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { inputs { x: f32[dyn(\"b\", 4294967296)]; } }",
        1,
        47,
        &["maximum size 4294967296 overflows u32"],
    );
    assert_err(
        "webnn_graph \"g\" v4294967296 {}",
        1,
        18,
        &["version 4294967296 overflows u32"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { inputs { x: f32[-1]; } }",
        1,
        38,
        &["expected a dimension", "`-1`"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { inputs { x: f32[1.5]; } }",
        1,
        38,
        &["expected a dimension", "`1.5`"],
    );
}

#[test]
fn unsupported_versions() {
    assert_err(
        "webnn_graph \"g\" v3 {}",
        1,
        18,
        &["unsupported version 3", "1 or 2"],
    );
    assert_err("webnn_graph \"g\" v0 {}", 1, 18, &["unsupported version 0"]);
    assert_err(
        "webnn_graph \"g\" v 12 {}",
        1,
        19,
        &["unsupported version 12"],
    );
    assert_err("webnn_graph \"g\" v2.0 {}", 1, 18, &["`v2.0`"]);
    assert_err(
        "webnn_graph \"g\" version2 {}",
        1,
        18,
        &["found `version2`"],
    );
    assert_err(
        "webnn_graph \"g\" {}",
        1,
        17,
        &["expected the version", "`{`"],
    );
    assert_err("webnn_graph \"g\" v -2 {}", 1, 19, &["`v-2`"]);
}

#[test]
fn dynamic_constant_shape() {
    assert_err(
        "webnn_graph \"g\" v2 {\n  consts {\n    w: f32[4, dyn(\"b\", 8)];\n  }\n}",
        3,
        15,
        &["constant shapes must be static", "dyn"],
    );
}

#[test]
fn positional_literals() {
    let call = |args: &str| format!("webnn_graph \"g\" v2 {{ nodes {{ y = op({args}); }} }}");
    // "webnn_graph \"g\" v2 { nodes { y = op(" is 36 characters.
    assert_err(
        &call("x, 1"),
        1,
        40,
        &["positional number argument `1`", "name=value"],
    );
    assert_err(&call("-1.5"), 1, 37, &["positional number argument `-1.5`"]);
    assert_err(&call("x, true"), 1, 40, &["positional `true` argument"]);
    assert_err(&call("false"), 1, 37, &["positional `false` argument"]);
    assert_err(&call("null, x"), 1, 37, &["positional `null` argument"]);
    assert_err(&call("{a: 1}"), 1, 37, &["positional object argument"]);
    assert_err(
        &call("[x, 2]"),
        1,
        41,
        &["positional array holds operand references only", "`2`"],
    );
    assert_err(&call("[x, [y]]"), 1, 41, &["positional array", "`[`"]);
    assert_err(&call("[null]"), 1, 38, &["positional `null` argument"]);
}

#[test]
fn unbalanced_braces() {
    assert_err(
        "webnn_graph \"g\" v2 {\n  inputs { x: f32[1]; }\n",
        3,
        1,
        &["missing closing `}` of the graph opened at line 1"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  inputs { x: f32[1];\n",
        3,
        1,
        &["missing closing `}` of the `inputs` block opened at line 2"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  outputs { y; }\n}\n}\n",
        4,
        1,
        &["extra closing `}` after the end of the graph"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  nodes { }\n  }\n  outputs { y; }\n}\n",
        4,
        3,
        &["block `outputs` after the end of the graph"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {} trailing",
        1,
        23,
        &["unexpected `trailing` after the end of the graph"],
    );
    assert_err(
        "webnn_graph \"g\" v2",
        1,
        19,
        &["`{` to open the graph", "end of input"],
    );
}

#[test]
fn blocks_declared_twice() {
    assert_err(
        "webnn_graph \"g\" v2 {\n  nodes { }\n  consts { }\n  nodes { }\n}",
        4,
        3,
        &["block `nodes` declared twice (first at line 2)"],
    );
}

#[test]
fn names_declared_twice() {
    assert_err(
        "webnn_graph \"g\" v2 {\n  inputs {\n    x: f32[1];\n    x: f32[2];\n  }\n}",
        4,
        5,
        &["name `x` declared twice", "already an input (line 3)"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  consts { w: f32[1]; }\n  inputs { w: f32[1]; }\n}",
        3,
        12,
        &["name `w` declared twice", "already a constant (line 2)"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  consts { w: f32[1]; }\n  nodes { w = relu(w); }\n}",
        3,
        11,
        &["name `w` declared twice", "already a constant"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  nodes { a = relu(x);\n    [b, a] = split(x); }\n}",
        3,
        9,
        &["name `a` declared twice", "already a node output (line 2)"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { nodes { [b, b] = split(x); } }",
        1,
        34,
        &["name `b` declared twice"],
    );
    assert_err(
        "webnn_graph \"g\" v2 {\n  outputs { y;\n y; }\n}",
        3,
        2,
        &["output `y` declared twice (first at line 2)"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { nodes { y = op(x, axis=1, axis=2); } }",
        1,
        48,
        &["option `axis` given twice"],
    );
    assert_err(
        "webnn_graph \"g\" v2 { nodes { y = op(o={a: 1, \"a\": 2}); } }",
        1,
        46,
        &["object key \"a\" given twice"],
    );
}

#[test]
fn other_clean_errors() {
    let h = "webnn_graph \"g\" v2 { ";
    // h is 21 characters.
    assert_err(
        &format!("{h}inputs {{ x: float32[1]; }} }}"),
        1,
        34,
        &["unknown data type `float32`", "f32"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @weight(\"w\"); }} }}"),
        1,
        41,
        &["unknown annotation `@weight`", "@weights"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @bytes([1]) @weights(\"w\"); }} }}"),
        1,
        53,
        &["constant `w` has a second annotation `@weights`"],
    );
    assert_err(
        "webnn_graph \"g\" v2 @fast {}",
        1,
        20,
        &["unknown header annotation `@fast`"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @weights(\"w); }} }}"),
        1,
        50,
        &["unterminated string"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @weights(\"C:\\path\"); }} }}"),
        1,
        53,
        &["unknown escape `\\p`"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x) ; }} }} %"),
        1,
        46,
        &["unexpected character '%'"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x, a=-); }} }}"),
        1,
        42,
        &["expected digits after `-`"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x, a=1.); }} }}"),
        1,
        43,
        &["decimal point"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x, a=1e); }} }}"),
        1,
        43,
        &["exponent"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x,); }} }}"),
        1,
        39,
        &["expected an argument", "`)`"],
    );
    assert_err(
        &format!("{h}nodes {{ y = x; }} }}"),
        1,
        35,
        &[
            "`(` after the operation name `x`",
            "alias `y = x;` is not supported",
        ],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(x) }} }}"),
        1,
        40,
        &["`;` after the statement"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(a=@x); }} }}"),
        1,
        39,
        &["expected a value", "`@x`"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(a={{1: 2}}); }} }}"),
        1,
        40,
        &["object key", "`1`"],
    );
    assert_err(
        &format!("{h}nodes {{ y = op(a=[1 2]); }} }}"),
        1,
        42,
        &["`,` or `]` in the array"],
    );
    assert_err(
        &format!("{h}inputs {{ x: f32[1] }} }}"),
        1,
        41,
        &["`;` after the input declaration"],
    );
    assert_err(
        &format!("{h}inputs {{ x: f32[1,]; }} }}"),
        1,
        40,
        &["expected a dimension", "`]`"],
    );
    assert_err(
        &format!("{h}inputs {{ x: f32; }} }}"),
        1,
        37,
        &["`[` opening the shape"],
    );
    assert_err(
        &format!("{h}inputs {{ 1: f32[1]; }} }}"),
        1,
        31,
        &["a declaration or `}` closing the `inputs` block"],
    );
    assert_err(
        &format!("{h}things {{ }} }}"),
        1,
        22,
        &["expected a block", "`things`"],
    );
    assert_err(
        &format!("{h}outputs {{ a, ; }} }}"),
        1,
        35,
        &["an output name after `,`"],
    );
    assert_err(
        &format!("{h}nodes {{ [] = op(); }} }}"),
        1,
        31,
        &["an output name", "`]`"],
    );
    assert_err(
        &format!("{h}nodes {{ [a b] = op(); }} }}"),
        1,
        33,
        &["`,` or `]` in the output list", "`b`"],
    );
    assert_err(
        &format!("{h}consts {{ s: f32[] @scalar(\"1\"); }} }}"),
        1,
        48,
        &["a number in `@scalar(...)`"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @weights(w); }} }}"),
        1,
        50,
        &["the weight reference as a string"],
    );
    assert_err(
        &format!("{h}consts {{ w: f32[1] @; }} }}"),
        1,
        41,
        &["annotation name after `@`"],
    );
    assert_err("", 1, 1, &["the header", "end of input"]);
    assert_err("# only a comment\n", 2, 1, &["the header", "end of input"]);
    assert_err(
        "{\"format\": \"webnn-graph-json\"}",
        1,
        1,
        &["the header", "`{`"],
    );
    assert_err(
        "webnn_graph name v2 {}",
        1,
        13,
        &["graph name as a string", "`name`"],
    );
}

#[test]
fn nesting_depth_is_capped() {
    // The limit parse_webnn's docs give is this one.
    let docs = include_str!("parser.rs").replace("\n/// ", " ");
    assert!(
        docs.contains(&format!("at most {MAX_DEPTH} arrays and objects deep")),
        "{docs}"
    );
    let writer_docs = include_str!("writer.rs").replace("\n/// ", " ");
    assert!(writer_docs.contains(&format!("deeper than {MAX_DEPTH} arrays and objects")));
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    let v = node_options(&format!("a={ok}"));
    assert!(v["a"].is_array());
    let deep = format!(
        "{}1{}",
        "[".repeat(MAX_DEPTH + 1),
        "]".repeat(MAX_DEPTH + 1)
    );
    let (line, column, message) = err(&format!(
        "webnn_graph \"g\" v2 {{ nodes {{ y = op(a={deep}); }} }}"
    ));
    assert_eq!((line, column), (1, 39 + MAX_DEPTH));
    assert!(message.contains("nested deeper than 128"), "{message}");
    // Far deeper input, mixing objects and arrays: an error, not a stack overflow.
    let huge = "{k: [".repeat(200_000);
    let (_, _, message) = err(&format!("webnn_graph \"g\" v2 {{ nodes {{ y = op(a={huge}"));
    assert!(message.contains("nested deeper"), "{message}");
}

// ------------------------------------------------------------- ParseError

#[test]
fn parse_error_display() {
    let src = "webnn_graph \"g\" v2 {\n\tconsts {\n\t\tm: u8[1] @bytes([256]);\n\t}\n}\n";
    let e = parse_webnn(src).unwrap_err();
    assert_eq!((e.line(), e.column()), (3, 20));
    assert_eq!(e.file(), None);
    assert_eq!(
        e.to_string(),
        "3:20: @bytes value 256 is out of range 0..=255\n\t\tm: u8[1] @bytes([256]);\n\t\t                 ^"
    );
    let e = e.with_file("graph.webnn");
    assert_eq!(e.file(), Some("graph.webnn"));
    assert!(e
        .to_string()
        .starts_with("graph.webnn:3:20: @bytes value 256 is out of range 0..=255\n"));
    // At the end of input the caret stands after the last character.
    let e = parse_webnn("webnn_graph \"g\" v2 {").unwrap_err();
    assert_eq!((e.line(), e.column()), (1, 21));
    assert!(e
        .to_string()
        .ends_with("webnn_graph \"g\" v2 {\n                    ^"));
}

// ----------------------------------------------------------------- writer

fn write_err(g: &GraphJson) -> (String, String) {
    match to_webnn_text(g) {
        Ok(text) => panic!("expected a write error, got:\n{text}"),
        Err(e) => (e.item().to_string(), e.reason().to_string()),
    }
}

#[test]
fn canonical_layout() {
    let g = parse_webnn(&fixture("format_reference.webnn")).unwrap();
    let text = to_webnn_text(&g).unwrap();
    assert_eq!(
        text,
        r#"webnn_graph "format_reference" v2 @quantized {
  inputs {
    input: f32[dyn("batch", 8), 4];
  }

  consts {
    bias: f32[] @scalar(0.5);
    external_weight: f32[4, 4] @weights("encoder.weight");
    inline_mask: u8[4] @bytes([1, 1, 0, 0]);
  }

  nodes {
    sum = add(input, bias, metadata={axes: [1], enabled: true, kind: "reference"});
    [left, right] = split(sum, axis=1, splits=[2, 2]);
    result = concat(left, right, axis=1);
  }

  outputs { result; }
}
"#
    );
    let empty = GraphJson::new(Some("e".into()));
    assert_eq!(
        to_webnn_text(&empty).unwrap(),
        "webnn_graph \"e\" v2 {\n  outputs {}\n}\n"
    );
    assert_eq!(parse_webnn(&to_webnn_text(&empty).unwrap()).unwrap(), empty);
}

#[test]
fn writer_quotes_what_is_not_an_identifier() {
    let mut g = graph(
        "nodes { y = op(\"a b\", \"true\", x, o={\"k-1\": \"v\\\"\\\\\", k2: 1e300, k3: -0.0, k4: 3.0, k5: 1e-7}); }",
    );
    g.name = Some("n\"\\\n".into());
    let text = to_webnn_text(&g).unwrap();
    assert!(
        text.starts_with("webnn_graph \"n\\\"\\\\\n\" v2 {"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"y = op("a b", "true", x, o={"k-1": "v\"\\", k2: 1e300, k3: -0.0, k4: 3.0, k5: 1e-7});"#
        ),
        "{text}"
    );
    assert_eq!(parse_webnn(&text).unwrap(), g);

    // References that begin like a literal are quoted: webnn-graph would read a bare
    // `true_mask` argument as `true` followed by garbage.
    let g = graph("nodes { y = op(true_mask, nullable, falsey, t, x); }");
    let text = to_webnn_text(&g).unwrap();
    assert!(
        text.contains(r#"y = op("true_mask", "nullable", "falsey", t, x);"#),
        "{text}"
    );
    assert_eq!(parse_webnn(&text).unwrap(), g);
}

#[test]
fn writer_rejects_what_text_cannot_express() {
    let base = graph(
        "inputs { x: f32[1]; } consts { c: f32[] @scalar(1); } nodes { y = relu(x); [a, b] = split(x); } outputs { y; }",
    );

    let mut g = base.clone();
    g.outputs.insert("y".into(), "x".into());
    let (item, reason) = write_err(&g);
    assert_eq!(item, "output `y`");
    assert!(reason.contains("bound to operand `x`"), "{reason}");

    let mut g = base.clone();
    g.outputs.insert("bad name".into(), "bad name".into());
    assert_eq!(write_err(&g).0, "output `bad name`");

    let mut g = base.clone();
    let desc = g.inputs.remove("x").unwrap();
    g.inputs.insert("1x".into(), desc);
    let (item, reason) = write_err(&g);
    assert_eq!(item, "input `1x`");
    assert!(reason.contains("not an identifier"), "{reason}");

    let mut g = base.clone();
    let c = g.consts["c"].clone();
    g.consts.insert("x".into(), c.clone());
    let (item, reason) = write_err(&g);
    assert_eq!(item, "constant `x`");
    assert!(reason.contains("already used by input `x`"), "{reason}");

    let mut g = base.clone();
    g.nodes[0].id = "c".into();
    let (item, reason) = write_err(&g);
    assert_eq!(item, "node 0 (`c` = relu) output `c`");
    assert!(reason.contains("already used by constant `c`"), "{reason}");

    let mut g = base.clone();
    g.consts.get_mut("c").unwrap().init = ConstInit::Scalar { value: json!("1") };
    let (item, reason) = write_err(&g);
    assert_eq!(item, "constant `c`");
    assert!(reason.contains("not a number"), "{reason}");

    let mut g = base.clone();
    g.consts.get_mut("c").unwrap().init = ConstInit::Scalar {
        value: json!(u64::MAX),
    };
    let (item, reason) = write_err(&g);
    assert_eq!(item, "constant `c` scalar");
    assert!(reason.contains("18446744073709551615"), "{reason}");

    let mut g = base.clone();
    g.nodes[0]
        .options
        .insert("big".into(), json!([1, u64::MAX]));
    let (item, reason) = write_err(&g);
    assert_eq!(item, "node 0 (`y` = relu) option `big`");
    assert!(reason.contains("read back as a float"), "{reason}");

    let mut g = base.clone();
    g.nodes[0].options.insert("not-ident".into(), json!(1));
    assert_eq!(write_err(&g).0, "node 0 (`y` = relu) option `not-ident`");

    let mut g = base.clone();
    g.nodes[0].op = "re lu".into();
    let (item, reason) = write_err(&g);
    assert_eq!(item, "node 0 (`y` = re lu)");
    assert!(reason.contains("operation \"re lu\""), "{reason}");

    let mut g = base.clone();
    g.nodes[1].id = "b".into();
    let (item, reason) = write_err(&g);
    assert_eq!(item, "node 1 (`b` = split)");
    assert!(reason.contains("not its first output `a`"), "{reason}");

    let mut g = base.clone();
    g.nodes[1].outputs = Some(vec![]);
    assert!(write_err(&g).1.contains("empty `outputs`"));

    let mut g = base.clone();
    g.nodes[1].outputs = Some(vec!["a".into(), "a".into()]);
    assert!(write_err(&g).1.contains("already used by node 1"));

    let mut g = base.clone();
    g.format = "other".into();
    assert_eq!(write_err(&g).0, "format");

    let mut g = base.clone();
    g.version = 3;
    assert_eq!(
        write_err(&g),
        (
            "version".into(),
            "unsupported version 3 (expected 1 or 2)".into()
        )
    );

    let mut g = base.clone();
    g.name = None;
    assert_eq!(write_err(&g).0, "graph name");

    let mut g = base.clone();
    let mut deep = json!(1);
    for _ in 0..=MAX_DEPTH {
        deep = json!([deep]);
    }
    g.nodes[0].options.insert("deep".into(), deep);
    assert!(write_err(&g).1.contains("nested deeper"));

    let e = to_webnn_text(&{
        let mut g = base.clone();
        g.outputs.insert("q".into(), "y".into());
        g
    })
    .unwrap_err();
    assert!(e
        .to_string()
        .starts_with("cannot write as .webnn text: output `q`: it is bound to operand `y`"));
}

#[test]
fn long_lines_are_shown_as_an_excerpt() {
    // One line: a graph with many inputs and a bad dimension far to the right.
    let mut src = String::from("webnn_graph \"g\" v2 { inputs {");
    for i in 0..100 {
        src.push_str(&format!(" i{i}: f32[1];"));
    }
    src.push_str(" bad: f32[-1]; ");
    for i in 0..100 {
        src.push_str(&format!(" j{i}: f32[1];"));
    }
    src.push_str(" } }");
    let column = src.find("-1").unwrap() + 1;
    let e = parse_webnn(&src).unwrap_err();
    assert_eq!((e.line(), e.column()), (1, column));
    let shown = e.source_line();
    assert!(
        shown.starts_with("...") && shown.ends_with("..."),
        "{shown}"
    );
    assert_eq!(shown.chars().count(), 166);
    let text = e.to_string();
    let caret_line = text.lines().last().unwrap();
    let caret = caret_line.chars().count();
    assert_eq!(&shown[caret - 1..caret + 1], "-1", "{text}");
    // Near the start of a long line the excerpt is not cut on the left.
    let mut src = String::from("webnn_graph \"g\" v7 {");
    src.push_str(&" ".repeat(400));
    src.push('}');
    let e = parse_webnn(&src).unwrap_err();
    assert_eq!(e.column(), 18);
    assert!(e.source_line().starts_with("webnn_graph \"g\" v7 {"));
    assert!(e.source_line().ends_with("..."));
    assert!(e.to_string().ends_with(&format!("\n{}^", " ".repeat(17))));
}

/// Where the writer's golden files are: its output for every graph file under
/// `tests/fixtures` (one file each, the fixture's path with `.golden` appended) and for the
/// generated graphs (`generated.golden`, one section per graph: the text or the error).
///
/// After an intended change of the text layout, regenerate them and review the change:
///
/// ```text
/// WEBNN_WEIGHTS_BLESS=1 cargo test -p webnn-weights-runtime --lib text::tests::golden
/// git diff weights-runtime/tests/golden
/// ```
const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/text");
const REGENERATE: &str = "cargo test -p webnn-weights-runtime --lib text::tests::golden";

/// The text of `graph` through both entry points, which must agree byte for byte (or on
/// the error): the text, or `error: ` and the error's message.
fn written(graph: &GraphJson) -> (Result<String, String>, &'static str) {
    let text = to_webnn_text(graph);
    let mut streamed = Vec::new();
    match (write_webnn_text(graph, &mut streamed), &text) {
        (Ok(()), Ok(text)) => assert_eq!(&String::from_utf8(streamed).unwrap(), text),
        (Err(TextOutputError::Graph(e)), Err(expected)) => assert_eq!(&e, expected),
        (result, expected) => panic!("{result:?} vs {expected:?}"),
    }
    match text {
        Ok(text) => (Ok(text), "ok"),
        Err(e) => (Err(format!("error: {e}\n")), "error"),
    }
}

#[test]
fn golden_text_of_the_fixtures() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut expected_files = Vec::new();
    for (path, graph) in crate::graph::json::samples::fixtures() {
        let relative = path.strip_prefix(&root).unwrap();
        let golden =
            std::path::Path::new(GOLDEN_DIR).join(format!("{}.golden", relative.display()));
        let (text, _) = written(&graph);
        let text = text.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        webnn_weights_test_support::golden::check(&golden, &text, REGENERATE);
        expected_files.push(golden);
    }
    expected_files.push(std::path::Path::new(GOLDEN_DIR).join("generated.golden"));
    expected_files.sort();
    // No golden file is left over from a fixture that is gone.
    let mut present = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(GOLDEN_DIR)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                present.push(path);
            }
        }
    }
    present.sort();
    let stale: Vec<_> = present
        .iter()
        .filter(|p| !expected_files.contains(p))
        .collect();
    assert!(
        stale.is_empty(),
        "golden files without a fixture (delete them): {stale:?}"
    );
}

#[test]
fn golden_text_of_generated_graphs() {
    let mut all = String::new();
    let (mut ok, mut failed) = (0, 0);
    for (index, graph) in crate::graph::json::samples::generated(0x7e47, 600)
        .iter()
        .enumerate()
    {
        let (text, outcome) = written(graph);
        match outcome {
            "ok" => ok += 1,
            _ => failed += 1,
        }
        all.push_str(&format!("=== graph {index}: {outcome}\n"));
        all.push_str(&text.unwrap_or_else(|e| e));
    }
    // Both paths are covered: graphs written and graphs refused.
    assert!(ok > 50 && failed > 50, "{ok} written, {failed} refused");
    let golden = std::path::Path::new(GOLDEN_DIR).join("generated.golden");
    webnn_weights_test_support::golden::check(&golden, &all, REGENERATE);
}

#[test]
fn streamed_text_of_large_bytes_crosses_buffers() {
    let mut g = GraphJson::new(Some("big".into()));
    let lens = [0usize, 1, 1024, 1025, 200_000];
    let bytes = |len: usize| (0..len).map(|j| (j * 31 % 256) as u8).collect::<Vec<u8>>();
    for (i, len) in lens.into_iter().enumerate() {
        g.consts.insert(
            format!("b{i}"),
            crate::graph::ConstDecl {
                data_type: crate::DataType::Uint8,
                shape: vec![len as u32],
                init: ConstInit::InlineBytes {
                    bytes: bytes(len).into(),
                },
            },
        );
    }
    // The expected text, spelled out: every byte in decimal, `, ` between them.
    let mut expected = String::from("webnn_graph \"big\" v2 {\n  consts {\n");
    for (i, len) in lens.into_iter().enumerate() {
        let list: Vec<String> = bytes(len).iter().map(u8::to_string).collect();
        expected.push_str(&format!(
            "    b{i}: u8[{len}] @bytes([{}]);\n",
            list.join(", ")
        ));
    }
    expected.push_str("  }\n\n  outputs {}\n}\n");
    let (text, _) = written(&g);
    let text = text.unwrap();
    assert!(
        text == expected,
        "{}",
        webnn_weights_test_support::golden::diff(&expected, &text)
    );
    assert_eq!(parse_webnn(&text).unwrap(), g);
}

// ---------------------------------------------------------------- shared options

/// A graph whose calls repeat their options, in the spellings that matter to sharing:
/// other operations, spacing and comments inside, an operand after the options, a `)`
/// inside a string option, options nested in arrays and objects.
const REPEATING: &str = r#"webnn_graph "g" v2 {
inputs { x: f32[2, 2]; }
consts { c: f32[] @scalar(1); }
nodes {
  a = add(x, c, alpha=0.5, axes=[0, 1]);
  b = mul(a, c, alpha=0.5, axes=[0, 1]);
  d = add(b, c, alpha=0.5, axes=[0, 1] );
  e = add(d, c, alpha=0.5, # note
    axes=[0, 1]);
  f = add(e, alpha=0.5, axes=[0, 1], c);
  g = add(f, c, s="a)b", o={k: [1, {m: null}]});
  h = add(g, c, s="a)b", o={k: [1, {m: null}]});
  [i, j] = split(h, axis=1, splits=[1, 1]);
  k = add(i, j, alpha=0.5, axes=[0, 1]);
  l = add(k, c, o={k: [1, {m: null}]});
  m = add(l, c, o={k: [1, {m: null}]});
}
outputs { m; }
}
"#;

/// The result of a parse, comparable: the graph, or the error's place and message.
fn outcome(result: Result<GraphJson, ParseError>) -> Result<GraphJson, (usize, usize, String)> {
    result.map_err(|e| (e.line(), e.column(), e.message().to_string()))
}

#[test]
fn sharing_options_changes_no_result_of_the_repeating_graph() {
    let shared = outcome(parser::parse_sharing(REPEATING, 4096));
    assert_eq!(shared, outcome(parser::parse_sharing(REPEATING, 0)));
    let g = shared.unwrap();
    let options = |name: &str| &g.nodes.iter().find(|n| n.id == name).unwrap().options;
    assert!(options("b").shares_with(options("a")) && options("k").shares_with(options("a")));
    assert!(options("m").shares_with(options("l")));
    assert!(
        !options("h").shares_with(options("g")),
        "a `)` inside: never shared"
    );
    assert!(!options("d").shares_with(options("a")) && !options("e").shares_with(options("a")));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

    /// Edits anywhere in a graph that repeats its options (inserted punctuation, spaces,
    /// comments, quotes, digits; deleted spans) read the same with and without sharing:
    /// the same graph, or the same error at the same place.
    #[test]
    fn sharing_options_changes_no_result_of_an_edited_graph(
        edits in proptest::collection::vec(
            (0usize..10_000, 0usize..12, 0usize..4),
            1..4,
        )
    ) {
        const PIECES: [&str; 12] =
            [" ", ")", "(", ",", "# c\n", "x", "=", "1", "\"", "[", "]", ".5"];
        let mut text = REPEATING.to_string();
        for (at, piece, delete) in edits {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if delete > 0 {
                let mut end = (at + delete).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, PIECES[piece]);
            }
        }
        proptest::prop_assert_eq!(
            outcome(parser::parse_sharing(&text, 4096)),
            outcome(parser::parse_sharing(&text, 0)),
            "{}", text
        );
    }
}
