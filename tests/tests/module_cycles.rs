//! No import circle between the top-level modules of any crate: reads every crate's sources,
//! finds each module's `crate::…` paths (names re-exported at the crate root count as the
//! module that defines them) and fails on a cycle, naming it. Test code (as
//! `webnn_weights_test_support::code_without_tests` leaves it out, and files named `tests.rs`)
//! is left out. The runtime's modules are
//! checked more finely, as layers in a stated order (`LAYERS` in `weights-runtime/src/lib.rs`
//! and in its `graph/`, `sidecar/` and `resolve/`), by its `layer_tests`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_test_support::code_without_tests as code;

/// The crates whose modules are checked.
const CRATES: [&str; 7] = [
    "weights-runtime",
    "weights-build",
    "weights-artifacts",
    "weights-tools",
    "weights-atomic",
    "weights-cli",
    "weights-macro",
];

/// The identifiers a path list after `crate::` names: `a` in `crate::a::b`, and each of
/// `a, b` in `crate::{a, b::c}`.
fn named_after_crate(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        // `webnn_weights_crate::` or `$crate::` are other paths.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or("");
                out.extend(group.split(',').map(ident).filter(|n| !n.is_empty()));
            }
            None => out.push(ident(rest)),
        }
    }
    out
}

/// The module each name re-exported at the crate root comes from (`pub use m::{A, B};`,
/// `pub use m::x::A;`, `pub(crate) use m::A;`).
fn root_exports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in code(root).split(';') {
        let statement = statement.trim();
        let Some(path) = statement
            .strip_prefix("pub use ")
            .or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let module: String = path
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !modules.contains(&module) {
            continue;
        }
        let names = match path.find('{') {
            Some(open) => path[open + 1..].trim_end_matches('}').to_string(),
            None => path.rsplit("::").next().unwrap_or("").to_string(),
        };
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, test files left out.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
    out
}

/// Module -> the modules it imports, for the crate whose sources are `modules` (name ->
/// source texts) and whose root is `root`.
fn imports(
    root: &str,
    modules: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let exported = root_exports(root, &names);
    modules
        .iter()
        .map(|(module, texts)| {
            let mut to = BTreeSet::new();
            for text in texts {
                for name in named_after_crate(&code(text)) {
                    let target = if names.contains(&name) {
                        Some(&name)
                    } else {
                        exported.get(&name)
                    };
                    if let Some(target) = target.filter(|t| *t != module) {
                        to.insert(target.clone());
                    }
                }
            }
            (module.clone(), to)
        })
        .collect()
}

/// A cycle of the graph `edges`, as the modules along it, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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

/// The top-level modules of a crate's `src/` (a file `m.rs` and a folder `m/` are one
/// module) with their sources, and the root file's text.
fn crate_modules(src: &Path) -> (String, BTreeMap<String, Vec<String>>) {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.is_file())
        .unwrap();
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let files = if path.is_dir() {
            sources(&path)
        } else if path != root && path.extension().is_some_and(|e| e == "rs") {
            vec![path.clone()]
        } else {
            continue;
        };
        let texts = modules.entry(stem).or_default();
        texts.extend(files.iter().map(|f| fs::read_to_string(f).unwrap()));
    }
    (fs::read_to_string(root).unwrap(), modules)
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for krate in CRATES {
        let (root, modules) = crate_modules(&repo.join(krate).join("src"));
        let edges = imports(&root, &modules);
        if let Some(found) = cycle(&edges) {
            panic!(
                "{krate}: the modules import each other in a circle: {}",
                found.join(" -> ")
            );
        }
        checked += modules.len();
    }
    assert!(checked >= 20, "the crates' modules were read ({checked})");
}

#[test]
fn a_planted_circle_is_found() {
    let root = "mod a;\nmod b;\nmod c;\npub use c::{Thing, Other};\n";
    let modules: BTreeMap<String, Vec<String>> = [
        ("a", "use crate::b::X;\n"),
        ("b", "use crate::{Thing, a::Y};\n// use crate::c::Z;\n"),
        (
            "c",
            "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\n",
        ),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), vec![t.to_string()]))
    .collect();
    let edges = imports(root, &modules);
    assert_eq!(
        edges["b"],
        BTreeSet::from(["a".to_string(), "c".to_string()])
    );
    assert!(edges["c"].is_empty(), "test code and comments do not count");
    assert_eq!(
        cycle(&edges).unwrap(),
        ["a", "b", "a"].map(String::from).to_vec()
    );
    let mut acyclic = edges.clone();
    acyclic.get_mut("b").unwrap().remove("a");
    assert_eq!(cycle(&acyclic), None);
}
