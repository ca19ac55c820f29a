//! The build helper for foreign targets: the static library of every supported target parses
//! back with the right format, symbol and bytes; the data symbol depends on nothing that
//! changes with the location of the package or the output folder, and differs between
//! packages and targets; sizes past a format's limit are refused before anything is written.
//!
//! One test in its own binary: it sets cargo's variables in the process environment.

mod common;

use common::{builder, listing, package};
use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection, ObjectSymbol};
use std::fs;
use std::path::Path;
use webnn_weights_artifacts::Index;
use webnn_weights_build::{CompiledGraph, Embedding, Error, ObjectFormat, Target};

/// Cargo's description of `triple` (only the targets this test uses).
fn target(triple: &str) -> Target {
    let arch = triple.split('-').next().unwrap();
    let (os, env) = if triple.ends_with("apple-darwin") {
        ("macos", "")
    } else if let Some(env) = triple.strip_prefix(&format!("{arch}-pc-windows-")) {
        ("windows", env)
    } else if triple.ends_with("linux-gnu") {
        ("linux", "gnu")
    } else {
        ("unknown", "")
    };
    let vars = [
        ("TARGET", triple),
        ("CARGO_CFG_TARGET_OS", os),
        ("CARGO_CFG_TARGET_ARCH", arch),
        ("CARGO_CFG_TARGET_ENV", env),
        ("CARGO_CFG_TARGET_ENDIAN", "little"),
        (
            "CARGO_CFG_TARGET_POINTER_WIDTH",
            if arch == "wasm32" { "32" } else { "64" },
        ),
    ];
    Target::from_vars(|name| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    })
}

const TARGETS: [(&str, &str); 7] = [
    ("x86_64-unknown-linux-gnu", "libwebnn_weights_encoder_"),
    ("aarch64-unknown-linux-gnu", "libwebnn_weights_encoder_"),
    ("x86_64-apple-darwin", "libwebnn_weights_encoder_"),
    ("aarch64-apple-darwin", "libwebnn_weights_encoder_"),
    ("x86_64-pc-windows-gnu", "libwebnn_weights_encoder_"),
    ("x86_64-pc-windows-msvc", "webnn_weights_encoder_"),
    ("aarch64-pc-windows-msvc", "webnn_weights_encoder_"),
];

fn compile(pkg: &Path, out: &Path, target: Option<Target>) -> CompiledGraph {
    let mut b = builder(pkg, out, "models/encoder.webnn").weights("model.safetensors");
    if let Some(t) = target {
        b = b.target(t);
    }
    b.compile().unwrap()
}

fn index(compiled: &CompiledGraph) -> Index {
    Index::from_json(&fs::read_to_string(compiled.artifact_dir().join("index.json")).unwrap())
        .unwrap()
}

/// The file names and bytes of an artifact folder.
fn artifacts(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir)
        .into_iter()
        .map(|(name, bytes, _)| (name, bytes))
        .collect()
}

/// A package whose graph declares one uint8 constant of `rows * cols` bytes, stored in a
/// sparse SafeTensors file of the right size (only its header is ever read).
fn huge_package(rows: u64, cols: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    fs::create_dir(&models).unwrap();
    fs::write(
        models.join("big.webnn"),
        format!(
            "webnn_graph \"big\" v1 {{\n  inputs {{ x: f32[1]; }}\n  consts {{\n    w: u8[{rows}, {cols}] @weights(\"w\");\n  }}\n  nodes {{ y = relu(x); }}\n  outputs {{ y; }}\n}}\n"
        ),
    )
    .unwrap();
    let len = rows * cols;
    let mut header = format!(
        "{{\"w\":{{\"dtype\":\"U8\",\"shape\":[{rows},{cols}],\"data_offsets\":[0,{len}]}}}}"
    );
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    let file = fs::File::create(models.join("big.safetensors")).unwrap();
    use std::io::Write;
    (&file).write_all(&bytes).unwrap();
    file.set_len(bytes.len() as u64 + len).unwrap();
    dir
}

#[test]
fn foreign_targets_reproducibility_and_limits() {
    std::env::remove_var("WEBNN_WEIGHTS_EMBED");
    std::env::set_var("CARGO_PKG_NAME", "app");
    std::env::set_var("CARGO_PKG_VERSION", "1.0.0");
    let files = [
        "hf-safetensors/encoder.webnn",
        "hf-safetensors/model.safetensors",
    ];
    let pkg = package(&files);

    // The reference bytes: the portable path's data file.
    let out = tempfile::tempdir().unwrap();
    let portable = builder(pkg.path(), out.path(), "models/encoder.webnn")
        .weights("model.safetensors")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    let data = fs::read(portable.artifact_dir().join("data.bin")).unwrap();
    assert_eq!(data.len() as u64, portable.data_len());
    let table = fs::read(
        portable
            .artifact_dir()
            .join(webnn_weights_artifacts::TABLE_FILE),
    )
    .unwrap();
    let graph_json = fs::read(
        portable
            .artifact_dir()
            .join(webnn_weights_artifacts::GRAPH_FILE),
    )
    .unwrap();

    let mut symbols = Vec::new();
    for (triple, prefix) in TARGETS {
        let out = tempfile::tempdir().unwrap();
        let compiled = compile(pkg.path(), out.path(), Some(target(triple)));
        assert_eq!(compiled.embedding(), Embedding::StaticLib, "{triple}");
        assert_eq!(compiled.target().triple(), triple);
        let idx = index(&compiled);
        let file = idx.data.as_ref().unwrap().file.clone();
        assert!(file.starts_with(prefix), "{triple}: {file}");
        assert!(file.ends_with(if triple.ends_with("msvc") {
            ".lib"
        } else {
            ".a"
        }));
        let link_name = idx.data.as_ref().unwrap().symbol.clone().unwrap();
        assert!(link_name.starts_with("webnn_weights_data_"));
        // The object defines what rustc references for `#[link_name = link_name]`.
        let defined = if triple.contains("apple") {
            format!("_{link_name}")
        } else {
            link_name.clone()
        };
        let bytes = fs::read(compiled.artifact_dir().join(&file)).unwrap();
        let ar = ArchiveFile::parse(&*bytes).unwrap();
        let names: Vec<Vec<u8>> = ar
            .symbols()
            .unwrap()
            .unwrap()
            .map(|s| s.unwrap().name().to_vec())
            .collect();
        assert_eq!(names, vec![defined.as_bytes().to_vec()], "{triple}");
        let member = ar.members().next().unwrap().unwrap();
        let object_bytes = member.data(&*bytes).unwrap().to_vec();
        let obj = object::File::parse(&*object_bytes).unwrap();
        let sym = obj.symbol_by_name(&defined).expect(triple);
        let section = obj.section_by_index(sym.section_index().unwrap()).unwrap();
        // ELF's (first) data section starts a page, the others 64 bytes.
        let align = if obj.format() == object::BinaryFormat::Elf {
            4096
        } else {
            64
        };
        assert_eq!(section.align(), align, "{triple}");
        // The data, then the constant table and the graph JSON (the files of the portable
        // path), where the index places them.
        let placed = idx.data.as_ref().unwrap();
        // The end symbol just past the linked bytes, in the same section; Mach-O and COFF
        // hold 64 zeros after it, so that it lies inside the section.
        let end = obj.symbol_by_name(&format!("{defined}_end")).expect(triple);
        assert_eq!(end.section_index(), sym.section_index(), "{triple}");
        assert_eq!(
            end.address() - sym.address(),
            placed.linked_len(),
            "{triple}"
        );
        let (linked, pad) = section
            .data()
            .unwrap()
            .split_at(placed.linked_len() as usize);
        let elf = obj.format() == object::BinaryFormat::Elf;
        assert_eq!(pad.len(), if elf { 0 } else { 64 }, "{triple}");
        assert!(pad.iter().all(|&b| b == 0), "{triple}");
        assert_eq!(&linked[..data.len()], &data[..], "{triple}");
        let part = |range: webnn_weights_artifacts::DataRange| {
            &linked[range.offset as usize..range.end() as usize]
        };
        assert_eq!(part(placed.table.unwrap()), &table[..], "{triple}");
        assert_eq!(part(placed.graph.unwrap()), &graph_json[..], "{triple}");
        // Every constant at its offset, 64-byte aligned.
        for c in compiled.constants() {
            assert_eq!(c.offset % 64, 0);
        }
        // Only this target's file is left in the folder.
        let names: Vec<String> = artifacts(compiled.artifact_dir())
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(names.len(), 3, "{triple}: {names:?}"); // library, data.stamp, index
        symbols.push(link_name);
    }
    // One package, several targets: one symbol each.
    let mut unique = symbols.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), symbols.len(), "{symbols:?}");

    // A target without a writer keeps the portable path.
    let out = tempfile::tempdir().unwrap();
    let wasm = compile(
        pkg.path(),
        out.path(),
        Some(target("wasm32-unknown-unknown")),
    );
    assert_eq!(wasm.target().object_format(), ObjectFormat::None);
    assert_eq!(wasm.embedding(), Embedding::IncludeBytes);

    // Cargo's variables describe the target when the builder is not given one.
    for (name, value) in [
        ("TARGET", "x86_64-pc-windows-msvc"),
        ("CARGO_CFG_TARGET_OS", "windows"),
        ("CARGO_CFG_TARGET_ARCH", "x86_64"),
        ("CARGO_CFG_TARGET_ENV", "msvc"),
        ("CARGO_CFG_TARGET_ENDIAN", "little"),
        ("CARGO_CFG_TARGET_POINTER_WIDTH", "64"),
    ] {
        std::env::set_var(name, value);
    }
    let out_a = tempfile::tempdir().unwrap();
    let from_env = compile(pkg.path(), out_a.path(), None);
    assert_eq!(from_env.target().triple(), "x86_64-pc-windows-msvc");
    assert!(index(&from_env).data.unwrap().file.ends_with(".lib"));

    // Reproducible: another output folder, another checkout of the package: the same bytes
    // in every artifact that reaches the binary (index.json records the sidecar's path for
    // diagnostics; the macro turns only its layout and symbol into code; data.stamp records
    // this machine's file facts for the build helper and never reaches the binary).
    let out_b = tempfile::tempdir().unwrap();
    let pkg_b = package(&files);
    let elsewhere = compile(pkg_b.path(), out_b.path(), None);
    assert_eq!(elsewhere.key(), from_env.key());
    let (a, b) = (
        artifacts(elsewhere.artifact_dir()),
        artifacts(from_env.artifact_dir()),
    );
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for (x, y) in a.iter().zip(&b) {
        if x.0 != "index.json" && x.0 != "data.stamp" {
            assert!(x.1 == y.1, "{} differs between two locations", x.0);
        }
    }
    let (ia, ib) = (index(&elsewhere), index(&from_env));
    assert_eq!(ia.data, ib.data);
    assert_eq!(ia.table, ib.table);
    assert_eq!(ia.constant_count, ib.constant_count);
    assert_eq!(ia.graph, ib.graph);
    assert_eq!(ia.runtime, ib.runtime);

    // Unique within a link: another package with a graph at the same relative path.
    std::env::set_var("CARGO_PKG_NAME", "other");
    let out_c = tempfile::tempdir().unwrap();
    let other = compile(pkg_b.path(), out_c.path(), None);
    assert_eq!(other.key(), from_env.key());
    assert_ne!(
        index(&other).data.unwrap().symbol,
        index(&from_env).data.unwrap().symbol
    );
    std::env::set_var("CARGO_PKG_NAME", "app");

    // Past a format's limit: refused before a byte is written. COFF holds < 4 GiB...
    let big = huge_package(2, 2_200_000_000);
    let out = tempfile::tempdir().unwrap();
    let err = builder(big.path(), out.path(), "models/big.webnn")
        .compile()
        .unwrap_err();
    match &err {
        Error::ObjectLimit {
            format,
            needed,
            limit,
            target,
            ..
        } => {
            assert_eq!(*format, "COFF");
            assert_eq!(target, "x86_64-pc-windows-msvc");
            // The data, then the table and the graph JSON (a few hundred bytes).
            assert!((4_400_000_000..4_400_004_096).contains(needed), "{needed}");
            assert!(*limit < 1 << 32);
        }
        other => panic!("expected ObjectLimit, got {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("big.webnn")
            && text.contains("the constants, their table and the graph need 44000"),
        "{text}"
    );
    assert!(!out.path().join("webnn-weights").exists());
    // ... Mach-O a file under 4 GiB, ELF (both machines: the data is placed past what the
    // code addresses, in several archive members) 16 GiB.
    for (triple, rows, limit) in [
        ("x86_64-unknown-linux-gnu", 7, 16 << 30),
        ("aarch64-unknown-linux-gnu", 7, 16 << 30),
        ("aarch64-apple-darwin", 2, (4 << 30) - (128 << 20)),
    ] {
        let big = huge_package(rows, 2_600_000_000);
        let out = tempfile::tempdir().unwrap();
        let err = builder(big.path(), out.path(), "models/big.webnn")
            .target(target(triple))
            .compile()
            .unwrap_err();
        assert!(
            matches!(&err, Error::ObjectLimit { limit: l, needed, .. }
                if *l == limit && (0..4096).contains(&(*needed - rows * 2_600_000_000))),
            "{triple}: {err}"
        );
        assert!(!out.path().join("webnn-weights").exists());
    }
    for name in [
        "TARGET",
        "CARGO_CFG_TARGET_OS",
        "CARGO_CFG_TARGET_ARCH",
        "CARGO_CFG_TARGET_ENV",
        "CARGO_CFG_TARGET_ENDIAN",
        "CARGO_CFG_TARGET_POINTER_WIDTH",
    ] {
        std::env::remove_var(name);
    }
}
