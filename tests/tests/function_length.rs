//! No function of the published crates is longer than 80 lines: every function with a body
//! (free function, method, default method of a trait, function nested in another) in the
//! code of every workspace member whose `Cargo.toml` does not say `publish = false`, counted
//! from the line of its `fn` keyword to the line of its closing brace, both included
//! (attributes and doc comments above it are not counted). The code is each crate's module
//! tree from its root files (`src/lib.rs`, `src/main.rs`, `src/bin/`), as
//! `webnn_weights_test_support::syntax` reads it: test code (`#[cfg(test)]` items and the
//! files of test modules) is left out, and so are `tests/`, `examples/` and `benches/`
//! (no module of the tree). The reader does not follow `include!`, so the generated protobuf
//! code that `weights-onnx/src/proto/mod.rs` includes is not read. Functions written in macro
//! input (`macro_rules!`, `quote!`) are tokens, not functions, and are not measured.

use std::collections::BTreeSet;
use webnn_weights_test_support::syntax::{crate_files, crate_roots, functions};
use webnn_weights_test_support::{published_members, repo_root};

/// The longest a function may be, in lines from `fn` to its closing brace.
const MAX_LINES: usize = 80;

#[test]
fn no_function_is_longer_than_the_limit() {
    let root = repo_root();
    let members = published_members();
    assert!(
        members.len() >= 9,
        "the published members were read: {members:?}"
    );
    let mut read = BTreeSet::new();
    let mut problems = Vec::new();
    let mut measured = 0;
    for member in &members {
        for crate_root in crate_roots(&root.join(member)) {
            for file in crate_files(&crate_root) {
                let name = file
                    .path
                    .strip_prefix(&root)
                    .expect("a file of the repository")
                    .to_string_lossy()
                    .replace('\\', "/");
                if !read.insert(name.clone()) {
                    continue;
                }
                for function in functions(&file.code) {
                    measured += 1;
                    if function.lines > MAX_LINES {
                        problems.push(format!(
                            "{name}:{}: `{}` is {} lines long, over {MAX_LINES} (from `fn` to \
                             its closing brace): split it into named steps (helper functions)",
                            function.line, function.name, function.lines
                        ));
                    }
                }
            }
        }
    }
    assert!(
        read.len() >= 50 && measured >= 500,
        "the published crates' files were read: {} files, {measured} functions",
        read.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
