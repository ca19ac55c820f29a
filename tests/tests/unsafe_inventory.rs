//! The `unsafe` code of the repository is exactly what docs/embedding.md ("Unsafe code") lists:
//! per Rust file anywhere in the repository (crates, their tests and build scripts, the crates
//! outside the workspace), the number of `unsafe` keywords outside comments — blocks,
//! `unsafe fn`, `unsafe impl`, `unsafe extern`, `#[unsafe(…)]` (the macro's are in the code it
//! emits, string literals of its source). Each file is read as Rust tokens
//! (`webnn_weights_test_support::syntax::unsafe_keywords`); one that does not lex fails the
//! test, naming it.
//!
//! No file is left out, this one included: its `unsafe` are the string literals of its own
//! test patterns, and so are those of test-support's `syntax.rs` (the patterns of its tests
//! and the word `unsafe_keywords` looks for). Both are listed in the table with their counts,
//! and both say `#![forbid(unsafe_code)]` (this file, and test-support's `lib.rs` for the
//! crate), so the compiler rejects any `unsafe` code that would hide among the patterns.
// A test file that holds `unsafe` patterns: no `unsafe` code may hide among them.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, build output, git and npm folders left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | "node_modules") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `unsafe` keyword of `text`, the source of `file`, outside comments: blocks,
/// `unsafe fn`, `unsafe impl`, `unsafe extern`, `#[unsafe(…)]` attributes, and those in the
/// code the macro emits (string literals).
fn count_unsafe(file: &str, text: &str) -> usize {
    webnn_weights_test_support::syntax::unsafe_keywords(text).unwrap_or_else(|e| {
        panic!("{file}: {e}; the inventory reads every Rust file as tokens: fix the file")
    })
}

#[test]
fn comments_and_every_form_are_told_apart() {
    let count = |text: &str| count_unsafe("planted.rs", text);
    assert_eq!(
        count("// unsafe { }\n/* unsafe /* unsafe */ */ fn f() {}"),
        0
    );
    assert_eq!(
        count("unsafe impl A for B {}\nunsafe fn f() { unsafe { g() } }\n#[unsafe(no_mangle)]"),
        4
    );
    assert_eq!(count("let s = \"http://x\"; unsafe { f() }"), 1);
    assert_eq!(count("let c = '/'; let d = '/'; unsafe { f() }"), 1);
    assert_eq!(count("fn not_unsafe_code() {} // unsafe"), 0);
    assert_eq!(count("quote!(\"unsafe extern \\\"C\\\" {{\")"), 1);
    assert_eq!(count("/// unsafe\nunsafe extern \"C\" {}"), 1);
}

#[test]
fn every_unsafe_is_listed_in_the_docs() {
    let repo = repo();
    let mut found = BTreeMap::new();
    // Every Rust file of the repository: every crate's src, tests, benches, examples and
    // build scripts, the crates outside the workspace (web/, examples/web, examples/rustnn,
    // fuzz/), the browser's stubs, and the counting's own code and tests (their `unsafe`
    // are string literals, counted like any other).
    let mut files = Vec::new();
    sources(&repo, &mut files);
    assert!(
        files.len() > 100,
        "the repository's sources were found: {}",
        files.len()
    );
    for file in files {
        let name = file
            .strip_prefix(&repo)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let n = count_unsafe(&name, &std::fs::read_to_string(&file).unwrap());
        if n > 0 {
            found.insert(name, n);
        }
    }
    let docs = std::fs::read_to_string(repo.join("docs/embedding.md")).unwrap();
    let section = docs
        .split("### Unsafe code")
        .nth(1)
        .expect("docs/embedding.md has an \"Unsafe code\" section");
    let mut listed = BTreeMap::new();
    for line in section.lines().take_while(|l| !l.starts_with('#')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() > 3 && cells[1].starts_with('`') {
            let file = cells[1].split('`').nth(1).unwrap().to_string();
            if let Ok(n) = cells[2].parse::<usize>() {
                listed.insert(file, n);
            }
        }
    }
    assert_eq!(
        found, listed,
        "unsafe code in the sources vs docs/embedding.md"
    );
}
