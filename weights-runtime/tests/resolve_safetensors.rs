//! SafeTensors archives: the dtype table, BF16, shapes, packed 4-bit, names, headers.

mod common;
use common::*;
use std::path::PathBuf;
use webnn_weights_runtime::{plan_external_weights, Conversion, DataType, ResolveError};

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let st = dir.path().join("m.safetensors");
    (dir, gp, st)
}

const TABLE: [(DataType, &str); 8] = [
    (DataType::Float32, "F32"),
    (DataType::Float16, "F16"),
    (DataType::Int32, "I32"),
    (DataType::Uint32, "U32"),
    (DataType::Int64, "I64"),
    (DataType::Uint64, "U64"),
    (DataType::Int8, "I8"),
    (DataType::Uint8, "U8"),
];

#[test]
fn dtype_table_each_type_resolves() {
    let (_d, gp, st) = setup();
    for (dt, name) in TABLE {
        let len = dt.byte_length(&[2, 3]).unwrap() as usize;
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
        write_safetensors(
            &st,
            None,
            &[("pad", "F64", &[1], &[0; 8]), ("t", name, &[2, 3], &bytes)],
        );
        let g = graph(&[("c", dt, &[2, 3], "t")]);
        assert_eq!(
            resolve_one(&g, &gp, None, None, "c").unwrap(),
            bytes,
            "{dt}"
        );
    }
}

#[test]
fn other_dtype_mismatches_rejected() {
    let (_d, gp, st) = setup();
    for (dt, name) in TABLE {
        for (_, other) in TABLE {
            if other == name {
                continue;
            }
            let n = 4u64;
            let bits = match other {
                "F32" | "I32" | "U32" => 4,
                "F16" => 2,
                "I64" | "U64" => 8,
                _ => 1,
            };
            write_safetensors(
                &st,
                None,
                &[("t", other, &[n], &vec![0u8; (n * bits) as usize])],
            );
            let g = graph(&[("c", dt, &[4], "t")]);
            let err = expect_error(
                &g,
                &gp,
                None,
                None,
                &[
                    "`c`",
                    "\"t\"",
                    "m.safetensors",
                    &format!("declared {dt}"),
                    name,
                    &format!("found {other}"),
                ],
            );
            assert!(
                matches!(err, ResolveError::DataTypeMismatch { .. }),
                "{dt} vs {other}"
            );
        }
    }
}

fn bf16_bytes(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
        .collect()
}

#[test]
fn bf16_satisfies_float32_and_is_widened() {
    let (_d, gp, st) = setup();
    let values = [1.0f32, -2.5, 0.15625, 3.0e38, f32::INFINITY, 0.0];
    write_safetensors(&st, None, &[("t", "BF16", &[2, 3], &bf16_bytes(&values))]);
    let g = graph(&[("c", DataType::Float32, &[2, 3], "t")]);
    let expected: Vec<u8> = values
        .iter()
        .flat_map(|v| half::bf16::from_f32(*v).to_f32().to_le_bytes())
        .collect();
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), expected);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let c = &plan.constants()[0];
    assert_eq!(
        (c.conversion, c.stored_length, c.length),
        (Conversion::Bf16ToF32, 12, 24)
    );
    let mut copied = Vec::new();
    assert_eq!(plan.copy_constant(c, &mut copied).unwrap(), 24);
    assert_eq!(copied, expected);
}

#[test]
fn rank_0_and_zero_sized_tensors_resolve() {
    // Shapes must match exactly (rows of `every_broken_rule_is_rejected_naming_it`);
    // rank 0 and zero-sized tensors match exactly too.
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[("s", "I32", &[], &[1, 0, 0, 0]), ("z", "F16", &[0, 4], &[])],
    );
    let g = graph(&[
        ("a", DataType::Int32, &[], "s"),
        ("b", DataType::Float16, &[0, 4], "z"),
    ]);
    assert_eq!(resolve_one(&g, &gp, None, None, "a").unwrap(), [1, 0, 0, 0]);
    assert_eq!(
        resolve_one(&g, &gp, None, None, "b").unwrap(),
        Vec::<u8>::new()
    );
}

const MARK: Option<&[(&str, &str)]> = Some(&[("rustnn.webnn.packed4", "1")]);

#[test]
fn packed4_resolves_with_marker() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        MARK,
        &[
            ("a", "U8", &[3], &[0x21, 0x43, 0x05]),
            ("b", "U8", &[1], &[0xf7]),
        ],
    );
    let g = graph(&[
        ("i", DataType::Int4, &[5], "a"),
        ("u", DataType::Uint4, &[], "b"),
    ]);
    assert_eq!(
        resolve_one(&g, &gp, None, None, "i").unwrap(),
        [0x21, 0x43, 0x05]
    );
    assert_eq!(resolve_one(&g, &gp, None, None, "u").unwrap(), [0xf7]);
    // logical 2-D shape, physical 1-D
    let g = graph(&[("i", DataType::Int4, &[2, 3], "a")]);
    assert_eq!(
        resolve_one(&g, &gp, None, None, "i").unwrap(),
        [0x21, 0x43, 0x05]
    );
}

#[test]
fn unknown_marker_irrelevant_without_4bit_declarations() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        Some(&[("rustnn.webnn.packed4", "99")]),
        &[("a", "U8", &[1], &[9])],
    );
    let g = graph(&[("c", DataType::Uint8, &[1], "a")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [9]);
}

#[test]
fn unreferenced_tensors_of_any_dtype_ignored() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("b", "BOOL", &[2], &[1, 0]),
            ("f8", "F8_E4M3", &[1], &[7]),
            ("d", "F64", &[1], &[0; 8]),
            ("x", "U16", &[1], &[1, 2]),
            ("four", "F4", &[2], &[0x12]),
            ("w", "U8", &[1], &[42]),
        ],
    );
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    assert_eq!(resolve_one(&g, &gp, None, None, "c").unwrap(), [42]);
}

#[test]
fn names_exact_first_then_normalized() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("enc.layer.0.w", "U8", &[1], &[1]),
            ("enc_layer_0_w", "U8", &[1], &[2]),
            ("blk::attn.q", "U8", &[1], &[3]),
            // an unrequested collision: both normalize to x_y
            ("x.y", "U8", &[1], &[4]),
            ("x::y", "U8", &[1], &[5]),
        ],
    );
    let g = graph(&[
        ("exact", DataType::Uint8, &[1], "enc_layer_0_w"),
        ("dotted", DataType::Uint8, &[1], "enc.layer.0.w"),
        ("norm", DataType::Uint8, &[1], "blk__attn_q"),
        ("x", DataType::Uint8, &[1], "x__y"),
    ]);
    assert_eq!(resolve_one(&g, &gp, None, None, "exact").unwrap(), [2]);
    assert_eq!(resolve_one(&g, &gp, None, None, "dotted").unwrap(), [1]);
    assert_eq!(resolve_one(&g, &gp, None, None, "norm").unwrap(), [3]);
    assert_eq!(resolve_one(&g, &gp, None, None, "x").unwrap(), [5]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let names: Vec<_> = plan
        .constants()
        .iter()
        .map(|c| (c.name.as_str(), c.stored_name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("dotted", "enc.layer.0.w"),
            ("exact", "enc_layer_0_w"),
            ("norm", "blk::attn.q"),
            ("x", "x::y")
        ]
    );
}

/// One rule an archive or a declaration can break: the archive's bytes, the graph's
/// declarations, what the message (and its fix) must say, and the error's kind.
struct Rejection {
    rule: &'static str,
    archive: Vec<u8>,
    decls: Vec<(&'static str, DataType, &'static [u32], &'static str)>,
    words: Vec<String>,
    kind: Option<fn(&ResolveError) -> bool>,
}

fn reject(
    rule: &'static str,
    archive: Vec<u8>,
    decls: &[(&'static str, DataType, &'static [u32], &'static str)],
    words: &[&str],
    kind: Option<fn(&ResolveError) -> bool>,
) -> Rejection {
    Rejection {
        rule,
        archive,
        decls: decls.to_vec(),
        words: words.iter().map(|w| w.to_string()).collect(),
        kind,
    }
}

/// A header length prefix followed by these bytes (no valid header needed).
fn prefixed(length: u64, rest: &[u8]) -> Vec<u8> {
    let mut bytes = length.to_le_bytes().to_vec();
    bytes.extend_from_slice(rest);
    bytes
}

/// Every rule of the format that a SafeTensors archive or a declaration against it can
/// break, one row each: resolution fails in every mode with the same error, naming what
/// the row says. A new rule is a new row.
#[test]
fn every_broken_rule_is_rejected_naming_it() {
    use ResolveError as E;
    let st = safetensors_bytes;
    let one_u8 = |name| st(None, &[(name, "U8", &[1], &[0x21])]);
    let w_u8: &[(&str, DataType, &[u32], &str)] = &[("c", DataType::Uint8, &[1], "w")];
    let u64_max = u64::MAX.to_string();
    // The `safetensors` crate's limit.
    let max_header = 100_000_000.to_string();
    let short_data = serde_json::json!({"w": {"dtype":"U8","shape":[2],"data_offsets":[0,2]}});
    #[rustfmt::skip]
    let mut rows = vec![
        // ---- storage types ----
        reject("BF16 only for float32: float16", st(None, &[("t", "BF16", &[2], &[0; 4])]),
            &[("c", DataType::Float16, &[2], "t")], &["found BF16", "declared float16"], None),
        reject("BF16 only for float32: int32", st(None, &[("t", "BF16", &[2], &[0; 4])]),
            &[("c", DataType::Int32, &[2], "t")], &["found BF16", "declared int32"], None),
        reject("BF16 only for float32: uint8", st(None, &[("t", "BF16", &[2], &[0; 4])]),
            &[("c", DataType::Uint8, &[2], "t")], &["found BF16", "declared uint8"], None),
        reject("float32 accepts F32 or BF16, says so", st(None, &[("t", "F64", &[2], &[0; 16])]),
            &[("c", DataType::Float32, &[2], "t")], &["F32 or BF16", "found F64"], None),
        // ---- shapes ----
        reject("rank 0 stored, [1] declared", st(None, &[("s", "I32", &[], &[1, 0, 0, 0])]),
            &[("a", DataType::Int32, &[1], "s")], &["expected shape [1]", "found []"], None),
        // ---- packed 4-bit ----
        reject("packed4: marker missing from the metadata",
            st(Some(&[("format", "pt")]), &[("a", "U8", &[1], &[0x21])]),
            &[("i", DataType::Int4, &[2], "a")],
            &["`i`", "\"a\"", "rustnn.webnn.packed4", "no such entry", "int4", "fix"],
            Some(|e| matches!(e, E::PackedMarker { found: None, .. }))),
        reject("packed4: no metadata at all", one_u8("a"),
            &[("i", DataType::Int4, &[2], "a")], &["rustnn.webnn.packed4", "no such entry"],
            Some(|e| matches!(e, E::PackedMarker { found: None, .. }))),
        reject("packed4: unknown marker version",
            st(Some(&[("rustnn.webnn.packed4", "2")]), &[("a", "U8", &[1], &[0x21])]),
            &[("i", DataType::Uint4, &[2], "a")], &["\"2\"", "unknown version", "uint4"],
            Some(|e| matches!(e, E::PackedMarker { found: Some(_), .. }))),
        reject("packed4: storage other than U8", st(MARK, &[("a", "I8", &[2], &[1, 2])]),
            &[("i", DataType::Int4, &[4], "a")], &["U8 (packed 4-bit storage)", "found I8"],
            Some(|e| matches!(e, E::DataTypeMismatch { .. }))),
        reject("packed4: 2-D physical shape with the right byte count",
            st(MARK, &[("a", "U8", &[1, 2], &[1, 2])]),
            &[("i", DataType::Int4, &[4], "a")], &["expected shape [2]", "found [1, 2]", "ceil"],
            Some(|e| matches!(e, E::ShapeMismatch { .. }))),
        reject("packed4: the logical shape stored as the physical shape",
            st(MARK, &[("a", "U8", &[4], &[1, 2, 3, 4])]),
            &[("i", DataType::Int4, &[4], "a")], &["expected shape [2]", "found [4]"], None),
        reject("packed4: 5 elements need 3 bytes", st(MARK, &[("a", "U8", &[2], &[1, 2])]),
            &[("i", DataType::Uint4, &[5], "a")], &["expected shape [3]", "found [2]"], None),
        // ---- sizes ----
        reject("int4 size overflow, before reading", st(MARK, &[("a", "U8", &[1], &[1])]),
            &[("i", DataType::Int4, &[u32::MAX, u32::MAX, u32::MAX], "a")],
            &["`i`", "overflows", "\"a\""], Some(|e| matches!(e, E::SizeOverflow { .. }))),
        reject("float32 size overflow, before reading", st(MARK, &[("a", "U8", &[1], &[1])]),
            &[("i", DataType::Float32, &[u32::MAX, u32::MAX, u32::MAX], "a")],
            &["`i`", "overflows", "\"a\""], Some(|e| matches!(e, E::SizeOverflow { .. }))),
        // ---- names ----
        reject("missing reference, available names listed",
            st(MARK, &[("alpha", "U8", &[1], &[1]), ("beta", "U8", &[1], &[2])]),
            &[("c", DataType::Uint8, &[1], "gamma")],
            &["`c`", "\"gamma\"", "is not in", "m.safetensors", "`alpha`", "`beta`", "fix"],
            Some(|e| matches!(e, E::MissingTensor { .. }))),
        reject("missing 4-bit reference, available names listed",
            st(MARK, &[("alpha", "U8", &[1], &[1]), ("beta", "U8", &[1], &[2])]),
            &[("c", DataType::Int4, &[1], "gamma")],
            &["`c`", "\"gamma\"", "is not in", "m.safetensors", "`alpha`", "`beta`", "fix"],
            Some(|e| matches!(e, E::MissingTensor { .. }))),
        reject("ambiguous normalized names, all named",
            st(None, &[("a.b_c", "U8", &[1], &[1]), ("a_b.c", "U8", &[1], &[2]), ("a::b", "U8", &[1], &[3])]),
            &[("c", DataType::Uint8, &[1], "a_b_c")],
            &["ambiguous", "`a.b_c`", "`a_b.c`", "found 2", "exact name"],
            Some(|e| matches!(e, E::AmbiguousTensor { .. }))),
        // ---- headers ----
        reject("file shorter than the length prefix", vec![1, 2, 3], w_u8,
            &["invalid SafeTensors archive", "m.safetensors", "at least 8 bytes", "3 bytes"],
            Some(|e| matches!(e, E::Format { source: webnn_weights_runtime::formats::FormatError::SafeTensorsHeader { .. }, .. }))),
        reject("header length beyond the limit, without allocating", prefixed(u64::MAX, b"{}"),
            w_u8, &[&max_header, &u64_max], None),
        reject("header length beyond the file", prefixed(1000, b"{}"), w_u8,
            &["1000 bytes", "only 2 bytes", "truncated"], None),
        reject("header not JSON", prefixed(5, b"{nope"), w_u8,
            &["invalid SafeTensors archive", "JSON header"], None),
        reject("offsets that do not follow each other",
            raw_safetensors_bytes(&serde_json::json!({"w": {"dtype":"U8","shape":[1],"data_offsets":[1,2]}}), &[0, 1]),
            w_u8, &["invalid SafeTensors archive"], None),
        reject("a size that disagrees with dtype and shape",
            raw_safetensors_bytes(&serde_json::json!({"w": {"dtype":"F32","shape":[1],"data_offsets":[0,2]}}), &[0, 1]),
            w_u8, &["invalid SafeTensors archive"], None),
        reject("data section shorter than the header says", raw_safetensors_bytes(&short_data, &[1]),
            w_u8, &["invalid SafeTensors archive", "tensor data", "found"], None),
        reject("bytes after the data section", raw_safetensors_bytes(&short_data, &[1, 2, 3]),
            w_u8, &["invalid SafeTensors archive", "tensor data"], None),
    ];
    // Shapes must match exactly.
    for shape in [&[3u32, 2][..], &[6], &[1, 2, 3], &[2, 3, 1]] {
        rows.push(reject(
            "shape other than stored",
            st(None, &[("t", "F32", &[2, 3], &[0; 24])]),
            &[("c", DataType::Float32, shape, "t")],
            &[
                "`c`",
                "expected shape",
                "found [2, 3]",
                "m.safetensors",
                "fix: declare `f32[2, 3]`",
            ],
            Some(|e| matches!(e, E::ShapeMismatch { .. })),
        ));
    }
    let (_d, gp, path) = setup();
    for row in rows {
        std::fs::write(&path, &row.archive).unwrap();
        let words: Vec<&str> = row.words.iter().map(String::as_str).collect();
        eprintln!("rule: {}", row.rule);
        let err = expect_error(&graph(&row.decls), &gp, None, None, &words);
        if let Some(kind) = row.kind {
            assert!(kind(&err), "{}: {err:?}", row.rule);
        }
    }
}

/// A shape mismatch says how to fix it: declare the stored shape or store the declared one;
/// when both hold as many elements, that the data may be transposed or need a reshape.
#[test]
fn a_shape_mismatch_says_what_to_declare_or_store() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("w", "F32", &[4, 3], &[0; 48]),
            ("v", "I8", &[5], &[0; 5]),
            ("p", "U8", &[4], &[0; 4]),
        ],
    );
    let fix = |decl: (&str, DataType, &[u32], &str)| {
        let err = plan_external_weights(&graph(&[decl]), &gp, None, None).unwrap_err();
        assert!(matches!(err, ResolveError::ShapeMismatch { .. }), "{err:?}");
        err.fix().unwrap()
    };
    assert_eq!(
        fix(("w", DataType::Float32, &[3, 4], "w")),
        "declare `f32[4, 3]` in the graph, or store the tensor with shape [3, 4] \
         (both hold 12 elements: the data may be transposed or need a reshape)"
    );
    assert_eq!(
        fix(("v", DataType::Int8, &[2, 2], "v")),
        "declare `i8[5]` in the graph, or store the tensor with shape [2, 2]"
    );
    std::fs::write(&st, safetensors_bytes(MARK, &[("p", "U8", &[4], &[0; 4])])).unwrap();
    assert_eq!(
        fix(("p", DataType::Int4, &[4], "p")),
        "store the int4 tensor packed, as U8 of shape [2] \
         (write_external_weights_safetensors does), or correct the declaration"
    );
}

#[test]
fn plan_records_absolute_offsets() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("a", "U8", &[3], &[1, 2, 3]),
            ("b", "I32", &[1], &[4, 5, 6, 7]),
        ],
    );
    let g = graph(&[("b", DataType::Int32, &[1], "b")]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let bytes = std::fs::read(&st).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    let c = &plan.constants()[0];
    assert_eq!(c.offset, 8 + n + 3);
    assert_eq!(&bytes[c.offset as usize..][..4], [4, 5, 6, 7]);
    assert_eq!(plan.sidecar().unwrap().len, bytes.len() as u64);
}

#[test]
fn every_broken_constant_is_reported_at_once_in_graph_order() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("a", "I32", &[2], &[0; 8]),
            ("b", "F32", &[3], &[0; 12]),
            ("ok", "U8", &[1], &[7]),
        ],
    );
    // A wrong data type, a wrong shape and a missing tensor, beside a good constant.
    let g = graph(&[
        ("c1", DataType::Float32, &[2], "a"),
        ("c2", DataType::Float32, &[2], "b"),
        ("c3", DataType::Uint8, &[1], "missing"),
        ("c4", DataType::Uint8, &[1], "ok"),
    ]);
    let err = expect_error(&g, &gp, None, None, &["3 constants cannot be resolved"]);
    let ResolveError::Several { errors, total, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*total, 3);
    assert!(
        matches!(&errors[0], ResolveError::DataTypeMismatch { constant, .. } if constant == "c1")
    );
    assert!(matches!(&errors[1], ResolveError::ShapeMismatch { constant, .. } if constant == "c2"));
    assert!(matches!(&errors[2], ResolveError::MissingTensor { constant, .. } if constant == "c3"));
    // Each with its own fix.
    let fix = err.fix().unwrap();
    for constant in ["`c1`: store the tensor as", "`c3`: "] {
        assert!(fix.contains(constant), "{fix}");
    }
}

#[test]
fn past_twenty_errors_the_rest_are_counted() {
    let (_d, gp, st) = setup();
    write_safetensors(&st, None, &[("t", "U8", &[1], &[1])]);
    let names: Vec<String> = (0..25).map(|i| format!("c{i:02}")).collect();
    let consts: Vec<(&str, DataType, &[u32], &str)> = names
        .iter()
        .map(|n| (n.as_str(), DataType::Uint8, &[1u32][..], n.as_str()))
        .collect();
    let err = expect_error(
        &graph(&consts),
        &gp,
        None,
        None,
        &["25 constants cannot be resolved", "`c19`", "… and 5 more"],
    );
    assert!(!err.to_string().contains("`c20`"), "{err}");
}

#[test]
fn a_typo_deep_in_a_large_archive_gets_the_nearest_names() {
    let (_d, gp, st) = setup();
    let names: Vec<String> = (0..100)
        .map(|i| format!("encoder.layer.{i}.attention.weight"))
        .collect();
    let tensors: Vec<(&str, &str, &[u64], &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), "U8", &[1u64][..], &[1u8][..]))
        .collect();
    write_safetensors(&st, None, &tensors);
    // Normalized spelling, one letter swapped: `weigth`.
    let g = graph(&[(
        "w",
        DataType::Uint8,
        &[1],
        "encoder_layer_87_attention_weigth",
    )]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            "no such name among 100 stored tensors; the nearest: `encoder.layer.87.attention.weight`",
            "did you mean `encoder.layer.87.attention.weight`?",
        ],
    );
    assert!(matches!(err, ResolveError::MissingTensor { .. }));
    // Far from every stored name: no "did you mean".
    let g = graph(&[("w", DataType::Uint8, &[1], "xyz")]);
    let err = expect_error(&g, &gp, None, None, &["the nearest:"]);
    assert!(!err.fix().unwrap().contains("did you mean"));
}
