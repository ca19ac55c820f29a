//! The WGWT blob tools and `to-safetensors`, run as a process: compatibility with the
//! files `webnn-graph` 0.4.0 made, round trips, and each fix over its defects.

#[macro_use]
mod common;

use common::{assert_fails, assert_fails_leaving, cli, fixtures, listing, stderr_of};
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{
    parse_graph_json, read_graph_file, resolve_external_weights, ConstInit, GraphJson,
};

fn fixture(folder: &str) -> PathBuf {
    fixtures().join(folder)
}

/// `(name, offset, length)` of every tensor of a manifest, in file order.
fn manifest_ranges(manifest: &Path) -> Vec<(String, usize, usize)> {
    let m = webnn_weights_runtime::manifest::Manifest::read(manifest).unwrap();
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

/// Writes `NAME.bin` into `dir` for every tensor of `manifest`, cut out of `blob`.
fn cut_tensors(dir: &Path, blob: &[u8], manifest: &Path) {
    for (name, offset, len) in manifest_ranges(manifest) {
        fs::write(dir.join(format!("{name}.bin")), &blob[offset..offset + len]).unwrap();
    }
}

/// The resnet-head tensor folder as webnn-graph's pack-weights read it: the shipped
/// `.meta.json` files plus `.bin` files cut out of the shipped blob.
fn resnet_tensor_folder(dir: &Path) -> PathBuf {
    let src = fixture("resnet-head");
    let tensors = dir.join("tensors");
    fs::create_dir(&tensors).unwrap();
    let manifest = src.join("resnet_head.manifest.json");
    cut_tensors(
        &tensors,
        &fs::read(src.join("resnet_head.weights")).unwrap(),
        &manifest,
    );
    for (name, _, _) in manifest_ranges(&manifest) {
        let meta = format!("{name}.meta.json");
        fs::copy(src.join("tensors").join(&meta), tensors.join(&meta)).unwrap();
    }
    tensors
}

/// `extract-weights --input G [--output-dir D] --weights W --manifest M --output-graph G2`.
fn extract(
    input: &Path,
    out_dir: Option<&Path>,
    w: &Path,
    m: &Path,
    g: &Path,
) -> assert_cmd::Command {
    let mut cmd = command!("extract-weights", "--input" => input);
    if let Some(d) = out_dir {
        cmd.arg("--output-dir").arg(d);
    }
    cmd.arg("--weights")
        .arg(w)
        .arg("--manifest")
        .arg(m)
        .arg("--output-graph")
        .arg(g);
    cmd
}

/// `inline-weights --input G --weights W --manifest M --output G2`.
fn inline(input: &Path, w: &Path, m: &Path, out: &Path) -> assert_cmd::Command {
    command!("inline-weights", "--input" => input, "--weights" => w, "--manifest" => m, "--output" => out)
}

/// `unpack-weights --weights W --manifest M --output-dir D`.
fn unpack(w: &Path, m: &Path, out_dir: &Path) -> assert_cmd::Command {
    command!("unpack-weights", "--weights" => w, "--manifest" => m, "--output-dir" => out_dir)
}

/// `pack-weights --manifest M --input-dir D --output W`.
fn pack(m: &Path, input_dir: &Path, out: &Path) -> assert_cmd::Command {
    command!("pack-weights", "--manifest" => m, "--input-dir" => input_dir, "--output" => out)
}

#[test]
fn pack_weights_reproduces_the_resnet_head_blob() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = resnet_tensor_folder(dir.path());
    let out = dir.path().join("out.weights");
    let src = fixture("resnet-head");
    pack(&src.join("resnet_head.manifest.json"), &tensors, &out)
        .assert()
        .success();
    assert!(
        fs::read(&out).unwrap() == fs::read(src.join("resnet_head.weights")).unwrap(),
        "packed blob differs from the one webnn-graph packed"
    );
}

#[test]
fn create_manifest_reproduces_the_resnet_head_manifest() {
    // With and without the endianness flag; and with `.meta.json` files that hold only
    // dataType and shape (webnn-graph 0.4.0 failed on those without byteOffset/byteLength).
    let expected =
        fs::read_to_string(fixture("resnet-head").join("resnet_head.manifest.json")).unwrap();
    let only_type_and_shape = [
        (
            "W.meta.json",
            r#"{"dataType": "float32", "shape": [2048, 1000]}"#,
        ),
        ("b.meta.json", r#"{"dataType":"float32","shape":[1000]}"#),
    ];
    for (extra, metas) in [
        (&["--endianness", "little"][..], &[][..]),
        (&[][..], &only_type_and_shape[..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let tensors = resnet_tensor_folder(dir.path());
        for (file, meta) in metas {
            fs::write(tensors.join(file), meta).unwrap();
        }
        let out = dir.path().join("m.json");
        command!("create-manifest", "--input-dir" => &tensors, "--output" => &out)
            .args(extra)
            .assert()
            .success();
        assert_eq!(
            fs::read_to_string(&out).unwrap(),
            expected,
            "{extra:?} {metas:?}"
        );
    }
}

#[test]
fn extract_weights_reproduces_the_tiny_fixture_and_leaves_no_staging_folder() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("tiny-extract");
    let out_dir = dir.path().join("out");
    let (w, m, g) = (
        dir.path().join("tiny.weights"),
        dir.path().join("tiny.manifest.json"),
        dir.path().join("tiny.extracted.json"),
    );
    extract(&src.join("tiny.webnn"), Some(&out_dir), &w, &m, &g)
        .assert()
        .success();
    assert_eq!(
        fs::read(&w).unwrap(),
        fs::read(src.join("tiny.weights")).unwrap()
    );
    for (written, shipped) in [(&m, "tiny.manifest.json"), (&g, "tiny.extracted.json")] {
        assert_eq!(
            fs::read_to_string(written).unwrap(),
            fs::read_to_string(src.join(shipped)).unwrap()
        );
    }
    // webnn-graph left OUTPUT_DIR/tensors/*.bin behind.
    assert!(listing(&out_dir).is_empty(), "{:?}", listing(&out_dir));
}

#[test]
fn extract_then_inline_returns_the_original_graph() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("tiny-extract").join("tiny.webnn");
    let (w, m, g) = (
        dir.path().join("t.weights"),
        dir.path().join("t.manifest.json"),
        dir.path().join("t.json"),
    );
    extract(&src, Some(dir.path()), &w, &m, &g)
        .assert()
        .success();
    let original = read_graph_file(&src).unwrap();
    // GraphJson output, and .webnn output by extension.
    for back in ["back.json", "back.webnn"] {
        let back = dir.path().join(back);
        inline(&g, &w, &m, &back).assert().success();
        let round_trip = if back.extension().unwrap() == "json" {
            parse_graph_json(&fs::read_to_string(&back).unwrap()).unwrap()
        } else {
            read_graph_file(&back).unwrap()
        };
        assert_eq!(round_trip, original, "{}", back.display());
    }
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
    command!("create-manifest", "--input-dir" => &input, "--output" => &m)
        .assert()
        .success();
    pack(&m, &input, &w).assert().success();
    assert_eq!(fs::read(&w).unwrap().len(), 8 + 24 + 3 + 8);
    unpack(&w, &m, &out).assert().success();
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
    // extract: 3 int4 elements in 2 bytes (webnn-graph demanded 3 bytes). Packing with
    // the old one-byte-per-element length is rejected: a row of
    // `every_failure_leaves_no_output_at_all`.
    let dir = tempfile::tempdir().unwrap();
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
    extract(&graph, None, &w, &m, &g).assert().success();
    assert_eq!(fs::read(&w).unwrap(), b"WGWT\x01\x00\x00\x00\x21\x03");
    assert!(fs::read_to_string(&m)
        .unwrap()
        .contains("\"byteLength\": 2,"));
}

#[test]
fn headerless_blobs_unpack_and_inline() {
    // The onnx-layout blob starts at offset 0 (no WGWT header): webnn-graph 0.4.0
    // rejected it ("Invalid magic bytes") and subtracted 8 from every offset.
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("onnx-layout");
    let (blob_path, manifest) = (src.join("model.weights"), src.join("model.manifest.json"));
    let blob = fs::read(&blob_path).unwrap();
    let out = dir.path().join("t");
    unpack(&blob_path, &manifest, &out).assert().success();
    let ranges = manifest_ranges(&manifest);
    assert_eq!(ranges[0].1, 0);
    let inlined = dir.path().join("model.json");
    inline(&src.join("model.webnn"), &blob_path, &manifest, &inlined)
        .assert()
        .success();
    let g = read_graph_file(&inlined).unwrap();
    for (name, offset, len) in &ranges {
        let stored = &blob[*offset..offset + len];
        assert_eq!(
            fs::read(out.join(format!("{name}.bin"))).unwrap(),
            stored,
            "{name}"
        );
        assert_eq!(
            g.consts[name].init,
            ConstInit::InlineBytes {
                bytes: stored.to_vec().into()
            },
            "{name}"
        );
    }
}

/// One row per way a blob tool must refuse its input: exit status, what the message
/// says, and nothing written (webnn-graph 0.4.0 created outputs before validating).
#[test]
fn every_failure_leaves_no_output_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = fixture("tiny-extract");
    let (tiny_manifest, blob) = (
        src.join("tiny.manifest.json"),
        fs::read(src.join("tiny.weights")).unwrap(),
    );
    // A truncated blob: the last tensor runs past its end; the earlier ones were readable
    // but must not appear (webnn-graph wrote them before failing).
    let truncated = d.join("short.weights");
    fs::write(&truncated, &blob[..blob.len() - 1]).unwrap();
    // A WGWT header of version 2: read by the resolver, rejected by the blob tools.
    let mut v2 = blob.clone();
    v2[4] = 2;
    let v2_blob = d.join("v2.weights");
    fs::write(&v2_blob, &v2).unwrap();
    // A constant with the wrong byte count.
    let bad_graph = d.join("bad.webnn");
    fs::write(
        &bad_graph,
        fs::read_to_string(src.join("tiny.webnn"))
            .unwrap()
            .replace("@bytes([7, 0, 0, 0, 0, 0, 0, 0])", "@bytes([7, 0, 0, 0])"),
    )
    .unwrap();
    // Tensor files of which one has the wrong size.
    let input = d.join("in");
    fs::create_dir(&input).unwrap();
    cut_tensors(&input, &blob, &tiny_manifest);
    fs::write(input.join("w.bin"), [0u8; 31]).unwrap();
    // int4 with the old one-byte-per-element length.
    let int4_input = d.join("in4");
    fs::create_dir(&int4_input).unwrap();
    fs::write(int4_input.join("q.bin"), [0x21, 0x03, 0x00]).unwrap();
    let int4_manifest = d.join("old.json");
    fs::write(
        &int4_manifest,
        r#"{"format":"wg-weights-manifest","version":1,"endianness":"little","tensors":{"q":{"dataType":"int4","shape":[3],"byteOffset":8,"byteLength":3,"layout":"row-major"}}}"#,
    )
    .unwrap();
    // An existing output that a failed pack must leave untouched.
    let packed = d.join("packed.weights");
    fs::write(&packed, b"previous").unwrap();
    let same = d.join("same.json");

    let rows: Vec<(&str, assert_cmd::Command, i32, &[&str])> = vec![
        (
            "unpack of a truncated blob",
            unpack(&truncated, &tiny_manifest, &d.join("unpacked")),
            1,
            &["\"w\": bytes 24..56"],
        ),
        (
            "unpack of a WGWT v2 blob",
            unpack(&v2_blob, &tiny_manifest, &d.join("out")),
            1,
            &["version 2, expected 1"],
        ),
        (
            "inline of a WGWT v2 blob",
            inline(
                &src.join("tiny.extracted.json"),
                &v2_blob,
                &tiny_manifest,
                &d.join("g.json"),
            ),
            1,
            &["version 2, expected 1"],
        ),
        (
            "extract of a constant with the wrong byte count",
            extract(
                &bad_graph,
                Some(&d.join("x")),
                &d.join("x.weights"),
                &d.join("x.json"),
                &d.join("x.graph.json"),
            ),
            1,
            &["constant \"k\""],
        ),
        (
            "pack of a tensor file of the wrong size",
            pack(&tiny_manifest, &input, &packed),
            1,
            &["the file has 31 bytes"],
        ),
        (
            "pack of int4 with one byte per element",
            pack(&int4_manifest, &int4_input, &d.join("old.weights")),
            1,
            &["byteLength is 3, expected 2"],
        ),
        (
            "create-manifest with an endianness other than little",
            command!("create-manifest", "--input-dir" => &input, "--output" => d.join("m.json"), "--endianness" => "big"),
            2,
            &["big", "little"],
        ),
        (
            "extract with two outputs on one file",
            extract(
                &src.join("tiny.webnn"),
                None,
                &d.join("x.weights"),
                &same,
                &same,
            ),
            2,
            &["--manifest and --output-graph"],
        ),
    ];
    for (what, cmd, code, needles) in rows {
        eprintln!("{what}");
        assert_fails_leaving(d, cmd, code, needles);
    }
    assert_eq!(fs::read(&packed).unwrap(), b"previous");
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
        (fixture("resnet-head").join("resnet_head.webnn"), None),
        (fixture("packed4").join("quant.webnn"), None),
        (
            fixture("hf-safetensors").join("head.webnn"),
            Some(fixture("hf-safetensors").join("lm_head.safetensors")),
        ),
        (fixture("hf-safetensors").join("encoder.webnn"), None),
        (fixture("onnx-layout").join("model.webnn"), None),
        (fixture("tiny-extract").join("tiny.webnn"), None),
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

/// `to-safetensors` reports in the words of the other commands: `wrote`, lowercase, and a
/// count of 1 with a singular noun.
#[test]
fn to_safetensors_says_wrote_with_singular_counts() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("one.webnn");
    fs::write(
        &graph,
        "webnn_graph \"one\" v1 { inputs { x: u8[1]; } consts { b: u8[1] @bytes([7]); } nodes { y = add(x, b); } outputs { y; } }",
    )
    .unwrap();
    let archive = dir.path().join("one.safetensors");
    let output = cli()
        .arg("to-safetensors")
        .arg(&graph)
        .arg("--output")
        .arg(&archive)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(
        stderr_of(&output),
        format!("wrote 1 tensor (1 byte) to {}\n", archive.display())
    );
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
fn quiet_prints_nothing_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("tiny-extract");
    let unpack_args = |out: &str| -> Vec<PathBuf> {
        vec![
            "unpack-weights".into(),
            "--weights".into(),
            src.join("tiny.weights"),
            "--manifest".into(),
            src.join("tiny.manifest.json"),
            "--output-dir".into(),
            dir.path().join(out),
        ]
    };
    let output = cli()
        .arg("--quiet")
        .args(unpack_args("o"))
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(output.stderr.is_empty() && output.stdout.is_empty());
    let output = cli().args(unpack_args("p")).output().unwrap();
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
        .arg(fixture("packed4").join("quant.safetensors"))
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
        .arg(fixture("tiny-extract").join("tiny.weights"))
        .arg("--manifest")
        .arg(fixture("tiny-extract").join("tiny.manifest.json"))
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
        .arg(fixture("onnx-layout").join("model.weights"))
        .arg("--manifest")
        .arg(fixture("onnx-layout").join("model.manifest.json"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("header: none"), "{text}");
    assert!(text.contains(">=4096"), "{text}");

    // A blob without its manifest is a usage error that says what to add.
    let output = cli()
        .arg("inspect")
        .arg(fixture("onnx-layout").join("model.weights"))
        .output()
        .unwrap();
    assert_fails(&output, 2, "--manifest");

    // An archive is recognized by its name, as by the resolver; its content only
    // suggests the rename. Graphs stay graphs.
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("weights.bin");
    fs::copy(fixture("packed4").join("quant.safetensors"), &renamed).unwrap();
    let output = cli().arg("inspect").arg(&renamed).output().unwrap();
    assert_fails(&output, 2, "looks like a SafeTensors archive");
    assert_fails(&output, 2, "weights.safetensors");
    assert!(output.stdout.is_empty());
    let output = cli()
        .arg("inspect")
        .arg(fixture("tiny-extract").join("tiny.webnn"))
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("sha256"));
}
