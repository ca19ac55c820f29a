//! The WGWT blob tools and `to-safetensors`, run as a process: compatibility with the
//! files `webnn-graph` 0.4.0 made, round trips, and each fix over its defects.

use assert_cmd::Command;
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{
    parse_graph_json, read_graph_file, resolve_external_weights, ConstInit, GraphJson,
};

fn fixtures(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(folder)
}

fn cli() -> Command {
    Command::cargo_bin("webnn-weights").unwrap()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every entry in `dir`, sorted, as names (to prove nothing else was left behind).
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `(name, offset, length)` of every tensor of a manifest, in file order.
fn manifest_ranges(manifest: &Path) -> Vec<(String, usize, usize)> {
    let m = webnn_weights_runtime::Manifest::read(manifest).unwrap();
    m.tensors
        .iter()
        .map(|e| {
            (
                e.name.clone(),
                e.byte_offset as usize,
                e.byte_length as usize,
            )
        })
        .collect()
}

/// The resnet-head tensor folder as webnn-graph's pack-weights read it: the shipped
/// `.meta.json` files plus `.bin` files cut out of the shipped blob.
fn resnet_tensor_folder(dir: &Path) -> PathBuf {
    let src = fixtures("resnet-head");
    let tensors = dir.join("tensors");
    fs::create_dir(&tensors).unwrap();
    let blob = fs::read(src.join("resnet_head.weights")).unwrap();
    for (name, offset, len) in manifest_ranges(&src.join("resnet_head.manifest.json")) {
        fs::write(
            tensors.join(format!("{name}.bin")),
            &blob[offset..offset + len],
        )
        .unwrap();
        fs::copy(
            src.join("tensors").join(format!("{name}.meta.json")),
            tensors.join(format!("{name}.meta.json")),
        )
        .unwrap();
    }
    tensors
}

#[test]
fn pack_weights_reproduces_the_resnet_head_blob() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = resnet_tensor_folder(dir.path());
    let out = dir.path().join("out.weights");
    cli()
        .arg("pack-weights")
        .arg("--manifest")
        .arg(fixtures("resnet-head").join("resnet_head.manifest.json"))
        .arg("--input-dir")
        .arg(&tensors)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    assert!(
        fs::read(&out).unwrap()
            == fs::read(fixtures("resnet-head").join("resnet_head.weights")).unwrap(),
        "packed blob differs from the one webnn-graph packed"
    );
}

#[test]
fn create_manifest_reproduces_the_resnet_head_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = resnet_tensor_folder(dir.path());
    let out = dir.path().join("m.json");
    cli()
        .args(["create-manifest", "--endianness", "little", "--input-dir"])
        .arg(&tensors)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        fs::read_to_string(fixtures("resnet-head").join("resnet_head.manifest.json")).unwrap()
    );
}

#[test]
fn create_manifest_needs_only_data_type_and_shape() {
    // webnn-graph 0.4.0 failed on .meta.json files without byteOffset/byteLength.
    let dir = tempfile::tempdir().unwrap();
    let tensors = resnet_tensor_folder(dir.path());
    fs::write(
        tensors.join("W.meta.json"),
        r#"{"dataType": "float32", "shape": [2048, 1000]}"#,
    )
    .unwrap();
    fs::write(
        tensors.join("b.meta.json"),
        r#"{"dataType":"float32","shape":[1000]}"#,
    )
    .unwrap();
    let out = dir.path().join("m.json");
    cli()
        .arg("create-manifest")
        .arg("--input-dir")
        .arg(&tensors)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        fs::read_to_string(fixtures("resnet-head").join("resnet_head.manifest.json")).unwrap()
    );
}

#[test]
fn create_manifest_rejects_any_endianness_but_little() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = resnet_tensor_folder(dir.path());
    let out = dir.path().join("m.json");
    let output = cli()
        .arg("create-manifest")
        .arg("--input-dir")
        .arg(&tensors)
        .arg("--output")
        .arg(&out)
        .args(["--endianness", "big"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr_of(&output);
    assert!(err.contains("big") && err.contains("little"), "{err}");
    assert!(!out.exists());
}

#[test]
fn extract_weights_reproduces_the_tiny_fixture_and_leaves_no_staging_folder() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("tiny-extract");
    let out_dir = dir.path().join("out");
    let (w, m, g) = (
        dir.path().join("tiny.weights"),
        dir.path().join("tiny.manifest.json"),
        dir.path().join("tiny.extracted.json"),
    );
    cli()
        .arg("extract-weights")
        .arg("--input")
        .arg(src.join("tiny.webnn"))
        .arg("--output-dir")
        .arg(&out_dir)
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output-graph")
        .arg(&g)
        .assert()
        .success();
    assert_eq!(
        fs::read(&w).unwrap(),
        fs::read(src.join("tiny.weights")).unwrap()
    );
    assert_eq!(
        fs::read_to_string(&m).unwrap(),
        fs::read_to_string(src.join("tiny.manifest.json")).unwrap()
    );
    assert_eq!(
        fs::read_to_string(&g).unwrap(),
        fs::read_to_string(src.join("tiny.extracted.json")).unwrap()
    );
    // webnn-graph left OUTPUT_DIR/tensors/*.bin behind.
    assert!(listing(&out_dir).is_empty(), "{:?}", listing(&out_dir));
}

#[test]
fn extract_then_inline_returns_the_original_graph() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("tiny-extract").join("tiny.webnn");
    let (w, m, g, back) = (
        dir.path().join("t.weights"),
        dir.path().join("t.manifest.json"),
        dir.path().join("t.json"),
        dir.path().join("back.json"),
    );
    cli()
        .arg("extract-weights")
        .arg("--input")
        .arg(&src)
        .arg("--output-dir")
        .arg(dir.path())
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output-graph")
        .arg(&g)
        .assert()
        .success();
    cli()
        .arg("inline-weights")
        .arg("--input")
        .arg(&g)
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output")
        .arg(&back)
        .assert()
        .success();
    let original = read_graph_file(&src).unwrap();
    let round_trip = parse_graph_json(&fs::read_to_string(&back).unwrap()).unwrap();
    assert_eq!(round_trip, original);
    // .webnn output by extension
    let back_text = dir.path().join("back.webnn");
    cli()
        .arg("inline-weights")
        .arg("--input")
        .arg(&g)
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output")
        .arg(&back_text)
        .assert()
        .success();
    assert_eq!(read_graph_file(&back_text).unwrap(), original);
}

#[test]
fn pack_then_unpack_returns_the_original_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    fs::create_dir(&input).unwrap();
    let tensors: [(&str, &str, &str, Vec<u8>); 4] = [
        ("a", "float32", "[2, 3]", (0..24).collect()),
        ("q4", "int4", "[5]", vec![0x21, 0x43, 0x05]),
        ("e", "uint8", "[0]", vec![]),
        ("z", "int64", "[]", vec![7, 0, 0, 0, 0, 0, 0, 0]),
    ];
    for (name, dt, shape, bytes) in &tensors {
        fs::write(input.join(format!("{name}.bin")), bytes).unwrap();
        fs::write(
            input.join(format!("{name}.meta.json")),
            format!(r#"{{"dataType":"{dt}","shape":{shape}}}"#),
        )
        .unwrap();
    }
    let (m, w, out) = (
        dir.path().join("m.json"),
        dir.path().join("w.weights"),
        dir.path().join("out"),
    );
    cli()
        .arg("create-manifest")
        .arg("--input-dir")
        .arg(&input)
        .arg("--output")
        .arg(&m)
        .assert()
        .success();
    cli()
        .arg("pack-weights")
        .arg("--manifest")
        .arg(&m)
        .arg("--input-dir")
        .arg(&input)
        .arg("--output")
        .arg(&w)
        .assert()
        .success();
    assert_eq!(fs::read(&w).unwrap().len(), 8 + 24 + 3 + 8);
    cli()
        .arg("unpack-weights")
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    for (name, _, _, bytes) in &tensors {
        assert_eq!(
            &fs::read(out.join(format!("{name}.bin"))).unwrap(),
            bytes,
            "{name}"
        );
    }
    assert_eq!(listing(&out).len(), tensors.len());
}

#[test]
fn int4_tensors_are_packed_two_per_byte_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    // extract: 3 int4 elements in 2 bytes (webnn-graph demanded 3 bytes).
    let graph = dir.path().join("q.webnn");
    fs::write(
        &graph,
        "webnn_graph \"q\" v1 {\n  inputs { x: i4[3]; }\n  consts { q: i4[3] @bytes([33, 3]); }\n  \
         nodes { y = add(x, q); }\n  outputs { y; }\n}\n",
    )
    .unwrap();
    let (w, m, g) = (
        dir.path().join("q.weights"),
        dir.path().join("q.manifest.json"),
        dir.path().join("q.json"),
    );
    cli()
        .arg("extract-weights")
        .arg("--input")
        .arg(&graph)
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(&m)
        .arg("--output-graph")
        .arg(&g)
        .assert()
        .success();
    assert_eq!(fs::read(&w).unwrap(), b"WGWT\x01\x00\x00\x00\x21\x03");
    assert!(fs::read_to_string(&m)
        .unwrap()
        .contains("\"byteLength\": 2,"));

    // pack: a manifest with the old one-byte-per-element length is rejected.
    let input = dir.path().join("in");
    fs::create_dir(&input).unwrap();
    fs::write(input.join("q.bin"), [0x21, 0x03, 0x00]).unwrap();
    let old = dir.path().join("old.json");
    fs::write(
        &old,
        r#"{"format":"wg-weights-manifest","version":1,"endianness":"little","tensors":{"q":{"dataType":"int4","shape":[3],"byteOffset":8,"byteLength":3,"layout":"row-major"}}}"#,
    )
    .unwrap();
    let out = dir.path().join("old.weights");
    let output = cli()
        .arg("pack-weights")
        .arg("--manifest")
        .arg(&old)
        .arg("--input-dir")
        .arg(&input)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("byteLength is 3, expected 2"),
        "{}",
        stderr_of(&output)
    );
    assert!(!out.exists());
}

#[test]
fn headerless_blobs_unpack_and_inline() {
    // The onnx-layout blob starts at offset 0 (no WGWT header): webnn-graph 0.4.0
    // rejected it ("Invalid magic bytes") and subtracted 8 from every offset.
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("onnx-layout");
    let blob = fs::read(src.join("model.weights")).unwrap();
    let out = dir.path().join("t");
    cli()
        .arg("unpack-weights")
        .arg("--weights")
        .arg(src.join("model.weights"))
        .arg("--manifest")
        .arg(src.join("model.manifest.json"))
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    let ranges = manifest_ranges(&src.join("model.manifest.json"));
    assert_eq!(ranges[0].1, 0);
    for (name, offset, len) in &ranges {
        assert_eq!(
            fs::read(out.join(format!("{name}.bin"))).unwrap(),
            &blob[*offset..offset + len]
        );
    }
    let inlined = dir.path().join("model.json");
    cli()
        .arg("inline-weights")
        .arg("--input")
        .arg(src.join("model.webnn"))
        .arg("--weights")
        .arg(src.join("model.weights"))
        .arg("--manifest")
        .arg(src.join("model.manifest.json"))
        .arg("--output")
        .arg(&inlined)
        .assert()
        .success();
    let g = read_graph_file(&inlined).unwrap();
    for (name, offset, len) in &ranges {
        assert_eq!(
            g.consts[name].init,
            ConstInit::InlineBytes {
                bytes: blob[*offset..offset + len].to_vec().into()
            },
            "{name}"
        );
    }
}

#[test]
fn a_wgwt_header_with_another_version_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("tiny-extract");
    let mut blob = fs::read(src.join("tiny.weights")).unwrap();
    blob[4] = 2;
    let w = dir.path().join("v2.weights");
    fs::write(&w, &blob).unwrap();
    let out = dir.path().join("out");
    let output = cli()
        .arg("unpack-weights")
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--output-dir")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("version 2, expected 1"),
        "{}",
        stderr_of(&output)
    );
    assert!(!out.exists());
    let g = dir.path().join("g.json");
    let output = cli()
        .arg("inline-weights")
        .arg("--input")
        .arg(src.join("tiny.extracted.json"))
        .arg("--weights")
        .arg(&w)
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--output")
        .arg(&g)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!g.exists());
}

#[test]
fn failures_leave_no_output_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("tiny-extract");
    // unpack: the last tensor runs past the end of a truncated blob; the earlier ones
    // were readable but must not appear (webnn-graph wrote them before failing).
    let blob = fs::read(src.join("tiny.weights")).unwrap();
    let truncated = dir.path().join("short.weights");
    fs::write(&truncated, &blob[..blob.len() - 1]).unwrap();
    let out = dir.path().join("unpacked");
    let output = cli()
        .arg("unpack-weights")
        .arg("--weights")
        .arg(&truncated)
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--output-dir")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("\"w\": bytes 24..56"),
        "{}",
        stderr_of(&output)
    );
    assert!(!out.exists());

    // extract: a constant with the wrong byte count; no blob, manifest, graph or folder.
    let bad = dir.path().join("bad.webnn");
    fs::write(
        &bad,
        fs::read_to_string(src.join("tiny.webnn"))
            .unwrap()
            .replace("@bytes([7, 0, 0, 0, 0, 0, 0, 0])", "@bytes([7, 0, 0, 0])"),
    )
    .unwrap();
    let before = listing(dir.path());
    let output = cli()
        .arg("extract-weights")
        .arg("--input")
        .arg(&bad)
        .arg("--output-dir")
        .arg(dir.path().join("x"))
        .arg("--weights")
        .arg(dir.path().join("x.weights"))
        .arg("--manifest")
        .arg(dir.path().join("x.json"))
        .arg("--output-graph")
        .arg(dir.path().join("x.graph.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("constant \"k\""),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(listing(dir.path()), before);

    // pack: a tensor file of the wrong size; the previous blob stays untouched.
    let input = dir.path().join("in");
    fs::create_dir(&input).unwrap();
    for (name, offset, len) in manifest_ranges(&src.join("tiny.manifest.json")) {
        fs::write(
            input.join(format!("{name}.bin")),
            &blob[offset..offset + len],
        )
        .unwrap();
    }
    fs::write(input.join("w.bin"), [0u8; 31]).unwrap();
    let packed = dir.path().join("packed.weights");
    fs::write(&packed, b"previous").unwrap();
    let before = listing(dir.path());
    let output = cli()
        .arg("pack-weights")
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--input-dir")
        .arg(&input)
        .arg("--output")
        .arg(&packed)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("the file has 31 bytes"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(fs::read(&packed).unwrap(), b"previous");
    assert_eq!(listing(dir.path()), before);
}

fn resolved(graph: &Path, weights: Option<&Path>) -> GraphJson {
    let mut g = read_graph_file(graph).unwrap();
    resolve_external_weights(&mut g, graph, weights, None).unwrap();
    g
}

#[test]
fn to_safetensors_then_resolve_returns_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (graph, weights) in [
        (fixtures("resnet-head").join("resnet_head.webnn"), None),
        (fixtures("packed4").join("quant.webnn"), None),
        (
            fixtures("hf-safetensors").join("head.webnn"),
            Some(fixtures("hf-safetensors").join("lm_head.safetensors")),
        ),
        (fixtures("hf-safetensors").join("encoder.webnn"), None),
        (fixtures("onnx-layout").join("model.webnn"), None),
        (fixtures("tiny-extract").join("tiny.webnn"), None),
    ] {
        let stem = graph.file_stem().unwrap().to_string_lossy().into_owned();
        let archive = dir.path().join(format!("{stem}.safetensors"));
        let rewritten = dir.path().join(format!("{stem}.json"));
        let mut cmd = cli();
        cmd.arg("to-safetensors").arg(&graph);
        if let Some(w) = &weights {
            cmd.arg("--weights").arg(w);
        }
        cmd.arg("--output")
            .arg(&archive)
            .arg("--graph-output")
            .arg(&rewritten)
            .assert()
            .success();
        let expected = resolved(&graph, weights.as_deref());
        // The rewritten graph resolves (by discovery of <stem>.safetensors) to the same bytes ...
        assert_eq!(resolved(&rewritten, None), expected, "{stem}");
        // ... and so does the original graph against the new archive (references kept).
        if read_graph_file(&graph).unwrap().has_external_weights() {
            assert_eq!(resolved(&graph, Some(&archive)), expected, "{stem}");
        }
    }
    // The packed 4-bit marker is written when int4/uint4 constants are stored.
    let header = fs::read(dir.path().join("quant.safetensors")).unwrap();
    assert!(String::from_utf8_lossy(&header).contains("\"rustnn.webnn.packed4\":\"1\""));
}

#[test]
fn every_command_has_help_with_an_example_and_usage_errors_exit_2() {
    for command in [
        "pack-weights",
        "unpack-weights",
        "create-manifest",
        "extract-weights",
        "inline-weights",
        "to-safetensors",
    ] {
        let output = cli().args([command, "--help"]).output().unwrap();
        assert!(output.status.success(), "{command}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("Example"), "{command}: {text}");
        assert!(
            text.contains(&format!("webnn-weights {command}")),
            "{command}"
        );

        let output = cli().arg(command).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{command}");
    }
}

#[test]
fn two_outputs_on_one_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("x.json");
    let output = cli()
        .arg("extract-weights")
        .arg("--input")
        .arg(fixtures("tiny-extract").join("tiny.webnn"))
        .arg("--weights")
        .arg(dir.path().join("x.weights"))
        .arg("--manifest")
        .arg(&same)
        .arg("--output-graph")
        .arg(&same)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr_of(&output).contains("--manifest and --output-graph"));
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn quiet_prints_nothing_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures("tiny-extract");
    let output = cli()
        .arg("--quiet")
        .arg("unpack-weights")
        .arg("--weights")
        .arg(src.join("tiny.weights"))
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--output-dir")
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(output.stderr.is_empty() && output.stdout.is_empty());
    let output = cli()
        .arg("unpack-weights")
        .arg("--weights")
        .arg(src.join("tiny.weights"))
        .arg("--manifest")
        .arg(src.join("tiny.manifest.json"))
        .arg("--output-dir")
        .arg(dir.path().join("p"))
        .output()
        .unwrap();
    assert!(stderr_of(&output).contains("Unpacked 3 tensors"));
    // The flag is global: other commands' success lines are silenced too.
    for args in [
        vec![
            "convert".into(),
            src.join("tiny.webnn"),
            "--output".into(),
            dir.path().join("t.json"),
        ],
        vec![
            "resolve".into(),
            src.join("tiny.extracted.json"),
            "--weights".into(),
            "tiny.weights".into(),
            "--manifest".into(),
            "tiny.manifest.json".into(),
            "--output".into(),
            dir.path().join("r.json"),
        ],
    ] {
        let output = cli().arg("-q").args(&args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr_of(&output));
        assert!(output.stderr.is_empty(), "{args:?}: {}", stderr_of(&output));
    }
}

#[test]
fn inspect_a_sidecar_on_its_own() {
    // SafeTensors: table with storage dtype, shape, absolute offset, length, alignment
    // and the archive metadata.
    let output = cli()
        .arg("inspect")
        .arg(fixtures("packed4").join("quant.safetensors"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("safetensors, 318 bytes, 4 tensors"), "{text}");
    assert!(text.contains("rustnn.webnn.packed4: 1"), "{text}");
    let w_q = text.lines().find(|l| l.starts_with("w_q ")).unwrap();
    let cells: Vec<&str> = w_q.split_whitespace().collect();
    assert_eq!(cells, ["w_q", "U8", "[12]", "303", "12", "1"]);

    // A blob with its manifest, as JSON.
    let output = cli()
        .arg("inspect")
        .arg(fixtures("tiny-extract").join("tiny.weights"))
        .arg("--manifest")
        .arg(fixtures("tiny-extract").join("tiny.manifest.json"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["kind"], "weights");
    assert_eq!(report["fileLength"], 56);
    assert_eq!(report["metadata"]["header"], "WGWT v1");
    let rows: Vec<(String, u64, u64, u64)> = report["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["byteOffset"].as_u64().unwrap(),
                t["byteLength"].as_u64().unwrap(),
                t["alignment"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("b".to_string(), 8, 8, 8),
            ("k".to_string(), 16, 8, 16),
            ("w".to_string(), 24, 32, 8)
        ]
    );
    assert_eq!(report["tensors"][2]["dataType"], "float32");
    assert_eq!(report["tensors"][2]["shape"], serde_json::json!([4, 2]));

    // A headerless blob: first tensor at 0, no header.
    let output = cli()
        .arg("inspect")
        .arg(fixtures("onnx-layout").join("model.weights"))
        .arg("--manifest")
        .arg(fixtures("onnx-layout").join("model.manifest.json"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("header: none"), "{text}");
    assert!(text.contains(">=4096"), "{text}");

    // A blob without its manifest is a usage error that says what to add.
    let output = cli()
        .arg("inspect")
        .arg(fixtures("onnx-layout").join("model.weights"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_of(&output).contains("--manifest"),
        "{}",
        stderr_of(&output)
    );

    // An archive is recognized by its name, as by the resolver; its content only
    // suggests the rename. Graphs stay graphs.
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("weights.bin");
    fs::copy(fixtures("packed4").join("quant.safetensors"), &renamed).unwrap();
    let output = cli().arg("inspect").arg(&renamed).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr_of(&output);
    assert!(
        err.contains("looks like a SafeTensors archive") && err.contains("weights.safetensors"),
        "{err}"
    );
    assert!(output.stdout.is_empty());
    let output = cli()
        .arg("inspect")
        .arg(fixtures("tiny-extract").join("tiny.webnn"))
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("sha256"));
}
