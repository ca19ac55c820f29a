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
        serde_json::Value::Object(g.nodes[0].options.clone()),
        json!({"metadata": {"kind": "ref", "axes": [1], "enabled": true}})
    );
}
