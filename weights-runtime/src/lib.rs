//! # webnn-weights-runtime
//!
//! The WebNN external weight format in Rust: a graph (`.webnn` text or GraphJson) declares its
//! constants with `@weights("ref")`, and their bytes live in a sidecar (a SafeTensors archive,
//! a sharded Hugging Face archive, or a raw `.weights` blob addressed by a JSON manifest). This
//! crate holds the graph model ([`GraphJson`]), both file formats, the resolver that applies
//! every rule of the format, weights locks ([`WeightsLock`]), and `'static` graphs embedded at
//! build time ([`EmbeddedGraph`], [`include_webnn_graph!`]): what an application needs.
//!
//! ## Embed a model at build time
//!
//! With `webnn-weights-build` as a build-dependency, `build.rs` prepares the graph and the
//! macro embeds it; the bytes reach the binary through the linker, checked at build time:
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     webnn_weights_build::compile_or_exit("models/model.webnn");
//! }
//!
//! // src/main.rs
//! use webnn_weights_runtime::{include_webnn_graph, EmbeddedGraph};
//! static MODEL: EmbeddedGraph = include_webnn_graph!("models/model.webnn");
//!
//! fn main() {
//!     let w = MODEL.constant("fc1_weight").unwrap();
//!     let values: &'static [f32] = w.as_f32().unwrap(); // zero-copy, 64-byte aligned
//!     let digest = w.sha256(); // Some(..) when models/model.webnn.lock pins the weights
//!     # let _ = (values, digest);
//! }
//! ```
//!
//! ## Load from files at run time (feature `load`)
//!
//! The same rules, with the sidecar found beside the graph (or named explicitly). Each
//! constant's bytes are a [`bytes::Bytes`]: owned, or with [`load_graph_mapped`] a view into a
//! read-only mapping of the sidecar, so a large model loads without copying.
//!
//! ```
//! use webnn_weights_runtime::{load_graph, load_graph_mapped, ConstInit, GraphLoader};
//! let dir = tempfile::tempdir().unwrap();
//! let graph = dir.path().join("model.webnn");
//! std::fs::write(&graph, r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! // A blob and its manifest, found by discovery (model.weights, model.manifest.json).
//! std::fs::write(dir.path().join("model.weights"), [3, 4]).unwrap();
//! std::fs::write(dir.path().join("model.manifest.json"),
//!     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
//!
//! let owned = load_graph(&graph).unwrap();
//! let mapped = load_graph_mapped(&graph).unwrap();
//! assert_eq!(owned, mapped);
//! let ConstInit::InlineBytes { bytes } = &owned.consts["w"].init else { unreachable!() };
//! assert_eq!(bytes[..], [3, 4]);
//! // Explicit paths are relative to the graph's folder, as in the format.
//! let explicit = GraphLoader::new(&graph)
//!     .weights("model.weights")
//!     .manifest("model.manifest.json")
//!     .load()
//!     .unwrap();
//! assert_eq!(explicit, owned);
//! ```
//!
//! ## Weights from memory (feature `load`)
//!
//! A sidecar that never was a file here (a download, an archive member, `include_bytes!`):
//! the constants are slices of the buffer given.
//!
//! ```
//! use webnn_weights_runtime::{parse_webnn, ConstInit, GraphLoader};
//! let graph = parse_webnn(r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! let blob: &'static [u8] = &[0, 5, 6];
//! let resolved = GraphLoader::from_graph(graph)
//!     .weights_bytes(blob)
//!     .manifest_bytes(r#"{"tensors":{"w":{"byteOffset":1,"byteLength":2}}}"#)
//!     .load()
//!     .unwrap();
//! let ConstInit::InlineBytes { bytes } = &resolved.consts["w"].init else { unreachable!() };
//! assert_eq!(bytes.as_ptr(), blob[1..].as_ptr()); // no copy
//! ```
//!
//! ## Pin the weights (feature `load`)
//!
//! A lock beside the graph (`<graph file name>.lock`, written by `webnn-weights lock`) is
//! verified wherever the bytes are read; [`WeightPlan::to_lock`] makes one in code:
//!
//! ```
//! use webnn_weights_runtime::{load_graph, plan_external_weights, read_graph_file, WeightsLock};
//! let dir = tempfile::tempdir().unwrap();
//! let graph = dir.path().join("model.webnn");
//! std::fs::write(&graph, r#"webnn_graph "g" v2 {
//!   consts { w: u8[2] @weights("w"); }
//!   nodes { y = relu(w); }
//!   outputs { y; }
//! }"#).unwrap();
//! std::fs::write(dir.path().join("model.weights"), [3, 4]).unwrap();
//! std::fs::write(dir.path().join("model.manifest.json"),
//!     r#"{"tensors":{"w":{"byteOffset":0,"byteLength":2}}}"#).unwrap();
//! let plan = plan_external_weights(&read_graph_file(&graph).unwrap(), &graph, None, None).unwrap();
//! std::fs::write(WeightsLock::path_for(&graph), plan.to_lock().unwrap().to_json()).unwrap();
//! assert!(load_graph(&graph).is_ok());
//! std::fs::write(dir.path().join("model.weights"), [3, 5]).unwrap(); // replaced
//! let err = load_graph(&graph).unwrap_err();
//! assert!(err.to_string().contains("do not match the lock"));
//! ```
//!
//! ## Also here
//!
//! [`plan_external_weights`] and [`WeightPlan`] (plan once, then read constants in any order
//! or stream them), [`GraphJson::validate`], the sidecar readers ([`formats`]), [`parse_webnn`] and
//! [`to_webnn_text`]. The SafeTensors writer (`write_external_weights_safetensors`), atomic
//! file installation and the WGWT blob tools live in the `webnn-weights-tools` crate, used by
//! the CLI. With the feature `webnn-graph`, `webnn_graph_compat` converts graphs to and from
//! `webnn_graph::ast::GraphJson` (what rustnn takes) and offers a drop-in
//! `resolve_external_weights` for that type; `EmbeddedGraph::to_webnn_graph` hands an
//! embedded graph over. With the feature `ring`, weights locks are hashed by `ring`'s assembly
//! (fast in unoptimized builds).
//!
//! ## Features
//!
//! By default the crate holds what an embedded graph needs: [`EmbeddedGraph`] and its typed
//! views, the graph model and GraphJson, validation. `text` adds the `.webnn` text format
//! ([`parse_webnn`], [`to_webnn_text`]); `load` adds `text` and everything that reads files
//! at run time (graph files, [`GraphLoader`], the resolver, the sidecar readers, locks,
//! graphs embedded with `Embedding::Runtime`); `f16` adds [`EmbeddedConstant::as_f16`];
//! `ring` and `webnn-graph` imply `load`. Each gated item says which feature it needs.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Unsafe code, each with its `// SAFETY:` comment (docs/embedding.md, "Unsafe code", lists
// them, checked by tests/tests/unsafe_inventory.rs): mapping a sidecar read-only
// (`resolve::storage::map_read_only`), the slice over linked data once its ends are
// checked (`embed::linked`), and the text of an inline `Name` (`graph::name`). Byte views
// of typed slices go through `bytemuck`'s checked casts.
#![deny(unsafe_code)]

// The modules are layers; `LAYERS` gives their order and what each holds.
mod embed;
mod error;
mod graph;
mod json_keys;
#[cfg(feature = "load")]
mod load;
#[cfg(feature = "load")]
mod resolve;
#[cfg(feature = "load")]
mod sidecar;
#[cfg(feature = "webnn-graph")]
#[cfg_attr(docsrs, doc(cfg(feature = "webnn-graph")))]
pub mod webnn_graph_compat;

/// The crate's top-level modules from the bottom up, each importing (`crate::…`, or a name
/// the crate root re-exports) only from those before it; `layer_tests` reads the sources and
/// fails on an import that goes up. `graph`, `sidecar` and `resolve` order their own modules
/// the same way, each with its own `LAYERS`.
#[cfg(test)]
const LAYERS: [(&str, &str); 8] = [
    ("json_keys", "the one rule for repeated JSON keys"),
    ("graph", "the graph model, its two formats, validation"),
    ("sidecar", "sidecar readers: files -> catalog, no graph"),
    ("resolve", "rules, plan, storage, materialization"),
    ("error", "the crate's Error and Report"),
    ("load", "graph files and GraphLoader"),
    ("embed", "graphs embedded at build time"),
    ("webnn_graph_compat", "the bridge to webnn-graph's types"),
];

/// The macro's ABI: what `include_webnn_graph!` expands to (outside semver).
#[doc(hidden)]
pub use embed::abi as __macro;
pub use embed::{EmbedError, EmbedErrorKind, EmbeddedConstant, EmbeddedGraph, CONSTANT_ALIGNMENT};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use error::Error;
pub use error::Report;
pub use graph::dtype::DataType;
pub use graph::json::{
    parse_graph_json, write_graph_json, GraphFileFormat, GraphJsonError, JsonStyle,
};
pub use graph::name::Name;
pub use graph::node_options::{NodeOptions, NodeOptionsIter};
#[cfg(feature = "text")]
#[cfg_attr(docsrs, doc(cfg(feature = "text")))]
pub use graph::text::{
    parse_webnn, to_webnn_text, write_webnn_text, ParseError, TextOutputError, WriteTextError,
};
pub use graph::validate::ValidationError;
pub use graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc};
#[cfg(feature = "mmap")]
#[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
pub use load::load_graph_mapped;
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use load::{load_graph, parse_graph_text, read_graph_file, GraphLoader};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use resolve::{
    plan_external_weights, resolve_external_weights, ConstantReader, Conversion, LockEntry,
    LockProblem, PlannedConstant, ResolveError, Sidecar, SidecarKind, WeightPlan, WeightsLock,
};
#[cfg(feature = "load")]
#[cfg_attr(docsrs, doc(cfg(feature = "load")))]
pub use sidecar::{formats, manifest, StoredFile};
pub use webnn_weights_macro::include_webnn_graph;

#[cfg(test)]
mod layer_tests {
    //! The one check behind every `LAYERS` of the crate (its top-level modules, and the
    //! modules of `graph/`, `sidecar/` and `resolve/`): read a level's sources, find every
    //! path each file names through `crate::` or `super::`, follow the re-exports of the
    //! crate root and of the level's own root file, and report a path that reaches a layer
    //! not below the file's own. Comments and test code are left out.

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use webnn_weights_test_support::code_without_tests as code;

    /// A module path from the crate root (`["resolve", "plan"]`).
    type ModPath = Vec<String>;

    /// One level of layers: the modules of one folder.
    struct Level<'a> {
        /// The folder's module path (empty for the crate's top-level modules).
        path: ModPath,
        /// Its `LAYERS`, from the bottom up.
        layers: &'a [(&'a str, &'a str)],
        /// The names re-exported by the crate root and by the level's root file: module ->
        /// name -> the path it comes from.
        exports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    }

    /// The paths of the use tree at the start of `s`, each with the name it binds: `a::b`
    /// binds `b`, `a::{self, b::c as d}` binds `a` and `d`. Stops at what is not a path, so
    /// `f::g(x)` is `f::g`.
    fn use_tree(s: &str) -> Vec<(ModPath, String)> {
        fn tree<'s>(
            mut s: &'s str,
            prefix: &mut ModPath,
            out: &mut Vec<(ModPath, String)>,
        ) -> &'s str {
            let depth = prefix.len();
            loop {
                s = s.trim_start();
                if let Some(group) = s.strip_prefix('{') {
                    s = group;
                    while !s.trim_start().starts_with('}') {
                        let rest = tree(s, prefix, out).trim_start();
                        match rest.strip_prefix(',') {
                            Some(after) => s = after,
                            None if rest.len() < s.len() => s = rest,
                            None => break,
                        }
                    }
                    s = s.trim_start().strip_prefix('}').unwrap_or(s);
                    break;
                }
                let end = s
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '*'))
                    .unwrap_or(s.len());
                if end == 0 {
                    break;
                }
                if &s[..end] != "self" {
                    prefix.push(s[..end].to_string());
                }
                s = &s[end..];
                if let Some(rest) = s.strip_prefix("::") {
                    s = rest;
                    continue;
                }
                let mut name = prefix.last().cloned().unwrap_or_default();
                if let Some(alias) = s.trim_start().strip_prefix("as ") {
                    let alias = alias.trim_start();
                    let end = alias
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(alias.len());
                    name = alias[..end].to_string();
                    s = &alias[end..];
                }
                out.push((prefix.clone(), name));
                break;
            }
            prefix.truncate(depth);
            s
        }
        let mut out = Vec::new();
        tree(s, &mut Vec::new(), &mut out);
        out
    }

    /// Every path that `code` (of the module `module`) names through `crate::` or
    /// `super::`, as a path from the crate root.
    fn named_paths(code: &str, module: &[String]) -> Vec<ModPath> {
        let mut out = Vec::new();
        let starts = code
            .match_indices("crate::")
            .chain(code.match_indices("super::"));
        for (at, _) in starts {
            // Not the middle of a path (`super::super::`), nor `$crate::`, nor `a_crate::`.
            let before = &code[..at];
            if before.ends_with("::")
                || before
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                continue;
            }
            let mut rest = &code[at..];
            let base = match rest.strip_prefix("crate::") {
                Some(after) => {
                    rest = after;
                    Vec::new()
                }
                None => {
                    let mut up = 0;
                    while let Some(after) = rest.strip_prefix("super::") {
                        rest = after;
                        up += 1;
                    }
                    match module.len().checked_sub(up) {
                        Some(keep) => module[..keep].to_vec(),
                        None => continue,
                    }
                }
            };
            for (path, _) in use_tree(rest) {
                out.push(base.iter().cloned().chain(path).collect());
            }
        }
        out
    }

    /// The names that the `pub use` statements of `code` (the file of module `module`)
    /// re-export, each with the path from the crate root it comes from.
    fn exports(code: &str, module: &[String]) -> BTreeMap<String, ModPath> {
        let mut out = BTreeMap::new();
        for statement in code.split(';') {
            // An item starts on a line of its own, after its attributes.
            let s = statement
                .rfind("\npub")
                .map_or(statement, |at| &statement[at + 1..]);
            let Some(s) = s.trim_start().strip_prefix("pub") else {
                continue;
            };
            let s = match s.strip_prefix('(') {
                Some(restricted) => restricted.split_once(')').map_or("", |(_, rest)| rest),
                None => s,
            };
            let Some(tree) = s.trim_start().strip_prefix("use ") else {
                continue;
            };
            for (path, name) in use_tree(tree) {
                let from = if path.first().is_some_and(|first| first == "crate") {
                    path[1..].to_vec()
                } else {
                    module.iter().cloned().chain(path).collect()
                };
                out.insert(name, from);
            }
        }
        out
    }

    impl Level<'_> {
        /// The layer of this level that `path` (from the crate root) reaches, following
        /// re-exports.
        fn layer_of(&self, path: &[String]) -> Option<String> {
            let mut path = path.to_vec();
            // Re-exports lead on; a few steps reach any definition.
            for _ in 0..8 {
                if let Some(first) = path
                    .strip_prefix(self.path.as_slice())
                    .and_then(|below| below.first())
                {
                    if self.layers.iter().any(|(layer, _)| layer == first) {
                        return Some(first.clone());
                    }
                }
                let (module, names) = self.exports.iter().find(|(module, names)| {
                    path.strip_prefix(module.as_slice())
                        .and_then(|below| below.first())
                        .is_some_and(|name| names.contains_key(name))
                })?;
                let mut next = names[&path[module.len()]].clone();
                next.extend_from_slice(&path[module.len() + 1..]);
                path = next;
            }
            None
        }

        /// The layers that `code`, a file of module `module` in layer `layer`, imports
        /// although they are not below `layer`.
        fn upward(&self, layer: &str, module: &[String], code: &str) -> BTreeSet<String> {
            let rank = |l: &str| self.layers.iter().position(|(name, _)| *name == l);
            let own = rank(layer).expect("a layer of LAYERS");
            named_paths(code, module)
                .iter()
                .filter_map(|path| self.layer_of(path))
                .filter(|to| rank(to).is_some_and(|r| r >= own) && to != layer)
                .collect()
        }
    }

    /// The `.rs` files under `dir` with their module paths below `module`, test files
    /// (`tests.rs`) left out.
    fn files(dir: &Path, module: &[String], out: &mut Vec<(PathBuf, ModPath)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let mut below = module.to_vec();
            below.push(stem.clone());
            if path.is_dir() {
                files(&path, &below, out);
            } else if path.extension().is_some_and(|e| e == "rs") && stem != "tests" {
                out.push((
                    path,
                    if stem == "mod" {
                        module.to_vec()
                    } else {
                        below
                    },
                ));
            }
        }
    }

    /// Fails unless every module of the folder `level` (below `src/`, `""` for the crate's
    /// top-level modules) is in `layers` and imports only from the layers before its own.
    pub(crate) fn assert_layered(level: &str, layers: &[(&str, &str)]) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let dir = src.join(level);
        let path: ModPath = level
            .split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let root = if path.is_empty() { "lib.rs" } else { "mod.rs" };
        let read = |file: &Path| code(&std::fs::read_to_string(file).unwrap());
        let mut exports = BTreeMap::from([(Vec::new(), exports(&read(&src.join("lib.rs")), &[]))]);
        exports.insert(path.clone(), self::exports(&read(&dir.join(root)), &path));
        let level = Level {
            path,
            layers,
            exports,
        };
        let mut all = Vec::new();
        files(&dir, &level.path, &mut all);
        let mut problems = Vec::new();
        let mut layered = BTreeSet::new();
        for (file, module) in &all {
            if file == &dir.join(root) {
                continue;
            }
            let layer = &module[level.path.len()];
            if !layers.iter().any(|(name, _)| name == layer) {
                problems.push(format!("{}: `{layer}` is not in LAYERS", file.display()));
                continue;
            }
            layered.insert(layer.as_str());
            let found = level.upward(layer, module, &read(file));
            if !found.is_empty() {
                problems.push(format!(
                    "{} ({layer}) imports {found:?}, not below it",
                    file.display()
                ));
            }
        }
        let listed: BTreeSet<&str> = layers.iter().map(|(name, _)| *name).collect();
        for missing in listed.difference(&layered) {
            problems.push(format!("`{missing}` of LAYERS has no file"));
        }
        if listed.len() != layers.len() {
            problems.push("a module is listed twice in LAYERS".to_string());
        }
        let order: Vec<&str> = layers.iter().map(|(name, _)| *name).collect();
        assert!(
            problems.is_empty(),
            "the layers of {} (bottom up: {}) are broken:\n{}",
            dir.display(),
            order.join(", "),
            problems.join("\n")
        );
    }

    #[test]
    fn the_crate_s_modules_are_layered() {
        assert_layered("", &super::LAYERS);
    }

    /// `level` (module path, layers) with the re-exports of a crate root and of the
    /// level's root file given as text.
    fn planted<'a>(
        path: &[&str],
        layers: &'a [(&'a str, &'a str)],
        crate_root: &str,
        level_root: &str,
    ) -> Level<'a> {
        let path: ModPath = path.iter().map(|s| s.to_string()).collect();
        let mut exports = BTreeMap::from([(Vec::new(), exports(&code(crate_root), &[]))]);
        if !path.is_empty() {
            exports.insert(path.clone(), self::exports(&code(level_root), &path));
        }
        Level {
            path,
            layers,
            exports,
        }
    }

    fn module(path: &str) -> ModPath {
        path.split("::").map(String::from).collect()
    }

    #[test]
    fn a_planted_upward_import_is_found() {
        let layers = [("base", ""), ("graph", ""), ("resolve", ""), ("load", "")];
        let root = "mod graph;\n#[doc(hidden)]\npub use load::Loader as Opener;\n\
                    pub use resolve::{plan, Plan};\npub use graph::text;\n";
        let level = planted(&[], &layers, root, "");
        let source = "use crate::resolve::X;\nuse crate::{base::y, Opener, text::Z};\n\
                      fn f() { super::super::load::go(); }\n// use crate::load::x;\n\
                      #[cfg(test)]\nmod tests {\n    use crate::load::Loader;\n}\n";
        let found = level.upward("graph", &module("graph::json"), &code(source));
        assert_eq!(found, BTreeSet::from(["load".into(), "resolve".into()]));
        // A circle has an edge that goes up: the one from below.
        let up = |layer: &str, source: &str| level.upward(layer, &module(layer), &code(source));
        assert!(up("resolve", "use crate::graph::G;").is_empty());
        assert_eq!(
            up("graph", "use crate::Plan;"),
            BTreeSet::from(["resolve".into()])
        );
        assert!(up("load", "use crate::{Plan, text::T};").is_empty());
    }

    #[test]
    fn a_planted_upward_import_is_found_inside_a_level() {
        let layers = [("model", ""), ("rules", ""), ("plan", "")];
        let level = planted(
            &["resolve"],
            &layers,
            "mod resolve;\npub use resolve::{Plan, Thing};\n",
            "mod model;\npub use plan::Plan;\npub(crate) use model::Thing;\n",
        );
        let rules = module("resolve::rules");
        let up = |source: &str| level.upward("rules", &rules, &code(source));
        assert_eq!(
            up("use super::{model::A, plan::B};\nuse crate::Thing;\n"),
            BTreeSet::from(["plan".into()])
        );
        assert_eq!(
            up("fn f() -> crate::Plan {}"),
            BTreeSet::from(["plan".into()])
        );
        assert_eq!(
            up("use crate::resolve::Plan;"),
            BTreeSet::from(["plan".into()])
        );
        assert!(up("use super::model::{self, A};\nuse crate::resolve::Thing;").is_empty());
        // Below the level's folder, `super::` counts from the file's module.
        let deep = module("resolve::rules::names");
        assert_eq!(
            level.upward("rules", &deep, "use super::super::plan::P;"),
            BTreeSet::from(["plan".into()])
        );
        assert!(level.upward("rules", &deep, "use super::Rule;").is_empty());
    }
}
