use super::*;
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::SidecarFormat;
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};

fn manifest_json(tensors: &str) -> String {
    format!(
        r#"{{"format":"wg-weights-manifest","version":1,"endianness":"little","tensors":{{{tensors}}}}}"#
    )
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap();
}

/// `m.weights` holding `blob` and `m.json`, a v1 manifest of `tensors`, in `dir`.
fn blob_and_manifest(dir: &Path, blob: &[u8], tensors: &str) -> (PathBuf, PathBuf) {
    let (blob_path, manifest) = (dir.join("m.weights"), dir.join("m.json"));
    write(&blob_path, blob);
    write(&manifest, manifest_json(tensors).as_bytes());
    (blob_path, manifest)
}

#[test]
fn manifest_json_layout_matches_webnn_graph() {
    let mut m = ManifestV1::new();
    m.tensors.insert(
        "b".into(),
        ManifestV1Entry {
            data_type: DataType::Float32,
            shape: vec![2],
            byte_offset: 8,
            byte_length: 8,
            layout: None,
        },
    );
    let expected = "{\n  \"format\": \"wg-weights-manifest\",\n  \"version\": 1,\n  \
        \"endianness\": \"little\",\n  \"tensors\": {\n    \"b\": {\n      \
        \"dataType\": \"float32\",\n      \"shape\": [\n        2\n      ],\n      \
        \"byteOffset\": 8,\n      \"byteLength\": 8,\n      \"layout\": null\n    }\n  }\n}";
    assert_eq!(m.to_json().unwrap(), expected);
}

#[test]
fn strict_v1_rules() {
    let p = Path::new("m.json");
    let parse = |s: &str| Manifest::parse(s.as_bytes(), p).unwrap();
    let ok = parse(&manifest_json(
        r#""w":{"dataType":"int4","shape":[3],"byteOffset":8,"byteLength":2}"#,
    ));
    let v1 = ManifestV1::from_manifest(&ok, p).unwrap();
    assert_eq!(v1.check_contiguous(8, p).unwrap(), 10);

    // Contiguity from offset 8, one row per rule.
    for (tensors, needle) in [
        (
            r#""w":{"dataType":"int4","shape":[3],"byteOffset":8,"byteLength":3}"#,
            "byteLength is 3, expected 2",
        ),
        (
            r#""a":{"dataType":"uint8","shape":[1],"byteOffset":8,"byteLength":1},
               "b":{"dataType":"uint8","shape":[1],"byteOffset":10,"byteLength":1}"#,
            "\"b\": byteOffset is 10, expected 9",
        ),
    ] {
        let err = ManifestV1::from_manifest(&parse(&manifest_json(tensors)), p)
            .unwrap()
            .check_contiguous(8, p)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err} should contain {needle}");
    }

    // The v1 fields, one row per rule.
    for (bad, needle) in [
        (
            r#"{"format":"x","version":1,"endianness":"little","tensors":{}}"#,
            "\"format\" is \"x\"",
        ),
        (
            r#"{"format":"wg-weights-manifest","version":2,"endianness":"little","tensors":{}}"#,
            "\"version\" is 2",
        ),
        (
            r#"{"format":"wg-weights-manifest","version":1,"endianness":"big","tensors":{}}"#,
            "\"endianness\" is \"big\"",
        ),
        (
            &manifest_json(
                r#""w":{"dataType":"float64","shape":[1],"byteOffset":8,"byteLength":8}"#,
            ),
            "\"dataType\" is \"float64\"",
        ),
        (
            &manifest_json(r#""w":{"dataType":"float32","byteOffset":8,"byteLength":4}"#),
            "\"shape\" must be",
        ),
    ] {
        let err = ManifestV1::from_manifest(&parse(bad), p)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err} should contain {needle}");
    }
}

#[test]
fn empty_tensors_sharing_an_offset_pack() {
    // "a" (4 bytes) and "a.e" (empty) both start at 8; "a" sorts first by name.
    let p = Path::new("m.json");
    let m = Manifest::parse(
        manifest_json(
            r#""a":{"dataType":"uint8","shape":[4],"byteOffset":8,"byteLength":4},
               "a.e":{"dataType":"uint8","shape":[0],"byteOffset":8,"byteLength":0}"#,
        )
        .as_bytes(),
        p,
    )
    .unwrap();
    let v1 = ManifestV1::from_manifest(&m, p).unwrap();
    assert_eq!(v1.check_contiguous(8, p).unwrap(), 12);
}

#[test]
fn blob_layout_judgement() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.weights");
    let mut bytes = wgwt_header().to_vec();
    bytes.extend_from_slice(&[1, 2, 3, 4]);
    write(&path, &bytes);
    let file = fs::File::open(&path).unwrap();
    // Header bytes not addressed: WGWT.
    assert_eq!(
        BlobLayout::detect(&file, &path, 12, [(8, 4)]).unwrap(),
        BlobLayout::Wgwt
    );
    // A tensor covers bytes 0..8: they are data, whatever they spell.
    assert_eq!(
        BlobLayout::detect(&file, &path, 12, [(0, 12)]).unwrap(),
        BlobLayout::Headerless
    );
    // An empty tensor at 0 does not make the header data.
    assert_eq!(
        BlobLayout::detect(&file, &path, 12, [(0, 0), (8, 4)]).unwrap(),
        BlobLayout::Wgwt
    );
    bytes[4] = 9;
    write(&path, &bytes);
    let file = fs::File::open(&path).unwrap();
    let err = BlobLayout::detect(&file, &path, 12, [(8, 4)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("version 9, expected 1"), "{err}");
}

#[test]
fn unpack_headerless_blob() {
    let dir = tempfile::tempdir().unwrap();
    let (blob, manifest) = blob_and_manifest(
        dir.path(),
        &[1, 2, 3, 4, 5, 6],
        r#""a":{"byteOffset":0,"byteLength":4},"b":{"byteOffset":4,"byteLength":2}"#,
    );
    let out = dir.path().join("out");
    let summary = unpack_weights(&blob, &manifest, &out, &mut NoProgress).unwrap();
    assert_eq!(summary.layout, BlobLayout::Headerless);
    assert_eq!(fs::read(out.join("a.bin")).unwrap(), [1, 2, 3, 4]);
    assert_eq!(fs::read(out.join("b.bin")).unwrap(), [5, 6]);
}

/// One row per manifest `unpack_weights` must refuse: what the message says, and no
/// output folder, no file anywhere (a name may not leave the folder).
#[test]
fn unpack_refusals_write_nothing() {
    for (blob_bytes, tensors, needle) in [
        (
            &[1u8, 2, 3, 4, 5, 6][..],
            r#""a":{"byteOffset":0,"byteLength":4},"b":{"byteOffset":4,"byteLength":3}"#,
            "\"b\": bytes 4..7",
        ),
        (
            &[1, 2][..],
            r#""../evil":{"byteOffset":0,"byteLength":2}"#,
            "cannot be used as a file name",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (blob, manifest) = blob_and_manifest(dir.path(), blob_bytes, tensors);
        let out = dir.path().join("out");
        let err = unpack_weights(&blob, &manifest, &out, &mut NoProgress)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err} should contain {needle}");
        let mut left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["m.json", "m.weights"], "{tensors}");
    }
}

#[test]
fn create_manifest_packs_4bit_and_needs_only_type_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("q.bin"), &[0x21, 0x03]);
    write(
        &dir.path().join("q.meta.json"),
        br#"{"dataType":"uint4","shape":[3]}"#,
    );
    write(&dir.path().join("a.bin"), &[0; 4]);
    write(
        &dir.path().join("a.meta.json"),
        br#"{"dataType":"float32","shape":[],"layout":null}"#,
    );
    let m = create_manifest(dir.path(), "little").unwrap();
    assert_eq!(m.tensors["a"].byte_offset, 8);
    assert_eq!(m.tensors["a"].layout.as_deref(), Some("row-major"));
    assert_eq!(m.tensors["q"].byte_offset, 12);
    assert_eq!(m.tensors["q"].byte_length, 2);
    assert!(create_manifest(dir.path(), "big").is_err());

    write(&dir.path().join("q.bin"), &[0x21, 0x03, 0]);
    let err = create_manifest(dir.path(), "little")
        .unwrap_err()
        .to_string();
    assert!(err.contains("the file has 3 bytes, expected 2"), "{err}");
}

#[test]
fn pack_checks_everything_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    fs::create_dir(&input).unwrap();
    write(&input.join("a.bin"), &[1, 2, 3, 4]);
    write(&input.join("b.bin"), &[5]);
    let manifest = dir.path().join("m.json");
    write(
        &manifest,
        manifest_json(
            r#""b":{"dataType":"uint8","shape":[1],"byteOffset":12,"byteLength":1},
               "a":{"dataType":"float32","shape":[1],"byteOffset":8,"byteLength":4}"#,
        )
        .as_bytes(),
    );
    let output = dir.path().join("out.weights");
    let s = pack_weights(&manifest, &input, &output, &mut NoProgress).unwrap();
    assert_eq!(s.bytes, 13);
    assert_eq!(
        fs::read(&output).unwrap(),
        b"WGWT\x01\x00\x00\x00\x01\x02\x03\x04\x05"
    );

    write(&input.join("b.bin"), &[5, 6]);
    let output2 = dir.path().join("out2.weights");
    let err = pack_weights(&manifest, &input, &output2, &mut NoProgress)
        .unwrap_err()
        .to_string();
    assert!(err.contains("the file has 2 bytes"), "{err}");
    assert!(!output2.exists());
    // Only the inputs and the first output are there: no temporary file is left.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
}

#[test]
fn extract_checks_sizes_with_the_packed_rule() {
    let mut g = GraphJson::new(None);
    g.consts.insert(
        "q".into(),
        ConstDecl {
            data_type: DataType::Uint4,
            shape: vec![4],
            init: ConstInit::InlineBytes {
                bytes: vec![1, 2, 3, 4].into(),
            },
        },
    );
    let err = extract_weights(&g, Path::new("g.json"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("4 inline bytes, expected 2"), "{err}");
}

#[test]
fn staging_installs_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a/b");
    let mut staging = Staging::new();
    staging.ensure_dir(&out).unwrap();
    staging
        .stage(&out.join("x"), |w| {
            std::io::Write::write_all(w, b"x").map_err(|e| ToolError::io("x", e))
        })
        .unwrap();
    let err = staging.stage(&out.join("y"), |_| Err(ToolError::invalid("y", "boom")));
    assert!(err.is_err());
    drop(staging);
    assert!(!dir.path().join("a").exists());

    let mut staging = Staging::new();
    staging.ensure_dir(&out).unwrap();
    staging
        .stage(&out.join("x"), |w| {
            std::io::Write::write_all(w, b"x").map_err(|e| ToolError::io("x", e))
        })
        .unwrap();
    staging.commit().unwrap();
    assert_eq!(fs::read(out.join("x")).unwrap(), b"x");
    assert_eq!(fs::read_dir(&out).unwrap().count(), 1);
}

/// A commit over earlier files in two folders (one created by the staging, one existing),
/// with an appended staging area, that fails at its last file (a folder with something in
/// it is in the way): every earlier file is left byte for byte, the new files and the
/// created folder are gone, and no temporary remains.
#[test]
fn a_failed_commit_puts_back_every_file_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (top, made) = (dir.path().join("top"), dir.path().join("top/made"));
    fs::create_dir(&top).unwrap();
    for name in ["a", "b"] {
        write(&top.join(name), format!("earlier {name}").as_bytes());
    }
    fs::create_dir_all(top.join("blocked/inside")).unwrap();
    let listing = |dir: &Path| {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing(&top);
    let stage = |staging: &mut Staging, path: &Path| {
        staging
            .stage(path, |w| {
                std::io::Write::write_all(w, b"new").map_err(|e| ToolError::io(path, e))
            })
            .unwrap();
    };
    let mut staging = Staging::new();
    stage(&mut staging, &top.join("a"));
    staging.ensure_dir(&made).unwrap();
    stage(&mut staging, &made.join("c"));
    let mut later = Staging::new();
    stage(&mut later, &top.join("b"));
    stage(&mut later, &top.join("blocked"));
    staging.append(later);
    let err = staging.commit().unwrap_err();
    assert!(err.to_string().contains("blocked"), "{err}");
    assert_eq!(fs::read(top.join("a")).unwrap(), b"earlier a");
    assert_eq!(fs::read(top.join("b")).unwrap(), b"earlier b");
    assert!(!made.exists());
    assert!(top.join("blocked/inside").is_dir());
    // Nothing else: no temporary (`.…webnn-weights-tmp…`), no new file.
    assert_eq!(listing(&top), before);
}

fn fixture(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(path)
}

#[test]
fn inspect_a_safetensors_archive_from_its_header() {
    let report = inspect_safetensors(&fixture("packed4/quant.safetensors")).unwrap();
    assert_eq!(report.kind, "safetensors");
    assert_eq!(
        report
            .metadata
            .get("rustnn.webnn.packed4")
            .map(String::as_str),
        Some("1")
    );
    let names: Vec<&str> = report.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["scale", "zero", "w_q", "w_u"]); // offset order
                                                        // Data starts after the 8-byte length and the 280-byte header.
    let w_q = &report.tensors[2];
    assert_eq!(
        (w_q.data_type.as_str(), w_q.offset, w_q.length),
        ("U8", 288 + 15, 12)
    );
    assert_eq!(w_q.shape, Some(vec![12]));
    assert_eq!(w_q.alignment, 1);
    assert_eq!(report.tensors[0].alignment, 32); // 288 = 32 * 9
}

#[test]
fn inspect_a_blob_with_its_manifest() {
    let report = inspect_blob(
        &fixture("tiny-extract/tiny.weights"),
        &fixture("tiny-extract/tiny.manifest.json"),
    )
    .unwrap();
    assert_eq!(report.metadata["header"], "WGWT v1");
    assert_eq!(report.metadata["format"], "wg-weights-manifest");
    let rows: Vec<(&str, u64, u64, u64)> = report
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.offset, t.length, t.alignment))
        .collect();
    assert_eq!(rows, [("b", 8, 8, 8), ("k", 16, 8, 16), ("w", 24, 32, 8)]);

    let headerless = inspect_blob(
        &fixture("onnx-layout/model.weights"),
        &fixture("onnx-layout/model.manifest.json"),
    )
    .unwrap();
    assert_eq!(headerless.metadata["header"], "none");
    assert_eq!(headerless.tensors[0].alignment, ALIGNMENT_CAP);
    // A manifest that addresses bytes past the end is reported, naming the tensor.
    let err = inspect_blob(
        &fixture("tiny-extract/tiny.weights"),
        &fixture("onnx-layout/model.manifest.json"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`onnx__MatMul_0`") && err.contains("byteOffset 0 + byteLength 64 = 64"),
        "{err}"
    );
}

#[test]
fn safetensors_files_are_recognized_by_name_and_content_only_hints() {
    let kind = |path: &Path| SidecarFormat::of_path(path);
    let sniffed = |path: &Path| SidecarFormat::sniff_file(path);
    assert_eq!(
        kind(&fixture("packed4/quant.safetensors")),
        SidecarFormat::SafeTensors
    );
    assert_eq!(
        kind(&fixture("tiny-extract/tiny.weights")),
        SidecarFormat::Blob
    );
    assert_eq!(
        kind(&fixture("tiny-extract/tiny.webnn")),
        SidecarFormat::Blob
    );
    assert_eq!(sniffed(&fixture("tiny-extract/tiny.weights")), None);
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("archive.bin");
    fs::copy(fixture("packed4/quant.safetensors"), &renamed).unwrap();
    // The name decides (as in the resolver); the content only suggests a rename.
    assert_eq!(kind(&renamed), SidecarFormat::Blob);
    assert_eq!(sniffed(&renamed), Some(SidecarFormat::SafeTensors));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn tensor() -> impl Strategy<Value = (String, DataType, Vec<u32>)> {
        (
            "[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,7}",
            proptest::sample::select(DataType::ALL.to_vec()),
            proptest::collection::vec(0u32..5, 0..4),
        )
            .prop_map(|(name, dt, shape)| (name, dt, shape))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// create-manifest -> pack -> unpack returns every tensor file, 4-bit types packed.
        #[test]
        fn pack_unpack_round_trip(tensors in proptest::collection::vec(tensor(), 0..6), seed: u8) {
            let dir = tempfile::tempdir().unwrap();
            let input = dir.path().join("in");
            fs::create_dir(&input).unwrap();
            let mut written = std::collections::BTreeMap::new();
            for (i, (name, dt, shape)) in tensors.iter().enumerate() {
                if written.contains_key(name) {
                    continue;
                }
                let len = dt.byte_length(shape).unwrap() as usize;
                let bytes: Vec<u8> = (0..len).map(|j| (j as u8).wrapping_mul(31) ^ seed ^ i as u8).collect();
                fs::write(input.join(format!("{name}.bin")), &bytes).unwrap();
                fs::write(
                    input.join(format!("{name}.meta.json")),
                    format!(r#"{{"dataType":"{}","shape":{:?}}}"#, dt.json_name(), shape),
                )
                .unwrap();
                written.insert(name.clone(), bytes);
            }
            let m = create_manifest(&input, "little").unwrap();
            let manifest = dir.path().join("m.json");
            m.write_to(&manifest).unwrap();
            let blob = dir.path().join("b.weights");
            let summary = pack_weights(&manifest, &input, &blob, &mut NoProgress).unwrap();
            let total: usize = written.values().map(Vec::len).sum();
            prop_assert_eq!(summary.bytes, 8 + total as u64);
            let out = dir.path().join("out");
            unpack_weights(&blob, &manifest, &out, &mut NoProgress).unwrap();
            for (name, bytes) in &written {
                prop_assert_eq!(&fs::read(out.join(format!("{name}.bin"))).unwrap(), bytes);
            }
        }

        /// Arbitrary ranges over an arbitrary blob: unpack either writes exactly the
        /// ranges or fails leaving nothing, and never panics.
        #[test]
        fn unpack_arbitrary_ranges(
            blob in proptest::collection::vec(any::<u8>(), 0..64),
            ranges in proptest::collection::vec((0u64..80, 0u64..80), 0..4),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let entries: Vec<String> = ranges
                .iter()
                .enumerate()
                .map(|(i, (o, l))| format!(r#""t{i}":{{"byteOffset":{o},"byteLength":{l}}}"#))
                .collect();
            let (path, manifest) = blob_and_manifest(dir.path(), &blob, &entries.join(","));
            let out = dir.path().join("out");
            match unpack_weights(&path, &manifest, &out, &mut NoProgress) {
                Ok(_) => {
                    for (i, (o, l)) in ranges.iter().enumerate() {
                        let expected = &blob[*o as usize..(*o + *l) as usize];
                        prop_assert_eq!(&fs::read(out.join(format!("t{i}.bin"))).unwrap()[..], expected);
                    }
                }
                Err(_) => prop_assert!(!out.exists()),
            }
        }
    }
}

#[test]
fn helpers_of_the_blob_tools() {
    assert_eq!(&wgwt_header(), b"WGWT\x01\x00\x00\x00");
    let dir = Path::new("d");
    assert_eq!(
        tensor_file_path(dir, "w", ".bin").unwrap(),
        Path::new("d/w.bin")
    );
    assert_eq!(
        tensor_file_path(dir, "a/w", ".bin").unwrap(),
        Path::new("d/a/w.bin")
    );
    for bad in ["", "../w", "a//w", "a/./w", "/w", "a/"] {
        assert!(tensor_file_path(dir, bad, ".bin").is_err(), "{bad:?}");
    }
    assert_eq!(inspect::alignment_of(8), 8);
    assert_eq!(inspect::alignment_of(24), 8);
    assert_eq!(inspect::alignment_of(0), ALIGNMENT_CAP);
    assert_eq!(inspect::alignment_of(1 << 20), ALIGNMENT_CAP);
}
