//! One file, one verdict (issue 17): `inspect` of a sidecar, the blob tools and the
//! resolver read sidecars through the same readers (`webnn_weights_runtime::formats`).
//! The kind of a sidecar is its name's, as the format says; content only suggests a fix.
//! The one documented difference: a WGWT blob whose header version is not 1 is read by
//! the resolver (it interprets no header) and rejected by the blob tools.

mod common;

use common::{cli, fixtures, stderr_of};
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::{self, FormatError};
use webnn_weights_runtime::{plan_external_weights, read_graph_file, ConstInit, ResolveError};
use webnn_weights_tools::weight_tools::{
    inline_weights, inspect_blob, inspect_safetensors, NoProgress, ToolError,
};

/// `hf-safetensors/head.webnn` and its archive copied into a folder, with `archive`
/// transformed and stored under `name`.
fn head_case(
    name: &str,
    archive: impl FnOnce(Vec<u8>) -> Vec<u8>,
) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("hf-safetensors");
    let graph = dir.path().join("head.webnn");
    fs::copy(src.join("head.webnn"), &graph).unwrap();
    let sidecar = dir.path().join(name);
    fs::write(
        &sidecar,
        archive(fs::read(src.join("lm_head.safetensors")).unwrap()),
    )
    .unwrap();
    (dir, graph, sidecar)
}

#[test]
fn trailing_bytes_after_the_last_tensor_are_rejected_everywhere() {
    let (_dir, graph, archive) = head_case("t.safetensors", |mut bytes| {
        bytes.extend_from_slice(&[0; 8]);
        bytes
    });
    // The reader, the tools and the resolver: the same typed verdict.
    let err = formats::Catalog::read_safetensors(&archive).unwrap_err();
    assert!(
        matches!(err, FormatError::SafeTensorsHeader { .. }),
        "{err:?}"
    );
    let reader_text = err.to_string();
    assert!(
        reader_text.contains("8 bytes after the last tensor"),
        "{reader_text}"
    );
    let tool = inspect_safetensors(&archive).unwrap_err();
    assert!(matches!(tool, ToolError::Format(_)), "{tool:?}");
    assert_eq!(tool.to_string(), reader_text);
    let g = read_graph_file(&graph).unwrap();
    let resolver =
        plan_external_weights(&g, &graph, Some(Path::new("t.safetensors")), None).unwrap_err();
    assert!(
        matches!(
            resolver,
            ResolveError::Format {
                source: FormatError::SafeTensorsHeader { .. },
                ..
            }
        ),
        "{resolver:?}"
    );
    assert!(webnn_weights_runtime::Report::new(&resolver)
        .to_string()
        .contains("8 bytes after the last tensor"));

    // The command line: `inspect t.safetensors` and `inspect head.webnn --weights
    // t.safetensors` both fail, no listing on stdout.
    for args in [
        vec![archive.clone().into_os_string()],
        vec![
            graph.clone().into_os_string(),
            "--weights".into(),
            "t.safetensors".into(),
        ],
    ] {
        let output = cli().arg("inspect").args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(
            stderr_of(&output).contains("8 bytes after the last tensor"),
            "{}",
            stderr_of(&output)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn an_archive_named_content_bin_is_a_blob_everywhere() {
    let (_dir, graph, bin) = head_case("content.bin", |bytes| bytes);
    // Its name makes it a blob, and without a manifest it cannot be read, by the resolver
    // or by `inspect`; both suggest the rename because its content looks like an archive.
    assert_eq!(
        formats::SidecarFormat::of_path(&bin),
        formats::SidecarFormat::Blob
    );
    let g = read_graph_file(&graph).unwrap();
    let err = plan_external_weights(&g, &graph, Some(Path::new("content.bin")), None).unwrap_err();
    assert!(matches!(err, ResolveError::NoManifest { .. }), "{err:?}");

    let output = cli().arg("inspect").arg(&bin).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = stderr_of(&output);
    assert!(
        text.contains("--manifest") && text.contains("content.safetensors"),
        "{text}"
    );
    assert!(output.stdout.is_empty());

    let output = cli()
        .arg("inspect")
        .arg(&graph)
        .args(["--weights", "content.bin"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = stderr_of(&output);
    assert!(text.contains("needs a manifest"), "{text}");
    assert!(text.contains("fix: "), "{text}");
    assert!(text.contains("looks like a SafeTensors archive"), "{text}");

    // Renamed, the same bytes are an archive to both.
    let archive = bin.with_file_name("content.safetensors");
    fs::rename(&bin, &archive).unwrap();
    assert!(inspect_safetensors(&archive).is_ok());
    assert!(
        plan_external_weights(&g, &graph, Some(Path::new("content.safetensors")), None).is_ok()
    );
}

#[test]
fn a_wgwt_version_2_blob_is_read_by_the_resolver_and_rejected_by_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("tiny-extract");
    let mut blob = fs::read(src.join("tiny.weights")).unwrap();
    assert_eq!(&blob[..5], b"WGWT\x01");
    blob[4] = 2;
    let weights = dir.path().join("tiny.weights");
    fs::write(&weights, &blob).unwrap();
    let manifest = dir.path().join("tiny.manifest.json");
    fs::copy(src.join("tiny.manifest.json"), &manifest).unwrap();
    let graph = dir.path().join("tiny.extracted.json");
    fs::copy(src.join("tiny.extracted.json"), &graph).unwrap();

    // The resolver does not interpret a header: offsets are absolute (the format says so).
    let resolved = webnn_weights_runtime::GraphLoader::new(&graph)
        .weights("tiny.weights")
        .manifest("tiny.manifest.json")
        .load()
        .unwrap();
    let inline = resolved
        .consts
        .values()
        .filter(|c| matches!(c.init, ConstInit::InlineBytes { .. }))
        .count();
    assert!(inline > 0);
    // The catalog reader agrees with the resolver: it reads the blob.
    let catalog = formats::Catalog::read_blob(&weights, &manifest).unwrap();
    assert!(catalog.check_ranges().is_ok());

    // The blob tools validate the WGWT header (inspect of the blob, inline-weights).
    let err = inspect_blob(&weights, &manifest).unwrap_err().to_string();
    assert!(err.contains("version 2, expected 1"), "{err}");
    let g = read_graph_file(&graph).unwrap();
    let err = inline_weights(&g, &graph, &weights, &manifest, &mut NoProgress)
        .unwrap_err()
        .to_string();
    assert!(err.contains("version 2, expected 1"), "{err}");

    let output = cli()
        .arg("inspect")
        .arg(&graph)
        .args([
            "--weights",
            "tiny.weights",
            "--manifest",
            "tiny.manifest.json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let output = cli()
        .arg("inspect")
        .arg(&weights)
        .arg("--manifest")
        .arg(&manifest)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains("version 2, expected 1"));
}
