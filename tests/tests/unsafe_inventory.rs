//! The `unsafe` code of the crates is exactly what docs/embedding.md ("Unsafe code") lists:
//! per source file under the `src/` of every workspace member, the number of `unsafe` blocks and `unsafe extern` declarations
//! (the macro's are in the code it emits).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `unsafe {` blocks and `unsafe extern` declarations outside comments.
fn count_unsafe(text: &str) -> usize {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .map(|code| code.matches("unsafe {").count() + code.matches("unsafe extern").count())
        .sum()
}

#[test]
fn every_unsafe_is_listed_in_the_docs() {
    let repo = repo();
    let mut found = BTreeMap::new();
    // Every member of the workspace, read from its Cargo.toml: a new crate is scanned too.
    let crates = webnn_weights_test_support::workspace_members();
    assert!(
        crates.len() >= 11,
        "the workspace's members were read: {crates:?}"
    );
    for krate in &crates {
        let mut files = Vec::new();
        sources(&repo.join(krate).join("src"), &mut files);
        for file in files {
            let n = count_unsafe(&std::fs::read_to_string(&file).unwrap());
            if n > 0 {
                let name = file
                    .strip_prefix(&repo)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                found.insert(name, n);
            }
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
