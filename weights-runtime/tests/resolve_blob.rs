//! Manifest-backed blobs: absolute ranges, WGWT and headerless, bounds and lengths.

mod common;
use common::*;
use std::path::PathBuf;
use webnn_weights_runtime::{plan_external_weights, DataType, ManifestError, ResolveError};

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let blob = dir.path().join("m.weights");
    let manifest = dir.path().join("m.manifest.json");
    (dir, gp, blob, manifest)
}

#[test]
fn wgwt_blob_offsets_from_8() {
    let (_d, gp, blob, manifest) = setup();
    let mut bytes = b"WGWT".to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&1.5f32.to_le_bytes());
    bytes.extend_from_slice(&[1, 2]);
    write_blob(&blob, &bytes, &manifest, &[("w", 8, 4), ("b", 12, 2)]);
    let g = graph(&[
        ("w", DataType::Float32, &[], "w"),
        ("b", DataType::Int8, &[2], "b"),
    ]);
    assert_eq!(
        resolve_one(&g, &gp, None, None, "w").unwrap(),
        1.5f32.to_le_bytes()
    );
    assert_eq!(resolve_one(&g, &gp, None, None, "b").unwrap(), [1, 2]);
}

#[test]
fn headerless_blob_offsets_from_0() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(
        &blob,
        &[9, 8, 7, 6, 5, 4],
        &manifest,
        &[("a", 0, 2), ("b", 2, 4)],
    );
    let g = graph(&[
        ("a", DataType::Float16, &[1], "a"),
        ("b", DataType::Uint32, &[], "b"),
    ]);
    assert_eq!(resolve_one(&g, &gp, None, None, "a").unwrap(), [9, 8]);
    assert_eq!(resolve_one(&g, &gp, None, None, "b").unwrap(), [7, 6, 5, 4]);
}

#[test]
fn overlapping_and_repeated_ranges_are_fine() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(&blob, &[1, 2, 3], &manifest, &[("a", 0, 2), ("b", 1, 2)]);
    let g = graph(&[
        ("a", DataType::Uint8, &[2], "a"),
        ("b", DataType::Uint8, &[2], "b"),
        ("c", DataType::Int8, &[2], "b"),
    ]);
    assert_eq!(resolve_one(&g, &gp, None, None, "b").unwrap(), [2, 3]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [2, 3]);
}

#[test]
fn range_beyond_file_rejected() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(&blob, &[0; 10], &manifest, &[("w", 8, 4)]);
    let g = graph(&[("c", DataType::Float32, &[], "w")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            "`c`",
            "\"w\"",
            "m.manifest.json",
            "m.weights",
            "10 bytes",
            "byteOffset 8 + byteLength 4 = 12",
            "fix",
        ],
    );
    assert!(matches!(err, ResolveError::RangeOutOfBounds { .. }));
}

#[test]
fn range_addition_overflow_rejected() {
    let (_d, gp, blob, manifest) = setup();
    std::fs::write(&blob, [0; 4]).unwrap();
    std::fs::write(
        &manifest,
        format!(
            r#"{{"tensors":{{"w":{{"byteOffset":{},"byteLength":4}}}}}}"#,
            u64::MAX - 1
        ),
    )
    .unwrap();
    let g = graph(&[("c", DataType::Float32, &[], "w")]);
    expect_error(&g, &gp, None, None, &["more than 2^64", "`c`"]);
}

#[test]
fn range_length_must_equal_declared_size() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(&blob, &[0; 16], &manifest, &[("w", 0, 12), ("p", 0, 3)]);
    let g = graph(&[("c", DataType::Float32, &[2, 2], "w")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            "`c`",
            "\"w\"",
            "float32 [2, 2]",
            "needs 16 bytes, found 12",
            "m.manifest.json",
        ],
    );
    assert!(matches!(err, ResolveError::LengthMismatch { .. }));
    // packed rule: 5 int4 elements need 3 bytes
    let g = graph(&[("p", DataType::Int4, &[5], "p")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "p").unwrap(), [0, 0, 0]);
    let g = graph(&[("p", DataType::Uint4, &[4], "p")]);
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["uint4 [4]", "needs 2 bytes, found 3"],
    );
}

#[test]
fn missing_entry_rejected() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(&blob, &[0; 4], &manifest, &[("w", 0, 4)]);
    let g = graph(&[("c", DataType::Float32, &[], "v")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &["\"v\"", "is not in", "m.manifest.json", "`w`"],
    );
    assert!(matches!(err, ResolveError::MissingTensor { .. }));
}

#[test]
fn manifest_names_normalized_and_ambiguity() {
    let (_d, gp, blob, manifest) = setup();
    write_blob(
        &blob,
        &[1, 2, 3],
        &manifest,
        &[("l.0.w", 0, 1), ("l::0.w", 1, 1), ("m.x", 2, 1)],
    );
    let g = graph(&[("c", DataType::Uint8, &[1], "m_x")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [3]);
    let g = graph(&[("c", DataType::Uint8, &[1], "l_0_w")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [1]);
    write_blob(
        &blob,
        &[1, 2, 3],
        &manifest,
        &[("l.0", 0, 1), ("l_0", 1, 1), ("l::0", 2, 1)],
    );
    let g = graph(&[("c", DataType::Uint8, &[1], "l__0")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [3]);
    let g = graph(&[("c", DataType::Uint8, &[1], "l_0")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [2]);
    write_blob(&blob, &[1, 2], &manifest, &[("a.b", 0, 1), ("a_b", 1, 1)]);
    std::fs::write(&manifest, r#"{"tensors":{"a.b":{"byteOffset":0,"byteLength":1},"a::b":{"byteOffset":1,"byteLength":1}}}"#).unwrap();
    let g = graph(&[("c", DataType::Uint8, &[1], "a_b")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [1]);
    std::fs::write(&manifest, r#"{"tensors":{"a.b.c":{"byteOffset":0,"byteLength":1},"a_b.c":{"byteOffset":1,"byteLength":1}}}"#).unwrap();
    let g = graph(&[("c", DataType::Uint8, &[1], "a_b_c")]);
    expect_error(&g, &gp, None, None, &["ambiguous", "`a.b.c`", "`a_b.c`"]);
}

#[test]
fn manifest_field_errors_surface_with_file_entry_and_field() {
    let (_d, gp, blob, manifest) = setup();
    std::fs::write(&blob, [0; 4]).unwrap();
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    for (bad, words) in [
        (
            r#"{"tensors":{"w":{"byteOffset":-1,"byteLength":1}}}"#,
            &["byteOffset", "-1"][..],
        ),
        (
            r#"{"tensors":{"w":{"byteOffset":0.5,"byteLength":1}}}"#,
            &["byteOffset", "0.5"][..],
        ),
        (
            r#"{"tensors":{"w":{"byteOffset":0,"byteLength":"1"}}}"#,
            &["byteLength", "\"1\""][..],
        ),
        (
            r#"{"tensors":{"w":{"byteOffset":0,"byteLength":18446744073709551616}}}"#,
            &["byteLength", "64 bits"][..],
        ),
        (
            r#"{"tensors":{"w":{"byteLength":1}}}"#,
            &["byteOffset", "absent"][..],
        ),
    ] {
        std::fs::write(&manifest, bad).unwrap();
        let mut all = vec!["m.webnn", "m.manifest.json", "`w`"];
        all.extend_from_slice(words);
        let err = expect_error(&g, &gp, None, None, &all);
        assert!(
            matches!(
                err,
                ResolveError::Manifest {
                    source: ManifestError::Field { .. },
                    ..
                }
            ),
            "{err:?}"
        );
    }
    for bad in [
        "not json",
        r#"{"tensors":{"w":{"byteOffset":0,"byteLength":1},"w":{"byteOffset":0,"byteLength":1}}}"#,
        r#"{"x":1}"#,
    ] {
        std::fs::write(&manifest, bad).unwrap();
        let err = expect_error(
            &g,
            &gp,
            None,
            None,
            &["invalid manifest", "m.manifest.json"],
        );
        assert!(
            matches!(
                err,
                ResolveError::Manifest {
                    source: ManifestError::Syntax { .. },
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

#[test]
fn manifest_type_and_shape_are_not_authoritative() {
    let (_d, gp, blob, manifest) = setup();
    std::fs::write(&blob, [1, 2, 3, 4]).unwrap();
    std::fs::write(&manifest, r#"{"tensors":{"w":{"dataType":"float32","shape":[1],"byteOffset":0,"byteLength":4,"layout":null}}}"#).unwrap();
    let g = graph(&[("c", DataType::Int8, &[2, 2], "w")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [1, 2, 3, 4]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    assert_eq!(plan.constants()[0].offset, 0);
}
