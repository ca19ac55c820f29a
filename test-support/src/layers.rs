//! The structure checks over a crate's sources, built on [`crate::imports`]:
//!
//! - [`assert_layered`]: the modules of one folder are layers in a stated order, each
//!   importing only from those below it; a module that names an item of the folder's root
//!   file (`mod.rs`, `lib.rs`: above every layer) goes up too, and so does a `super::`
//!   chain that climbs past the crate root.
//! - [`module_imports`] and [`import_cycle`]: the crate's top-level modules import each
//!   other in no circle.

use crate::imports::{declared_modules, exports, named_paths, ModPath, Named};
use crate::syntax::crate_files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where a path named by a file of a level leads.
#[derive(Debug, PartialEq, Eq)]
enum Reach {
    /// A module of the level: one of its layers.
    Layer(String),
    /// An item defined in the level's root file, above every layer: its path.
    Root(ModPath),
}

/// One level of layers: the modules of one folder.
struct Level<'a> {
    /// The folder's module path (empty for the crate's top-level modules).
    path: ModPath,
    /// Its layers, from the bottom up.
    layers: &'a [(&'a str, &'a str)],
    /// The level's root file, as named in messages (`lib.rs`, `mod.rs`).
    root_file: &'static str,
    /// The names imported by the crate root and by the level's root file: module ->
    /// name -> the path it comes from.
    exports: BTreeMap<ModPath, BTreeMap<String, Option<ModPath>>>,
}

impl<'a> Level<'a> {
    /// The level of the folder `path` with its `layers`, whose root file is `level_root`
    /// (code without tests) in a crate whose root file is `crate_root`; at the top level
    /// (`path` empty) the two are one file, and `level_root` is `None`.
    fn new(
        path: ModPath,
        layers: &'a [(&'a str, &'a str)],
        crate_root: &syn::File,
        level_root: Option<&syn::File>,
    ) -> Level<'a> {
        let mut imports = BTreeMap::from([(Vec::new(), exports(crate_root, &[]))]);
        if let Some(level_root) = level_root {
            imports.insert(path.clone(), exports(level_root, &path));
        }
        Level {
            root_file: if path.is_empty() { "lib.rs" } else { "mod.rs" },
            path,
            layers,
            exports: imports,
        }
    }
}

impl Level<'_> {
    /// Where `path` (from the crate root) leads within this level, following imports of
    /// the level's root file and of the crate root; `None` for paths that leave the level.
    fn reach(&self, path: &[String]) -> Option<Reach> {
        let mut path = path.to_vec();
        // Imports lead on; a few steps reach any definition.
        for _ in 0..8 {
            let below = path.strip_prefix(self.path.as_slice()).unwrap_or(&[]);
            if let Some(first) = below.first() {
                if self.layers.iter().any(|(layer, _)| layer == first) {
                    return Some(Reach::Layer(first.clone()));
                }
            }
            let found = self.exports.iter().rev().find(|(module, names)| {
                path.strip_prefix(module.as_slice())
                    .and_then(|below| below.first())
                    .is_some_and(|name| names.contains_key(name))
            });
            match found {
                Some((module, names)) => {
                    // An import from outside the crate leaves the level.
                    let mut next = names[&path[module.len()]].clone()?;
                    next.extend_from_slice(&path[module.len() + 1..]);
                    path = next;
                }
                // Inside the level, neither a layer nor an import: defined in the root file.
                None if !below.is_empty() => return Some(Reach::Root(path)),
                None => return None,
            }
        }
        None
    }

    /// What `code`, a file of module `module` in layer `layer`, imports that is not below
    /// `layer`: the layers by name, the root file by its file name, and every `super::`
    /// chain past the crate root as written.
    fn upward(&self, layer: &str, module: &[String], code: &syn::File) -> BTreeSet<String> {
        let rank = |l: &str| self.layers.iter().position(|(name, _)| *name == l);
        let own = rank(layer).expect("a layer of the level");
        let mut out = BTreeSet::new();
        for named in named_paths(code, module) {
            match named {
                Named::PastRoot(written) => {
                    out.insert(format!("`{written}` (past the crate root)"));
                }
                Named::Path(path) => match self.reach(&path) {
                    Some(Reach::Layer(to)) if rank(&to).is_some_and(|r| r > own) => {
                        out.insert(to);
                    }
                    Some(Reach::Root(item)) => {
                        out.insert(format!("{} (`{}`)", self.root_file, item.join("::")));
                    }
                    _ => {}
                },
            }
        }
        out
    }
}

/// Fails unless every module of the folder `level` below the crate's `src` (`""` for the
/// crate's top-level modules, `"resolve"` for those of `src/resolve/`) is one of `layers`
/// (name, what it holds; from the bottom up) and imports only from the layers before its
/// own: through `crate::`, `super::` or a name imported by the crate root or the folder's
/// root file. Naming an item defined in the root file itself fails too (the root sits above
/// every layer), and so does a `super::` chain past the crate root. The files are those of
/// the crate's module tree (from `src/lib.rs`, see [`crate::syntax::crate_files`]), test
/// code left out. The message names every offending file.
pub fn assert_layered(src: &Path, level: &str, layers: &[(&str, &str)]) {
    let dir = src.join(level);
    let path: ModPath = level
        .split('/')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let files = crate_files(&src.join("lib.rs"));
    let code_of = |module: &ModPath| {
        files
            .iter()
            .find(|f| &f.module == module)
            .map(|f| &f.code)
            .unwrap_or_else(|| panic!("{}: no module `{}`", src.display(), module.join("::")))
    };
    let crate_root = code_of(&Vec::new());
    // At the top level the crate root is the level's root too.
    let level_root = (!path.is_empty()).then(|| code_of(&path));
    let level = Level::new(path, layers, crate_root, level_root);
    let mut problems = Vec::new();
    let mut layered = BTreeSet::new();
    for file in &files {
        let module = &file.module;
        if module.len() <= level.path.len() || !module.starts_with(&level.path) {
            continue;
        }
        let layer = &module[level.path.len()];
        if !layers.iter().any(|(name, _)| name == layer) {
            problems.push(format!("{}: `{layer}` is not a layer", file.path.display()));
            continue;
        }
        layered.insert(layer.clone());
        let found = level.upward(layer, module, &file.code);
        if !found.is_empty() {
            problems.push(format!(
                "{} ({layer}) imports {found:?}, not below it",
                file.path.display()
            ));
        }
    }
    let listed: BTreeSet<String> = layers.iter().map(|(name, _)| name.to_string()).collect();
    for missing in listed.difference(&layered) {
        problems.push(format!("layer `{missing}` has no file"));
    }
    if listed.len() != layers.len() {
        problems.push("a module is listed twice among the layers".to_string());
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

/// The imports between the top-level modules of a crate: `root` is the root file's code
/// (`lib.rs` or `main.rs`), `files` every other file's module path and code (test code
/// already out: see [`crate::syntax::code`]). Returns the edges (module -> the other
/// top-level modules it names, through `crate::`, `super::` or a name the root imports)
/// and the problems found on the way (a `super::` chain past the crate root, naming the
/// module).
///
/// ```
/// use std::path::Path;
/// use webnn_weights_test_support::layers::{import_cycle, module_imports};
/// use webnn_weights_test_support::syntax::code;
/// let parse = |text: &str| code(Path::new("planted.rs"), text);
/// let root = parse("mod a;\nmod b;\npub use b::Thing;\n");
/// let files = [
///     (vec!["a".to_string()], parse("use crate::Thing;")),
///     (vec!["b".to_string(), "x".to_string()], parse("use super::super::a::f;")),
/// ];
/// let (edges, problems) = module_imports(&root, &files);
/// assert!(problems.is_empty());
/// assert_eq!(import_cycle(&edges).unwrap(), ["a", "b", "a"]);
/// ```
pub fn module_imports(
    root: &syn::File,
    files: &[(ModPath, syn::File)],
) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let modules = declared_modules(root);
    // The top-level modules as the layers of the top level, in no order: `reach` follows
    // the root's imports to the module that defines a name.
    let layers: Vec<(&str, &str)> = modules.iter().map(|m| (m.as_str(), "")).collect();
    let level = Level::new(Vec::new(), &layers, root, None);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (module, code) in files {
        let Some(top) = module.first() else { continue };
        let to = edges.entry(top.clone()).or_default();
        for named in named_paths(code, module) {
            match named {
                Named::Path(path) => {
                    if let Some(Reach::Layer(target)) = level.reach(&path) {
                        if target != *top {
                            to.insert(target);
                        }
                    }
                }
                Named::PastRoot(written) => problems.push(format!(
                    "`{}`: `{written}` climbs past the crate root",
                    module.join("::")
                )),
            }
        }
    }
    (edges, problems)
}

/// A circle of the graph `edges`, as the modules along it (the first one again at the
/// end), if there is one.
pub fn import_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut found = path[start..].to_vec();
            found.push(at.to_string());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

/// A crate's root file's code and every other file's module path and code, for
/// [`module_imports`]: `src` is the crate's `src/` folder, its root `lib.rs` or else
/// `main.rs`; the files are those of its module tree (see [`crate::syntax::crate_files`]),
/// test code left out. The programs in `src/bin/` are crates of their own and are left out.
pub fn read_crate(src: &Path) -> (syn::File, Vec<(ModPath, syn::File)>) {
    let root = ["lib.rs", "main.rs"]
        .map(|name| src.join(name))
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{} has no lib.rs or main.rs", src.display()));
    let mut files = crate_files(&root).into_iter();
    let root = files.next().expect("the root file comes first").code;
    (root, files.map(|f| (f.module, f.code)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code of a planted source, tests left out.
    fn code(text: &str) -> syn::File {
        crate::syntax::code(Path::new("planted.rs"), text)
    }

    /// `level` (module path, layers) with the imports of a crate root and of the level's
    /// root file given as text (none at the top level).
    fn planted<'a>(
        path: &[&str],
        layers: &'a [(&'a str, &'a str)],
        crate_root: &str,
        level_root: &str,
    ) -> Level<'a> {
        let path: ModPath = path.iter().map(|s| s.to_string()).collect();
        let level_root = (!path.is_empty()).then(|| code(level_root));
        Level::new(path, layers, &code(crate_root), level_root.as_ref())
    }

    fn module(path: &str) -> ModPath {
        path.split("::").map(String::from).collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_planted_upward_import_is_found() {
        let layers = [("base", ""), ("graph", ""), ("resolve", ""), ("load", "")];
        let root = "mod base;\nmod graph;\nmod resolve;\nmod load;\n#[doc(hidden)]\n\
                    pub use load::Loader as Opener;\n\
                    pub use resolve::{plan, Plan};\npub use graph::text;\n";
        let level = planted(&[], &layers, root, "");
        let source = "use crate::resolve::X;\nuse crate::{base::y, Opener, text::Z};\n\
                      fn f() { super::super::load::go(); }\n// use crate::load::x;\n\
                      #[cfg(test)]\nmod tests {\n    use crate::load::Loader;\n}\n";
        let found = level.upward("graph", &module("graph::json"), &code(source));
        assert_eq!(found, set(&["load", "resolve"]));
        // A circle has an edge that goes up: the one from below.
        let up = |layer: &str, source: &str| level.upward(layer, &module(layer), &code(source));
        assert!(up("resolve", "use crate::graph::G;").is_empty());
        assert_eq!(up("graph", "use crate::Plan;"), set(&["resolve"]));
        assert!(up("load", "use crate::{Plan, text::T};").is_empty());
    }

    #[test]
    fn a_planted_upward_import_is_found_inside_a_level() {
        let layers = [("model", ""), ("rules", ""), ("plan", "")];
        let level = planted(
            &["resolve"],
            &layers,
            "mod resolve;\npub use resolve::{Plan, Thing};\n",
            "mod model;\nmod rules;\nmod plan;\npub use plan::Plan;\npub(crate) use model::Thing;\n",
        );
        let rules = module("resolve::rules");
        let up = |source: &str| level.upward("rules", &rules, &code(source));
        assert_eq!(
            up("use super::{model::A, plan::B};\nuse crate::Thing;\n"),
            set(&["plan"])
        );
        assert_eq!(up("fn f() -> crate::Plan {}"), set(&["plan"]));
        assert_eq!(up("use crate::resolve::Plan;"), set(&["plan"]));
        assert!(up("use super::model::{self, A};\nuse crate::resolve::Thing;").is_empty());
        // Below the level's folder, `super::` counts from the file's module.
        let deep = module("resolve::rules::names");
        assert_eq!(
            level.upward("rules", &deep, &code("use super::super::plan::P;")),
            set(&["plan"])
        );
        assert!(level
            .upward("rules", &deep, &code("use super::Rule;"))
            .is_empty());
    }

    #[test]
    fn a_planted_super_chain_past_the_crate_root_is_found() {
        let layers = [("model", ""), ("rules", "")];
        let level = planted(
            &["resolve"],
            &layers,
            "mod resolve;\n",
            "mod model;\nmod rules;\n",
        );
        // Three steps up from `resolve::rules` leave the crate: once skipped without a word.
        let found = level.upward(
            "rules",
            &module("resolve::rules"),
            &code("fn f() { super::super::super::plan::go(); }"),
        );
        assert_eq!(
            found,
            set(&["`super::super::super::plan` (past the crate root)"])
        );
        let (_, problems) = module_imports(
            &code("mod a;\n"),
            &[(module("a"), code("use super::super::b::X;"))],
        );
        assert_eq!(
            problems,
            ["`a`: `super::super::b` climbs past the crate root"]
        );
    }

    #[test]
    fn a_planted_import_of_the_root_file_is_found() {
        let layers = [("model", ""), ("plan", "")];
        let level = planted(
            &["resolve"],
            &layers,
            "mod resolve;\npub use resolve::resolve_all;\n",
            "mod model;\nmod plan;\nuse plan::Plan;\npub fn resolve_all() {}\n",
        );
        let up = |source: &str| level.upward("model", &module("resolve::model"), &code(source));
        // The root file's own items sit above every layer, by any path.
        assert_eq!(
            up("use super::resolve_all;"),
            set(&["mod.rs (`resolve::resolve_all`)"])
        );
        assert_eq!(
            up("use crate::resolve_all;"),
            set(&["mod.rs (`resolve::resolve_all`)"])
        );
        // A private import of the root file leads on to the layer it names.
        assert_eq!(up("use super::Plan;"), set(&["plan"]));
        // The crate root's items, seen from the top level.
        let top = [("a", ""), ("b", "")];
        let level = planted(&[], &top, "mod a;\nmod b;\npub fn helper() {}\n", "");
        assert_eq!(
            level.upward("a", &module("a"), &code("use crate::helper;")),
            set(&["lib.rs (`helper`)"])
        );
    }

    #[test]
    fn a_planted_circle_is_found() {
        let root = "mod a;\nmod b;\nmod c;\npub use c::{Thing, Other};\n";
        let files: Vec<(ModPath, syn::File)> = [
            ("a", "use crate::b::X;\n"),
            ("b", "use crate::{Thing, a::Y};\n// use crate::c::Z;\n"),
            (
                "c",
                "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\n",
            ),
        ]
        .into_iter()
        .map(|(m, t)| (module(m), code(t)))
        .collect();
        let (edges, problems) = module_imports(&code(root), &files);
        assert!(problems.is_empty());
        assert_eq!(edges["b"], set(&["a", "c"]));
        assert!(edges["c"].is_empty(), "test code and comments do not count");
        assert_eq!(
            import_cycle(&edges).unwrap(),
            ["a", "b", "a"].map(String::from).to_vec()
        );
        let mut acyclic = edges.clone();
        acyclic.get_mut("b").unwrap().remove("a");
        assert_eq!(import_cycle(&acyclic), None);
    }
}
