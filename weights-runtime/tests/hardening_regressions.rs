//! Regression tests for what the hardening work found (issue 6). Each names the finding.

use webnn_weights_tools::weight_tools::{create_manifest, unpack_weights, NoProgress};

/// Found while writing the corruption properties: `x//y` and `x/./y` passed the tensor
/// name check and named the same file as `x/y`, so `unpack_weights` wrote both tensors to
/// `x/y.bin` (the last one won) and reported success. Such names are now refused, with
/// nothing written.
#[test]
fn unpack_refuses_two_names_for_one_file() {
    for (a, b) in [
        ("x/y", "x//y"),
        ("x/y", "x/./y"),
        ("x/y", "x/y/"),
        ("y", "./y"),
    ] {
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let blob = dir.path().join("b.weights");
        std::fs::write(&blob, b"WGWT\x01\0\0\0AAAABB").unwrap();
        let manifest = dir.path().join("m.json");
        std::fs::write(
            &manifest,
            format!(
                r#"{{"tensors":{{"{a}":{{"byteOffset":8,"byteLength":4}},"{b}":{{"byteOffset":12,"byteLength":2}}}}}}"#
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let err = unpack_weights(&blob, &manifest, &out, &mut NoProgress)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "tensor name \"{b}\" cannot be used as a file name"
            )),
            "{err}"
        );
        assert!(!out.exists(), "{a} / {b}: output written");
    }
}

/// Temporary files that a killed `unpack-weights` leaves in a tensor folder
/// (`.NAME.bin.webnn-weights-tmp…`) are not taken for tensors by `create-manifest`.
#[test]
fn create_manifest_ignores_marked_leftovers() {
    let dir = webnn_weights_test_support::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), [0u8; 4]).unwrap();
    std::fs::write(
        dir.path().join("w.meta.json"),
        r#"{"dataType":"float32","shape":[1]}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join(".w.bin.webnn-weights-tmpAbC123"), [1u8; 3]).unwrap();
    let manifest = create_manifest(dir.path(), "little").unwrap();
    assert_eq!(manifest.tensors.keys().collect::<Vec<_>>(), ["w"]);
}

/// The committed fuzz seeds are what they claim to be: every SafeTensors and manifest seed
/// plans and materializes against the graph its first byte selects (so the fuzzers start
/// from inputs that reach the success path), and every text/JSON seed parses. The graphs
/// are the ones `fuzz/src/lib.rs` uses, in the same order.
#[test]
fn fuzz_seeds_reach_the_success_path() {
    use webnn_weights_runtime::{parse_graph_json, parse_webnn, plan_external_weights};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fixture = |p: &str| std::fs::read_to_string(root.join("tests/fixtures").join(p)).unwrap();
    let all_types =
        std::fs::read_to_string(root.join("fuzz/corpus/webnn_text/seed-5-all_types.webnn"))
            .unwrap();
    let archive_graphs = [
        parse_webnn(&fixture("packed4/quant.webnn")).unwrap(),
        parse_webnn(&fixture("hf-safetensors/encoder.webnn")).unwrap(),
        parse_webnn(&fixture("hf-safetensors/head.webnn")).unwrap(),
        parse_webnn(&all_types).unwrap(),
    ];
    let blob_graphs = [
        parse_webnn(&fixture("onnx-layout/model.webnn")).unwrap(),
        parse_graph_json(&fixture("tiny-extract/tiny.extracted.json")).unwrap(),
        parse_webnn(&all_types).unwrap(),
    ];
    let seeds = |target: &str| {
        let mut files: Vec<_> = std::fs::read_dir(root.join("fuzz/corpus").join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("seed-")
            })
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{target}: no seeds");
        files
    };
    for path in seeds("safetensors_plan") {
        let bytes = std::fs::read(&path).unwrap();
        let graph = &archive_graphs[usize::from(bytes[0]) % archive_graphs.len()];
        let dir = webnn_weights_test_support::tempdir().unwrap();
        std::fs::write(dir.path().join("model.safetensors"), &bytes[1..]).unwrap();
        let plan = plan_external_weights(graph, &dir.path().join("model.webnn"), None, None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(plan.materialize().unwrap().len(), plan.constants().len());
    }
    for target in ["manifest_plan", "wgwt_tools"] {
        for path in seeds(target) {
            let bytes = std::fs::read(&path).unwrap();
            let graph = &blob_graphs[usize::from(bytes[0]) % blob_graphs.len()];
            let len = usize::from(u16::from_le_bytes([bytes[1], bytes[2]]));
            let (manifest, blob) = bytes[3..].split_at(len);
            let dir = webnn_weights_test_support::tempdir().unwrap();
            std::fs::write(dir.path().join("model.manifest.json"), manifest).unwrap();
            std::fs::write(dir.path().join("model.weights"), blob).unwrap();
            let plan = plan_external_weights(graph, &dir.path().join("model.webnn"), None, None)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(plan.materialize().unwrap().len(), plan.constants().len());
        }
    }
    for path in seeds("webnn_text") {
        parse_webnn(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    for path in seeds("graph_json") {
        parse_graph_json(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
