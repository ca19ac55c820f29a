//! Discovery and paths: the format's "Discovery" section, rule by rule.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{plan_external_weights, DataType, ResolveError, SidecarKind};

fn u8_graph() -> webnn_weights_runtime::GraphJson {
    graph(&[("c", DataType::Uint8, &[2], "w")])
}

/// Writes a SafeTensors archive whose tensor `w` holds `bytes`.
fn archive(path: &Path, bytes: [u8; 2]) {
    write_safetensors(path, None, &[("w", "U8", &[2], &bytes)]);
}

/// Writes a blob whose tensor `w` (offset 1) holds `bytes`, with its manifest.
fn blob(path: &Path, manifest: &Path, bytes: [u8; 2]) {
    write_blob(path, &[0, bytes[0], bytes[1]], manifest, &[("w", 1, 2)]);
}

#[test]
fn discovery_order_first_existing_wins() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let g = u8_graph();
    let gp = d.join("net.webnn");
    std::fs::write(d.join("manifest.json"), "{}").unwrap();
    blob(
        &d.join("model.weights"),
        &d.join("net.manifest.json"),
        [4, 4],
    );
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [4, 4]);
    archive(&d.join("model.safetensors"), [3, 3]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [3, 3]);
    blob(&d.join("net.weights"), &d.join("net.manifest.json"), [2, 2]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [2, 2]);
    archive(&d.join("net.safetensors"), [1, 1]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [1, 1]);
}

#[test]
fn watched_paths_list_candidates_in_order() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let gp = d.join("net.webnn");
    blob(&d.join("model.weights"), &d.join("manifest.json"), [4, 4]);
    let plan = plan_external_weights(&u8_graph(), &gp, None, None).unwrap();
    let names: Vec<PathBuf> = [
        "net.safetensors",
        "net.weights",
        "model.safetensors",
        "model.weights",
        "net.manifest.json",
        "manifest.json",
    ]
    .iter()
    .map(|n| d.join(n))
    .collect();
    assert_eq!(plan.watched_paths(), names);
    let sidecar = plan.sidecar().unwrap();
    assert_eq!(sidecar.path, d.join("model.weights"));
    assert_eq!(sidecar.len, 3);
    assert_eq!(
        sidecar.kind,
        SidecarKind::Blob {
            manifest: d.join("manifest.json")
        }
    );
}

#[test]
fn no_sidecar_names_every_candidate() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("net.webnn");
    let err = expect_error(
        &u8_graph(),
        &gp,
        None,
        None,
        &[
            "net.webnn",
            "`c`",
            "\"w\"",
            "net.safetensors",
            "net.weights",
            "model.safetensors",
            "model.weights",
            "fix",
        ],
    );
    assert!(matches!(err, ResolveError::NoSidecar { .. }));
}

#[test]
fn graph_without_weights_touches_no_file() {
    let mut g = graph(&[]);
    g.consts.insert(
        "inline".into(),
        webnn_weights_runtime::ConstDecl {
            data_type: DataType::Uint8,
            shape: vec![1],
            init: webnn_weights_runtime::ConstInit::InlineBytes {
                bytes: vec![5].into(),
            },
        },
    );
    let gp = Path::new("/definitely/not/here/net.webnn");
    let before = g.clone();
    webnn_weights_runtime::resolve_external_weights(&mut g, gp, Some(Path::new("x.weights")), None)
        .unwrap();
    assert_eq!(g, before);
    let plan = plan_external_weights(&g, gp, None, None).unwrap();
    assert!(plan.sidecar().is_none() && plan.watched_paths().is_empty());
}

#[test]
fn explicit_weights_relative_to_graph_folder() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    archive(&d.join("sub/custom.safetensors"), [7, 8]);
    // a discoverable file that must not win over the explicit path
    archive(&d.join("net.safetensors"), [0, 0]);
    let gp = d.join("net.webnn");
    let rel = Path::new("sub/custom.safetensors");
    assert_eq!(
        resolve_one(&u8_graph(), &gp, Some(rel), None, "c").unwrap(),
        [7, 8]
    );
    let plan = plan_external_weights(&u8_graph(), &gp, Some(rel), None).unwrap();
    assert_eq!(plan.watched_paths(), vec![d.join("sub/custom.safetensors")]);
}

#[test]
fn explicit_absolute_path_as_given() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let other = webnn_weights_test_support::tempdir().unwrap();
    let abs = other.path().join("w.safetensors");
    archive(&abs, [9, 9]);
    let gp = dir.path().join("net.webnn");
    assert_eq!(
        resolve_one(&u8_graph(), &gp, Some(&abs), None, "c").unwrap(),
        [9, 9]
    );
}

#[test]
fn explicit_missing_weights_is_an_error() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("net.webnn");
    let err = expect_error(
        &u8_graph(),
        &gp,
        Some(Path::new("nope.safetensors")),
        None,
        &[
            "weights file",
            "nope.safetensors",
            "does not exist",
            "net.webnn",
        ],
    );
    assert!(matches!(err, ResolveError::NotFound { .. }));
}

#[test]
fn safetensors_extension_any_case_ignores_manifest() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let gp = d.join("net.webnn");
    for name in ["a.SafeTensors", "b.SAFETENSOR", "c.safetensor"] {
        archive(&d.join(name), [1, 2]);
        // the manifest argument names a missing file: ignored for archives
        let plan = plan_external_weights(
            &u8_graph(),
            &gp,
            Some(Path::new(name)),
            Some(Path::new("missing.json")),
        )
        .unwrap();
        assert_eq!(
            plan.sidecar().unwrap().kind,
            SidecarKind::SafeTensors,
            "{name}"
        );
        assert!(!plan.watched_paths().contains(&d.join("missing.json")));
        assert_eq!(plan.materialize().unwrap()["c"][..], [1, 2]);
    }
}

#[test]
fn other_extensions_are_blobs_needing_a_manifest() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let gp = d.join("net.webnn");
    blob(&d.join("data.bin"), &d.join("custom.json"), [5, 6]);
    let err = expect_error(
        &u8_graph(),
        &gp,
        Some(Path::new("data.bin")),
        None,
        &[
            "data.bin",
            "needs a manifest",
            "net.manifest.json",
            "manifest.json",
            "fix",
        ],
    );
    assert!(matches!(err, ResolveError::NoManifest { .. }));
    let got = resolve_one(
        &u8_graph(),
        &gp,
        Some(Path::new("data.bin")),
        Some(Path::new("custom.json")),
        "c",
    )
    .unwrap();
    assert_eq!(got, [5, 6]);
}

#[test]
fn manifest_discovery_stem_then_default() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let gp = d.join("net.webnn");
    std::fs::write(d.join("net.weights"), [0, 1, 2, 3, 4]).unwrap();
    std::fs::write(
        d.join("manifest.json"),
        r#"{"tensors":{"w":{"byteOffset":3,"byteLength":2}}}"#,
    )
    .unwrap();
    assert_eq!(
        resolve_one(&u8_graph(), &gp, None, None, "c").unwrap(),
        [3, 4]
    );
    std::fs::write(
        d.join("net.manifest.json"),
        r#"{"tensors":{"w":{"byteOffset":1,"byteLength":2}}}"#,
    )
    .unwrap();
    assert_eq!(
        resolve_one(&u8_graph(), &gp, None, None, "c").unwrap(),
        [1, 2]
    );
    // an explicit manifest wins over both, relative to the graph's folder
    std::fs::write(
        d.join("x.json"),
        r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#,
    )
    .unwrap();
    assert_eq!(
        resolve_one(&u8_graph(), &gp, None, Some(Path::new("x.json")), "c").unwrap(),
        [0, 1]
    );
    let err = expect_error(
        &u8_graph(),
        &gp,
        None,
        Some(Path::new("y.json")),
        &["manifest", "y.json", "does not exist"],
    );
    assert!(matches!(
        err,
        ResolveError::NotFound {
            role: "manifest",
            ..
        }
    ));
}

#[test]
fn folder_where_a_file_is_expected_is_an_error() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let d = dir.path();
    let gp = d.join("net.webnn");
    // a discovery candidate that is a folder
    std::fs::create_dir(d.join("net.safetensors")).unwrap();
    archive(&d.join("model.safetensors"), [1, 1]);
    let err = expect_error(
        &u8_graph(),
        &gp,
        None,
        None,
        &["net.safetensors", "not a regular file", "folder"],
    );
    assert!(matches!(err, ResolveError::NotAFile { .. }));
    // an explicit weights folder
    std::fs::create_dir(d.join("dir.weights")).unwrap();
    expect_error(
        &u8_graph(),
        &gp,
        Some(Path::new("dir.weights")),
        None,
        &["dir.weights", "not a regular file"],
    );
    // a manifest folder
    let d2 = webnn_weights_test_support::tempdir().unwrap();
    let gp2 = d2.path().join("net.webnn");
    std::fs::write(d2.path().join("net.weights"), [1, 2]).unwrap();
    std::fs::create_dir(d2.path().join("net.manifest.json")).unwrap();
    let err = expect_error(
        &u8_graph(),
        &gp2,
        None,
        None,
        &["manifest", "net.manifest.json", "not a regular file"],
    );
    assert!(matches!(
        err,
        ResolveError::NotAFile {
            role: "manifest",
            ..
        }
    ));
}

#[test]
fn graph_in_current_folder_discovers_beside_it() {
    // A bare file name has an empty parent: discovery looks in ".".
    let plan = plan_external_weights(
        &u8_graph(),
        Path::new("no-such-graph-xyz.webnn"),
        None,
        None,
    );
    match plan {
        Err(ResolveError::NoSidecar { candidates, .. }) => {
            assert_eq!(candidates[0], Path::new("./no-such-graph-xyz.safetensors"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn graph_named_model_lists_each_candidate_once() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("model.webnn");
    match plan_external_weights(&u8_graph(), &gp, None, None) {
        Err(ResolveError::NoSidecar { candidates, .. }) => {
            assert_eq!(
                candidates,
                vec![
                    dir.path().join("model.safetensors"),
                    dir.path().join("model.weights")
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    blob(
        &dir.path().join("model.weights"),
        &dir.path().join("manifest.json"),
        [1, 2],
    );
    let plan = plan_external_weights(&u8_graph(), &gp, None, None).unwrap();
    let watched = plan.watched_paths();
    let names: Vec<&str> = watched
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "model.safetensors",
            "model.weights",
            "model.manifest.json",
            "manifest.json"
        ]
    );
}
