//! SafeTensors archives: the dtype table, BF16, shapes, packed 4-bit, names, headers.

mod common;
use common::*;
use std::path::PathBuf;
use webnn_weights_runtime::{
    plan_external_weights, Conversion, DataType, ResolveError, SAFETENSORS_MAX_HEADER_SIZE,
};

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
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
fn bf16_only_for_float32() {
    let (_d, gp, st) = setup();
    write_safetensors(&st, None, &[("t", "BF16", &[2], &[0; 4])]);
    for dt in [DataType::Float16, DataType::Int32, DataType::Uint8] {
        let g = graph(&[("c", dt, &[2], "t")]);
        expect_error(
            &g,
            &gp,
            None,
            None,
            &["found BF16", &format!("declared {dt}")],
        );
    }
    // the accepted list for float32 mentions BF16
    write_safetensors(&st, None, &[("t", "F64", &[2], &[0; 16])]);
    let g = graph(&[("c", DataType::Float32, &[2], "t")]);
    expect_error(&g, &gp, None, None, &["F32 or BF16", "found F64"]);
}

#[test]
fn shapes_must_match_exactly() {
    let (_d, gp, st) = setup();
    write_safetensors(&st, None, &[("t", "F32", &[2, 3], &[0; 24])]);
    for shape in [&[3u32, 2][..], &[6], &[1, 2, 3], &[2, 3, 1]] {
        let g = graph(&[("c", DataType::Float32, shape, "t")]);
        let err = expect_error(
            &g,
            &gp,
            None,
            None,
            &["`c`", "expected shape", "found [2, 3]", "m.safetensors"],
        );
        assert!(matches!(err, ResolveError::ShapeMismatch { .. }));
    }
    // rank 0 and zero-sized tensors match exactly too
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
    let g = graph(&[("a", DataType::Int32, &[1], "s")]);
    expect_error(&g, &gp, None, None, &["expected shape [1]", "found []"]);
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
fn packed4_marker_missing_rejected() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        Some(&[("format", "pt")]),
        &[("a", "U8", &[1], &[0x21])],
    );
    let g = graph(&[("i", DataType::Int4, &[2], "a")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            "`i`",
            "\"a\"",
            "rustnn.webnn.packed4",
            "no such entry",
            "int4",
            "fix",
        ],
    );
    assert!(matches!(
        err,
        ResolveError::PackedMarker { found: None, .. }
    ));
    write_safetensors(&st, None, &[("a", "U8", &[1], &[0x21])]);
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["rustnn.webnn.packed4", "no such entry"],
    );
}

#[test]
fn packed4_marker_unknown_rejected() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        Some(&[("rustnn.webnn.packed4", "2")]),
        &[("a", "U8", &[1], &[0x21])],
    );
    let g = graph(&[("i", DataType::Uint4, &[2], "a")]);
    let err = expect_error(&g, &gp, None, None, &["\"2\"", "unknown version", "uint4"]);
    assert!(matches!(
        err,
        ResolveError::PackedMarker { found: Some(_), .. }
    ));
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
fn packed4_non_u8_storage_rejected() {
    let (_d, gp, st) = setup();
    write_safetensors(&st, MARK, &[("a", "I8", &[2], &[1, 2])]);
    let g = graph(&[("i", DataType::Int4, &[4], "a")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &["U8 (packed 4-bit storage)", "found I8"],
    );
    assert!(matches!(err, ResolveError::DataTypeMismatch { .. }));
}

#[test]
fn packed4_wrong_physical_shape_rejected() {
    let (_d, gp, st) = setup();
    // 2-D physical shape with the right byte count
    write_safetensors(&st, MARK, &[("a", "U8", &[1, 2], &[1, 2])]);
    let g = graph(&[("i", DataType::Int4, &[4], "a")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &["expected shape [2]", "found [1, 2]", "ceil"],
    );
    assert!(matches!(err, ResolveError::ShapeMismatch { .. }));
    // the logical shape stored as the physical shape
    write_safetensors(&st, MARK, &[("a", "U8", &[4], &[1, 2, 3, 4])]);
    expect_error(&g, &gp, None, None, &["expected shape [2]", "found [4]"]);
    // wrong byte count: 5 elements need 3 bytes
    write_safetensors(&st, MARK, &[("a", "U8", &[2], &[1, 2])]);
    let g = graph(&[("i", DataType::Uint4, &[5], "a")]);
    expect_error(&g, &gp, None, None, &["expected shape [3]", "found [2]"]);
}

#[test]
fn size_overflow_rejected_before_reading() {
    let (_d, gp, st) = setup();
    write_safetensors(&st, MARK, &[("a", "U8", &[1], &[1])]);
    for dt in [DataType::Int4, DataType::Float32] {
        let g = graph(&[("i", dt, &[u32::MAX, u32::MAX, u32::MAX], "a")]);
        let err = expect_error(&g, &gp, None, None, &["`i`", "overflows", "\"a\""]);
        assert!(matches!(err, ResolveError::SizeOverflow { .. }));
    }
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
fn missing_reference_rejected_with_available_names() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        MARK,
        &[("alpha", "U8", &[1], &[1]), ("beta", "U8", &[1], &[2])],
    );
    for dt in [DataType::Uint8, DataType::Int4] {
        let g = graph(&[("c", dt, &[1], "gamma")]);
        let err = expect_error(
            &g,
            &gp,
            None,
            None,
            &[
                "`c`",
                "\"gamma\"",
                "is not in",
                "m.safetensors",
                "`alpha`",
                "`beta`",
                "fix",
            ],
        );
        assert!(matches!(err, ResolveError::MissingTensor { .. }));
    }
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

#[test]
fn ambiguous_normalized_names_rejected_naming_all() {
    let (_d, gp, st) = setup();
    write_safetensors(
        &st,
        None,
        &[
            ("a.b_c", "U8", &[1], &[1]),
            ("a_b.c", "U8", &[1], &[2]),
            ("a::b", "U8", &[1], &[3]),
        ],
    );
    let g = graph(&[("c", DataType::Uint8, &[1], "a_b_c")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &["ambiguous", "`a.b_c`", "`a_b.c`", "found 2", "exact name"],
    );
    assert!(matches!(err, ResolveError::AmbiguousTensor { .. }));
}

// ---- headers ----

#[test]
fn header_too_small_file_rejected() {
    let (_d, gp, st) = setup();
    std::fs::write(&st, [1, 2, 3]).unwrap();
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    let err = expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            "invalid SafeTensors archive",
            "m.safetensors",
            "at least 8 bytes",
            "3 bytes",
        ],
    );
    assert!(matches!(err, ResolveError::SafeTensorsHeader { .. }));
}

#[test]
fn header_length_beyond_limit_or_file_rejected_without_allocating() {
    let (_d, gp, st) = setup();
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    let mut bytes = u64::MAX.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(&st, &bytes).unwrap();
    expect_error(
        &g,
        &gp,
        None,
        None,
        &[
            &SAFETENSORS_MAX_HEADER_SIZE.to_string(),
            &u64::MAX.to_string(),
        ],
    );
    let mut bytes = 1000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(&st, &bytes).unwrap();
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["1000 bytes", "only 2 bytes", "truncated"],
    );
}

#[test]
fn header_invalid_json_or_offsets_rejected() {
    let (_d, gp, st) = setup();
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    let mut bytes = 5u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{nope");
    std::fs::write(&st, &bytes).unwrap();
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["invalid SafeTensors archive", "JSON header"],
    );
    // offsets that do not follow each other
    write_raw_safetensors(
        &st,
        &serde_json::json!({"w": {"dtype":"U8","shape":[1],"data_offsets":[1,2]}}),
        &[0, 1],
    );
    expect_error(&g, &gp, None, None, &["invalid SafeTensors archive"]);
    // a size that disagrees with dtype and shape
    write_raw_safetensors(
        &st,
        &serde_json::json!({"w": {"dtype":"F32","shape":[1],"data_offsets":[0,2]}}),
        &[0, 1],
    );
    expect_error(&g, &gp, None, None, &["invalid SafeTensors archive"]);
}

#[test]
fn data_section_must_end_the_file() {
    let (_d, gp, st) = setup();
    let g = graph(&[("c", DataType::Uint8, &[1], "w")]);
    let header = serde_json::json!({"w": {"dtype":"U8","shape":[2],"data_offsets":[0,2]}});
    write_raw_safetensors(&st, &header, &[1]);
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["invalid SafeTensors archive", "tensor data", "found"],
    );
    write_raw_safetensors(&st, &header, &[1, 2, 3]);
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["invalid SafeTensors archive", "tensor data"],
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
