//! Shared helpers of the resolver tests.
#![allow(clippy::result_large_err)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use webnn_weights_runtime::formats::FormatError;
use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson, ResolveError};

/// A graph of `@weights` constants: (constant, type, shape, reference).
pub fn graph(consts: &[(&str, DataType, &[u32], &str)]) -> GraphJson {
    let mut g = GraphJson::new(None);
    for &(name, data_type, shape, reference) in consts {
        g.consts.insert(
            name.to_string(),
            ConstDecl {
                data_type,
                shape: shape.to_vec(),
                init: ConstInit::Weights {
                    r#ref: reference.to_string(),
                },
            },
        );
    }
    g
}

/// The bytes of a SafeTensors file with exactly this header JSON and data section.
pub fn raw_safetensors_bytes(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(header).unwrap();
    let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&text);
    bytes.extend_from_slice(data);
    bytes
}

/// Writes a SafeTensors file with exactly this header JSON and data section.
pub fn write_raw_safetensors(path: &Path, header: &serde_json::Value, data: &[u8]) {
    std::fs::write(path, raw_safetensors_bytes(header, data)).unwrap();
}

/// The bytes of an archive of tensors (name, dtype, shape, bytes), offsets in order, with
/// an optional `__metadata__`.
pub fn safetensors_bytes(
    metadata: Option<&[(&str, &str)]>,
    tensors: &[(&str, &str, &[u64], &[u8])],
) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    if let Some(meta) = metadata {
        let m: serde_json::Map<String, serde_json::Value> = meta
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        header.insert("__metadata__".into(), m.into());
    }
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let start = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    raw_safetensors_bytes(&serde_json::Value::Object(header), &data)
}

/// A tensor entry list (name, dtype, shape, bytes) -> header + data, offsets in order.
pub fn write_safetensors(
    path: &Path,
    metadata: Option<&[(&str, &str)]>,
    tensors: &[(&str, &str, &[u64], &[u8])],
) {
    std::fs::write(path, safetensors_bytes(metadata, tensors)).unwrap();
}

/// The JSON of a manifest of (name, offset, length).
pub fn manifest_text(entries: &[(&str, u64, u64)]) -> String {
    let tensors: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|(n, o, l)| {
            (
                n.to_string(),
                serde_json::json!({"byteOffset": o, "byteLength": l}),
            )
        })
        .collect();
    serde_json::json!({"format":"wg-weights-manifest","version":1,"tensors": tensors}).to_string()
}

/// Writes a blob and a manifest of (name, offset, length).
pub fn write_blob(blob: &Path, bytes: &[u8], manifest: &Path, entries: &[(&str, u64, u64)]) {
    std::fs::write(blob, bytes).unwrap();
    std::fs::write(manifest, manifest_text(entries)).unwrap();
}

/// `GraphLoader::mapped`, where files can be mapped; on wasm32, which cannot map
/// (`ResolveError::MappingUnsupported`, checked by `resolve_api.rs`), the owned loader, so
/// that the rest of a test runs there.
pub trait MappedHere {
    /// `self.mapped()`, or `self` on wasm32.
    fn mapped_here(self) -> Self;
}

impl MappedHere for webnn_weights_runtime::GraphLoader {
    fn mapped_here(self) -> Self {
        if cfg!(target_family = "wasm") {
            self
        } else {
            self.mapped()
        }
    }
}

/// The ways of getting a resolved graph that every conformance test runs through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `resolve_external_weights`: positioned reads into owned memory.
    Owned,
    /// `GraphLoader::from_graph(..).graph_path(..).mapped()`: views into a read-only map.
    Mapped,
    /// `GraphLoader::from_graph(..).weights_bytes(..)[.manifest_bytes(..)]`: the sidecar
    /// found as discovery would find it, read into memory first (no discovery).
    Memory,
    /// `webnn_weights_build::Builder` (portable `include_bytes!` path) writes the
    /// artifacts, which become an `EmbeddedGraph` as the macro builds it;
    /// `EmbeddedGraph::to_graph_json()`. Errors are the build helper's (build time).
    Embedded,
    /// The same with embedding switched off (`Builder::embedding(Embedding::Runtime)`): the
    /// `EmbeddedGraph` resolves the sidecar on first use (mapping it; on wasm32 reading it).
    EmbeddedFallback,
}

pub const MODES: [Mode; 5] = [
    Mode::Owned,
    Mode::Mapped,
    Mode::Memory,
    Mode::Embedded,
    Mode::EmbeddedFallback,
];

/// The sidecar and manifest that discovery (or the explicit paths) would pick, as the
/// format states the rules; `None` where there is none (then the in-memory mode does
/// not apply: it has no discovery).
fn sidecar_files(
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Option<(PathBuf, Option<PathBuf>)> {
    let folder = graph_path.parent().unwrap_or(Path::new("."));
    let stem = graph_path.file_stem()?.to_string_lossy().into_owned();
    let weights = match weights {
        Some(w) => folder.join(w),
        None => [
            format!("{stem}.safetensors"),
            format!("{stem}.weights"),
            "model.safetensors".into(),
            "model.weights".into(),
        ]
        .iter()
        .map(|n| folder.join(n))
        .find(|p| p.exists())?,
    };
    if !weights.is_file() {
        return None;
    }
    let archive = weights
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| {
            e.eq_ignore_ascii_case("safetensors") || e.eq_ignore_ascii_case("safetensor")
        });
    if archive {
        return Some((weights, None));
    }
    let manifest = match manifest {
        Some(m) => folder.join(m),
        None => [format!("{stem}.manifest.json"), "manifest.json".into()]
            .iter()
            .map(|n| folder.join(n))
            .find(|p| p.exists())?,
    };
    manifest.is_file().then_some((weights, Some(manifest)))
}

/// Resolves `g` in `mode`; `None` when the mode does not apply (in memory, without a
/// sidecar to read).
pub fn resolve_in(
    mode: Mode,
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Option<Result<GraphJson, ResolveError>> {
    let loader = webnn_weights_runtime::GraphLoader::from_graph(g.clone()).graph_path(graph_path);
    let loaded = match mode {
        Mode::Embedded | Mode::EmbeddedFallback => {
            return embedded::resolve(mode == Mode::Embedded, g, graph_path, weights, manifest)
        }
        Mode::Owned => {
            let mut copy = g.clone();
            let result = webnn_weights_runtime::resolve_external_weights(
                &mut copy, graph_path, weights, manifest,
            );
            if result.is_err() {
                assert_eq!(&copy, g, "the graph must be untouched on error");
            }
            return Some(result.map(|()| copy));
        }
        Mode::Mapped => {
            let mut loader = loader.mapped();
            if let Some(w) = weights {
                loader = loader.weights(w);
            }
            if let Some(m) = manifest {
                loader = loader.manifest(m);
            }
            loader.load()
        }
        Mode::Memory => {
            let (sidecar, manifest) = sidecar_files(graph_path, weights, manifest)?;
            let mut loader = loader.weights_bytes(std::fs::read(sidecar).unwrap());
            if let Some(m) = manifest {
                loader = loader.manifest_bytes(std::fs::read(m).unwrap());
            }
            loader.load()
        }
    };
    Some(loaded.map_err(|e| match e {
        webnn_weights_runtime::Error::Resolve(e) => *e,
        other => panic!("{mode:?}: not a resolver error: {other}"),
    }))
}

/// Resolves `g` in every mode and checks that they agree: byte-identical graphs, or the
/// same error (in memory, with the sidecar's and manifest's paths read as their labels).
/// Returns the owned result.
pub fn resolve_all_modes(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
) -> Result<GraphJson, ResolveError> {
    let owned = resolve_in(Mode::Owned, g, graph_path, weights, manifest).unwrap();
    #[cfg(feature = "webnn-graph")]
    bridge::check(g, graph_path, weights, manifest, &owned);
    let files = sidecar_files(graph_path, weights, manifest);
    for mode in MODES.into_iter().skip(1) {
        let Some(other) = resolve_in(mode, g, graph_path, weights, manifest) else {
            // The embedded modes skip graphs they cannot place as a file (see
            // `embedded::resolve`).
            if mode == Mode::Memory {
                assert!(
                    owned.is_err(),
                    "only failed discoveries have no in-memory run"
                );
            }
            continue;
        };
        // wasm32 cannot map files: once the plan has checked every rule, the mapped mode
        // fails at its first file, where the owned mode reads it (with or without error).
        #[cfg(target_family = "wasm")]
        if mode == Mode::Mapped && matches!(other, Err(ResolveError::MappingUnsupported { .. })) {
            continue;
        }
        match (&owned, &other) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{mode:?} differs from owned"),
            (Err(a), Err(b)) => {
                let mut expected = a.to_string();
                if mode == Mode::Memory {
                    let Some((sidecar, manifest)) = &files else {
                        unreachable!()
                    };
                    // Errors of reading files have no in-memory counterpart.
                    if matches!(
                        a,
                        ResolveError::Io { .. }
                            | ResolveError::Changed { .. }
                            | ResolveError::Format {
                                source: FormatError::Io { .. } | FormatError::Changed { .. },
                                ..
                            }
                    ) {
                        continue;
                    }
                    expected =
                        expected.replace(&sidecar.display().to_string(), "<weights in memory>");
                    if let Some(m) = manifest {
                        expected =
                            expected.replace(&m.display().to_string(), "<manifest in memory>");
                    }
                }
                assert_eq!(expected, b.to_string(), "{mode:?}: a different error");
                assert_eq!(a.fix(), b.fix());
            }
            (a, b) => panic!("{mode:?} disagrees with owned: {b:?} vs {a:?}"),
        }
    }
    owned
}

/// Resolves (in every mode, which must agree) and returns the inline bytes of constant
/// `name`.
pub fn resolve_one(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    name: &str,
) -> Result<Vec<u8>, ResolveError> {
    let g = resolve_all_modes(g, graph_path, weights, manifest)?;
    match &g.consts[name].init {
        ConstInit::InlineBytes { bytes } => Ok(bytes.to_vec()),
        other => panic!("constant {name} not resolved: {other:?}"),
    }
}

/// Resolves and expects an error whose message, followed by its fix (data of the error,
/// on its own line), contains every word; the message itself carries no fix.
pub fn expect_error(
    g: &GraphJson,
    graph_path: &Path,
    weights: Option<&Path>,
    manifest: Option<&Path>,
    words: &[&str],
) -> ResolveError {
    let err =
        resolve_all_modes(g, graph_path, weights, manifest).expect_err("resolution should fail");
    assert_printed_once(&err);
    let msg = webnn_weights_runtime::Report::new(&err).to_string();
    assert!(!msg.contains("fix:"), "the fix is data, not text: {msg}");
    let msg = match err.fix() {
        Some(fix) => format!("{msg}\nfix: {fix}"),
        None => msg,
    };
    for w in words {
        assert!(msg.contains(w), "message lacks {w:?}: {msg}");
    }
    err
}

/// With the `webnn-graph` feature, every conformance case also goes through webnn-graph's
/// types: the bridge's round trips, the drop-in resolver, and webnn-graph's own resolver.
#[cfg(feature = "webnn-graph")]
pub mod bridge {
    use std::path::Path;
    use webnn_graph::ast::GraphJson as TheirGraph;
    use webnn_weights_runtime::formats::FormatError;
    use webnn_weights_runtime::{webnn_graph_compat, GraphJson, ResolveError};

    fn utf8(path: Option<&Path>) -> Option<&str> {
        path.map(|p| p.to_str().expect("test paths are UTF-8"))
    }

    /// Ours -> theirs -> ours.
    pub fn round_trip(graph: &GraphJson) -> GraphJson {
        GraphJson::from(TheirGraph::from(graph.clone()))
    }

    /// How webnn-graph 0.4.0's own resolver fares on a case: its result, or its error
    /// (a panic counts as an error).
    pub fn webnn_graph_resolves(
        g: &GraphJson,
        graph_path: &Path,
        weights: Option<&Path>,
        manifest: Option<&Path>,
    ) -> Result<TheirGraph, String> {
        let mut theirs = TheirGraph::from(g.clone());
        let (weights, manifest) = (utf8(weights), utf8(manifest));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            webnn_graph::resolve_external_weights(&mut theirs, graph_path, weights, manifest)
        }));
        match result {
            Ok(Ok(())) => Ok(theirs),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("panicked".to_string()),
        }
    }

    /// Checks a conformance case through webnn-graph's types against `owned`, our owned
    /// result: the input and the result survive the round trip ours -> theirs -> ours;
    /// the drop-in resolver gives the same graph on success and the same error on failure,
    /// leaving the graph as it was; where webnn-graph's own resolver succeeds too, its
    /// graph serializes exactly as ours converted to its type does.
    pub fn check(
        g: &GraphJson,
        graph_path: &Path,
        weights: Option<&Path>,
        manifest: Option<&Path>,
        owned: &Result<GraphJson, ResolveError>,
    ) {
        assert_eq!(&round_trip(g), g, "the round trip changed the input graph");
        if let Ok(resolved) = owned {
            assert_eq!(
                &round_trip(resolved),
                resolved,
                "the round trip changed the resolved graph"
            );
        }
        let mut theirs = TheirGraph::from(g.clone());
        let before = serde_json::to_value(&theirs).unwrap();
        let dropped_in = webnn_graph_compat::resolve_external_weights(
            &mut theirs,
            graph_path,
            utf8(weights),
            utf8(manifest),
        );
        match (owned, dropped_in) {
            (Ok(resolved), Ok(())) => {
                assert_eq!(
                    &GraphJson::from(theirs),
                    resolved,
                    "drop-in resolver differs"
                )
            }
            (Err(expected), Err(found)) => {
                assert_eq!(expected.to_string(), found.to_string());
                assert_eq!(
                    serde_json::to_value(&theirs).unwrap(),
                    before,
                    "the drop-in resolver changed the graph before failing"
                );
                // webnn-graph's own wording for unreadable files and manifest syntax (the
                // cause is kept); our message in its other variants.
                match webnn_graph::WeightResolveError::from(found) {
                    webnn_graph::WeightResolveError::ReadFile { .. }
                    | webnn_graph::WeightResolveError::ManifestJson { .. } => {}
                    other => assert!(other.to_string().contains(&expected.to_string())),
                }
            }
            (a, b) => panic!("drop-in resolver disagrees: {b:?} vs owned {a:?}"),
        }
        match (owned, webnn_graph_resolves(g, graph_path, weights, manifest)) {
            (Ok(resolved), Ok(theirs)) => assert_eq!(
                serde_json::to_value(TheirGraph::from(resolved.clone())).unwrap(),
                serde_json::to_value(&theirs).unwrap(),
                "webnn-graph's own resolver gives another graph"
            ),
            (Err(_), Err(_)) => {}
            (Err(ours), Ok(_)) => assert!(
                webnn_graph_accepts(ours),
                "webnn-graph accepts a case we reject, and docs/format.md does not list it: {ours}"
            ),
            (Ok(_), Err(theirs)) => assert!(
                // Exact names take precedence over normalized ones (webnn-graph reports an
                // ambiguity even when one stored name is the reference itself); sharded
                // archives are an extension webnn-graph does not read.
                theirs.contains("ambiguous sanitized tensor name")
                    || is_sharded(g, graph_path, weights, manifest),
                "webnn-graph rejects a case we accept, and docs/format.md does not list it: {theirs}"
            ),
        }
    }

    fn is_sharded(
        g: &GraphJson,
        graph_path: &Path,
        weights: Option<&Path>,
        manifest: Option<&Path>,
    ) -> bool {
        webnn_weights_runtime::plan_external_weights(g, graph_path, weights, manifest)
            .ok()
            .and_then(|plan| plan.sidecar().map(|s| s.kind.clone()))
            .is_some_and(|kind| kind == webnn_weights_runtime::SidecarKind::ShardedSafeTensors)
    }

    /// The errors of ours that webnn-graph 0.4.0 does not raise: where it departs from the
    /// format, as docs/format.md lists ("Where we differ from webnn-graph").
    fn webnn_graph_accepts(ours: &ResolveError) -> bool {
        match ours {
            // It does not check inline byte lengths, nor a blob range's length against the
            // declaration, and reads a repeated manifest key as the last one.
            ResolveError::InlineLength { .. } | ResolveError::LengthMismatch { .. } => true,
            ResolveError::Format {
                source: FormatError::Manifest(manifest),
                ..
            } => manifest.to_string().contains("appears more than once"),
            _ => false,
        }
    }
}

/// Walks the chain of `err` (its message, then each `source()`) and fails when a message
/// repeats another's text: every error prints its cause or returns it, never both.
pub fn assert_printed_once(err: &(dyn std::error::Error + 'static)) {
    let mut texts = vec![err.to_string()];
    let mut cause = err.source();
    while let Some(e) = cause {
        let text = e.to_string();
        for earlier in &texts {
            assert!(
                !earlier.contains(&text),
                "`{text}` is printed twice: by `{earlier}` and as its source"
            );
        }
        texts.push(text);
        cause = e.source();
    }
}

pub fn path_in(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// The embedded modes: the build helper prepares the graph's artifacts in a temporary
/// `OUT_DIR`, and they become a `'static` `EmbeddedGraph` exactly as
/// `include_webnn_graph!` builds one (the macro's expansion: `__macro::embedded`
/// over the 64-byte aligned constant table and data, or `__macro::runtime` over
/// the index's run-time paths), with leaked buffers standing in for the binary.
mod embedded {
    use std::path::Path;
    use webnn_weights_artifacts::{Index, Mode as IndexMode, GRAPH_FILE, INDEX_FILE};
    use webnn_weights_build::{Builder, Embedding, Error as BuildError};
    use webnn_weights_runtime::ResolveError;
    use webnn_weights_runtime::{read_graph_file, ConstInit, EmbeddedGraph, GraphJson};

    /// Removes the graph file this mode wrote, when done.
    struct Placed<'a>(Option<&'a Path>);

    impl Drop for Placed<'_> {
        fn drop(&mut self) {
            if let Some(path) = self.0 {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn leak_str(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    /// `bytes` copied to a leaked, 64-byte aligned place (as the macro embeds them).
    fn leak_aligned(bytes: &[u8]) -> &'static [u8] {
        let buffer: &'static mut [u8] = Box::leak(vec![0u8; bytes.len() + 63].into_boxed_slice());
        let pad = buffer.as_ptr().align_offset(64);
        assert!(pad < 64);
        let slot = &mut buffer[pad..pad + bytes.len()];
        slot.copy_from_slice(bytes);
        slot
    }

    /// `None` when the graph cannot be given to the build helper as a file at
    /// `graph_path` without changing the test's folder: a relative path (the source
    /// tree), a folder that does not exist, or a different file already there. Otherwise
    /// the graph is written there as GraphJson (unless that file is already there) and
    /// removed afterwards.
    pub fn resolve(
        embed: bool,
        g: &GraphJson,
        graph_path: &Path,
        weights: Option<&Path>,
        manifest: Option<&Path>,
    ) -> Option<Result<GraphJson, ResolveError>> {
        let folder = graph_path.parent().filter(|f| f.is_dir())?;
        if graph_path.is_relative() {
            return None;
        }
        let placed = if graph_path.exists() {
            if read_graph_file(graph_path).ok().as_ref() != Some(g) {
                return None;
            }
            Placed(None)
        } else {
            std::fs::write(graph_path, serde_json::to_vec(g).unwrap()).unwrap();
            let placed = Placed(Some(graph_path));
            let back = read_graph_file(graph_path).unwrap();
            assert_eq!(&back, g, "the graph file reads back as the graph");
            placed
        };
        let out = webnn_weights_test_support::tempdir().unwrap();
        let mut builder = Builder::new(graph_path)
            .package_dir(folder)
            .out_dir(out.path())
            .emit_directives(false)
            .embedding(if embed {
                Embedding::IncludeBytes
            } else {
                Embedding::Runtime
            });
        if let Some(w) = weights {
            builder = builder.weights(w);
        }
        if let Some(m) = manifest {
            builder = builder.manifest(m);
        }
        let compiled = match builder.compile() {
            Ok(compiled) => compiled,
            Err(BuildError::Resolve(e)) => return Some(Err(*e)),
            Err(other) => panic!("embedded: not a resolver error: {other}"),
        };
        drop(placed);
        let dir = compiled.artifact_dir();
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let index = Index::from_json(&String::from_utf8(read(INDEX_FILE)).unwrap()).unwrap();
        let label = leak_str(graph_path.display().to_string());
        let graph_json = leak_str(String::from_utf8(read(GRAPH_FILE)).unwrap());
        let embedded = match (index.mode, &index.runtime) {
            (IndexMode::IncludeBytes, _) => {
                assert!(embed);
                let table = leak_aligned(&read(index.table.as_deref().unwrap()));
                let data = match &index.data {
                    Some(data) => leak_aligned(&read(&data.file)),
                    None => &[],
                };
                webnn_weights_runtime::__macro::embedded(label, graph_json, data, table)
            }
            (IndexMode::Runtime, Some(runtime)) => {
                assert!(!embed);
                webnn_weights_runtime::__macro::runtime(
                    label,
                    graph_json,
                    leak_str(runtime.graph_path.clone()),
                    runtime.weights.clone().map(leak_str),
                    runtime.manifest.clone().map(leak_str),
                    runtime.lock.clone().map(leak_str),
                )
            }
            (mode, _) => panic!("embedded: unexpected artifacts of mode {mode:?}"),
        };
        let embedded: &'static EmbeddedGraph = Box::leak(Box::new(embedded));
        let resolved = embedded
            .try_to_graph_json()
            .unwrap_or_else(|e| panic!("embedded: resolved at build time, fails at run time: {e}"));
        // No copy: every resolved constant is the embedded constant's bytes.
        for constant in embedded.constants() {
            let ConstInit::InlineBytes { bytes } = &resolved.consts[constant.name()].init else {
                panic!("embedded: {} not resolved", constant.name())
            };
            assert_eq!(
                bytes.as_ptr(),
                constant.bytes().as_ptr(),
                "{} copied",
                constant.name()
            );
        }
        #[cfg(feature = "webnn-graph")]
        assert_eq!(
            GraphJson::from(embedded.to_webnn_graph()),
            resolved,
            "embedded: to_webnn_graph differs from to_graph_json"
        );
        Some(Ok(resolved))
    }
}

/// Proptest settings of the property tests: `fast` cases normally, 40x with
/// `WEBNN_WEIGHTS_LONG_TESTS=1`, exactly `PROPTEST_CASES` when set.
pub fn proptest_config(fast: u32) -> proptest::test_runner::Config {
    let cases = match std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => n,
        None if std::env::var_os("WEBNN_WEIGHTS_LONG_TESTS").is_some() => fast * 40,
        None => fast,
    };
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
