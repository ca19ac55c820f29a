//! No import circle between the top-level modules of any crate: reads every crate's module
//! files as syntax trees, finds each module's `crate::…` and `super::…` paths (names imported
//! by the crate root count as the module that defines them) and fails on a circle, naming
//! it, or on a `super::` chain that climbs past the crate root. Test code (every
//! `#[cfg(test)]` item, test modules and their files, as
//! `webnn_weights_test_support::syntax::code` leaves it out) is left out. The runtime's modules are checked more finely, as layers in a
//! stated order (`LAYERS` in `weights-runtime/src/lib.rs` and in its `graph/`, `sidecar/`
//! and `resolve/`). Both checks are test-support's `layers` module, whose own tests plant
//! a circle, an upward import, an import of a root file's item and a chain past the root.

use webnn_weights_test_support::layers::{import_cycle, module_imports, read_crate};
use webnn_weights_test_support::{repo_root, workspace_members};

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let root = repo_root();
    let mut checked = 0;
    let mut problems = Vec::new();
    // Every member of the workspace, this one too (its `src/` is the fixtures' statics and
    // one module, `pieces`).
    let crates: Vec<String> = workspace_members();
    assert!(
        crates.len() >= 10,
        "the workspace's members were read: {crates:?}"
    );
    for krate in &crates {
        let (root_file, files) = read_crate(&root.join(krate).join("src"));
        let (edges, found) = module_imports(&root_file, &files);
        problems.extend(found.into_iter().map(|p| format!("{krate}: {p}")));
        if let Some(circle) = import_cycle(&edges) {
            problems.push(format!(
                "{krate}: the modules import each other in a circle: {}",
                circle.join(" -> ")
            ));
        }
        checked += edges.len();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 30, "the crates' modules were read ({checked})");
}
