//! Graph outputs of every command: streamed, byte-identical to the previous writers,
//! `--compact`, no file left after a failure mid-write, and the path messages.

#[macro_use]
mod common;

use webnn_weights_test_support::SmallTmpfs;

use common::{
    assert_fails, assert_fails_leaving, assert_succeeds, cli, fixtures, listing, stderr_of,
};
use std::path::{Path, PathBuf};
use webnn_weights_runtime::{read_graph_file, GraphJson, GraphLoader};

fn resnet() -> PathBuf {
    fixtures().join("resnet-head/resnet_head.webnn")
}

fn resolved_resnet() -> GraphJson {
    GraphLoader::new(resnet()).load().unwrap()
}

/// Small fixtures with every sidecar kind (the big one is left to the disk-full test:
/// unoptimized test builds write 100 MB of pretty JSON slowly).
const SMALL: [&str; 3] = [
    "hf-safetensors/encoder.webnn",
    "packed4/quant.webnn",
    "onnx-layout/model.webnn",
];

#[test]
fn resolve_outputs_match_the_previous_writers_and_compact_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    for graph in SMALL {
        let graph = fixtures().join(graph);
        let expected = GraphLoader::new(&graph).load().unwrap();
        let run = |name: &str, compact: bool| {
            let out = dir.path().join(name);
            let mut cmd = cli();
            cmd.arg("resolve").arg(&graph).arg("-o").arg(&out);
            if compact {
                cmd.arg("--compact");
            }
            let output = cmd.output().unwrap();
            assert!(output.status.success(), "{}", stderr_of(&output));
            std::fs::read(&out).unwrap()
        };
        // Pretty JSON: what serde_json's pretty printer (webnn-graph's CLI) writes.
        let pretty = run("pretty.json", false);
        assert_eq!(pretty, serde_json::to_vec_pretty(&expected).unwrap());
        // Compact: one line, as serde_json::to_string (webnn-graph's library) writes.
        let compact = run("compact.json", true);
        assert_eq!(compact, serde_json::to_vec(&expected).unwrap());
        assert!(!compact.contains(&b'\n'));
        assert_eq!(
            read_graph_file(dir.path().join("compact.json")).unwrap(),
            expected
        );
        // Text.
        let text = run("out.webnn", false);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            webnn_weights_runtime::to_webnn_text(&expected).unwrap()
        );
    }
    // --compact is refused for text, before anything is written.
    let output = command!("resolve", "-o" => dir.path().join("x.webnn"))
        .arg(resnet())
        .arg("--compact")
        .output()
        .unwrap();
    assert_fails(&output, 2, "--compact applies to GraphJson");
    assert!(!dir.path().join("x.webnn").exists());
}

#[test]
fn convert_compact_is_webnn_graph_library_output() {
    // format_reference.json is what webnn-graph's library wrote for the .webnn file.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ref.json");
    let output = cli()
        .arg("convert")
        .arg(fixtures().join("format/format_reference.webnn"))
        .arg("-o")
        .arg(&out)
        .arg("--compact")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let expected =
        std::fs::read_to_string(fixtures().join("format/format_reference.json")).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected.trim_end());
}

#[test]
fn weight_tools_write_compact_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = fixtures().join("resnet-head");
    let one_line = |path: &Path| !std::fs::read(path).unwrap().contains(&b'\n');
    // inline-weights
    let inline = d.join("inline.json");
    assert_succeeds(
        command!("inline-weights",
            "--input" => src.join("resnet_head.webnn"),
            "--weights" => src.join("resnet_head.weights"),
            "--manifest" => src.join("resnet_head.manifest.json"),
            "--output" => &inline)
        .arg("--compact"),
    );
    assert!(one_line(&inline));
    assert_eq!(read_graph_file(&inline).unwrap(), resolved_resnet());
    // extract-weights back
    assert_succeeds(
        command!("extract-weights",
            "--input" => &inline,
            "--weights" => d.join("x.weights"),
            "--manifest" => d.join("x.manifest.json"),
            "--output-graph" => d.join("x.json"))
        .arg("--compact"),
    );
    assert!(one_line(&d.join("x.json")));
    let extracted = read_graph_file(d.join("x.json")).unwrap();
    assert!(extracted.has_external_weights());
    // to-safetensors --graph-output, compact
    assert_succeeds(
        command!("to-safetensors",
            "--output" => d.join("m.safetensors"),
            "--graph-output" => d.join("m.json"))
        .arg(d.join("x.json"))
        .arg("--compact"),
    );
    assert!(one_line(&d.join("m.json")));
    // --compact without --graph-output is a usage error.
    let output = command!("to-safetensors", "--output" => d.join("n.safetensors"))
        .arg(d.join("x.json"))
        .arg("--compact")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr_of(&output));
    assert!(!d.join("n.safetensors").exists());
}

/// A graph whose text output fails late: many constants are written (and flushed to the
/// temporary file) before a node name that text cannot express.
#[test]
fn failure_mid_write_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut consts = Vec::new();
    for i in 0..3000 {
        consts.push(format!(
            r#""c{i:04}":{{"dataType":"uint8","shape":[64],"init":{{"kind":"inlineBytes","bytes":[{}]}}}}"#,
            vec!["200"; 64].join(",")
        ));
    }
    let graph = format!(
        r#"{{"format":"webnn-graph-json","version":2,"name":"g","inputs":{{}},"consts":{{{}}},"nodes":[{{"id":"not-an-identifier","op":"relu","inputs":["c0000"]}}],"outputs":{{}}}}"#,
        consts.join(",")
    );
    let input = dir.path().join("in.json");
    std::fs::write(&input, graph).unwrap();
    let out = dir.path().join("out.webnn");
    let convert = || {
        let mut cmd = command!("convert", "-o" => &out);
        cmd.arg(&input);
        cmd
    };
    let message = "out.webnn: cannot write as .webnn text: node 0";
    assert_fails_leaving(dir.path(), convert(), 1, &[message]);
    assert_eq!(listing(dir.path()), ["in.json"]);
    // With an old version in place, it stays.
    std::fs::write(&out, "old").unwrap();
    assert_fails_leaving(dir.path(), convert(), 1, &[message]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(listing(dir.path()), ["in.json", "out.webnn"]);
}

#[test]
fn full_disk_leaves_no_file() {
    let Some(fs) = SmallTmpfs::mount("disk-full test") else {
        return;
    };
    let full = fs.path();
    // 8 MB of weights: every output format is far larger than 1 MiB.
    for (name, compact) in [("r.json", false), ("c.json", true), ("r.webnn", false)] {
        let out = full.join(name);
        let mut cmd = cli();
        cmd.arg("resolve").arg(resnet()).arg("-o").arg(&out);
        if compact {
            cmd.arg("--compact");
        }
        let output = cmd.output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{name}");
        let err = stderr_of(&output);
        assert!(err.contains(name) && err.contains("No space left"), "{err}");
        assert_eq!(listing(full), Vec::<String>::new(), "{name}");
    }
    let output = cli()
        .args(["inline-weights", "--input"])
        .arg(resnet())
        .arg("--weights")
        .arg(fixtures().join("resnet-head/resnet_head.weights"))
        .arg("--manifest")
        .arg(fixtures().join("resnet-head/resnet_head.manifest.json"))
        .arg("--output")
        .arg(full.join("i.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(listing(full), Vec::<String>::new());
}

#[test]
fn missing_explicit_paths_show_both_readings() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    for f in [
        "resnet_head.webnn",
        "resnet_head.weights",
        "resnet_head.manifest.json",
    ] {
        std::fs::copy(fixtures().join("resnet-head").join(f), models.join(f)).unwrap();
    }
    // (command line, run in the temporary folder; what the message must say)
    #[rustfmt::skip]
    let rows: [(&[&str], &[&str]); 3] = [
        // inline-weights reads --weights from the working directory.
        (
            &["inline-weights", "--input", "models/resnet_head.webnn", "--weights", "resnet_head.weights",
              "--manifest", "models/resnet_head.manifest.json", "--output", "o.json"],
            &["relative to the working directory: resnet_head.weights",
              "relative to the graph's folder it would be models/resnet_head.weights, which exists"],
        ),
        // resolve reads it from the graph's folder.
        (
            &["resolve", "models/resnet_head.webnn", "--weights", "models/resnet_head.weights",
              "--manifest", "resnet_head.manifest.json", "-o", "o.json"],
            &["relative to the graph's folder: models/models/resnet_head.weights",
              "relative to the working directory it would be models/resnet_head.weights, which exists"],
        ),
        // Neither exists.
        (
            &["inspect", "models/resnet_head.webnn", "--weights", "nope.weights"],
            &["which does not exist either"],
        ),
    ];
    for (args, needles) in rows {
        let output = cli().current_dir(dir.path()).args(args).output().unwrap();
        for needle in needles {
            assert_fails(&output, 1, needle);
        }
    }
    assert!(!dir.path().join("o.json").exists());
}

#[test]
fn inspect_shows_the_source_as_written() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "resnet_head.webnn",
        "resnet_head.weights",
        "resnet_head.manifest.json",
    ] {
        std::fs::copy(fixtures().join("resnet-head").join(f), dir.path().join(f)).unwrap();
    }
    let output = cli()
        .current_dir(dir.path())
        .args(["inspect", "resnet_head.webnn"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(" resnet_head.weights "), "{stdout}");
    assert!(!stdout.contains("./"), "{stdout}");
}
