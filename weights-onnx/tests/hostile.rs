//! Hostile input: truncated and bit-flipped models, external data that points outside its
//! file or folder, cycles, and declared sizes past every limit give an error naming the place,
//! never a panic.

mod common;

use common::*;
use prost::Message as _;
use std::path::Path;
use webnn_weights_onnx::proto::{
    tensor_proto::DataLocation, GraphProto, ModelProto, NodeProto, StringStringEntryProto,
    TensorProto,
};
use webnn_weights_onnx::{convert, convert_bytes, ConvertOptions};

/// A model of `nodes` at opset 17, reading float32 `x` of dims `x` and writing `y`.
fn one_input(nodes: Vec<NodeProto>, inits: Vec<TensorProto>, x: &[i64]) -> ModelProto {
    let graph = GraphProto {
        node: nodes,
        initializer: inits,
        input: vec![info("x", FLOAT, x)],
        output: vec![info("y", FLOAT, &[])],
        ..Default::default()
    };
    model(&[("", 17)], graph)
}

/// A model with a little of everything: 2 KiB of raw weights, typed-field constants, shape
/// arithmetic that folds, several operators.
fn rich() -> Vec<u8> {
    let w: Vec<u8> = (0..512).flat_map(|i| (i as f32).to_le_bytes()).collect();
    one_input(
        vec![
            node("Add", &["x", "w"], &["a"], vec![]),
            node("Shape", &["a"], &["s"], vec![]),
            node("Reshape", &["a", "s"], &["r"], vec![]),
            node("Relu", &["r"], &["t"], vec![]),
            node(
                "Transpose",
                &["t"],
                &["u"],
                vec![attr_ints("perm", &[1, 0])],
            ),
            node("Sqrt", &["u"], &["y"], vec![]),
        ],
        vec![raw("w", FLOAT, &[512], &w)],
        &[2, 512],
    )
    .encode_to_vec()
}

fn check(bytes: &[u8]) -> Result<(), String> {
    let options = ConvertOptions::new();
    match convert_bytes(bytes::Bytes::copy_from_slice(bytes), None, &options) {
        Ok(c) => {
            c.graph.validate().map_err(|e| e.to_string())?;
            webnn_weights_web::WebGraph::new(&c.graph).map_err(|e| e.to_string())?;
            Ok(())
        }
        Err(e) => {
            let text = e.to_string();
            assert!(!text.is_empty());
            Err(text)
        }
    }
}

#[test]
fn the_rich_model_converts() {
    check(&rich()).unwrap();
}

#[test]
fn every_truncation_is_an_error_or_a_valid_graph() {
    let bytes = rich();
    for len in 0..bytes.len() {
        // a prefix may still decode (protobuf has no end marker): then it must be valid
        let _ = check(&bytes[..len]);
    }
    let e = check(&bytes[..bytes.len() / 2]).unwrap_err();
    assert!(e.contains("the model"), "{e}");
}

#[test]
fn bit_flips_never_panic() {
    let bytes = rich();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..4000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut b = bytes.clone();
        let at = (state % b.len() as u64) as usize;
        b[at] ^= 1 << (state >> 60 & 7);
        let _ = check(&b);
    }
}

#[test]
fn a_graph_without_outputs_is_refused() {
    // found by the fuzz target: nodes, inputs, no outputs
    let mut m = one_input(vec![node("Relu", &["x"], &["y"], vec![])], vec![], &[2]);
    m.graph.as_mut().unwrap().output.clear();
    let e = check(&m.encode_to_vec()).unwrap_err();
    assert!(e.contains("declares no outputs"), "{e}");
}

#[test]
fn a_cycle_is_named() {
    let m = one_input(
        vec![
            node("Relu", &["z"], &["a"], vec![]),
            node("Relu", &["a"], &["z"], vec![]),
            node("Relu", &["x"], &["y"], vec![]),
        ],
        vec![],
        &[2],
    );
    let e = check(&m.encode_to_vec()).unwrap_err();
    assert!(
        e.contains("input \"z\" is not produced by any earlier node"),
        "{e}"
    );
}

#[test]
fn sizes_past_every_limit_are_refused() {
    // an input dim past u32
    let e = check(
        &one_input(
            vec![node("Relu", &["x"], &["y"], vec![])],
            vec![],
            &[1 << 40],
        )
        .encode_to_vec(),
    )
    .unwrap_err();
    assert!(e.contains("does not fit u32"), "{e}");
    // an initializer whose dims promise more than its data
    let big = TensorProto {
        name: Some("w".into()),
        dims: vec![u32::MAX as i64, u32::MAX as i64, u32::MAX as i64],
        data_type: Some(1),
        raw_data: Some(vec![0u8; 16].into()),
        ..Default::default()
    };
    let e = check(
        &one_input(
            vec![node("Add", &["x", "w"], &["y"], vec![])],
            vec![big],
            &[2],
        )
        .encode_to_vec(),
    )
    .unwrap_err();
    assert!(e.contains("initializer \"w\""), "{e}");
    // shapes computed past the limits: Tile, Expand, ConstantOfShape, Reshape, Range
    let huge = u32::MAX as i64;
    let cases: Vec<(Vec<NodeProto>, Vec<TensorProto>)> = vec![
        (
            vec![node("Tile", &["x", "r"], &["y"], vec![])],
            vec![int64_vector("r", &[huge, huge])],
        ),
        (
            vec![node("Expand", &["x", "s"], &["y"], vec![])],
            vec![int64_vector("s", &[huge, huge, huge])],
        ),
        (
            vec![
                node("ConstantOfShape", &["s"], &["c"], vec![]),
                node("Add", &["x", "c"], &["y"], vec![]),
            ],
            vec![int64_vector("s", &[huge, huge, huge, huge])],
        ),
        (
            vec![node("Reshape", &["x", "s"], &["y"], vec![])],
            vec![int64_vector("s", &[-1, huge, huge])],
        ),
        (
            vec![
                node("Range", &["a", "b", "d"], &["r"], vec![]),
                node("Add", &["x", "r"], &["y"], vec![]),
            ],
            vec![
                int64_vector("a", &[0]),
                int64_vector("b", &[i64::MAX]),
                int64_vector("d", &[1]),
            ],
        ),
    ];
    for (nodes, inits) in cases {
        let op = nodes[0].op_type.clone().unwrap_or_default();
        let mut inits = inits;
        for t in &mut inits {
            if op == "Range" {
                t.dims.clear();
            }
        }
        let r = check(&one_input(nodes, inits, &[1, 1]).encode_to_vec());
        assert!(r.is_err(), "{op}: a huge shape converted");
    }
}

fn external_model(dir: &Path, location: &str, offset: &str, length: &str) -> std::path::PathBuf {
    let t = TensorProto {
        name: Some("w".into()),
        dims: vec![4],
        data_type: Some(1),
        data_location: Some(DataLocation::External as i32),
        external_data: [
            ("location", location),
            ("offset", offset),
            ("length", length),
        ]
        .iter()
        .map(|(k, v)| StringStringEntryProto {
            key: Some(k.to_string()),
            value: Some(v.to_string()),
        })
        .collect(),
        ..Default::default()
    };
    let m = one_input(
        vec![node("Add", &["x", "w"], &["y"], vec![])],
        vec![t],
        &[4],
    );
    let path = dir.join("m.onnx");
    std::fs::write(&path, m.encode_to_vec()).unwrap();
    path
}

#[test]
fn external_data_out_of_place_or_range() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.data"), [0u8; 24]).unwrap();
    let options = ConvertOptions::new();
    let ok = external_model(dir.path(), "m.data", "8", "16");
    let c = convert(&ok, &options).unwrap();
    assert_eq!(c.external_files, [dir.path().join("m.data")]);
    for (location, offset, length, needle) in [
        ("m.data", "16", "16", "runs past the file's end"),
        ("m.data", "0", "12", "does not match the 16 bytes"),
        ("m.data", "x", "16", "not a non-negative integer"),
        ("../m.data", "0", "16", "inside the model's folder"),
        ("/etc/passwd", "0", "16", "inside the model's folder"),
        ("missing.data", "0", "16", "missing.data"),
    ] {
        let path = external_model(dir.path(), location, offset, length);
        let e = convert(&path, &options).unwrap_err().to_string();
        assert!(e.contains("initializer \"w\""), "{e}");
        assert!(e.contains(needle), "{location} {offset} {length}: {e}");
    }
}
