//! Property tests of hostile and random sidecars (issue 6, part 2).
//!
//! - Any tensor set (every data type including int4/uint4, random shapes including
//!   zero-size and rank 0, names with dots, `::`, `/`, spaces and non-ASCII) goes through
//!   the SafeTensors writer, and through a hand-made manifest + blob, and resolves back to
//!   the same bytes.
//! - Random corruptions of valid sidecars (bit flips, truncation, extension, header and
//!   manifest numbers overwritten with 2^64-1, 2^63, 2^32, negative and other hostile
//!   values, hostile SafeTensors header-length prefixes) always end in a well-formed result
//!   (every constant's length equals its declaration, every `@weights` replaced) or a clean
//!   error that names a file, with the graph untouched — never a panic. The blob tools
//!   (`inspect_blob`, `unpack_weights`, `inline_weights`) get the same corrupted manifests.
//!
//! Graph text/JSON round trips are property-tested in `text_roundtrip.rs`.
//!
//! Case counts: fast by default; `WEBNN_WEIGHTS_LONG_TESTS=1` multiplies them by 40, and
//! `PROPTEST_CASES=N` sets them exactly.
#![allow(clippy::result_large_err)]

mod common;

use common::proptest_config as config;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{resolve_external_weights, ConstDecl, ConstInit, DataType, GraphJson};
use webnn_weights_tools::weight_tools::{inline_weights, inspect_blob, unpack_weights, NoProgress};
use webnn_weights_tools::write_external_weights_safetensors;

/// One stored tensor: reference, type, shape, bytes.
#[derive(Debug, Clone)]
struct Tensor {
    reference: String,
    data_type: DataType,
    shape: Vec<u32>,
    bytes: Vec<u8>,
}

fn reference() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,6}",
        "[a-z]{1,3}(\\.[a-z0-9]{1,3}){1,3}",
        "[a-z]{1,3}(::[a-z0-9]{1,3}){1,2}",
        "[a-zA-Z0-9_.:/ é-]{1,10}",
    ]
    .prop_filter("the header's metadata key", |s| s != "__metadata__")
}

fn tensor() -> impl Strategy<Value = (DataType, Vec<u32>)> {
    (
        prop::sample::select(DataType::ALL.to_vec()),
        prop::collection::vec(0u32..5, 0..4),
    )
}

/// 0 to 6 tensors with distinct references and random bytes of the declared size.
fn tensor_set() -> impl Strategy<Value = Vec<Tensor>> {
    prop::collection::btree_map(reference(), tensor(), 0..6).prop_flat_map(|map| {
        map.into_iter()
            .map(|(reference, (data_type, shape))| {
                let len = data_type.byte_length(&shape).expect("small shapes") as usize;
                prop::collection::vec(any::<u8>(), len).prop_map(move |bytes| Tensor {
                    reference: reference.clone(),
                    data_type,
                    shape: shape.clone(),
                    bytes,
                })
            })
            .collect::<Vec<_>>()
    })
}

/// A graph with one constant per tensor, plus a second constant sharing the reference of
/// every other tensor (the same declaration).
fn graph_for(tensors: &[Tensor]) -> GraphJson {
    let mut g = GraphJson::new(Some("props".to_string()));
    for (i, t) in tensors.iter().enumerate() {
        let decl = ConstDecl {
            data_type: t.data_type,
            shape: t.shape.clone(),
            init: ConstInit::Weights {
                r#ref: t.reference.clone(),
            },
        };
        if i % 2 == 1 {
            g.consts.insert(format!("shared{i}"), decl.clone());
        }
        g.consts.insert(format!("c{i}"), decl);
    }
    g
}

fn write_archive(dir: &Path, tensors: &[Tensor]) -> GraphJson {
    let graph = graph_for(tensors);
    let weights: HashMap<String, &[u8]> = tensors
        .iter()
        .map(|t| (t.reference.clone(), t.bytes.as_slice()))
        .collect();
    write_external_weights_safetensors(&graph, &weights, &dir.join("model.safetensors"))
        .expect("valid tensors write");
    graph
}

/// A WGWT blob (or a headerless one) and a compact or pretty manifest addressing it.
fn write_blob(dir: &Path, tensors: &[Tensor], wgwt: bool, pretty: bool) -> GraphJson {
    let mut blob = if wgwt {
        b"WGWT\x01\0\0\0".to_vec()
    } else {
        Vec::new()
    };
    let mut entries = serde_json::Map::new();
    for t in tensors {
        entries.insert(
            t.reference.clone(),
            serde_json::json!({
                "dataType": t.data_type.json_name(),
                "shape": t.shape,
                "byteOffset": blob.len(),
                "byteLength": t.bytes.len(),
                "layout": "row-major",
            }),
        );
        blob.extend_from_slice(&t.bytes);
    }
    let manifest = serde_json::json!({
        "format": "wg-weights-manifest", "version": 1, "endianness": "little",
        "tensors": entries,
    });
    let text = if pretty {
        serde_json::to_string_pretty(&manifest)
    } else {
        serde_json::to_string(&manifest)
    }
    .expect("manifest serializes");
    std::fs::write(dir.join("model.weights"), blob).expect("blob writes");
    std::fs::write(dir.join("model.manifest.json"), text).expect("manifest writes");
    graph_for(tensors)
}

/// Resolves `graph` beside `dir/model.webnn`; checks the result is well formed, or that
/// the error is clean and the graph untouched. Returns the resolved bytes on success.
fn resolve_checked(
    dir: &Path,
    graph: &GraphJson,
) -> Result<Option<BTreeMap<String, Vec<u8>>>, TestCaseError> {
    let mut resolved = graph.clone();
    match resolve_external_weights(&mut resolved, &dir.join("model.webnn"), None, None) {
        Ok(()) => {
            let mut out = BTreeMap::new();
            for (name, decl) in &resolved.consts {
                let ConstInit::InlineBytes { bytes } = &decl.init else {
                    return Err(TestCaseError::fail(format!("{name} left unresolved")));
                };
                prop_assert_eq!(Some(bytes.len() as u64), decl.byte_length(), "{}", name);
                prop_assert_eq!(decl.data_type, graph.consts[name].data_type);
                prop_assert_eq!(&decl.shape, &graph.consts[name].shape);
                out.insert(name.clone(), bytes.to_vec());
            }
            Ok(Some(out))
        }
        Err(e) => {
            prop_assert_eq!(&resolved, graph, "graph touched by a failed resolve");
            let message = e.to_string();
            prop_assert!(
                message.contains("model."),
                "error names no file: {}",
                message
            );
            Ok(None)
        }
    }
}

fn expected_bytes(graph: &GraphJson, tensors: &[Tensor]) -> BTreeMap<String, Vec<u8>> {
    let by_ref: HashMap<&str, &[u8]> = tensors
        .iter()
        .map(|t| (t.reference.as_str(), t.bytes.as_slice()))
        .collect();
    graph
        .consts
        .iter()
        .map(|(name, decl)| match &decl.init {
            ConstInit::Weights { r#ref } => (name.clone(), by_ref[r#ref.as_str()].to_vec()),
            _ => unreachable!("graph_for makes only @weights constants"),
        })
        .collect()
}

/// Hostile replacements for a number in a header or manifest.
const HOSTILE: [&str; 12] = [
    "18446744073709551615", // 2^64 - 1
    "18446744073709551616", // 2^64
    "9223372036854775808",  // 2^63
    "9223372036854775807",  // 2^63 - 1
    "4294967296",           // 2^32
    "4294967295",           // 2^32 - 1
    "-1",
    "-9223372036854775808",
    "1125899906842624", // 2^50
    "1e308",
    "0.5",
    "0",
];

/// Hostile 8-byte SafeTensors header lengths.
const HOSTILE_PREFIX: [u64; 7] = [
    u64::MAX,
    1 << 63,
    1 << 60,
    1 << 32,
    (1 << 32) - 1,
    100_000_001,
    0,
];

#[derive(Debug, Clone)]
enum Corruption {
    /// Flip bit `bit` of the byte at `at` (modulo the length), `times` times at spread positions.
    BitFlips { at: usize, bit: u8, times: u8 },
    /// Keep `keep` (modulo the length) bytes.
    Truncate { keep: usize },
    /// Append bytes.
    Extend { bytes: Vec<u8> },
    /// Replace the `index`-th run of digits (modulo their count) in the JSON part with a
    /// hostile number; for archives, `fix_prefix` keeps the length prefix consistent.
    Number {
        index: usize,
        value: usize,
        fix_prefix: bool,
    },
    /// Overwrite the SafeTensors length prefix (archives only; manifests get a bit flip).
    Prefix { value: usize },
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        (any::<usize>(), 0u8..8, 1u8..4).prop_map(|(at, bit, times)| Corruption::BitFlips {
            at,
            bit,
            times
        }),
        any::<usize>().prop_map(|keep| Corruption::Truncate { keep }),
        prop::collection::vec(any::<u8>(), 1..16).prop_map(|bytes| Corruption::Extend { bytes }),
        (any::<usize>(), 0..HOSTILE.len(), any::<bool>()).prop_map(|(index, value, fix_prefix)| {
            Corruption::Number {
                index,
                value,
                fix_prefix,
            }
        }),
        (0..HOSTILE_PREFIX.len()).prop_map(|value| Corruption::Prefix { value }),
    ]
}

/// Byte ranges of the maximal digit runs in `text`.
fn digit_runs(text: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    runs
}

/// Applies `c` to `bytes`; `json` is the range of the JSON text (the whole file for a
/// manifest, the header for an archive), and `archive` says whether an 8-byte length
/// prefix precedes it.
fn corrupt(bytes: &mut Vec<u8>, c: &Corruption, archive: bool) {
    let json_range = if archive {
        // A previous corruption may have made the prefix hostile: clamp to the file.
        let n = u64::from_le_bytes(bytes[..8].try_into().expect("prefix"));
        8..8 + usize::try_from(n)
            .unwrap_or(usize::MAX)
            .min(bytes.len() - 8)
    } else {
        0..bytes.len()
    };
    match c {
        Corruption::BitFlips { at, bit, times } => {
            if bytes.is_empty() {
                return;
            }
            for k in 0..usize::from(*times) {
                let i = at.wrapping_add(k.wrapping_mul(7919)) % bytes.len();
                bytes[i] ^= 1 << bit;
            }
        }
        Corruption::Truncate { keep } => {
            let keep = keep % (bytes.len() + 1);
            bytes.truncate(keep);
        }
        Corruption::Extend { bytes: extra } => bytes.extend_from_slice(extra),
        Corruption::Number {
            index,
            value,
            fix_prefix,
        } => {
            let runs = digit_runs(&bytes[json_range.clone()]);
            if runs.is_empty() {
                return;
            }
            let (s, e) = runs[index % runs.len()];
            let (s, e) = (json_range.start + s, json_range.start + e);
            let hostile = HOSTILE[*value].as_bytes();
            bytes.splice(s..e, hostile.iter().copied());
            if archive && *fix_prefix {
                let n = json_range.len() + hostile.len() - (e - s);
                bytes[..8].copy_from_slice(&(n as u64).to_le_bytes());
            }
        }
        Corruption::Prefix { value } => {
            if archive {
                bytes[..8].copy_from_slice(&HOSTILE_PREFIX[*value].to_le_bytes());
            } else if !bytes.is_empty() {
                let i = value % bytes.len();
                bytes[i] ^= 0x80;
            }
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn any_tensor_set_round_trips_through_the_writer(tensors in tensor_set()) {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let graph = write_archive(dir.path(), &tensors);
        let resolved = resolve_checked(dir.path(), &graph)?;
        prop_assert_eq!(resolved, Some(expected_bytes(&graph, &tensors)));
        // Nothing but the archive was left in the folder.
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn any_tensor_set_round_trips_through_a_manifest(
        tensors in tensor_set(),
        wgwt in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let graph = write_blob(dir.path(), &tensors, wgwt, pretty);
        let resolved = resolve_checked(dir.path(), &graph)?;
        prop_assert_eq!(resolved, Some(expected_bytes(&graph, &tensors)));
    }

    #[test]
    fn corrupted_archives_resolve_well_formed_or_fail_cleanly(
        tensors in tensor_set(),
        corruptions in prop::collection::vec(corruption(), 1..3),
    ) {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let graph = write_archive(dir.path(), &tensors);
        let path = dir.path().join("model.safetensors");
        let mut bytes = std::fs::read(&path).unwrap();
        for c in &corruptions {
            if bytes.len() < 8 {
                break;
            }
            corrupt(&mut bytes, c, true);
        }
        std::fs::write(&path, &bytes).unwrap();
        resolve_checked(dir.path(), &graph)?;
    }

    #[test]
    fn corrupted_manifests_and_blobs_resolve_well_formed_or_fail_cleanly(
        tensors in tensor_set(),
        wgwt in any::<bool>(),
        pretty in any::<bool>(),
        manifest_corruptions in prop::collection::vec(corruption(), 0..3),
        blob_corruption in prop::option::of(corruption()),
    ) {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let graph = write_blob(dir.path(), &tensors, wgwt, pretty);
        let manifest_path = dir.path().join("model.manifest.json");
        let blob_path = dir.path().join("model.weights");
        let mut manifest = std::fs::read(&manifest_path).unwrap();
        for c in &manifest_corruptions {
            corrupt(&mut manifest, c, false);
        }
        std::fs::write(&manifest_path, &manifest).unwrap();
        let mut blob = std::fs::read(&blob_path).unwrap();
        if let Some(c) = &blob_corruption {
            corrupt(&mut blob, c, false);
        }
        std::fs::write(&blob_path, &blob).unwrap();
        resolve_checked(dir.path(), &graph)?;

        // The blob tools on the same files: no panic; a success is well formed.
        if let Ok(report) = inspect_blob(&blob_path, &manifest_path) {
            for t in &report.tensors {
                prop_assert!(t.offset.checked_add(t.length).is_some_and(|e| e <= blob.len() as u64));
            }
        }
        let out = dir.path().join("unpacked");
        if unpack_weights(&blob_path, &manifest_path, &out, &mut NoProgress).is_ok() {
            let parsed = Manifest::parse(&manifest, &manifest_path).unwrap();
            for e in &parsed.tensors {
                let file = std::fs::read(out.join(format!("{}.bin", e.name))).unwrap();
                prop_assert_eq!(file.len() as u64, e.byte_length, "{}", e.name);
            }
        } else {
            prop_assert!(!out.exists(), "a failed unpack left its output folder");
        }
        let graph_path = dir.path().join("model.webnn");
        if let Ok(inlined) = inline_weights(&graph, &graph_path, &blob_path, &manifest_path, &mut NoProgress) {
            for (name, decl) in &inlined.consts {
                let ConstInit::InlineBytes { bytes } = &decl.init else {
                    return Err(TestCaseError::fail(format!("{name} not inlined")));
                };
                prop_assert_eq!(Some(bytes.len() as u64), decl.byte_length());
            }
        }
    }
}

/// The corruption helper itself: a hostile number really lands in the header, and the
/// fixed prefix still frames it (so the property tests exercise the JSON checks, not
/// only the framing).
#[test]
fn hostile_header_numbers_reach_the_json_checks() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let tensors = vec![Tensor {
        reference: "w".to_string(),
        data_type: DataType::Float32,
        shape: vec![2],
        bytes: vec![0; 8],
    }];
    let graph = write_archive(dir.path(), &tensors);
    let path = dir.path().join("model.safetensors");
    let original = std::fs::read(&path).unwrap();
    // data_offsets [0, 8]: the last digit run of the header is the end offset 8.
    let header_runs = {
        let n = u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
        digit_runs(&original[8..8 + n]).len()
    };
    for (value, hostile) in HOSTILE.iter().enumerate() {
        let mut bytes = original.clone();
        corrupt(
            &mut bytes,
            &Corruption::Number {
                index: header_runs - 1,
                value,
                fix_prefix: true,
            },
            true,
        );
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&bytes[8..8 + n]).unwrap();
        assert!(header.contains(&format!("[0,{hostile}]")), "{header}");
        std::fs::write(&path, &bytes).unwrap();
        let mut g = graph.clone();
        let result = resolve_external_weights(&mut g, &dir.path().join("model.webnn"), None, None);
        let err = result.expect_err(hostile);
        let err = webnn_weights_runtime::Report::new(&err).to_string();
        assert!(err.contains("model.safetensors"), "{err}");
        assert_eq!(g, graph);
    }
}
