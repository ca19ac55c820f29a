//! Every public module of the published crates holds a public item: each `pub mod` reached
//! from a library's root through `pub mod` at every level (`pub(crate)` and narrower are not
//! public) has a `pub` fn, struct, enum, union, const, static, trait, type alias or `use`, or
//! a public submodule that has one. A public module without one is an empty page of the
//! API: make it private (`pub(crate) mod`) or give it a public item. The published crates
//! are the workspace members whose `Cargo.toml` does not say `publish = false`; test code is
//! left out (`webnn_weights_test_support::syntax::empty_public_modules`, whose own tests
//! plant such a module).

use webnn_weights_test_support::syntax::{crate_files, empty_public_modules};
use webnn_weights_test_support::{published_members, repo_root};

#[test]
fn every_public_module_holds_a_public_item() {
    let root = repo_root();
    let mut libraries = 0;
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
            messages.push(format!(
                "{name}: `{member}`'s `{}` is a `pub mod` with no public item: make it \
                 private (`pub(crate) mod` where it is declared) or give it a public item",
                module.join("::")
            ));
        }
    }
    assert!(
        libraries >= 8,
        "the published libraries were read ({libraries})"
    );
    assert!(messages.is_empty(), "{}", messages.join("\n"));
}
