//! `webnn-weights convert-onnx`: the graph and its SafeTensors archive (or WGWT blob and
//! manifest, or nothing with --inline-weights) written together; dims from flags; every
//! problem of a model reported at once with nothing written; and `inspect`, `validate`, `web`
//! reading an `.onnx` file directly.

#[macro_use]
mod common;

use common::{assert_fails, assert_fails_leaving, assert_succeeds, cli, library_resolved};
use prost::Message as _;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use webnn_weights_onnx::proto::{
    tensor_shape_proto::{dimension, Dimension},
    type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};
use webnn_weights_runtime::ConstInit;

/// A float tensor value info; `None` dims are the named dim "batch".
fn info(name: &str, dims: &[Option<i64>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Some(v) => dimension::Value::DimValue(*v),
                None => dimension::Value::DimParam("batch".into()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        name: Some(format!("{op}_{output}")),
        ..Default::default()
    }
}

/// The weight `w`: 400 floats (1600 bytes, past the inline threshold), i * 0.5.
fn weight_bytes() -> Vec<u8> {
    (0..400)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect()
}

/// `y = sqrt(x + w) * s`, x: float[batch, 400], w an initializer of 400 floats, s a scalar.
fn model(nodes: Vec<NodeProto>) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            name: Some("tiny".into()),
            node: nodes,
            initializer: vec![
                TensorProto {
                    name: Some("w".into()),
                    dims: vec![400],
                    data_type: Some(1),
                    raw_data: Some(weight_bytes().into()),
                    ..Default::default()
                },
                TensorProto {
                    name: Some("s".into()),
                    dims: vec![],
                    data_type: Some(1),
                    float_data: vec![2.0],
                    ..Default::default()
                },
            ],
            input: vec![info("x", &[None, Some(400)])],
            output: vec![info("y", &[None, Some(400)])],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn good_nodes() -> Vec<NodeProto> {
    vec![
        node("Add", &["x", "w"], "t"),
        node("Sqrt", &["t"], "u"),
        node("Mul", &["u", "s"], "y"),
    ]
}

fn write_model(dir: &Path, nodes: Vec<NodeProto>) -> PathBuf {
    let path = dir.join("tiny.onnx");
    std::fs::write(&path, model(nodes).encode_to_vec()).unwrap();
    path
}

#[test]
fn graph_and_safetensors_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(dir.path(), good_nodes());
    let out = dir.path().join("out").join("tiny.webnn");
    assert_succeeds(&mut command!(
        "convert-onnx",
        "--input" => &onnx,
        "--output" => &out,
        "--override-dim" => "batch=3",
    ));
    assert!(dir.path().join("out/tiny.safetensors").is_file());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("x: f32[3, 400];"), "{text}");
    assert!(text.contains("@weights(\"w\")"), "{text}");
    // the archive is found by discovery and holds the initializer's bytes
    let graph = library_resolved(&out, None, None);
    match &graph.consts["w"].init {
        ConstInit::InlineBytes { bytes } => assert_eq!(&bytes[..], &weight_bytes()[..]),
        other => panic!("w resolved to {other:?}"),
    }
    let ops: Vec<&str> = graph.nodes.iter().map(|n| n.op.as_str()).collect();
    assert_eq!(ops, ["add", "sqrt", "mul"]);
}

#[test]
fn blob_and_manifest_or_inline() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(dir.path(), good_nodes());
    let out = dir.path().join("g.json");
    assert_succeeds(&mut command!(
        "convert-onnx",
        "--input" => &onnx,
        "--output" => &out,
        "--weights" => dir.path().join("g.weights"),
        "--input-shape" => "x=2,400",
    ));
    assert!(dir.path().join("g.manifest.json").is_file());
    let graph = library_resolved(&out, Some("g.weights"), Some("g.manifest.json"));
    assert!(
        matches!(&graph.consts["w"].init, ConstInit::InlineBytes { bytes } if bytes.len() == 1600)
    );

    let inline = dir.path().join("inline.webnn");
    assert_succeeds(&mut command!(
        "convert-onnx",
        "--input" => &onnx,
        "--output" => &inline,
        "--override-dim" => "batch=1",
        "--inline-weights" => "--quiet",
    ));
    assert!(!dir.path().join("inline.safetensors").exists());
    let text = std::fs::read_to_string(&inline).unwrap();
    assert!(!text.contains("@weights"), "{text}");
}

#[test]
fn every_problem_at_once_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(
        dir.path(),
        vec![
            node("Add", &["x", "w"], "t"),
            node("Frobnicate", &["t"], "u"),
            node("Celebrate", &["x"], "v"),
            node("Mul", &["u", "v"], "y"),
        ],
    );
    let mut cmd = cli();
    cmd.args(["convert-onnx", "--input"])
        .arg(&onnx)
        .args(["--override-dim", "batch=1"]);
    assert_fails_leaving(
        dir.path(),
        cmd,
        1,
        &[
            "2 problems",
            "node \"Frobnicate_u\" (Frobnicate, ai.onnx opset 17)",
            "node \"Celebrate_v\" (Celebrate, ai.onnx opset 17)",
        ],
    );
}

#[test]
fn a_dim_without_a_size_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(dir.path(), good_nodes());
    let mut cmd = cli();
    cmd.args(["convert-onnx", "--input"]).arg(&onnx);
    assert_fails_leaving(
        dir.path(),
        cmd,
        1,
        &["input \"x\"", "--override-dim batch=N"],
    );
    // the model's freeDimensionOverrides metadata, and a flag that wins over it
    let mut with_meta = model(good_nodes());
    with_meta
        .metadata_props
        .push(webnn_weights_onnx::proto::StringStringEntryProto {
            key: Some("freeDimensionOverrides".into()),
            value: Some(r#"{"batch": 5}"#.into()),
        });
    std::fs::write(&onnx, with_meta.encode_to_vec()).unwrap();
    let out = dir.path().join("m.webnn");
    assert_succeeds(&mut command!("convert-onnx", "--input" => &onnx, "--output" => &out));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("x: f32[5, 400];"));
    let dims = dir.path().join("dims.json");
    std::fs::write(&dims, r#"{"batch": 7}"#).unwrap();
    assert_succeeds(&mut command!(
        "convert-onnx", "--input" => &onnx, "--output" => &out, "--override-dims-file" => &dims,
    ));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("x: f32[7, 400];"));
}

#[test]
fn usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(dir.path(), good_nodes());
    let run = |extra: &[&str]| {
        let mut cmd = cli();
        cmd.args(["convert-onnx", "--input"]).arg(&onnx).args(extra);
        cmd.output().unwrap()
    };
    assert_fails(&run(&["--override-dim", "batch"]), 2, "expected NAME=VALUE");
    assert_fails(&run(&["--input-shape", "x=1,-1"]), 2, "is not a size");
    assert_fails(&run(&["--weights", "w.bin"]), 2, ".safetensors or .weights");
    assert_fails(
        &run(&["--inline-weights", "--weights", "w.weights"]),
        2,
        "writes no sidecar",
    );
    assert_fails(&run(&["--output", "g.txt"]), 2, "`.webnn` or `.json`");
}

#[test]
fn inspect_validate_and_web_read_a_model() {
    let dir = tempfile::tempdir().unwrap();
    // a fixed batch: the commands convert with default options
    let mut m = model(good_nodes());
    let graph = m.graph.as_mut().unwrap();
    graph.input = vec![info("x", &[Some(1), Some(400)])];
    let onnx = dir.path().join("fixed.onnx");
    std::fs::write(&onnx, m.encode_to_vec()).unwrap();

    let out = assert_succeeds(cli().arg("inspect").arg(&onnx).args(["--json", "--no-map"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "w")
        .unwrap();
    let sha: String = Sha256::digest(weight_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(w["sha256"], sha.as_str());
    assert_eq!(w["byteLength"], 1600);

    let out = assert_succeeds(cli().arg("validate").arg(&onnx));
    assert!(String::from_utf8_lossy(&out.stdout).contains("OK"));

    let site = dir.path().join("site");
    assert_succeeds(cli().arg("web").arg(&onnx).arg("-o").arg(&site));
    for f in ["fixed.js", "fixed.weights", "fixed.manifest.json"] {
        assert!(site.join(f).is_file(), "{f}");
    }
    let mut cmd = cli();
    cmd.arg("web")
        .arg(&onnx)
        .args(["--weights", "x.safetensors", "-o"])
        .arg(&site);
    assert_fails(&cmd.output().unwrap(), 2, "an ONNX model holds its weights");
}

#[test]
fn lock_pins_a_model_and_dims_reach_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = write_model(dir.path(), good_nodes()); // x: float[batch, 400]
                                                      // a symbolic dim needs its size here too
    let mut cmd = cli();
    cmd.arg("lock").arg(&onnx);
    assert_fails(&cmd.output().unwrap(), 1, "--override-dim batch=N");
    assert_succeeds(
        cli()
            .arg("lock")
            .arg(&onnx)
            .args(["--override-dim", "batch=2"]),
    );
    let lock = std::fs::read_to_string(dir.path().join("tiny.onnx.lock")).unwrap();
    let sha: String = Sha256::digest(weight_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(lock.contains(&sha), "{lock}");
    assert!(lock.contains("\"file\": \"tiny.safetensors\""), "{lock}");
    assert_succeeds(
        cli()
            .arg("lock")
            .arg(&onnx)
            .args(["--check", "--override-dim", "batch=2"]),
    );
    assert_succeeds(
        cli()
            .arg("validate")
            .arg(&onnx)
            .args(["--override-dim", "batch=2"]),
    );
    // the flags are for models only
    let graph = dir.path().join("g.webnn");
    std::fs::write(
        &graph,
        "webnn_graph \"g\" v1 { inputs { x: f32[2]; } nodes { y = relu(x); } outputs { y; } }",
    )
    .unwrap();
    let mut cmd = cli();
    cmd.arg("validate")
        .arg(&graph)
        .args(["--override-dim", "batch=2"]);
    assert_fails(&cmd.output().unwrap(), 2, "apply to ONNX models");
}
