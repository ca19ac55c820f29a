//! What a crate's sources import from the crate itself, read as text: the paths each file
//! names through `crate::` and `super::`, the names a root file re-exports, and the files of
//! a source folder with their module paths. The structure tests build on it: the runtime's
//! layers ([`crate::layers::assert_layered`]) and the import circles of every crate
//! ([`crate::layers::import_cycle`]).
//!
//! Comments and test code are left out of what is read (see [`crate::code_without_tests`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path from the crate root (`["resolve", "plan"]`; empty for the root).
pub type ModPath = Vec<String>;

/// A path that a file names, resolved against the file's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A path from the crate root (`crate::a::b`, or `super::b` in module `a::c`).
    Path(ModPath),
    /// A `super::` chain that climbs past the crate root (`super::super::x` in module `a`):
    /// the source text as written, up to the first name.
    PastRoot(String),
}

/// The paths of the use tree at the start of `s`, each with the name it binds: `a::b`
/// binds `b`, `a::{self, b::c as d}` binds `a` and `d`. Stops at what is not a path, so
/// `f::g(x)` is `f::g`.
///
/// ```
/// use webnn_weights_test_support::imports::use_tree;
/// let paths = use_tree("a::{self, b::c as d}; fn x() {}");
/// let names: Vec<_> = paths.iter().map(|(path, name)| (path.join("::"), name.as_str())).collect();
/// assert_eq!(names, [("a".to_string(), "a"), ("a::b::c".to_string(), "d")]);
/// ```
pub fn use_tree(s: &str) -> Vec<(ModPath, String)> {
    fn tree<'s>(mut s: &'s str, prefix: &mut ModPath, out: &mut Vec<(ModPath, String)>) -> &'s str {
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

/// Every path that `code` (the source of module `module`, comments and tests already left
/// out) names through `crate::` or `super::`, resolved from the crate root; a `super::`
/// chain longer than the module is deep is [`Named::PastRoot`], never skipped.
///
/// ```
/// use webnn_weights_test_support::imports::{named_paths, Named};
/// let module = vec!["resolve".to_string(), "plan".to_string()];
/// let named = named_paths("use super::model::A;\nfn f() { super::super::super::x(); }", &module);
/// assert_eq!(named[0], Named::Path(vec!["resolve".into(), "model".into(), "A".into()]));
/// assert_eq!(named[1], Named::PastRoot("super::super::super::x".into()));
/// ```
pub fn named_paths(code: &str, module: &[String]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut starts: Vec<usize> = code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
        .map(|(at, _)| at)
        .collect();
    starts.sort_unstable();
    for at in starts {
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
                    None => {
                        let name_len = rest
                            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .unwrap_or(rest.len());
                        let written = code.len() - rest.len() + name_len - at;
                        out.push(Named::PastRoot(code[at..at + written].to_string()));
                        continue;
                    }
                }
            }
        };
        for (path, _) in use_tree(rest) {
            out.push(Named::Path(base.iter().cloned().chain(path).collect()));
        }
    }
    out
}

/// An item's text without its leading visibility (`pub`, `pub(crate)`, `pub(super)`, …)
/// and the spaces around it.
fn without_visibility(item: &str) -> &str {
    let item = item.trim_start();
    let rest = match item.strip_prefix("pub") {
        Some(rest) => match rest.strip_prefix('(') {
            Some(restricted) => restricted.split_once(')').map_or("", |(_, r)| r),
            None => rest,
        },
        None => item,
    };
    rest.trim_start()
}

/// The modules that `code` (a root file: `lib.rs`, `main.rs` or a `mod.rs`) declares with
/// `mod name;` or `mod name {`, whatever their visibility and attributes.
pub fn declared_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        if let Some(rest) = without_visibility(line).strip_prefix("mod ") {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The names that the `use` statements of `code` (the root file of module `module`) bind,
/// each with the path from the crate root it comes from, or `None` for a path outside the
/// crate (`std::…`, another crate): `pub use`, `pub(crate) use` and a private `use` alike
/// (a child module reaches its parent's private imports through `super::`). Paths into the
/// crate are those through `crate::`, `self::`, `super::` or a module the file declares
/// (`mod a;` then `use a::X;`).
///
/// ```
/// use webnn_weights_test_support::imports::exports;
/// let root = "mod plan;\npub use plan::{Plan, make as plan_it};\nuse std::path::Path;\n";
/// let names = exports(root, &["resolve".to_string()]);
/// assert_eq!(names["Plan"].as_deref().unwrap(), ["resolve", "plan", "Plan"]);
/// assert_eq!(names["plan_it"].as_deref().unwrap(), ["resolve", "plan", "make"]);
/// assert_eq!(names["Path"], None);
/// ```
pub fn exports(code: &str, module: &[String]) -> BTreeMap<String, Option<ModPath>> {
    let local = declared_modules(code);
    let mut out = BTreeMap::new();
    for statement in code.split(';') {
        // An item starts on a line of its own, after its attributes.
        let Some(line) = statement
            .lines()
            .map(str::trim_start)
            .rfind(|l| l.starts_with("use ") || l.starts_with("pub"))
        else {
            continue;
        };
        let at = line.as_ptr() as usize - statement.as_ptr() as usize;
        let Some(tree) = without_visibility(&statement[at..]).strip_prefix("use ") else {
            continue;
        };
        for (path, name) in use_tree(tree) {
            let Some(first) = path.first() else { continue };
            let from = match first.as_str() {
                "crate" => Some(path[1..].to_vec()),
                "super" => {
                    let up = path.iter().take_while(|p| *p == "super").count();
                    let Some(keep) = module.len().checked_sub(up) else {
                        continue;
                    };
                    Some(
                        module[..keep]
                            .iter()
                            .cloned()
                            .chain(path[up..].iter().cloned())
                            .collect(),
                    )
                }
                first if local.contains(first) => {
                    Some(module.iter().cloned().chain(path).collect())
                }
                _ => None,
            };
            out.insert(name, from);
        }
    }
    out
}

/// The `.rs` files under `dir` (the folder of module `module`), each with its module path
/// (`x/mod.rs` is `x`; a crate's `src/lib.rs` or `src/main.rs` is the root, the empty
/// path), test files (`tests.rs`) left out, sorted by path.
pub fn source_files(dir: &Path, module: &[String]) -> Vec<(PathBuf, ModPath)> {
    fn walk(dir: &Path, module: &[String], out: &mut Vec<(PathBuf, ModPath)>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{} cannot be read: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a readable entry").path();
            let stem = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let mut below = module.to_vec();
            below.push(stem.clone());
            if path.is_dir() {
                walk(&path, &below, out);
            } else if path.extension().is_some_and(|e| e == "rs") && stem != "tests" {
                let root =
                    stem == "mod" || (module.is_empty() && (stem == "lib" || stem == "main"));
                let module = if root { module.to_vec() } else { below };
                out.push((path, module));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, module, &mut out);
    out.sort();
    out
}
