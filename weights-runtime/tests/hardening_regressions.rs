//! Regression tests for what the hardening work found (issue 6). Each names the finding.

use webnn_weights_runtime::weight_tools::{create_manifest, unpack_weights, NoProgress};

/// Found while writing the corruption properties: `x//y` and `x/./y` passed the tensor
/// name check and named the same file as `x/y`, so `unpack_weights` wrote both tensors to
/// `x/y.bin` (the last one won) and reported success. Such names are now refused, with
/// nothing written.
#[test]
fn unpack_refuses_two_names_for_one_file() {
    for (a, b) in [
        ("x/y", "x//y"),
        ("x/y", "x/./y"),
        ("x/y", "x/y/"),
        ("y", "./y"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let blob = dir.path().join("b.weights");
        std::fs::write(&blob, b"WGWT\x01\0\0\0AAAABB").unwrap();
        let manifest = dir.path().join("m.json");
        std::fs::write(
            &manifest,
            format!(
                r#"{{"tensors":{{"{a}":{{"byteOffset":8,"byteLength":4}},"{b}":{{"byteOffset":12,"byteLength":2}}}}}}"#
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let err = unpack_weights(&blob, &manifest, &out, &mut NoProgress)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "tensor name \"{b}\" cannot be used as a file name"
            )),
            "{err}"
        );
        assert!(!out.exists(), "{a} / {b}: output written");
    }
}

/// Temporary files that a killed `unpack-weights` leaves in a tensor folder
/// (`.NAME.bin.webnn-weights-tmp…`) are not taken for tensors by `create-manifest`.
#[test]
fn create_manifest_ignores_marked_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), [0u8; 4]).unwrap();
    std::fs::write(
        dir.path().join("w.meta.json"),
        r#"{"dataType":"float32","shape":[1]}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join(".w.bin.webnn-weights-tmpAbC123"), [1u8; 3]).unwrap();
    let manifest = create_manifest(dir.path(), "little").unwrap();
    assert_eq!(manifest.tensors.keys().collect::<Vec<_>>(), ["w"]);
}
