//! The build helper verifies a weights lock: beside the graph or named with
//! `Builder::lock`, in every embedding mode, every problem at once, the verified digests in
//! the constant table, the lock watched, no warning when verifying is fast, and a changed
//! lock verified again even when the data file would be skipped.

#![allow(clippy::result_large_err)] // a test closure returning the builder's result

mod common;

use common::{builder, package, write_lock, write_u8_model};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};
use webnn_weights_artifacts as artifacts;
use webnn_weights_artifacts::hex;
use webnn_weights_build::{Embedding, Error};
use webnn_weights_runtime::WeightsLock;

/// 200,000 bytes per constant: larger than the reader's window for small constants.
const LEN: usize = 200_000;

/// Writes the lock of `models/m.webnn` for its current sidecar; returns it.
fn lock_now(models: &Path) -> WeightsLock {
    write_lock(&models.join("m.webnn"))
}

fn table_digests(dir: &Path) -> Vec<Option<[u8; 32]>> {
    let bytes = common::table_bytes(dir);
    let table = artifacts::ConstantTable::parse(&bytes).unwrap();
    table.iter().map(|e| e.sha256()).collect()
}

#[test]
fn a_lock_beside_the_graph_is_verified_in_every_mode() {
    let pkg = package(&[]);
    let models = pkg.path().join("models");
    write_u8_model(&models, "m", &[1, 2, 3], LEN);
    let lock = lock_now(&models);
    let pinned: Vec<Option<[u8; 32]>> = lock.entries().iter().map(|e| Some(e.sha256)).collect();
    for embedding in [Embedding::StaticLib, Embedding::IncludeBytes] {
        let out = tempfile::tempdir().unwrap();
        let compiled = builder(pkg.path(), out.path(), "models/m.webnn")
            .embedding(embedding)
            .compile()
            .unwrap();
        // The verified digests reach the table (EmbeddedConstant::sha256).
        assert_eq!(
            table_digests(compiled.artifact_dir()),
            pinned,
            "{embedding:?}"
        );
        // The lock is watched.
        let watched = format!(
            "cargo:rerun-if-changed={}",
            models.join("m.webnn.lock").display()
        );
        assert!(
            compiled.directives().contains(&watched),
            "{:?}",
            compiled.directives()
        );
        // Verified in well under a second (600 KB): no warning about the feature `ring`.
        assert!(
            !compiled
                .directives()
                .iter()
                .any(|line| line.starts_with("cargo:warning")),
            "{:?}",
            compiled.directives()
        );
    }

    // Every byte of w1 changed, and w2's last byte: the build fails naming both, with the
    // sidecar, both digests and the fix; in both modes.
    let old_w1 = lock.entry("w1").unwrap().sha256;
    write_u8_model(&models, "m", &[1, 9, 3], LEN);
    let mut sidecar = fs::read(models.join("m.safetensors")).unwrap();
    let last = sidecar.len() - 1;
    sidecar[last] ^= 1;
    fs::write(models.join("m.safetensors"), &sidecar).unwrap();
    for embedding in [Embedding::StaticLib, Embedding::IncludeBytes] {
        let out = tempfile::tempdir().unwrap();
        let err = builder(pkg.path(), out.path(), "models/m.webnn")
            .embedding(embedding)
            .compile()
            .unwrap_err();
        let text = webnn_weights_runtime::Report::new(&err).to_string();
        for needle in [
            "(2 problems)",
            "constant `w1` (from",
            "m.safetensors",
            &hex(&old_w1),
            "constant `w2`",
        ] {
            assert!(
                text.contains(needle),
                "{embedding:?}: no {needle:?} in {text}"
            );
        }
        assert!(!text.contains("`w0`"), "{text}");
        let diagnostic = webnn_weights_build::Diagnostic::new("models/m.webnn", &err).to_string();
        assert!(diagnostic.contains("webnn-weights lock"), "{diagnostic}");
        // No index vouches for the rejected data, and nothing half-written stays.
        let dir = out.path().join(artifacts::ARTIFACTS_DIR);
        let leftovers: Vec<String> = walk(&dir);
        assert!(
            leftovers
                .iter()
                .all(|f| !f.ends_with(artifacts::INDEX_FILE) && !f.contains("tmp")),
            "{embedding:?}: {leftovers:?}"
        );
    }

    // The run-time mode reads no byte at build time: the changed bytes pass (the program
    // verifies them when it reads them), but the lock's entries are checked.
    let out = tempfile::tempdir().unwrap();
    builder(pkg.path(), out.path(), "models/m.webnn")
        .embedding(Embedding::Runtime)
        .compile()
        .unwrap();
    let mut entries = lock.entries().to_vec();
    entries.remove(0);
    fs::write(
        models.join("m.webnn.lock"),
        WeightsLock::new("x", entries).unwrap().to_json(),
    )
    .unwrap();
    let err = builder(pkg.path(), out.path(), "models/m.webnn")
        .embedding(Embedding::Runtime)
        .compile()
        .unwrap_err();
    assert!(
        err.to_string().contains("constant `w0` is not in the lock"),
        "{err}"
    );
}

/// Every file below `dir`, as paths.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path.display().to_string());
            }
        }
    }
    out
}

#[test]
fn an_explicit_lock_is_relative_to_the_graph_and_must_exist() {
    let pkg = package(&[]);
    let models = pkg.path().join("models");
    write_u8_model(&models, "m", &[1, 2], 100);
    lock_now(&models);
    fs::rename(models.join("m.webnn.lock"), models.join("pinned.lock")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/m.webnn")
        .lock("pinned.lock")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    assert!(table_digests(compiled.artifact_dir())
        .iter()
        .all(Option::is_some));
    // Without it, no lock applies: no digests.
    let compiled = builder(pkg.path(), out.path(), "models/m.webnn")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    assert!(table_digests(compiled.artifact_dir())
        .iter()
        .all(Option::is_none));
    // A lock that is not there: an error naming it; one given from the package root: the
    // setter call to write instead.
    let err = builder(pkg.path(), out.path(), "models/m.webnn")
        .lock("nope.lock")
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("nope.lock"), "{err}");
    let err = builder(pkg.path(), out.path(), "models/m.webnn")
        .lock("models/pinned.lock")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::ExplicitPath { .. }), "{err}");
    let diagnostic = webnn_weights_build::Diagnostic::new("models/m.webnn", &err).to_string();
    assert!(
        diagnostic.contains(".lock(\"pinned.lock\")"),
        "{diagnostic}"
    );
}

/// Sets `path`'s modification time `secs` seconds into the past.
fn age(path: &Path, secs: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn a_changed_lock_is_verified_again_even_when_the_data_is_not_reread() {
    let pkg = package(&[]);
    let models = pkg.path().join("models");
    write_u8_model(&models, "m", &[1, 2], LEN);
    let lock = lock_now(&models);
    // Settled inputs: the second build trusts its stamp and reads no byte of the data.
    for file in ["m.webnn", "m.safetensors", "m.webnn.lock"] {
        age(&models.join(file), 60);
    }
    let out = tempfile::tempdir().unwrap();
    let build = || {
        builder(pkg.path(), out.path(), "models/m.webnn")
            .embedding(Embedding::IncludeBytes)
            .compile()
    };
    let first = build().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let data = first.artifact_dir().join(artifacts::DATA_FILE);
    let written = fs::metadata(&data).unwrap().modified().unwrap();
    build().unwrap();
    assert_eq!(fs::metadata(&data).unwrap().modified().unwrap(), written);
    // The lock now pins another digest for w1 (same sidecar, same data): verified again,
    // and the build fails.
    let mut entries = lock.entries().to_vec();
    entries[1].sha256 = [0xEE; 32];
    fs::write(
        models.join("m.webnn.lock"),
        WeightsLock::new("x", entries).unwrap().to_json(),
    )
    .unwrap();
    age(&models.join("m.webnn.lock"), 60);
    let err = build().unwrap_err();
    assert!(err.to_string().contains(&hex(&[0xEE; 32])), "{err}");
}
