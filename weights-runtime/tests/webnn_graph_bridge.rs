//! The bridge to webnn-graph's types (feature `webnn-graph`): round trips of every fixture
//! graph, the drop-in resolver against ours and against webnn-graph's own, errors in
//! webnn-graph's categories. (Every conformance case of the other test files also runs
//! through the bridge: `common::bridge::check`.)
#![cfg(feature = "webnn-graph")]
#![allow(clippy::result_large_err)]

mod common;

use serde_json::json;
use std::path::{Path, PathBuf};
use webnn_graph::ast as wg;
use webnn_graph::WeightResolveError;
use webnn_weights_runtime::webnn_graph_compat::resolve_external_weights;
use webnn_weights_runtime::{
    parse_webnn, read_graph_file, ConstDecl, ConstInit, DataType, Dimension, GraphJson,
    ResolveError,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Every graph file under the fixtures, sorted.
fn fixture_graphs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "webnn")
                || path
                    .file_name()
                    .is_some_and(|n| n == "format_reference.json")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixtures(), &mut out);
    out.sort();
    out
}

/// The explicit sidecar a fixture needs (the others are found by discovery).
fn explicit_weights(graph: &Path) -> Option<&'static str> {
    if graph.ends_with("hf-safetensors/head.webnn") {
        Some("lm_head.safetensors")
    } else if graph.ends_with("locked/runtime.webnn") {
        Some("tied.safetensors")
    } else {
        None
    }
}

#[test]
fn every_fixture_graph_survives_the_round_trip_and_resolves_alike() {
    let mut unresolved = Vec::new();
    for path in fixture_graphs() {
        let graph = read_graph_file(&path).unwrap();
        let weights = explicit_weights(&path).map(Path::new);
        let mut owned = graph.clone();
        let result =
            webnn_weights_runtime::resolve_external_weights(&mut owned, &path, weights, None);
        if result.is_err() {
            unresolved.push(path.strip_prefix(fixtures()).unwrap().to_path_buf());
        }
        // Round trips of the graph and of its resolved form, the drop-in resolver, and
        // webnn-graph's own resolver, all against ours.
        common::bridge::check(&graph, &path, weights, None, &result.map(|()| owned));
    }
    // The format reference has no sidecar (it shows the text format), and the pieces
    // graph's archive is written by the tests crate's build script.
    assert_eq!(
        unresolved,
        [
            "format/format_reference.json",
            "format/format_reference.webnn",
            "pieces/pieces.webnn"
        ]
        .map(PathBuf::from)
    );
    assert!(fixture_graphs().len() >= 15, "every fixture graph is read");
}

#[test]
fn every_field_crosses_over_exactly() {
    let text = std::fs::read_to_string(fixtures().join("format/format_reference.webnn")).unwrap();
    let mut ours = parse_webnn(&text).unwrap();
    // Every initializer kind and every data type.
    ours.consts.insert(
        "external_weight".into(),
        ConstDecl {
            data_type: DataType::Float32,
            shape: vec![4, 4],
            init: ConstInit::Weights {
                r#ref: "encoder.weight".into(),
            },
        },
    );
    for (i, data_type) in DataType::ALL.into_iter().enumerate() {
        let shape = vec![3];
        let length = data_type.byte_length(&shape).unwrap() as usize;
        ours.consts.insert(
            format!("all_{data_type}"),
            ConstDecl {
                data_type,
                shape,
                init: ConstInit::InlineBytes {
                    bytes: (0..length)
                        .map(|b| (b * 7 + i) as u8)
                        .collect::<Vec<_>>()
                        .into(),
                },
            },
        );
    }
    let theirs = wg::GraphJson::from(ours.clone());

    assert_eq!(theirs.format, "webnn-graph-json");
    assert_eq!(theirs.name.as_deref(), Some("format_reference"));
    assert!(theirs.quantized);
    assert_eq!(
        theirs.inputs["input"].shape,
        [
            wg::Dimension::Dynamic(wg::DynamicDimension {
                name: "batch".into(),
                max_size: 8
            }),
            wg::Dimension::Static(4)
        ]
    );
    assert_eq!(
        theirs.consts["bias"].init,
        wg::ConstInit::Scalar { value: json!(0.5) }
    );
    assert_eq!(theirs.consts["all_int4"].data_type, wg::DataType::Int4);
    let split = theirs.nodes.iter().find(|n| n.op == "split").unwrap();
    assert_eq!(
        split.outputs.as_deref(),
        Some(&["left".to_string(), "right".to_string()][..])
    );
    assert_eq!(
        theirs.nodes[0].options["metadata"],
        json!({"kind": "reference", "axes": [1], "enabled": true})
    );
    // The same JSON on both sides, key for key, and back to an equal graph.
    assert_eq!(
        serde_json::to_value(&theirs).unwrap(),
        serde_json::to_value(&ours).unwrap()
    );
    assert_eq!(GraphJson::from(theirs), ours);
    assert!(matches!(
        ours.inputs["input"].shape[0],
        Dimension::Dynamic { .. }
    ));
}

#[test]
fn graphs_built_with_webnn_graph_come_over() {
    // Options in insertion order (webnn-graph's map) come over sorted, as GraphJson writes
    // them; a graph read by webnn-graph's parser converts to what ours reads.
    let text = std::fs::read_to_string(fixtures().join("format/format_reference.webnn")).unwrap();
    let theirs = webnn_graph::parser::parse_wg_text(&text).unwrap();
    let ours = GraphJson::from(theirs.clone());
    assert_eq!(ours, parse_webnn(&text).unwrap());
    assert_eq!(
        serde_json::to_value(&ours).unwrap(),
        serde_json::to_value(&theirs).unwrap()
    );
}

/// A blob of constants `c00`..`c09` (uint8 [2]); `missing` names the one whose tensor
/// the manifest lacks.
fn blob_case(dir: &Path, missing: Option<&str>) -> (wg::GraphJson, PathBuf) {
    let mut graph = wg::GraphJson::from(GraphJson::new(Some("g".into())));
    let mut entries = Vec::new();
    let mut blob = Vec::new();
    let names: Vec<String> = (0..10).map(|i| format!("c{i:02}")).collect();
    for (i, name) in names.iter().enumerate() {
        graph.consts.insert(
            name.clone(),
            wg::ConstDecl {
                data_type: wg::DataType::Uint8,
                shape: vec![2],
                init: wg::ConstInit::Weights {
                    r#ref: name.clone(),
                },
            },
        );
        blob.extend_from_slice(&[i as u8, 100 + i as u8]);
        if Some(name.as_str()) != missing {
            entries.push((name.as_str(), 2 * i as u64, 2u64));
        }
    }
    common::write_blob(
        &dir.join("g.weights"),
        &blob,
        &dir.join("g.manifest.json"),
        &entries,
    );
    (graph, dir.join("g.webnn"))
}

#[test]
fn an_error_at_the_last_constant_leaves_the_graph_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let (graph, path) = blob_case(dir.path(), Some("c09"));
    let before = serde_json::to_value(&graph).unwrap();

    let mut ours = graph.clone();
    let err = resolve_external_weights(&mut ours, &path, None, None).unwrap_err();
    assert!(
        matches!(&err, ResolveError::MissingTensor { constant, .. } if constant == "c09"),
        "{err}"
    );
    assert_eq!(serde_json::to_value(&ours).unwrap(), before, "untouched");

    // webnn-graph's own resolver has inlined the nine constants before it failed.
    let mut theirs = graph.clone();
    webnn_graph::resolve_external_weights(&mut theirs, &path, None, None).unwrap_err();
    let inlined = theirs
        .consts
        .values()
        .filter(|c| matches!(c.init, wg::ConstInit::InlineBytes { .. }))
        .count();
    assert_eq!(
        inlined, 9,
        "webnn-graph 0.4.0 leaves the graph half resolved"
    );
}

#[test]
fn the_drop_in_resolver_resolves_like_ours_and_webnn_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let (graph, path) = blob_case(dir.path(), None);
    let mut ours = graph.clone();
    resolve_external_weights(&mut ours, &path, None, None).unwrap();
    let mut theirs = graph.clone();
    webnn_graph::resolve_external_weights(&mut theirs, &path, None, None).unwrap();
    assert_eq!(
        serde_json::to_value(&ours).unwrap(),
        serde_json::to_value(&theirs).unwrap()
    );
    assert_eq!(
        ours.consts["c03"].init,
        wg::ConstInit::InlineBytes {
            bytes: vec![3, 103]
        }
    );
    // Explicit paths mean what they mean to webnn-graph: relative to the graph's folder.
    let mut explicit = graph.clone();
    resolve_external_weights(
        &mut explicit,
        &path,
        Some("g.weights"),
        Some("g.manifest.json"),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&explicit).unwrap(),
        serde_json::to_value(&ours).unwrap()
    );
    // A graph without @weights touches no file, as in webnn-graph.
    let mut plain = wg::GraphJson::from(GraphJson::new(None));
    resolve_external_weights(&mut plain, Path::new("/no/such/g.webnn"), None, None).unwrap();
}

#[test]
fn sharded_archives_work_through_the_drop_in_resolver() {
    let path = fixtures().join("hf-sharded/encoder.webnn");
    let graph = wg::GraphJson::from(read_graph_file(&path).unwrap());
    let mut ours = graph.clone();
    resolve_external_weights(&mut ours, &path, None, None).unwrap();
    assert_eq!(
        GraphJson::from(ours),
        webnn_weights_runtime::load_graph(&path).unwrap()
    );
    // webnn-graph 0.4.0 finds no sidecar: it knows no sharded index.
    let mut theirs = graph;
    let err = webnn_graph::resolve_external_weights(&mut theirs, &path, None, None).unwrap_err();
    assert!(matches!(err, WeightResolveError::Missing(_)), "{err}");
}

#[test]
fn errors_convert_into_webnn_graphs_categories() {
    let dir = tempfile::tempdir().unwrap();
    let convert =
        |graph: &wg::GraphJson, path: &Path, weights: Option<&str>, manifest: Option<&str>| {
            let mut copy = graph.clone();
            let err = resolve_external_weights(&mut copy, path, weights, manifest).unwrap_err();
            let message = err.to_string();
            (message, WeightResolveError::from(err))
        };

    // No sidecar, and an explicit path that does not exist: Missing, with our message
    // and the fix.
    let (graph, path) = blob_case(dir.path(), None);
    let (message, err) = convert(&graph, &path, Some("nope.safetensors"), None);
    let WeightResolveError::Missing(text) = &err else {
        panic!("{err:?}")
    };
    assert!(text.starts_with(&message), "{text}");
    let (_, err) = convert(&graph, &dir.path().join("other.webnn"), None, None);
    assert!(matches!(err, WeightResolveError::Missing(_)), "{err:?}");

    // A manifest that is not JSON: ManifestJson, naming it.
    std::fs::write(dir.path().join("g.manifest.json"), "{").unwrap();
    let (_, err) = convert(&graph, &path, None, None);
    let WeightResolveError::ManifestJson { path: at, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(at, &dir.path().join("g.manifest.json"));

    // A tensor missing from a blob's manifest: Manifest; from an archive: Safetensors.
    let (graph, path) = blob_case(dir.path(), Some("c04"));
    let (message, err) = convert(&graph, &path, None, None);
    let WeightResolveError::Manifest(text) = &err else {
        panic!("{err:?}")
    };
    assert!(text.starts_with(&message), "{text}");
    let st = dir.path().join("s.safetensors");
    common::write_safetensors(&st, None, &[("other", "U8", &[2], &[1, 2])]);
    let (_, err) = convert(&graph, &path, Some("s.safetensors"), None);
    assert!(matches!(err, WeightResolveError::Safetensors(_)), "{err:?}");

    // A file that cannot be read: ReadFile, with the operating system's error kept.
    #[cfg(unix)]
    {
        let folder = dir.path().join("weights.safetensors");
        std::fs::create_dir(&folder).unwrap();
        let io = ResolveError::Io {
            graph: path.clone(),
            path: folder.clone(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        let WeightResolveError::ReadFile { path: at, source } = WeightResolveError::from(io) else {
            panic!()
        };
        assert_eq!(at, folder);
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
    }
}

/// Set in the child process of `the_drop_in_resolver_prints_nothing`.
const CHILD: &str = "WEBNN_WEIGHTS_BRIDGE_TEST_CHILD";

#[test]
fn the_drop_in_resolver_prints_nothing() {
    if let Some(which) = std::env::var_os(CHILD) {
        let dir = tempfile::tempdir().unwrap();
        let (mut graph, path) = blob_case(dir.path(), None);
        if which == "ours" {
            resolve_external_weights(&mut graph, &path, None, None).unwrap();
        } else {
            webnn_graph::resolve_external_weights(&mut graph, &path, None, None).unwrap();
        }
        return;
    }
    // The test harness writes to stdout; stderr is the resolvers' alone.
    let stderr_of = |which: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "the_drop_in_resolver_prints_nothing",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, which)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(stderr_of("ours"), "");
    assert!(stderr_of("webnn-graph").contains("resolve external weights"));
}
