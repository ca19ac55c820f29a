//! ONNX models straight into the build helper (feature `onnx`): a tiny model made here with the
//! converter's prost messages (weights in the model file and in an external data file),
//! converted and embedded through `Builder`, with its artifacts and rebuild directives.
#![cfg(feature = "onnx")]

mod common;

use common::builder;
use prost::Message as _;
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_artifacts as artifacts;
use webnn_weights_build::{Builder, Diagnostic, Embedding, Error};
use webnn_weights_onnx::proto::*;
use webnn_weights_runtime::{plan_external_weights, ConstInit, Dimension, EmbeddedGraph};

/// Values of the model's weights: `w` (512 floats, in the model file), `b` (512 floats, in the
/// external data file `tiny.onnx.data`), `s` (one float, inline in the graph).
pub fn weights() -> (Vec<f32>, Vec<f32>, f32) {
    let w = (0..512).map(|i| i as f32 * 0.25 - 3.0).collect();
    let b = (0..512).map(|i| 1.0 - i as f32 / 64.0).collect();
    (w, b, 0.5)
}

fn le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The model: `y = (x * w + b - s) * s`, `x: float[batch, 512]` (`batch` a symbolic dim),
/// and the bytes of its external data file (`b`). Ops: Mul, Add, Sub.
pub fn tiny_model() -> (Vec<u8>, Vec<u8>) {
    let (w, b, s) = weights();
    let dims = |dims: &[Result<i64, &str>]| TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| tensor_shape_proto::Dimension {
                value: Some(match d {
                    Ok(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                    Err(p) => tensor_shape_proto::dimension::Value::DimParam(p.to_string()),
                }),
                ..Default::default()
            })
            .collect(),
    };
    let value = |name: &str, shape: &[Result<i64, &str>]| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(dims(shape)),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = |op: &str, inputs: &[&str], output: &str| NodeProto {
        op_type: Some(op.into()),
        name: Some(output.into()),
        input: inputs.iter().map(|i| i.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    };
    let entry = |key: &str, value: &str| StringStringEntryProto {
        key: Some(key.into()),
        value: Some(value.into()),
    };
    let b_bytes = le_bytes(&b);
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            name: Some("tiny".into()),
            node: vec![
                node("Mul", &["x", "w"], "xw"),
                node("Add", &["xw", "b"], "xwb"),
                node("Sub", &["xwb", "s"], "d"),
                node("Mul", &["d", "s"], "y"),
            ],
            initializer: vec![
                TensorProto {
                    name: Some("w".into()),
                    dims: vec![512],
                    data_type: Some(1),
                    raw_data: Some(le_bytes(&w).into()),
                    ..Default::default()
                },
                TensorProto {
                    name: Some("b".into()),
                    dims: vec![512],
                    data_type: Some(1),
                    data_location: Some(tensor_proto::DataLocation::External as i32),
                    external_data: vec![
                        entry("location", "tiny.onnx.data"),
                        entry("offset", "0"),
                        entry("length", &b_bytes.len().to_string()),
                    ],
                    ..Default::default()
                },
                TensorProto {
                    name: Some("s".into()),
                    dims: vec![],
                    data_type: Some(1),
                    float_data: vec![s],
                    ..Default::default()
                },
            ],
            input: vec![value("x", &[Err("batch"), Ok(512)])],
            output: vec![value("y", &[Err("batch"), Ok(512)])],
            ..Default::default()
        }),
        ..Default::default()
    };
    (model.encode_to_vec(), b_bytes)
}

/// A package folder with `models/tiny.onnx` and `models/tiny.onnx.data`.
fn package() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    fs::create_dir(&models).unwrap();
    let (model, data) = tiny_model();
    fs::write(models.join("tiny.onnx"), model).unwrap();
    fs::write(models.join("tiny.onnx.data"), data).unwrap();
    dir
}

/// The `rerun-if-changed` paths of `directives`.
fn watched(directives: &[String]) -> Vec<PathBuf> {
    directives
        .iter()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .map(PathBuf::from)
        .collect()
}

#[test]
fn a_model_is_converted_and_its_weights_embedded() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    let (w, b, s) = weights();
    for embedding in [Embedding::IncludeBytes, Embedding::StaticLib] {
        let compiled = builder(pkg.path(), out.path(), "models/tiny.onnx")
            .override_dim("batch", 1)
            .embedding(embedding)
            .compile()
            .unwrap();
        // The macro's key: the same function on the same literal.
        assert_eq!(
            compiled.key(),
            artifacts::artifact_key(pkg.path(), Path::new("models/tiny.onnx"))
        );
        assert!(compiled.key().starts_with("tiny-"));
        // The weights over 1 KiB are `@weights` constants; `s` stays inline in the graph.
        let names: Vec<&str> = compiled
            .constants()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["b", "w"]);
        let sidecar = compiled.sidecar().unwrap();
        assert!(sidecar.starts_with(compiled.artifact_dir()), "{sidecar:?}");
        assert_eq!(compiled.graph_path(), pkg.path().join("models/tiny.onnx"));
        if embedding == Embedding::IncludeBytes {
            let data = fs::read(compiled.artifact_dir().join(artifacts::DATA_FILE)).unwrap();
            for (c, want) in compiled.constants().iter().zip([&b, &w]) {
                let range = c.offset as usize..(c.offset + c.length) as usize;
                assert_eq!(data[range], le_bytes(want)[..], "{}", c.name);
            }
            let graph = load_graph_json(compiled.artifact_dir());
            assert!(matches!(
                graph.consts.values().find(|c| c.shape.is_empty()).map(|c| &c.init),
                Some(ConstInit::InlineBytes { bytes }) if bytes[..] == s.to_le_bytes()
            ));
            assert_eq!(graph.inputs["x"].shape, static_dims(&[1, 512]));
        }
        // What reruns the build script: the model, its external data, the folder where its
        // lock would be; nothing under OUT_DIR (cargo would rerun every build).
        let paths = watched(compiled.directives());
        let models = pkg.path().join("models");
        assert_eq!(
            paths,
            [
                models.join("tiny.onnx"),
                models.join("tiny.onnx.data"),
                models.clone(),
            ],
            "{:#?}",
            compiled.directives()
        );
        assert!(compiled
            .directives()
            .contains(&"cargo:rerun-if-env-changed=WEBNN_WEIGHTS_EMBED".to_string()));
    }
}

#[test]
fn the_converted_sidecar_is_written_only_when_it_changes() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    let build = || {
        builder(pkg.path(), out.path(), "models/tiny.onnx")
            .override_dim("batch", 2)
            .embedding(Embedding::IncludeBytes)
            .compile()
            .unwrap()
    };
    let first = build();
    let sidecar = first.sidecar().unwrap().to_path_buf();
    let before = fs::metadata(&sidecar).unwrap().modified().unwrap();
    // Names and modification times, but the data stamp's (rewritten when it could not yet
    // vouch for inputs written within the last two seconds, as for any new sidecar).
    let times = || -> Vec<(String, std::time::SystemTime)> {
        common::listing(first.artifact_dir())
            .into_iter()
            .filter(|(name, _, _)| name != "data.stamp")
            .map(|(name, _, time)| (name, time))
            .collect()
    };
    let listing = times();
    std::thread::sleep(std::time::Duration::from_millis(20));
    // The model rewritten with the same bytes (a touch): nothing in OUT_DIR changes.
    let (model, _) = tiny_model();
    fs::write(pkg.path().join("models/tiny.onnx"), model).unwrap();
    build();
    assert_eq!(fs::metadata(&sidecar).unwrap().modified().unwrap(), before);
    assert_eq!(times(), listing);
    // New weights in the external data file: new sidecar and data.
    let mut data = fs::read(pkg.path().join("models/tiny.onnx.data")).unwrap();
    data[..4].copy_from_slice(&7.5f32.to_le_bytes());
    fs::write(pkg.path().join("models/tiny.onnx.data"), &data).unwrap();
    let again = build();
    let bytes = fs::read(again.artifact_dir().join(artifacts::DATA_FILE)).unwrap();
    let b = &again.constants()[0];
    assert_eq!(b.name, "b");
    assert_eq!(bytes[b.offset as usize..][..4], 7.5f32.to_le_bytes());
}

#[test]
fn the_run_time_mode_resolves_the_converted_sidecar() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/tiny.onnx")
        .override_dim("batch", 1)
        .embedding(Embedding::Runtime)
        .compile()
        .unwrap();
    let text = fs::read_to_string(compiled.artifact_dir().join(artifacts::INDEX_FILE)).unwrap();
    let index = artifacts::Index::from_json(&text).unwrap();
    let runtime = index.runtime.unwrap();
    let model = pkg.path().join("models/tiny.onnx");
    assert_eq!(runtime.graph_path, model.display().to_string());
    let sidecar = compiled.sidecar().unwrap();
    assert_eq!(runtime.weights, Some(sidecar.display().to_string()));
    // What the program does on first use: the embedded graph, planned from those paths.
    let graph_json =
        fs::read_to_string(compiled.artifact_dir().join(artifacts::GRAPH_FILE)).unwrap();
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let embedded: &'static EmbeddedGraph =
        Box::leak(Box::new(webnn_weights_runtime::__macro::runtime(
            "models/tiny.onnx",
            leak(graph_json),
            leak(runtime.graph_path),
            runtime.weights.map(leak),
            None,
            None,
        )));
    let (w, _, _) = weights();
    let constant = embedded.try_constant("w").unwrap().unwrap();
    assert_eq!(constant.bytes(), &le_bytes(&w)[..]);
    // Nothing was embedded, and nothing under OUT_DIR is watched.
    assert!(!compiled.artifact_dir().join(artifacts::DATA_FILE).exists());
    assert!(watched(compiled.directives())
        .iter()
        .all(|p| !p.starts_with(out.path())));
}

#[test]
fn a_lock_beside_the_model_pins_the_converted_weights() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    let lock_path = pkg.path().join("models/tiny.onnx.lock");
    fs::write(&lock_path, lock_json(&pkg.path().join("models"))).unwrap();

    let build = || {
        builder(pkg.path(), out.path(), "models/tiny.onnx")
            .override_dim("batch", 1)
            .embedding(Embedding::IncludeBytes)
            .compile()
            .map_err(|err| Diagnostic::new("models/tiny.onnx", &err).to_string())
    };
    let compiled = build().unwrap();
    // The lock is watched, by its own path now that it exists.
    assert!(watched(compiled.directives()).contains(&lock_path));
    let table = fs::read(compiled.artifact_dir().join(artifacts::TABLE_FILE)).unwrap();
    let table = artifacts::ConstantTable::parse(&table).unwrap();
    assert!(table.iter().all(|c| c.sha256().is_some()));

    // Other weights: the build fails naming the constant and the lock.
    let mut bytes = fs::read(pkg.path().join("models/tiny.onnx.data")).unwrap();
    bytes[0] ^= 1;
    fs::write(pkg.path().join("models/tiny.onnx.data"), &bytes).unwrap();
    let text = build().unwrap_err();
    assert!(text.contains("constant `b`"), "{text}");
    assert!(text.contains("tiny.onnx.lock"), "{text}");
}

/// The weights lock of `dir/tiny.onnx` converted with `batch` = 1: what `webnn-weights lock`
/// writes for the converted graph and its SafeTensors archive (`webnn-weights convert-onnx`),
/// here made with the same library calls in a scratch copy of `dir`.
fn lock_json(dir: &Path) -> Vec<u8> {
    let scratch = tempfile::tempdir().unwrap();
    for name in ["tiny.onnx", "tiny.onnx.data"] {
        fs::copy(dir.join(name), scratch.path().join(name)).unwrap();
    }
    let model = scratch.path().join("tiny.onnx");
    let conversion = webnn_weights_onnx::convert(
        &model,
        &webnn_weights_onnx::ConvertOptions::new().override_dim("batch", 1),
    )
    .unwrap();
    let archive = Path::new("tiny.safetensors");
    webnn_weights_tools::write_external_weights_safetensors(
        &conversion.graph,
        &conversion.weights_map(),
        &scratch.path().join(archive),
    )
    .unwrap();
    let plan = plan_external_weights(&conversion.graph, &model, Some(archive), None).unwrap();
    plan.to_lock().unwrap().to_json()
}

#[test]
fn conversion_errors_are_diagnostics_naming_the_model() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    // `batch` has no size.
    let err = builder(pkg.path(), out.path(), "models/tiny.onnx")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Onnx(_)), "{err:?}");
    let text = Diagnostic::new("models/tiny.onnx", &err).to_string();
    assert!(
        text.starts_with("error: webnn-weights: cannot embed `models/tiny.onnx`"),
        "{text}"
    );
    assert!(text.contains("tiny.onnx"), "{text}");
    assert!(text.contains("\"batch\""), "{text}");
    assert!(text.contains("fix: give the sizes in build.rs"), "{text}");
    assert!(text.contains(".override_dim(\"batch\", 1)"), "{text}");
    // A missing external data file: the error names it; nothing was written.
    fs::remove_file(pkg.path().join("models/tiny.onnx.data")).unwrap();
    let err = builder(pkg.path(), out.path(), "models/tiny.onnx")
        .override_dim("batch", 1)
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/tiny.onnx", &err).to_string();
    assert!(text.contains("tiny.onnx.data"), "{text}");
    assert!(common::listing(out.path()).is_empty());
    // Not a model at all.
    fs::write(pkg.path().join("models/bad.onnx"), b"not protobuf \xff\xff").unwrap();
    let err = builder(pkg.path(), out.path(), "models/bad.onnx")
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/bad.onnx", &err).to_string();
    assert!(text.contains("bad.onnx"), "{text}");
    assert!(text.contains("not an ONNX model"), "{text}");
}

#[test]
fn settings_that_do_not_apply_are_errors() {
    let pkg = package();
    let out = tempfile::tempdir().unwrap();
    let err = builder(pkg.path(), out.path(), "models/tiny.onnx")
        .weights("tiny.safetensors")
        .compile()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(".weights(…) applies to WebNN graphs"),
        "{err}"
    );
    // `.override_dim(…)` and `.input_shape(…)` on a WebNN graph: tests/compile.rs, with and
    // without the feature.
    // The same options as input_shape: the whole shape of `x`.
    let compiled = builder(pkg.path(), out.path(), "models/tiny.onnx")
        .input_shape("x", &[3, 512])
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    let graph = load_graph_json(compiled.artifact_dir());
    assert_eq!(graph.inputs["x"].shape, static_dims(&[3, 512]));
}

fn static_dims(dims: &[u32]) -> Vec<Dimension> {
    dims.iter().map(|&d| Dimension::Static(d)).collect()
}

fn load_graph_json(dir: &Path) -> webnn_weights_runtime::GraphJson {
    let text = fs::read_to_string(dir.join(artifacts::GRAPH_FILE)).unwrap();
    webnn_weights_runtime::parse_graph_json(&text).unwrap()
}

/// `tests/fixtures/onnx-model/` (embedded by the tests crate's build.rs) is this model and
/// its weights lock:
/// `WEBNN_WEIGHTS_BLESS=1 cargo test -p webnn-weights-build --features onnx --test onnx`
/// writes it again.
#[test]
fn the_committed_fixture_is_this_model() {
    let dir = common::fixtures().join("onnx-model");
    let (model, data) = tiny_model();
    let scratch = tempfile::tempdir().unwrap();
    fs::write(scratch.path().join("tiny.onnx"), &model).unwrap();
    fs::write(scratch.path().join("tiny.onnx.data"), &data).unwrap();
    let lock = lock_json(scratch.path());
    for (name, bytes) in [
        ("tiny.onnx", model),
        ("tiny.onnx.data", data),
        ("tiny.onnx.lock", lock),
    ] {
        let path = dir.join(name);
        if webnn_weights_test_support::golden::blessing() {
            fs::create_dir_all(&dir).unwrap();
            fs::write(&path, &bytes).unwrap();
        } else {
            let found = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                found == bytes,
                "{} differs from the model this test builds; if intended: WEBNN_WEIGHTS_BLESS=1 cargo test -p webnn-weights-build --features onnx --test onnx",
                path.display()
            );
        }
    }
}

#[test]
fn without_the_feature_the_message_names_it() {
    // The error this build has no use for, as the other build prints it.
    let err = Error::OnnxFeature {
        graph: PathBuf::from("models/model.onnx"),
    };
    let text = Diagnostic::new("models/model.onnx", &err).to_string();
    assert!(text.contains("feature `onnx`"), "{text}");
    assert!(text.contains("features = [\"onnx\"]"), "{text}");
    let _ = Builder::new("models/model.onnx");
}
