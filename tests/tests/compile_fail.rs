//! Every error of `include_webnn_graph!` is a `compile_error!` on the literal, never a
//! panic. The `.stderr` files in `ui/` are the expected compiler output.
//!
//! The macro reads `OUT_DIR`, so each case runs with its own `OUT_DIR` in the environment
//! of the compiler (trybuild's generated crate has no build script of its own). The cases
//! run one after another in this single test because the environment is process-wide.

use std::fs;
use std::path::Path;
use webnn_weights_artifacts::{prepared_env_var, prepared_stamp, Index, INDEX_FILE, INDEX_VERSION};
use webnn_weights_build::{Builder, Embedding};

fn fixture(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Prepares `models/model.webnn` (the packed4 fixture) into `out` with the portable path.
fn prepare(out: &Path) -> std::path::PathBuf {
    prepare_as(out, Embedding::IncludeBytes)
}

/// Prepares `models/model.webnn` (the packed4 fixture) into `out` embedded as `embedding`.
fn prepare_as(out: &Path, embedding: Embedding) -> std::path::PathBuf {
    let pkg = tempfile::tempdir().unwrap();
    fs::create_dir(pkg.path().join("models")).unwrap();
    fs::copy(
        fixture("fixtures/packed4/quant.webnn"),
        pkg.path().join("models/model.webnn"),
    )
    .unwrap();
    fs::copy(
        fixture("fixtures/packed4/quant.safetensors"),
        pkg.path().join("models/model.safetensors"),
    )
    .unwrap();
    let compiled = Builder::new("models/model.webnn")
        .package_dir(pkg.path())
        .out_dir(out)
        .embedding(embedding)
        .emit_directives(false)
        .compile()
        .unwrap();
    compiled.artifact_dir().to_path_buf()
}

/// The variable by which a build script's run vouches for the artifacts in `dir` (the
/// build helper prints it as `cargo:rustc-env`), with the stamp of the index now there.
fn stamp_of(dir: &Path) -> (String, String) {
    let key = dir.file_name().unwrap().to_str().unwrap();
    let index = fs::read(dir.join(INDEX_FILE)).unwrap();
    (prepared_env_var(key), prepared_stamp(&index))
}

/// Runs `ui/<case>.rs` with `OUT_DIR` and the build script's stamp, where given, in the
/// environment of the compiler.
fn run(case: &str, out_dir: Option<&Path>, stamp: Option<&(String, String)>) {
    match out_dir {
        Some(dir) => std::env::set_var("OUT_DIR", dir),
        None => std::env::remove_var("OUT_DIR"),
    }
    if let Some((var, value)) = stamp {
        std::env::set_var(var, value);
    }
    let t = trybuild::TestCases::new();
    t.compile_fail(format!("ui/{case}.rs"));
    drop(t); // runs the case now, with this environment
    if let Some((var, _)) = stamp {
        std::env::remove_var(var);
    }
}

#[test]
fn macro_errors() {
    run("no_build_script", None, None);
    run("not_a_literal", None, None);

    let empty = tempfile::tempdir().unwrap();
    run("not_prepared", Some(empty.path()), None);

    // Artifacts that an earlier run of the build script left, which this run did not
    // prepare (a build.rs line removed or changed): no stamp.
    let out = tempfile::tempdir().unwrap();
    let dir = prepare(out.path());
    let stamp = stamp_of(&dir);
    run("stale", Some(out.path()), None);
    // The stamp of this run, but another index than the one it wrote.
    let index = fs::read_to_string(dir.join(INDEX_FILE)).unwrap();
    fs::write(
        dir.join(INDEX_FILE),
        index.replace("\"constantCount\"", " \"constantCount\""),
    )
    .unwrap();
    run("index_replaced", Some(out.path()), Some(&stamp));

    // A graph this run prepared (`models/model.webnn`, its stamp set) and a literal that
    // names another (`model.webnn`): the message lists the prepared graph, asks "did you
    // mean" it, and still gives the build.rs line for a new graph.
    let out = tempfile::tempdir().unwrap();
    let dir = prepare(out.path());
    run("not_prepared_near", Some(out.path()), Some(&stamp_of(&dir)));

    // Prepared artifacts with one file damaged: (case, file, damage). A new check of the
    // macro is one row and one `ui/<case>.rs` with its `.stderr`.
    type Damage = fn(Vec<u8>) -> Vec<u8>;
    #[rustfmt::skip]
    let damaged: [(&str, &str, Damage); 5] = [
        ("damaged_data", "data.bin", |data| data[..data.len() - 1].to_vec()),
        ("wrong_version", "index.json", |index| {
            let version = format!("\"version\": {INDEX_VERSION}");
            String::from_utf8(index).unwrap().replace(&version, "\"version\": 99").into_bytes()
        }),
        // The constant table: another version, a range outside the data, cut short.
        ("table_version", "constants.bin", |mut table| {
            table[8..12].copy_from_slice(&7u32.to_le_bytes());
            table
        }),
        ("table_range", "constants.bin", |mut table| {
            // Entry 0's offset (header 32 bytes, offset at 32 within the entry): past the data.
            table[64..72].copy_from_slice(&4096u64.to_le_bytes());
            table
        }),
        ("table_cut", "constants.bin", |table| table[..table.len() - 3].to_vec()),
    ];
    for (case, file, damage) in damaged {
        let out = tempfile::tempdir().unwrap();
        let dir = prepare(out.path());
        let bytes = fs::read(dir.join(file)).unwrap();
        let damaged = damage(bytes.clone());
        assert_ne!(damaged, bytes, "{case}: the damage changed nothing");
        fs::write(dir.join(file), damaged).unwrap();
        // Damaged after the run vouched for them (a damaged index as if this run wrote it,
        // to reach the checks behind the stamp).
        run(case, Some(out.path()), Some(&stamp_of(&dir)));
    }

    // A static library shorter than the data, table and graph JSON it should link.
    let out = tempfile::tempdir().unwrap();
    let dir = prepare_as(out.path(), Embedding::StaticLib);
    let index = Index::from_json(&fs::read_to_string(dir.join(INDEX_FILE)).unwrap()).unwrap();
    let library = dir.join(&index.data.unwrap().file);
    let bytes = fs::read(&library).unwrap();
    fs::write(&library, &bytes[..64]).unwrap();
    run("library_cut", Some(out.path()), Some(&stamp_of(&dir)));
    std::env::remove_var("OUT_DIR");
}
