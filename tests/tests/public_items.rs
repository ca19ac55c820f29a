//! Every public module of the published crates holds a public item: each `pub mod` reached
//! from a library's root through `pub mod` at every level (`pub(crate)` and narrower are not
//! public) has a `pub` fn, struct, enum, union, const, static, trait, type alias or `use`, or
//! a public submodule that has one. A public module without one is an empty page of the
//! API: make it private (`pub(crate) mod`) or give it a public item. The published crates
//! are the workspace members whose `Cargo.toml` does not say `publish = false`; test code is
//! left out (`webnn_weights_test_support::syntax::empty_public_modules`, whose own tests
//! plant such a module).
//!
//! `KNOWN_EMPTY` lists those found when the check came; it may only shrink: the test fails
//! for an empty public module it does not list and for a listed one that is no longer
//! empty (or gone).

use std::collections::BTreeSet;
use webnn_weights_test_support::syntax::{crate_files, empty_public_modules};
use webnn_weights_test_support::{published_members, repo_root};

/// The public modules without a public item when this check came, by file from the
/// repository's root; remove an entry when its module is made private or given an item.
const KNOWN_EMPTY: &[&str] = &["weights-runtime/src/sidecar/formats/blob.rs"];

#[test]
fn every_public_module_holds_a_public_item() {
    let root = repo_root();
    let mut libraries = 0;
    let mut found = BTreeSet::new();
    let mut messages = Vec::new();
    for member in published_members() {
        let lib = root.join(&member).join("src/lib.rs");
        if !lib.is_file() {
            continue;
        }
        libraries += 1;
        for (file, module) in empty_public_modules(&crate_files(&lib)) {
            let name = file
                .strip_prefix(&root)
                .expect("a file of the repository")
                .to_string_lossy()
                .replace('\\', "/");
            if !KNOWN_EMPTY.contains(&name.as_str()) {
                messages.push(format!(
                    "{name}: `{member}`'s `{}` is a `pub mod` with no public item: make it \
                     private (`pub(crate) mod` where it is declared) or give it a public item",
                    module.join("::")
                ));
            }
            found.insert(name);
        }
    }
    assert!(
        libraries >= 8,
        "the published libraries were read ({libraries})"
    );
    for known in KNOWN_EMPTY {
        if !found.contains(*known) {
            messages.push(format!(
                "{known} is listed in KNOWN_EMPTY but is no longer a public module without a \
                 public item (or is gone): remove it from KNOWN_EMPTY in tests/tests/public_items.rs"
            ));
        }
    }
    assert!(messages.is_empty(), "{}", messages.join("\n"));
}
