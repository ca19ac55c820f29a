//! Every embedded fixture equals what the run-time resolver produces for the same files.

use std::path::{Path, PathBuf};
use webnn_weights_runtime::{
    load_graph, load_graph_mapped, read_graph_file, resolve_external_weights, ConstInit, DataType,
    EmbeddedGraph, GraphJson,
};
use webnn_weights_tests::*;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn resolved(graph: &str, weights: Option<&str>, manifest: Option<&str>) -> GraphJson {
    let path = fixture(graph);
    let mut graph = read_graph_file(&path).unwrap();
    resolve_external_weights(
        &mut graph,
        &path,
        weights.map(Path::new),
        manifest.map(Path::new),
    )
    .unwrap();
    graph
}

/// Checks `embedded` against the run-time resolver: whole graph, each constant's bytes,
/// metadata and alignment. Returns how many constants were compared.
fn check(
    embedded: &'static EmbeddedGraph,
    graph: &str,
    weights: Option<&str>,
    manifest: Option<&str>,
) -> usize {
    let expected = resolved(graph, weights, manifest);
    assert_eq!(embedded.to_graph_json(), expected, "{graph}");
    let skeleton = read_graph_file(fixture(graph)).unwrap();
    assert_eq!(embedded.graph(), &skeleton);
    assert_eq!(embedded.name(), skeleton.name.as_deref());
    assert_eq!(embedded.inputs(), &skeleton.inputs);
    assert_eq!(embedded.nodes(), &skeleton.nodes[..]);
    assert_eq!(embedded.outputs(), &skeleton.outputs);
    let constants = embedded.constants();
    let external: Vec<&String> = skeleton
        .consts
        .iter()
        .filter(|(_, d)| matches!(d.init, ConstInit::Weights { .. }))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(constants.len(), external.len());
    assert!(!constants.is_empty());
    for c in constants {
        let decl = &skeleton.consts[c.name()];
        let ConstInit::Weights { r#ref } = &decl.init else {
            panic!("{} is not external", c.name())
        };
        assert_eq!(c.reference(), r#ref);
        assert_eq!(c.data_type(), decl.data_type);
        assert_eq!(c.shape(), &decl.shape[..]);
        let ConstInit::InlineBytes { bytes } = &expected.consts[c.name()].init else {
            panic!("not resolved")
        };
        assert_eq!(c.bytes(), &bytes[..], "{graph}: {}", c.name());
        assert_eq!(c.bytes().as_ptr() as usize % 64, 0, "{}", c.name());
        assert!(std::ptr::eq(embedded.constant(c.name()).unwrap(), c));
    }
    assert!(embedded.constant("no such constant").is_none());
    constants.len()
}

#[test]
fn packed4_safetensors() {
    assert!(QUANT.is_embedded());
    assert_eq!(check(&QUANT, "fixtures/packed4/quant.webnn", None, None), 4);
    let w_q = QUANT.constant("w_q").unwrap();
    assert_eq!(w_q.data_type(), DataType::Int4);
    assert_eq!(w_q.bytes().len(), 12); // 24 nibbles
    assert!(w_q.as_u8().is_none() && w_q.as_i8().is_none());
    let scale = QUANT.constant("scale").unwrap();
    assert_eq!(scale.as_f32().unwrap().len(), 3);
    assert!(scale.as_i32().is_none());
    let zero = QUANT.constant("zero").unwrap();
    assert_eq!(zero.as_i8().unwrap().len(), 3);
}

#[test]
fn normalized_names_f16_i64_u8() {
    assert_eq!(
        check(
            &ENCODER,
            "fixtures/hf-safetensors/encoder.webnn",
            None,
            None
        ),
        6
    );
    let q = ENCODER.constant("q_weight").unwrap();
    let halves = q.as_f16().unwrap();
    assert_eq!(halves.len(), 64);
    let raw: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    assert_eq!(raw, q.bytes());
    let ids = ENCODER.constant("position_ids").unwrap().as_i64().unwrap();
    assert_eq!(ids.len(), 16);
    assert_eq!(ENCODER.constant("mask").unwrap().as_u8().unwrap().len(), 8);
    assert!(ENCODER.constant("mask").unwrap().as_f32().is_none());
}

#[test]
fn bf16_widened_explicit_weights() {
    assert_eq!(
        check(
            &HEAD,
            "fixtures/hf-safetensors/head.webnn",
            Some("lm_head.safetensors"),
            None
        ),
        1
    );
    let w = HEAD.constant("lm_head_weight").unwrap();
    assert_eq!(w.data_type(), DataType::Float32);
    let values = w.as_f32().unwrap();
    assert_eq!(values.len(), 32);
    // Widened BF16: the low 16 bits of every float32 are zero.
    assert!(values.iter().all(|v| v.to_bits() & 0xffff == 0));
}

#[test]
fn wgwt_blob_discovered_manifest() {
    assert_eq!(
        check(
            &RESNET_HEAD,
            "fixtures/resnet-head/resnet_head.webnn",
            None,
            None
        ),
        2
    );
    assert_eq!(
        RESNET_HEAD.constant("W").unwrap().as_f32().unwrap().len(),
        2048 * 1000
    );
}

#[test]
fn headerless_blob_include_bytes() {
    assert!(ONNX_LAYOUT.is_embedded());
    assert_eq!(
        check(&ONNX_LAYOUT, "fixtures/onnx-layout/model.webnn", None, None),
        3
    );
    assert_eq!(
        ONNX_LAYOUT
            .constant("shape_const")
            .unwrap()
            .as_i64()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn explicit_blob_and_manifest_graph_json() {
    assert!(
        check(
            &TINY,
            "fixtures/tiny-extract/tiny.extracted.json",
            Some("tiny.weights"),
            Some("tiny.manifest.json")
        ) >= 1
    );
}

#[test]
fn runtime_mode_resolves_on_first_use() {
    assert!(!RUNTIME_QUANT.is_embedded());
    assert_eq!(
        check(
            &RUNTIME_QUANT,
            "fixtures/embed-runtime/quant.webnn",
            None,
            None
        ),
        4
    );
    // The same bytes as the embedded copy of the same files.
    for c in RUNTIME_QUANT.try_constants().unwrap() {
        assert_eq!(c.bytes(), QUANT.constant(c.name()).unwrap().bytes());
    }
}

#[test]
fn constants_are_sorted_and_shared() {
    let names: Vec<&str> = ENCODER.constants().iter().map(|c| c.name()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    // Resolved once: the same slice every time.
    assert!(std::ptr::eq(ENCODER.constants(), ENCODER.constants()));
    assert_eq!(ENCODER.path(), "fixtures/hf-safetensors/encoder.webnn");
}

#[test]
fn graph_without_external_weights() {
    assert!(PLAIN.is_embedded());
    assert!(PLAIN.constants().is_empty());
    assert!(PLAIN.constant("eps").is_none());
    let expected = read_graph_file(fixture("fixtures/embed-none/plain.webnn")).unwrap();
    assert_eq!(PLAIN.to_graph_json(), expected);
    assert_eq!(PLAIN.name(), Some("plain"));
}

/// Declared in this test target, not in the library: the archive reaches the test binary
/// through `cargo:rustc-link-arg`.
static DIRECT: EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("fixtures/hf-safetensors/head.webnn");

#[test]
fn static_outside_the_library() {
    assert!(DIRECT.is_embedded());
    let direct = DIRECT.constant("lm_head_weight").unwrap();
    assert_eq!(
        direct.bytes(),
        HEAD.constant("lm_head_weight").unwrap().bytes()
    );
    // One symbol, one copy of the bytes in the binary.
    assert_eq!(
        direct.bytes().as_ptr(),
        HEAD.constant("lm_head_weight").unwrap().bytes().as_ptr()
    );
}

#[test]
fn sharded_archive_embeds_byte_identical_to_one_archive() {
    assert!(SHARDED.is_embedded() && SHARDED_SINGLE.is_embedded());
    assert_eq!(
        check(&SHARDED, "fixtures/hf-sharded/encoder.webnn", None, None),
        9
    );
    assert_eq!(
        check(
            &SHARDED_SINGLE,
            "fixtures/hf-sharded/encoder_single.webnn",
            Some("all.safetensors"),
            None
        ),
        9
    );
    let names = |g: &'static EmbeddedGraph| -> Vec<&'static str> {
        g.constants().iter().map(|c| c.name()).collect()
    };
    assert_eq!(names(&SHARDED), names(&SHARDED_SINGLE));
    for c in SHARDED.constants() {
        let single = SHARDED_SINGLE.constant(c.name()).unwrap();
        assert_eq!(c.bytes(), single.bytes(), "{}", c.name());
        assert_eq!(
            (c.data_type(), c.shape()),
            (single.data_type(), single.shape())
        );
    }
    // Constants from each of the three shards, and the packed int4 from the marked one.
    assert_eq!(
        SHARDED.constant("emb").unwrap().as_f32().unwrap().len(),
        256
    );
    assert_eq!(SHARDED.constant("q_weight").unwrap().bytes().len(), 128);
    let quant = SHARDED.constant("quant").unwrap();
    assert_eq!(quant.data_type(), DataType::Int4);
    assert_eq!(quant.bytes(), [0x10, 0x32, 0x54, 0x76]);
}

#[test]
fn sharded_archive_in_runtime_mode_resolves_on_first_use() {
    assert!(!SHARDED_RUNTIME.is_embedded());
    assert_eq!(
        check(
            &SHARDED_RUNTIME,
            "fixtures/hf-sharded/small.webnn",
            None,
            None
        ),
        2
    );
    for c in SHARDED_RUNTIME.try_constants().unwrap() {
        let embedded = match c.name() {
            "emb" => SHARDED.constant("tied").unwrap(),
            other => SHARDED.constant(other).unwrap(),
        };
        assert_eq!(c.bytes(), embedded.bytes(), "{}", c.name());
    }
}

#[test]
fn tied_constants_are_embedded_once() {
    assert!(TIED.is_embedded());
    // Whole graph and every constant's bytes equal the run-time resolver's.
    assert_eq!(check(&TIED, "fixtures/tied/tied.webnn", None, None), 6);
    let at = |name: &str| TIED.constant(name).unwrap().bytes().as_ptr();
    // Three constants on `embed.weight` (one by its normalized name): one address.
    assert_eq!(at("embed"), at("lm_head"));
    assert_eq!(at("embed"), at("unembed"));
    // Two float32 constants on one BF16 tensor: widened once, one address.
    assert_eq!(at("norm_a"), at("norm_b"));
    // Distinct stored tensors keep distinct bytes.
    assert_ne!(at("embed"), at("norm_a"));
    assert_ne!(at("embed"), at("bias"));
    // The data holds each stored tensor once: 64 + 512 + 32 bytes, each range 64-aligned.
    let data_len = TIED
        .constants()
        .iter()
        .map(|c| c.bytes().as_ptr() as usize + c.bytes().len())
        .max()
        .unwrap()
        - TIED
            .constants()
            .iter()
            .map(|c| c.bytes().as_ptr() as usize)
            .min()
            .unwrap();
    assert_eq!(data_len, 64 + 512 + 32);
}

/// 36 MiB of data: an ELF static library holds it in several sections (pieces of
/// `webnn-weights-build`'s ELF writer), which the linker must keep, in order, back to back.
#[test]
fn data_in_several_sections_links_in_order() {
    assert!(PIECES.is_embedded());
    let archive = concat!(env!("OUT_DIR"), "/pieces.safetensors");
    assert_eq!(
        check(&PIECES, "fixtures/pieces/pieces.webnn", Some(archive), None),
        4
    );
    // Against the generator too: each byte depends on its tensor and position.
    for (i, (name, ..)) in webnn_weights_tests::pieces::TENSORS.iter().enumerate() {
        let expected = webnn_weights_tests::pieces::tensor_bytes(i);
        assert!(PIECES.constant(name).unwrap().bytes() == expected, "{name}");
    }
    // The library really holds the data in several sections (ELF x86-64 and AArch64), and
    // the linker starts it on a page (the first piece asks for it; see the object writer).
    if cfg!(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        assert!(data_sections("pieces") >= 3);
        let start = PIECES
            .constants()
            .iter()
            .map(|c| c.bytes().as_ptr() as usize);
        assert_eq!(start.min().unwrap() % 4096, 0);
    }
}

/// How many sections hold the data in the static library built for the graph `stem`.
fn data_sections(stem: &str) -> usize {
    use object::read::archive::ArchiveFile;
    use object::{Object, ObjectSection};
    let root = Path::new(env!("OUT_DIR")).join("webnn-weights");
    let dir = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(&format!("{stem}-"))
        })
        .unwrap_or_else(|| panic!("no artifacts for {stem} in {}", root.display()));
    let library = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "a"))
        .unwrap();
    let bytes = std::fs::read(&library).unwrap();
    let archive = ArchiveFile::parse(&*bytes).unwrap();
    let member = archive.members().next().unwrap().unwrap();
    let object_bytes = member.data(&*bytes).unwrap().to_vec();
    let file = object::File::parse(&*object_bytes).unwrap();
    file.sections()
        .filter(|s| s.name().is_ok_and(|n| n.ends_with("webnn_weights")))
        .count()
}

#[test]
fn tied_constants_share_in_runtime_mode() {
    assert!(!RUNTIME_TIED.is_embedded());
    let constants = RUNTIME_TIED.try_constants().unwrap();
    let at = |name: &str| {
        constants
            .iter()
            .find(|c| c.name() == name)
            .unwrap()
            .bytes()
            .as_ptr()
    };
    assert_eq!(at("embed"), at("lm_head"));
    assert_eq!(at("embed"), at("unembed"));
    assert_eq!(at("norm_a"), at("norm_b"));
    assert_ne!(at("embed"), at("bias"));
    for c in constants {
        assert_eq!(
            c.bytes(),
            TIED.constant(c.name()).unwrap().bytes(),
            "{}",
            c.name()
        );
    }
    let expected = resolved("fixtures/embed-runtime/tied.webnn", None, None);
    assert_eq!(RUNTIME_TIED.to_graph_json(), expected);
}

/// Used by `first_use_from_many_threads_builds_once` alone, so that its first use is there.
static RACE_EMBEDDED: EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("fixtures/hf-safetensors/head.webnn");
static RACE_RUNTIME: EmbeddedGraph =
    webnn_weights_runtime::include_webnn_graph!("fixtures/embed-runtime/quant.webnn");

#[test]
fn first_use_from_many_threads_builds_once() {
    for graph in [&RACE_EMBEDDED, &RACE_RUNTIME] {
        let barrier = std::sync::Barrier::new(8);
        // Each thread's first call races the others'; all must get the one graph and the one
        // constant table (the same addresses), built once and kept.
        let seen: Vec<(usize, usize, usize)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        let constants = graph.try_constants().unwrap();
                        let structure = graph.try_graph().unwrap();
                        (
                            constants.as_ptr() as usize,
                            structure as *const GraphJson as usize,
                            constants[0].bytes().as_ptr() as usize,
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
        assert!(!graph.constants().is_empty());
        assert_eq!(graph.constants().as_ptr() as usize, seen[0].0);
    }
    assert!(RACE_EMBEDDED.is_embedded() && !RACE_RUNTIME.is_embedded());
}

/// The packed fixture's 4-bit tensors, unpacked by hand from the archive's raw bytes: the
/// nibbles in element order (low first), `count` of them.
fn fixture_nibbles(name: &str, count: usize) -> Vec<u8> {
    let bytes = std::fs::read(fixture("fixtures/packed4/quant.safetensors")).unwrap();
    let archive = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let packed = archive.tensor(name).unwrap().data().to_vec();
    assert_eq!(packed.len(), count.div_ceil(2));
    (0..count)
        .map(|i| {
            let byte = packed[i / 2];
            if i % 2 == 0 {
                byte & 0xf
            } else {
                byte >> 4
            }
        })
        .collect()
}

#[test]
fn packed_4bit_constants_unpack_embedded_and_at_run_time() {
    let w_q: Vec<i8> = fixture_nibbles("w_q", 24)
        .into_iter()
        .map(|n| if n >= 8 { n as i8 - 16 } else { n as i8 })
        .collect();
    let w_u = fixture_nibbles("w_u", 5);
    // The archive's bytes start 0x21 0x46 0x6b 0x90; w_u (5 elements) is 0x21 0x46 0x6b, whose
    // last high nibble (6) is padding.
    assert_eq!(w_q[..8], [1, 2, 6, 4, -5, 6, 0, -7]);
    assert_eq!(w_u, [1, 2, 6, 4, 11]);
    // Embedded (bytes in the binary) and embedded-in-run-time-mode.
    for graph in [&QUANT, &RUNTIME_QUANT] {
        let (q, u) = (
            graph.constant("w_q").unwrap(),
            graph.constant("w_u").unwrap(),
        );
        assert_eq!(q.unpack_int4().as_ref(), Some(&w_q));
        assert_eq!(u.unpack_uint4().as_ref(), Some(&w_u));
        // Each helper only for its own type.
        assert_eq!((q.unpack_uint4(), u.unpack_int4()), (None, None));
        assert_eq!(graph.constant("scale").unwrap().unpack_int4(), None);
        assert_eq!(graph.constant("zero").unwrap().unpack_uint4(), None);
    }
    // Run time: the same values from the declarations load_graph resolved, owned and mapped.
    let path = fixture("fixtures/packed4/quant.webnn");
    for graph in [
        load_graph(&path).unwrap(),
        load_graph_mapped(&path).unwrap(),
    ] {
        assert_eq!(graph.consts["w_q"].unpack_int4().as_ref(), Some(&w_q));
        assert_eq!(graph.consts["w_u"].unpack_uint4().as_ref(), Some(&w_u));
        assert_eq!(graph.consts["w_u"].unpack_int4(), None);
        assert_eq!(graph.consts["scale"].unpack_uint4(), None);
    }
    // Unresolved (`@weights` reference, no bytes yet): nothing to unpack.
    let unresolved = read_graph_file(&path).unwrap();
    assert_eq!(unresolved.consts["w_q"].unpack_int4(), None);
    // One-byte views on every target (not only little-endian ones).
    assert_eq!(QUANT.constant("zero").unwrap().as_i8().unwrap().len(), 3);
}

#[test]
fn locked_graphs_carry_their_verified_digests() {
    use webnn_weights_tests::{LOCKED, RUNTIME_LOCKED};
    let pinned = |file: &str| -> std::collections::BTreeMap<String, String> {
        let lock: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixture(file)).unwrap()).unwrap();
        lock["constants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap().to_string();
                (name, c["sha256"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    for (graph, lock) in [
        (&LOCKED, "fixtures/locked/tied.webnn.lock"),
        (&RUNTIME_LOCKED, "fixtures/locked/runtime.webnn.lock"),
    ] {
        let pinned = pinned(lock);
        assert_eq!(graph.constants().len(), pinned.len());
        for c in graph.constants() {
            let digest = c.sha256().unwrap_or_else(|| panic!("{lock}: {}", c.name()));
            assert_eq!(hex(digest), pinned[c.name()], "{lock}: {}", c.name());
            // The digest of the bytes the program sees.
            use sha2::Digest;
            assert_eq!(
                hex(sha2::Sha256::digest(c.bytes()).into()),
                pinned[c.name()]
            );
        }
    }
    assert!(LOCKED.is_embedded() && !RUNTIME_LOCKED.is_embedded());
    // Graphs without a lock have none.
    assert!(TIED.constants().iter().all(|c| c.sha256().is_none()));
    assert!(RUNTIME_TIED
        .constants()
        .iter()
        .all(|c| c.sha256().is_none()));
}

#[test]
fn an_onnx_model_embeds_its_initializers() {
    // fixtures/onnx-model/tiny.onnx (made by weights-build/tests/onnx.rs): y = (x * w + b - s)
    // * s with `w` in the model file, `b` in tiny.onnx.data, `s` a scalar.
    assert!(ONNX_TINY.is_embedded());
    let names: Vec<&str> = ONNX_TINY.constants().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["b", "w"]);
    let model = std::fs::read(fixture("fixtures/onnx-model/tiny.onnx")).unwrap();
    let data = std::fs::read(fixture("fixtures/onnx-model/tiny.onnx.data")).unwrap();
    // `b` is the external data file's bytes; `w` the initializer's raw_data in the model.
    let b = ONNX_TINY.constant("b").unwrap();
    assert_eq!(b.bytes(), &data[..]);
    let w = ONNX_TINY.constant("w").unwrap();
    assert_eq!(w.bytes().len(), 2048);
    assert!(model.windows(2048).any(|raw| raw == w.bytes()));
    let values: Vec<f32> = (0..512).map(|i| i as f32 * 0.25 - 3.0).collect();
    assert_eq!(w.as_f32().unwrap(), &values[..]);
    for c in ONNX_TINY.constants() {
        assert_eq!(c.data_type(), DataType::Float32);
        assert_eq!(c.shape(), [512]);
        assert_eq!(c.bytes().as_ptr() as usize % 64, 0, "{}", c.name());
        // Verified against tiny.onnx.lock at build time.
        assert!(c.sha256().is_some(), "{}", c.name());
    }
    // The scalar stays inline in the graph; the symbolic dim has build.rs's size.
    let graph = ONNX_TINY.to_graph_json();
    let inline: Vec<&[u8]> = graph
        .consts
        .values()
        .filter_map(|d| match &d.init {
            ConstInit::InlineBytes { bytes } if d.shape.is_empty() => Some(&bytes[..]),
            _ => None,
        })
        .collect();
    assert_eq!(inline, [&0.5f32.to_le_bytes()[..]]);
    let x = &ONNX_TINY.inputs()["x"];
    assert_eq!(
        x.shape,
        [
            webnn_weights_runtime::Dimension::Static(1),
            webnn_weights_runtime::Dimension::Static(512)
        ]
    );
    assert_eq!(ONNX_TINY.nodes().len(), 4);
}
