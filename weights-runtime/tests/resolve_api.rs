//! The plan API, materialization, robustness, inline constants and writer round trips.

mod common;
use common::*;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};
use webnn_weights_runtime::{
    plan_external_weights, resolve_external_weights, ConstDecl, ConstInit, Conversion, DataType,
    GraphJson, GraphLoader, ResolveError,
};
use webnn_weights_tools::write_external_weights_safetensors;

fn blob_setup(
    bytes: &[u8],
    entries: &[(&str, u64, u64)],
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    write_blob(
        &dir.path().join("m.weights"),
        bytes,
        &dir.path().join("m.manifest.json"),
        entries,
    );
    let gp = dir.path().join("m.webnn");
    (dir, gp)
}

#[test]
fn plan_lists_constants_sorted_with_ranges() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4, 5], &[("x", 1, 2), ("y", 3, 2)]);
    let g = graph(&[
        ("zz", DataType::Uint8, &[2], "x"),
        ("aa", DataType::Int8, &[2], "y"),
    ]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let blob = gp.with_file_name("m.weights");
    let rows: Vec<_> = plan
        .constants()
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.reference.as_str(),
                c.stored_name.as_str(),
                c.data_type,
                c.shape.clone(),
                c.file.clone(),
                c.offset,
                c.stored_length,
                c.length,
                c.conversion,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "aa",
                "y",
                "y",
                DataType::Int8,
                vec![2],
                blob.clone(),
                3,
                2,
                2,
                Conversion::None
            ),
            (
                "zz",
                "x",
                "x",
                DataType::Uint8,
                vec![2],
                blob.clone(),
                1,
                2,
                2,
                Conversion::None
            ),
        ]
    );
    // The plan names the files it spans (one blob here) as they were when planned.
    assert_eq!(plan.files().len(), 1);
    assert_eq!(
        (plan.files()[0].path(), plan.files()[0].len()),
        (blob.as_path(), 5)
    );
    assert_eq!(plan.constant("zz").map(|c| c.offset), Some(1));
    let all = plan.materialize().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["aa"][..], [4, 5]);
    assert_eq!(all["zz"][..], [2, 3]);
    assert_eq!(plan.read_constant(&plan.constants()[1]).unwrap(), [2, 3]);
}

#[test]
fn copy_constant_into_a_file_matches_read_constant() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 251) as u8).collect();
    let bf: Vec<u8> = (0..70_001u32)
        .flat_map(|i| half::bf16::from_f32(i as f32 * 0.5 - 3.0).to_le_bytes())
        .collect();
    write_safetensors(
        &dir.path().join("m.safetensors"),
        None,
        &[
            ("d", "U8", &[300_000], &data),
            ("b", "BF16", &[70_001], &bf),
        ],
    );
    let g = graph(&[
        ("d", DataType::Uint8, &[300_000], "d"),
        ("b", DataType::Float32, &[70_001], "b"),
    ]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    for c in plan.constants() {
        let path = dir.path().join(format!("{}.out", c.name));
        let mut file = std::fs::File::create(&path).unwrap();
        assert_eq!(plan.copy_constant(c, &mut file).unwrap(), c.length);
        drop(file);
        let copied = std::fs::read(&path).unwrap();
        assert_eq!(copied, plan.read_constant(c).unwrap(), "{}", c.name);
        assert_eq!(copied.len() as u64, c.length);
    }
    assert_eq!(std::fs::read(dir.path().join("d.out")).unwrap(), data);
    let widened: Vec<u8> = bf
        .chunks(2)
        .flat_map(|b| {
            half::bf16::from_le_bytes([b[0], b[1]])
                .to_f32()
                .to_le_bytes()
        })
        .collect();
    assert_eq!(std::fs::read(dir.path().join("b.out")).unwrap(), widened);
}

#[test]
fn sidecar_changed_since_planned_is_reported() {
    let (d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 2)]);
    let g = graph(&[("c", DataType::Uint8, &[2], "x")]);
    let blob = d.path().join("m.weights");
    // size change
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    std::fs::write(&blob, [1, 2, 3, 4, 5]).unwrap();
    let err = plan.materialize().unwrap_err();
    assert!(matches!(err, ResolveError::Changed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("changed since it was planned")
            && msg.contains("m.weights")
            && msg.contains("4 bytes")
            && msg.contains("5 bytes"),
        "{msg}"
    );
    // same size, new modification time
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&blob).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    drop(file);
    for err in [
        plan.materialize().unwrap_err(),
        plan.read_constant(&plan.constants()[0]).unwrap_err(),
        plan.copy_constant(&plan.constants()[0], &mut Vec::new())
            .unwrap_err(),
    ] {
        assert!(
            err.to_string().contains("changed since it was planned"),
            "{err}"
        );
    }
    // replaced by a rename
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    std::fs::write(d.path().join("new"), [9, 9, 9]).unwrap();
    std::fs::rename(d.path().join("new"), &blob).unwrap();
    assert!(matches!(
        plan.materialize(),
        Err(ResolveError::Changed { .. })
    ));
    // removed
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    std::fs::remove_file(&blob).unwrap();
    assert!(plan.materialize().is_err());
}

#[test]
fn truncated_sidecar_is_a_clean_error() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let st = dir.path().join("m.safetensors");
    write_safetensors(&st, None, &[("w", "U8", &[64], &[7; 64])]);
    let g = graph(&[("c", DataType::Uint8, &[64], "w")]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&st).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len - 10).unwrap();
    drop(file);
    let err = plan.materialize().unwrap_err();
    assert!(matches!(err, ResolveError::Changed { .. }), "{err:?}");
    // planning the truncated file reports the header/data disagreement
    expect_error(
        &g,
        &gp,
        None,
        None,
        &["invalid SafeTensors archive", "m.safetensors"],
    );
}

#[test]
fn foreign_constant_is_refused() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 2)]);
    let g = graph(&[("c", DataType::Uint8, &[2], "x")]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let mut foreign = plan.constants()[0].clone();
    foreign.offset = 3;
    assert!(plan.read_constant(&foreign).is_err());
    let empty = plan_external_weights(&graph(&[]), &gp, None, None).unwrap();
    let err = empty.read_constant(&plan.constants()[0]).unwrap_err();
    assert!(matches!(err, ResolveError::NotInPlan { .. }), "{err:?}");
}

fn inline(data_type: DataType, shape: &[u32], bytes: Vec<u8>) -> ConstDecl {
    ConstDecl {
        data_type,
        shape: shape.to_vec(),
        init: ConstInit::InlineBytes {
            bytes: bytes.into(),
        },
    }
}

#[test]
fn inline_constants_must_match_their_declaration() {
    let mut g = graph(&[]);
    g.consts
        .insert("ok".into(), inline(DataType::Int4, &[3], vec![0, 0]));
    g.consts.insert(
        "s".into(),
        ConstDecl {
            data_type: DataType::Float32,
            shape: vec![],
            init: ConstInit::Scalar { value: 1.into() },
        },
    );
    let gp = std::path::Path::new("/nowhere/m.webnn");
    let mut copy = g.clone();
    resolve_external_weights(&mut copy, gp, None, None).unwrap();
    assert_eq!(copy, g);
    g.consts
        .insert("bad".into(), inline(DataType::Float32, &[2], vec![0; 7]));
    let err = expect_error(
        &g,
        gp,
        None,
        None,
        &[
            "inline constant `bad`",
            "float32 [2]",
            "needs 8 bytes, found 7",
            "m.webnn",
        ],
    );
    assert!(matches!(err, ResolveError::InlineLength { .. }));
}

#[test]
fn graph_untouched_when_a_later_constant_fails() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 2)]);
    // "a" resolves, "b" is missing: nothing may be replaced
    let g = graph(&[
        ("a", DataType::Uint8, &[2], "x"),
        ("b", DataType::Uint8, &[2], "nope"),
    ]);
    expect_error(&g, &gp, None, None, &["\"nope\""]);
}

#[test]
fn resolve_replaces_every_weights_init() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 2), ("y", 2, 2)]);
    let mut g = graph(&[
        ("a", DataType::Uint8, &[2], "x"),
        ("b", DataType::Int8, &[2], "y"),
        ("c", DataType::Uint8, &[2], "x"),
    ]);
    g.consts
        .insert("i".into(), inline(DataType::Uint8, &[1], vec![5]));
    resolve_external_weights(&mut g, &gp, None, None).unwrap();
    assert!(!g.has_external_weights());
    for (name, bytes) in [
        ("a", &[1, 2][..]),
        ("b", &[3, 4]),
        ("c", &[1, 2]),
        ("i", &[5]),
    ] {
        assert_eq!(
            g.consts[name].init,
            ConstInit::InlineBytes {
                bytes: bytes.to_vec().into()
            },
            "{name}"
        );
    }
}

#[test]
fn writer_resolver_round_trip_every_dtype() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("model.webnn");
    let shapes: [&[u32]; 3] = [&[2, 3], &[], &[5]];
    let mut consts = Vec::new();
    let mut names = Vec::new();
    for dt in DataType::ALL {
        for (i, shape) in shapes.iter().enumerate() {
            names.push((
                format!("{dt}_{i}"),
                format!("layer.{dt}::{i}"),
                dt,
                shape.to_vec(),
            ));
        }
    }
    for (name, reference, dt, shape) in &names {
        consts.push((name.as_str(), *dt, shape.as_slice(), reference.as_str()));
    }
    let g = graph(&consts);
    let data: HashMap<String, Vec<u8>> = names
        .iter()
        .map(|(_, r, dt, shape)| {
            let n = dt.byte_length(shape).unwrap() as usize;
            (
                r.clone(),
                (0..n)
                    .map(|i| (i as u8).wrapping_mul(37).wrapping_add(r.len() as u8))
                    .collect(),
            )
        })
        .collect();
    let refs: HashMap<String, &[u8]> = data
        .iter()
        .map(|(k, v)| (k.clone(), v.as_slice()))
        .collect();
    let archive = dir.path().join("model.safetensors");
    write_external_weights_safetensors(&g, &refs, &archive).unwrap();
    let mut resolved = g.clone();
    resolve_external_weights(&mut resolved, &gp, None, None).unwrap();
    for (name, reference, _, _) in &names {
        assert_eq!(
            resolved.consts[name].init,
            ConstInit::InlineBytes {
                bytes: data[reference].clone().into()
            },
            "{name}"
        );
    }
    // and through normalized references
    let normalized = graph(&[("n", DataType::Int4, &[5], "layer_int4__2")]);
    assert_eq!(
        resolve_one(&normalized, &gp, None, None, "n").unwrap(),
        data["layer.int4::2"]
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn failing_writer_leaves_no_file_and_resolver_sees_none() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let g = graph(&[("a", DataType::Float32, &[2], "r")]);
    let archive = dir.path().join("model.safetensors");
    let short: &[u8] = &[0; 4];
    assert!(write_external_weights_safetensors(
        &g,
        &HashMap::from([("r".to_string(), short)]),
        &archive
    )
    .is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    expect_error(
        &g,
        &dir.path().join("model.webnn"),
        None,
        None,
        &["no weights file was found"],
    );
}

#[test]
fn load_graph_reports_resolve_errors_as_error_resolve() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("g.webnn");
    std::fs::write(&gp, "webnn_graph \"g\" v2 {\n consts { w: f32[2] @weights(\"w\"); }\n nodes { y = relu(w); }\n outputs { y; }\n}\n").unwrap();
    let err = webnn_weights_runtime::load_graph(&gp).unwrap_err();
    assert!(
        matches!(&err, webnn_weights_runtime::Error::Resolve(e) if matches!(**e, ResolveError::NoSidecar { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("no weights file was found"));
    write_blob(
        &dir.path().join("g.weights"),
        &[0; 8],
        &dir.path().join("manifest.json"),
        &[("w", 0, 8)],
    );
    let g = webnn_weights_runtime::load_graph(&gp).unwrap();
    assert_eq!(
        g.consts["w"].init,
        ConstInit::InlineBytes {
            bytes: vec![0; 8].into()
        }
    );
}

#[test]
fn copy_constant_reports_writer_failures() {
    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (_d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 2)]);
    let g = graph(&[("c", DataType::Uint8, &[2], "x")]);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let err = plan
        .copy_constant(&plan.constants()[0], &mut Broken)
        .unwrap_err();
    assert!(matches!(err, ResolveError::Write { .. }), "{err:?}");
    let msg = webnn_weights_runtime::Report::new(&err).to_string();
    assert!(msg.contains("`c`") && msg.contains("disk full"), "{msg}");
}

/// Constants resolving to the same stored bytes with the same conversion share one
/// buffer in every mode (owned loads read them once); cloning a resolved graph copies no
/// weight byte; in memory, unconverted constants are slices of the caller's buffer.
#[test]
fn shared_storage_shared_buffers_and_cheap_clones() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let f32s: Vec<u8> = (0..16u8).collect();
    let bf16: Vec<u8> = vec![0x80, 0x3f, 0x00, 0x40];
    write_safetensors(
        &dir.path().join("m.safetensors"),
        None,
        &[("w", "F32", &[4], &f32s), ("h", "BF16", &[2], &bf16)],
    );
    let g = graph(&[
        ("a", DataType::Float32, &[4], "w"),
        ("b", DataType::Float32, &[4], "w"),
        ("c", DataType::Float32, &[2], "h"),
        ("d", DataType::Float32, &[2], "h"),
    ]);
    let ptr = |g: &GraphJson, name: &str| match &g.consts[name].init {
        ConstInit::InlineBytes { bytes } => bytes.as_ptr(),
        other => panic!("{other:?}"),
    };
    let archive = std::fs::read(dir.path().join("m.safetensors")).unwrap();
    let archive = bytes::Bytes::from(archive);
    let loaders = [
        GraphLoader::from_graph(g.clone()).graph_path(&gp),
        GraphLoader::from_graph(g.clone())
            .graph_path(&gp)
            .mapped_here(),
        GraphLoader::from_graph(g.clone()).weights_bytes(archive.clone()),
    ];
    for (i, loader) in loaders.iter().enumerate() {
        let resolved = loader.load().unwrap();
        assert_eq!(ptr(&resolved, "a"), ptr(&resolved, "b"), "loader {i}");
        assert_eq!(ptr(&resolved, "c"), ptr(&resolved, "d"), "loader {i}");
        assert_ne!(ptr(&resolved, "a"), ptr(&resolved, "c"));
        let ConstInit::InlineBytes { bytes } = &resolved.consts["c"].init else {
            panic!()
        };
        assert_eq!(bytes[..], [0, 0, 128, 63, 0, 0, 0, 64]); // 1.0, 2.0 widened
        let clone = resolved.clone();
        for name in ["a", "b", "c", "d"] {
            assert_eq!(
                ptr(&clone, name),
                ptr(&resolved, name),
                "clone copied {name}"
            );
        }
    }
    // In memory: the F32 constant is a slice of the caller's buffer.
    let resolved = loaders[2].load().unwrap();
    let at = archive.len() - f32s.len() - bf16.len(); // `w` starts the data section
    assert_eq!(ptr(&resolved, "a"), archive[at..].as_ptr());
}

/// A graph in memory with `@weights` and no weights fails clearly; without `@weights`
/// it needs none.
#[test]
fn graph_in_memory_without_weights() {
    let g = graph(&[("a", DataType::Uint8, &[1], "w")]);
    let err = GraphLoader::from_graph(g).load().unwrap_err();
    let webnn_weights_runtime::Error::Resolve(e) = &err else {
        panic!("{err:?}")
    };
    assert!(matches!(**e, ResolveError::NoWeightsGiven { .. }), "{e:?}");
    let text = err.to_string();
    assert!(
        text.contains("`a`") && text.contains("\"w\"") && text.contains("<graph in memory>"),
        "{text}"
    );
    assert!(err.fix().unwrap().contains("weights_bytes"));
    let empty = GraphJson::new(None);
    assert_eq!(
        GraphLoader::from_graph(empty.clone()).load().unwrap(),
        empty
    );
}

/// Planned ranges of a blob: (offset, length) each, any overlap, gap and order.
fn blob_ranges_strategy() -> impl proptest::strategy::Strategy<Value = (Vec<(u64, u64)>, Vec<usize>)>
{
    use proptest::prelude::*;
    // Lengths around the reader's small-constant limit (64 KiB) and gaps around its
    // merging limit (4 KiB), so that every branch of the read-ahead is taken.
    let length = prop_oneof![1u64..300, 65_000u64..67_000, 100_000u64..140_000];
    let gap = prop_oneof![Just(0u64), 1u64..64, 4_000u64..4_200, 9_000u64..20_000];
    let step = (length, gap, any::<bool>());
    proptest::collection::vec(step, 1..24).prop_flat_map(|steps| {
        let mut at = 0u64;
        let mut ranges = Vec::new();
        for (length, gap, overlap) in steps {
            // An overlapping entry starts inside the previous one (tied or sliced weights).
            let start = match ranges.last() {
                Some(&(o, l)) if overlap => o + l / 2,
                _ => at + gap,
            };
            ranges.push((start, length));
            at = at.max(start + length);
        }
        let n = ranges.len();
        (
            Just(ranges),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        )
    })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 48, ..Default::default() })]

    /// A reader copies and reads, in any order, exactly what each constant's own
    /// `read_constant` reads, whatever the sizes, gaps and overlaps of the planned ranges.
    #[test]
    fn a_reader_reads_every_constant_as_read_constant_does((ranges, order) in blob_ranges_strategy()) {
        let end = ranges.iter().map(|&(o, l)| o + l).max().unwrap_or(0);
        let bytes: Vec<u8> = (0..end + 100).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let names: Vec<String> = (0..ranges.len()).map(|i| format!("t{i:02}")).collect();
        let entries: Vec<(&str, u64, u64)> = names.iter().zip(&ranges).map(|(n, &(o, l))| (n.as_str(), o, l)).collect();
        let (_d, gp) = blob_setup(&bytes, &entries);
        let shapes: Vec<[u32; 1]> = ranges.iter().map(|&(_, l)| [l as u32]).collect();
        let decls: Vec<(&str, DataType, &[u32], &str)> = names.iter().zip(&shapes)
            .map(|(n, s)| (n.as_str(), DataType::Uint8, &s[..], n.as_str())).collect();
        let plan = plan_external_weights(&graph(&decls), &gp, None, None).unwrap();
        let mut reader = plan.reader();
        for &i in &order {
            let c = &plan.constants()[i];
            let (o, l) = ranges[names.iter().position(|n| *n == c.name).unwrap()];
            let expected = &bytes[o as usize..(o + l) as usize];
            let mut copied = Vec::new();
            proptest::prop_assert_eq!(reader.copy_constant(c, &mut copied).unwrap(), l);
            proptest::prop_assert_eq!(&copied[..], expected, "copy of {}", c.name);
            proptest::prop_assert_eq!(&reader.read_constant(c).unwrap()[..], expected, "read of {}", c.name);
        }
        reader.finish().unwrap();
    }
}

#[test]
fn a_reader_of_thousands_of_small_constants_matches_read_constant() {
    // 8,000 small tensors of 60 values (F32, every fifth one BF16 widened to float32; 1.7 MB
    // in all, so that the 1 MiB read-ahead ends inside a constant) and one large BF16 tensor
    // in the middle: what the build helper reads for a model of many constants.
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let mut tensors: Vec<(String, &str, Vec<u64>, Vec<u8>)> = Vec::new();
    for i in 0..8000u32 {
        let (dtype, bytes): (&str, Vec<u8>) = if i % 5 == 0 {
            let values = (0..60u32)
                .flat_map(|k| half::bf16::from_f32((i * 60 + k) as f32 * 0.25).to_le_bytes());
            ("BF16", values.collect())
        } else {
            (
                "F32",
                (0..60u32)
                    .flat_map(|k| ((i * 60 + k) as f32).to_le_bytes())
                    .collect(),
            )
        };
        tensors.push((format!("layers.{i:04}.w"), dtype, vec![60], bytes));
        if i == 6000 {
            let big =
                (0..50_000u32).flat_map(|k| half::bf16::from_f32(k as f32 - 7.5).to_le_bytes());
            tensors.push(("big".into(), "BF16", vec![50_000], big.collect()));
        }
    }
    let list: Vec<(&str, &str, &[u64], &[u8])> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), *d, &s[..], &b[..]))
        .collect();
    write_safetensors(&dir.path().join("m.safetensors"), None, &list);
    let shapes: Vec<[u32; 1]> = tensors.iter().map(|(_, _, s, _)| [s[0] as u32]).collect();
    let decls: Vec<(&str, DataType, &[u32], &str)> = tensors
        .iter()
        .zip(&shapes)
        .map(|((n, _, _, _), s)| (n.as_str(), DataType::Float32, &s[..], n.as_str()))
        .collect();
    let plan = plan_external_weights(&graph(&decls), &gp, None, None).unwrap();
    assert_eq!(
        plan.constants()
            .iter()
            .filter(|c| c.conversion == Conversion::Bf16ToF32)
            .count(),
        1601
    );
    // The whole pass into one file, as the build helper writes it, and constant by constant.
    let path = dir.path().join("all.bin");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut reader = plan.reader();
    let mut expected = Vec::new();
    for c in plan.constants() {
        assert_eq!(reader.copy_constant(c, &mut file).unwrap(), c.length);
        expected.extend_from_slice(&plan.read_constant(c).unwrap());
    }
    reader.finish().unwrap();
    drop(file);
    assert!(std::fs::read(&path).unwrap() == expected, "the whole pass");
    let big = plan.constant("big").unwrap();
    let widened: Vec<u8> = (0..50_000u32)
        .flat_map(|k| half::bf16::from_f32(k as f32 - 7.5).to_f32().to_le_bytes())
        .collect();
    assert!(plan.read_constant(big).unwrap() == widened, "big");
}

#[test]
fn a_reader_reports_a_sidecar_changed_during_its_pass() {
    let entries = [("a", 0, 2), ("b", 2, 2), ("c", 4, 2)];
    let g = graph(&[
        ("a", DataType::Uint8, &[2], "a"),
        ("b", DataType::Uint8, &[2], "b"),
        ("c", DataType::Uint8, &[2], "c"),
    ]);
    // A new modification time after the first constant: the read-ahead already holds the
    // others, so only `finish` can tell, and it does.
    let (d, gp) = blob_setup(&[1, 2, 3, 4, 5, 6], &entries);
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    let mut reader = plan.reader();
    assert_eq!(reader.read_constant(&plan.constants()[0]).unwrap(), [1, 2]);
    let blob = d.path().join("m.weights");
    let file = std::fs::OpenOptions::new().write(true).open(&blob).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    drop(file);
    for c in &plan.constants()[1..] {
        reader.read_constant(c).unwrap();
    }
    let err = reader.finish().unwrap_err();
    assert!(matches!(err, ResolveError::Changed { .. }), "{err:?}");
    assert!(err.to_string().contains("m.weights"), "{err}");

    // Truncated before its first read: the reader's open compares it with the plan.
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&blob)
        .unwrap()
        .set_len(3)
        .unwrap();
    let mut reader = plan.reader();
    let err = reader.read_constant(&plan.constants()[2]).unwrap_err();
    assert!(matches!(err, ResolveError::Changed { .. }), "{err:?}");

    // A constant of another plan is refused, as by `read_constant`.
    let mut foreign = plan.constants()[0].clone();
    foreign.offset = 5;
    let err = plan
        .reader()
        .copy_constant(&foreign, &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, ResolveError::Changed { .. }), "{err:?}");
}

#[test]
fn the_loader_checks_what_validate_checks() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let path = dir.path().join("g.webnn");
    std::fs::write(
        &path,
        "webnn_graph \"g\" v2 { consts { w0: u8[1] @bytes([1]); } nodes { q = add(w0, undefined_x); } outputs { q; zz; } }",
    )
    .unwrap();
    for loader in [
        webnn_weights_runtime::GraphLoader::new(&path),
        webnn_weights_runtime::GraphLoader::new(&path).mapped_here(),
    ] {
        let err = loader.load().unwrap_err();
        let webnn_weights_runtime::Error::Validation { source, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(source.problems().len(), 2, "{err}");
        assert!(
            source.problems()[0].contains("input `undefined_x` is not defined"),
            "{err}"
        );
    }
}

/// Mapped loading on wasm32 is an error that names the file and the fix; elsewhere it maps.
#[test]
fn mapped_loading_is_an_error_on_wasm32_only() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4], &[("x", 0, 4)]);
    let g = graph(&[("x", DataType::Uint8, &[4], "x")]);
    let mapped = GraphLoader::from_graph(g.clone())
        .graph_path(&gp)
        .mapped()
        .load();
    let plan = plan_external_weights(&g, &gp, None, None).unwrap();
    if cfg!(target_family = "wasm") {
        let err = mapped.unwrap_err().to_string();
        assert!(
            err.contains("cannot map") && err.contains("m.weights") && err.contains("wasm32"),
            "{err}"
        );
        let err = plan.materialize_mapped().unwrap_err();
        assert!(
            matches!(err, ResolveError::MappingUnsupported { .. }),
            "{err}"
        );
        assert!(err.fix().unwrap().contains("weights_bytes"));
    } else {
        assert!(mapped.is_ok());
        assert_eq!(plan.materialize_mapped().unwrap()["x"][..], [1, 2, 3, 4]);
    }
    // The owned and in-memory loaders work everywhere.
    let bytes = std::fs::read(gp.with_file_name("m.weights")).unwrap();
    let manifest = std::fs::read(gp.with_file_name("m.manifest.json")).unwrap();
    let memory = GraphLoader::from_graph(g.clone())
        .weights_bytes(bytes)
        .manifest_bytes(manifest)
        .load()
        .unwrap();
    let mut owned = g;
    resolve_external_weights(&mut owned, &gp, None, None).unwrap();
    assert_eq!(owned, memory);
}

/// Offsets past 4 GiB are file positions, never wrapped to 32 bits: a manifest entry at
/// byteOffset 2^32 of a small blob is out of bounds in every mode (on wasm32 it would read
/// the blob's first bytes if the offset wrapped).
#[test]
fn offsets_past_4_gib_are_never_wrapped() {
    let (_d, gp) = blob_setup(&[1, 2, 3, 4, 5, 6, 7, 8], &[("x", 1 << 32, 4)]);
    let g = graph(&[("x", DataType::Uint8, &[4], "x")]);
    let err = resolve_all_modes(&g, &gp, None, None).unwrap_err();
    assert!(
        matches!(err, ResolveError::RangeOutOfBounds { offset, .. } if offset == 1 << 32),
        "{err}"
    );
    assert!(err.to_string().contains("byteOffset 4294967296"), "{err}");
}

/// A declaration of 2^32 bytes does not fit a 32-bit target's memory: refused before any
/// file is read (`SizeOverflow`); on 64-bit targets it is planned and fails on the blob's
/// bounds.
#[test]
fn lengths_past_usize_are_refused_on_32_bit() {
    let (_d, gp) = blob_setup(&[0; 8], &[("x", 0, 1 << 32)]);
    let g = graph(&[("x", DataType::Uint8, &[65536, 65536], "x")]);
    let err = plan_external_weights(&g, &gp, None, None).unwrap_err();
    if cfg!(target_pointer_width = "32") {
        assert!(matches!(err, ResolveError::SizeOverflow { .. }), "{err}");
        assert!(err.to_string().contains("overflows"), "{err}");
    } else {
        assert!(
            matches!(err, ResolveError::RangeOutOfBounds { .. }),
            "{err}"
        );
    }
}

/// A SafeTensors header whose offsets pass 4 GiB in a small file: read as 64-bit numbers on
/// every target, so on both pointer widths the header parses and the file is too short for it.
#[test]
fn safetensors_offsets_past_4_gib_read_the_same_on_32_bit() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    let gp = dir.path().join("m.webnn");
    let header = serde_json::json!({"x": {"dtype": "U8", "shape": [4294967296u64], "data_offsets": [0, 4294967296u64]}});
    write_raw_safetensors(&dir.path().join("m.safetensors"), &header, &[0; 8]);
    let g = graph(&[("x", DataType::Uint8, &[4], "x")]);
    let err = plan_external_weights(&g, &gp, None, None).unwrap_err();
    let text = webnn_weights_runtime::Report::new(&err).to_string();
    assert!(matches!(err, ResolveError::Format { .. }), "{text}");
    // Offsets are 64-bit on every target: the same verdict on both pointer widths, naming
    // the declared figure, not a wrapped one.
    assert!(text.contains("+ 4294967296 tensor data"), "{text}");
    assert!(text.contains("truncated"), "{text}");
}
