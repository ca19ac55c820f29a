//! Manifest-backed blobs: absolute ranges, WGWT and headerless, bounds and lengths.

mod common;
use common::*;
use std::path::PathBuf;
use webnn_weights_runtime::formats::FormatError;
use webnn_weights_runtime::manifest::ManifestError;
use webnn_weights_runtime::{plan_external_weights, DataType, ResolveError};

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = webnn_weights_test_support::tempdir().unwrap();
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
fn packed_4bit_lengths_follow_the_packed_rule() {
    // Lengths must equal the declared size (rows of `every_broken_rule_is_rejected_naming_it`);
    // 5 int4 elements need 3 bytes.
    let (_d, gp, blob, manifest) = setup();
    write_blob(&blob, &[0; 16], &manifest, &[("p", 0, 3)]);
    let g = graph(&[("p", DataType::Int4, &[5], "p")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "p").unwrap(), [0, 0, 0]);
}

#[test]
fn manifest_names_exact_then_normalized() {
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
}

/// One rule a blob, its manifest or a declaration against them can break: the blob's
/// bytes, the manifest's text, the graph's declarations, what the message must say, and
/// the error's kind.
type Rejection = (
    &'static str,
    Vec<u8>,
    String,
    &'static [(&'static str, DataType, &'static [u32], &'static str)],
    Vec<&'static str>,
    Option<fn(&ResolveError) -> bool>,
);

fn field_error(e: &ResolveError) -> bool {
    matches!(
        e,
        ResolveError::Format {
            source: FormatError::Manifest(ManifestError::Field { .. }),
            ..
        }
    )
}

fn syntax_error(e: &ResolveError) -> bool {
    matches!(
        e,
        ResolveError::Format {
            source: FormatError::Manifest(ManifestError::Syntax { .. }),
            ..
        }
    )
}

/// Every rule of the format that a blob and its manifest, or a declaration against them,
/// can break, one row each: resolution fails in every mode with the same error, naming
/// what the row says. A new rule is a new row.
#[test]
fn every_broken_rule_is_rejected_naming_it() {
    use ResolveError as E;
    const F32: &[(&str, DataType, &[u32], &str)] = &[("c", DataType::Float32, &[], "w")];
    const U8: &[(&str, DataType, &[u32], &str)] = &[("c", DataType::Uint8, &[1], "w")];
    let m = manifest_text;
    let raw = |text: &str| text.to_string();
    // Field errors name the graph, the manifest, the entry and the field.
    let field =
        |words: &[&'static str]| [&["m.webnn", "m.manifest.json", "`w`"][..], words].concat();
    let syntax = vec!["invalid manifest", "m.manifest.json"];
    #[rustfmt::skip]
    let rows: Vec<Rejection> = vec![
        // ---- ranges and lengths ----
        ("range beyond the file", vec![0; 10], m(&[("w", 8, 4)]), F32,
            vec!["`c`", "\"w\"", "m.manifest.json", "m.weights", "10 bytes", "byteOffset 8 + byteLength 4 = 12", "fix"],
            Some(|e| matches!(e, E::RangeOutOfBounds { .. }))),
        ("offset + length overflows 64 bits", vec![0; 4],
            format!(r#"{{"tensors":{{"w":{{"byteOffset":{},"byteLength":4}}}}}}"#, u64::MAX - 1), F32,
            vec!["more than 2^64", "`c`"], None),
        ("length other than the declared size", vec![0; 16], m(&[("w", 0, 12)]),
            &[("c", DataType::Float32, &[2, 2], "w")],
            vec!["`c`", "\"w\"", "float32 [2, 2]", "needs 16 bytes, found 12", "m.manifest.json"],
            Some(|e| matches!(e, E::LengthMismatch { .. }))),
        ("4-bit length other than the packed size", vec![0; 16], m(&[("p", 0, 3)]),
            &[("p", DataType::Uint4, &[4], "p")], vec!["uint4 [4]", "needs 2 bytes, found 3"], None),
        // ---- names ----
        ("missing entry, available names listed", vec![0; 4], m(&[("w", 0, 4)]),
            &[("c", DataType::Float32, &[], "v")], vec!["\"v\"", "is not in", "m.manifest.json", "`w`"],
            Some(|e| matches!(e, E::MissingTensor { .. }))),
        ("ambiguous normalized names", vec![1, 2],
            raw(r#"{"tensors":{"a.b.c":{"byteOffset":0,"byteLength":1},"a_b.c":{"byteOffset":1,"byteLength":1}}}"#),
            &[("c", DataType::Uint8, &[1], "a_b_c")], vec!["ambiguous", "`a.b.c`", "`a_b.c`"], None),
        // ---- manifest fields ----
        ("negative offset", vec![0; 4], raw(r#"{"tensors":{"w":{"byteOffset":-1,"byteLength":1}}}"#), U8,
            field(&["byteOffset", "-1"]), Some(field_error)),
        ("fractional offset", vec![0; 4], raw(r#"{"tensors":{"w":{"byteOffset":0.5,"byteLength":1}}}"#), U8,
            field(&["byteOffset", "0.5"]), Some(field_error)),
        ("length as a string", vec![0; 4], raw(r#"{"tensors":{"w":{"byteOffset":0,"byteLength":"1"}}}"#), U8,
            field(&["byteLength", "\"1\""]), Some(field_error)),
        ("length beyond 64 bits", vec![0; 4], raw(r#"{"tensors":{"w":{"byteOffset":0,"byteLength":18446744073709551616}}}"#), U8,
            field(&["byteLength", "64 bits"]), Some(field_error)),
        ("offset absent", vec![0; 4], raw(r#"{"tensors":{"w":{"byteLength":1}}}"#), U8,
            field(&["byteOffset", "absent"]), Some(field_error)),
        // ---- manifest syntax ----
        ("manifest not JSON", vec![0; 4], raw("not json"), U8, syntax.clone(), Some(syntax_error)),
        ("an entry named twice", vec![0; 4],
            raw(r#"{"tensors":{"w":{"byteOffset":0,"byteLength":1},"w":{"byteOffset":0,"byteLength":1}}}"#), U8,
            syntax.clone(), Some(syntax_error)),
        ("no tensors object", vec![0; 4], raw(r#"{"x":1}"#), U8, syntax.clone(), Some(syntax_error)),
    ];
    let (_d, gp, blob, manifest) = setup();
    for (rule, bytes, text, decls, words, kind) in rows {
        std::fs::write(&blob, bytes).unwrap();
        std::fs::write(&manifest, text).unwrap();
        eprintln!("rule: {rule}");
        let err = expect_error(&graph(decls), &gp, None, None, &words);
        if let Some(kind) = kind {
            assert!(kind(&err), "{rule}: {err:?}");
        }
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
