//! The build helper against real fixtures, in temporary package and output folders.

mod common;

use common::{builder, listing, package, write_u8_model};
use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_artifacts as artifacts;
use webnn_weights_build::{Builder, Diagnostic, Embedding, Error};
use webnn_weights_runtime::{plan_external_weights, read_graph_file};

#[test]
fn data_file_holds_aligned_converted_bytes() {
    let pkg = package(&[
        "hf-safetensors/head.webnn",
        "hf-safetensors/lm_head.safetensors",
    ]);
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/head.webnn")
        .weights("lm_head.safetensors")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    assert_eq!(compiled.embedding(), Embedding::IncludeBytes);
    let data = fs::read(compiled.artifact_dir().join("data.bin")).unwrap();
    assert_eq!(data.len() as u64, compiled.data_len());
    assert_eq!(data.len() % 64, 0);
    let graph_path = pkg.path().join("models/head.webnn");
    let graph = read_graph_file(&graph_path).unwrap();
    let plan = plan_external_weights(
        &graph,
        &graph_path,
        Some(Path::new("lm_head.safetensors")),
        None,
    )
    .unwrap();
    for (c, p) in compiled.constants().iter().zip(plan.constants()) {
        assert_eq!(c.offset % 64, 0);
        let range = c.offset as usize..(c.offset + c.length) as usize;
        assert_eq!(data[range], plan.read_constant(p).unwrap()[..]);
    }
    assert_eq!(compiled.constants()[0].length, 4 * 8 * 4); // BF16 widened to f32
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(compiled.artifact_dir().join("index.json")).unwrap())
            .unwrap();
    assert_eq!(index["mode"], "include-bytes");
    assert_eq!(index["table"], artifacts::TABLE_FILE);
    // The readers the macro uses accept what was written and see the same layout.
    let text = fs::read_to_string(compiled.artifact_dir().join(artifacts::INDEX_FILE)).unwrap();
    let read = artifacts::Index::from_json(&text).unwrap();
    assert_eq!(read.mode, artifacts::Mode::IncludeBytes);
    assert_eq!(read.data.map(|d| d.length), Some(compiled.data_len()));
    assert_eq!(read.constant_count, compiled.constants().len() as u64);
    let table_bytes = fs::read(compiled.artifact_dir().join(artifacts::TABLE_FILE)).unwrap();
    let table = artifacts::ConstantTable::parse(&table_bytes).unwrap();
    table.check_data_len(compiled.data_len()).unwrap();
    assert_eq!(
        table.get(0).map(|c| c.data_type()),
        Some(webnn_weights_runtime::DataType::Float32)
    );
    let layout: Vec<(&str, u64, u64)> = table
        .iter()
        .map(|c| (c.name(), c.offset(), c.length()))
        .collect();
    let expected: Vec<(&str, u64, u64)> = compiled
        .constants()
        .iter()
        .map(|c| (c.name.as_str(), c.offset, c.length))
        .collect();
    assert_eq!(layout, expected);
}

#[test]
fn output_is_deterministic_and_unchanged_files_are_left_alone() {
    let pkg = package(&["packed4/quant.webnn", "packed4/quant.safetensors"]);
    let out = tempfile::tempdir().unwrap();
    for embedding in [Embedding::StaticLib, Embedding::IncludeBytes] {
        let first = builder(pkg.path(), out.path(), "models/quant.webnn")
            .embedding(embedding)
            .compile()
            .unwrap();
        let before = listing(first.artifact_dir());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let second = builder(pkg.path(), out.path(), "./models/../models/quant.webnn")
            .embedding(embedding)
            .compile()
            .unwrap();
        assert_eq!(first.key(), second.key());
        assert_eq!(
            first.key(),
            artifacts::artifact_key(pkg.path(), Path::new("models/quant.webnn"))
        );
        assert_eq!(
            first.artifact_dir(),
            out.path().join(artifacts::ARTIFACTS_DIR).join(first.key())
        );
        let after = listing(second.artifact_dir());
        for (a, b) in after.iter().zip(&before) {
            if a.0 == "data.stamp" {
                // The build helper's record: same facts, refreshed time (not an artifact
                // anything watches).
                assert!(a.1 == b.1, "{embedding:?}: data.stamp changed");
            } else {
                assert!(a == b, "{embedding:?}: {} changed", a.0);
            }
        }
        assert_eq!(after.len(), before.len());
        // Only this mode's data file is kept, beside the index and the build helper's
        // record of the facts the data was written from; the graph JSON and the constant
        // table are files only where the static library does not link them.
        let names: Vec<String> = before.into_iter().map(|f| f.0).collect();
        let files = ["constants.bin", "graph.json"];
        let linked = embedding == Embedding::StaticLib;
        assert_eq!(names.len(), if linked { 3 } else { 5 }, "{names:?}");
        assert!(names.iter().any(|n| n == "data.stamp"), "{names:?}");
        assert_eq!(files.map(|f| names.iter().any(|n| n == f)), [!linked; 2]);
        assert!(names.iter().all(|n| !n.contains(".webnn-weights-tmp")));
    }
    // A changed sidecar rewrites the data.
    let first = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap();
    let lib = first
        .artifact_dir()
        .join(artifacts::library_file(first.key()));
    let old = fs::read(&lib).unwrap();
    let st = pkg.path().join("models/quant.safetensors");
    let mut bytes = fs::read(&st).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&st, bytes).unwrap();
    builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap();
    assert_ne!(fs::read(&lib).unwrap(), old);
}

#[test]
fn runtime_mode_writes_no_data_and_records_paths() {
    let pkg = package(&[
        "tiny-extract/tiny.extracted.json",
        "tiny-extract/tiny.weights",
        "tiny-extract/tiny.manifest.json",
    ]);
    let out = tempfile::tempdir().unwrap();
    let make = |embedding: Option<Embedding>| {
        let b = builder(pkg.path(), out.path(), "models/tiny.extracted.json")
            .weights("tiny.weights")
            .manifest("tiny.manifest.json");
        match embedding {
            Some(embedding) => b.embedding(embedding),
            None => b,
        }
        .compile()
        .unwrap()
    };
    let embedded = make(None);
    assert_eq!(embedded.embedding(), Embedding::StaticLib);
    // The library (linking data, table and graph JSON), data.stamp, index.json.
    assert_eq!(listing(embedded.artifact_dir()).len(), 3);
    let compiled = make(Some(Embedding::Runtime));
    assert_eq!(compiled.embedding(), Embedding::Runtime);
    let names: Vec<String> = listing(compiled.artifact_dir())
        .into_iter()
        .map(|f| f.0)
        .collect();
    assert_eq!(names, ["graph.json", "index.json"]);
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(compiled.artifact_dir().join("index.json")).unwrap())
            .unwrap();
    assert_eq!(index["mode"], "runtime");
    assert!(index["data"].is_null());
    let weights = index["runtime"]["weights"].as_str().unwrap();
    assert!(Path::new(weights).is_absolute() && Path::new(weights).is_file());
    assert_eq!(
        compiled.manifest().unwrap(),
        pkg.path().join("models/tiny.manifest.json")
    );
}

#[test]
fn errors_leave_no_artifacts_and_read_well() {
    let pkg = package(&["packed4/quant.webnn"]);
    let out = tempfile::tempdir().unwrap();
    let err = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Resolve(_)), "{err}");
    assert!(!out.path().join("webnn-weights").exists());
    let text = Diagnostic::new("models/quant.webnn", &err).to_string();
    assert!(
        text.starts_with("error: webnn-weights: cannot embed `models/quant.webnn`\n"),
        "{text}"
    );
    assert!(text.contains("quant.safetensors"), "{text}");
    assert!(text.contains("\n  fix: "), "{text}");

    // A tensor of the wrong shape: named constant, expected and found.
    let pkg = package(&["packed4/quant.safetensors"]);
    fs::write(
        pkg.path().join("models/quant.webnn"),
        "webnn_graph \"q\" v1 { inputs { x: f32[3]; } consts { scale: f32[4] @weights(\"scale\"); } nodes { y = add(x, scale); } outputs { y; } }",
    )
    .unwrap();
    let err = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("scale"), "{text}");
    assert!(!out.path().join("webnn-weights").exists());

    let err = Builder::new("models/x.webnn")
        .package_dir(pkg.path())
        .emit_directives(false)
        .compile();
    if std::env::var_os("OUT_DIR").is_none() {
        assert!(matches!(err, Err(Error::MissingEnv("OUT_DIR"))));
    }
}

#[test]
fn directives_watch_files_and_discovery_folders() {
    // Discovery falls through to model.safetensors: encoder.safetensors is missing, so the
    // folder is watched (a new encoder.safetensors must win).
    let pkg = package(&[
        "hf-safetensors/encoder.webnn",
        "hf-safetensors/model.safetensors",
    ]);
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/encoder.webnn")
        .compile()
        .unwrap();
    let models = pkg.path().join("models");
    let expect = |p: PathBuf| format!("cargo:rerun-if-changed={}", p.display());
    let d = compiled.directives();
    assert!(d.contains(&"cargo:rerun-if-env-changed=WEBNN_WEIGHTS_EMBED".to_string()));
    assert!(d.contains(&expect(models.join("encoder.webnn"))));
    assert!(d.contains(&expect(models.join("model.safetensors"))));
    assert!(d.contains(&expect(models.clone())));
    assert!(d
        .iter()
        .any(|l| l.starts_with("cargo:rustc-link-lib=static:-bundle=webnn_weights_encoder_")));
    // No missing path is ever listed (cargo would rerun the build script every time).
    for line in d {
        if let Some(path) = line.strip_prefix("cargo:rerun-if-changed=") {
            assert!(Path::new(path).exists(), "{line}");
        }
    }

    // The first candidate exists, and so does the weights lock: no folder watch needed.
    let pkg = package(&["packed4/quant.webnn", "packed4/quant.safetensors"]);
    let models = pkg.path().join("models");
    common::write_lock(&models.join("quant.webnn"));
    let compiled = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap();
    let folder = expect(models.clone());
    assert!(!compiled.directives().contains(&folder));
    assert!(compiled
        .directives()
        .contains(&expect(models.join("quant.webnn.lock"))));
    // Without the lock, its folder is watched, so that a lock added later is noticed.
    fs::remove_file(models.join("quant.webnn.lock")).unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap();
    assert!(compiled.directives().contains(&folder));

    // A folder that holds the output (a package root with target/ inside) is never watched.
    let pkg = package(&[
        "hf-safetensors/encoder.webnn",
        "hf-safetensors/model.safetensors",
    ]);
    let out_inside = pkg.path().join("models/target/out");
    fs::create_dir_all(&out_inside).unwrap();
    let compiled = builder(pkg.path(), &out_inside, "models/encoder.webnn")
        .compile()
        .unwrap();
    assert!(!compiled
        .directives()
        .contains(&expect(pkg.path().join("models"))));
}

#[test]
fn sharded_archive_watches_the_index_and_the_shards_it_used() {
    let shards = [
        "hf-sharded/model-00001-of-00003.safetensors",
        "hf-sharded/model-00002-of-00003.safetensors",
        "hf-sharded/model-00003-of-00003.safetensors",
    ];
    let mut files = vec![
        "hf-sharded/small.webnn",
        "hf-sharded/encoder.webnn",
        "hf-sharded/model.safetensors.index.json",
    ];
    files.extend(shards);
    let pkg = package(&files);
    let out = tempfile::tempdir().unwrap();
    let models = pkg.path().join("models");
    let expect = |name: &str| format!("cargo:rerun-if-changed={}", models.join(name).display());
    // small.webnn reads only the first shard: the others are not watched.
    let compiled = builder(pkg.path(), out.path(), "models/small.webnn")
        .compile()
        .unwrap();
    let d = compiled.directives();
    assert_eq!(
        compiled.sidecar(),
        Some(models.join("model.safetensors.index.json").as_path())
    );
    assert!(d.contains(&expect("model.safetensors.index.json")), "{d:?}");
    assert!(
        d.contains(&expect("model-00001-of-00003.safetensors")),
        "{d:?}"
    );
    assert!(
        !d.contains(&expect("model-00002-of-00003.safetensors")),
        "{d:?}"
    );
    assert!(
        !d.contains(&expect("model-00003-of-00003.safetensors")),
        "{d:?}"
    );
    // The four candidates are missing: the folder is watched (a new model.safetensors wins).
    assert!(d.contains(&format!("cargo:rerun-if-changed={}", models.display())));
    // encoder.webnn reads all three.
    let compiled = builder(pkg.path(), out.path(), "models/encoder.webnn")
        .compile()
        .unwrap();
    for shard in shards {
        let name = Path::new(shard).file_name().unwrap().to_str().unwrap();
        assert!(compiled.directives().contains(&expect(name)), "{name}");
    }
    for line in compiled.directives() {
        if let Some(path) = line.strip_prefix("cargo:rerun-if-changed=") {
            assert!(Path::new(path).exists(), "{line}");
        }
    }
}

/// A SafeTensors archive with one float32 tensor `embed.weight` of `elements` values.
fn one_tensor_archive(path: &Path, elements: usize) {
    let bytes = elements * 4;
    let mut header = format!(
        r#"{{"embed.weight":{{"dtype":"F32","shape":[{elements}],"data_offsets":[0,{bytes}]}}}}"#
    );
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = Vec::with_capacity(8 + header.len() + bytes);
    file.extend_from_slice(&(header.len() as u64).to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    file.extend((0..elements as u32).flat_map(|i| (i as f32).to_le_bytes()));
    fs::write(path, file).unwrap();
}

#[test]
fn tied_constants_share_one_range() {
    const ELEMENTS: usize = 2 << 20; // 8 MiB of float32
    let pkg = package(&[]);
    let models = pkg.path().join("models");
    one_tensor_archive(&models.join("tied.safetensors"), ELEMENTS);
    fs::write(
        models.join("tied.webnn"),
        format!(
            "webnn_graph \"tied\" v1 {{\n  inputs {{ x: f32[{ELEMENTS}]; }}\n  consts {{\n    \
             a: f32[{ELEMENTS}] @weights(\"embed.weight\");\n    \
             b: f32[{ELEMENTS}] @weights(\"embed.weight\");\n    \
             c: f32[{ELEMENTS}] @weights(\"embed_weight\");\n  }}\n  nodes {{\n    \
             y = add(x, a);\n    z = add(y, b);\n    w = add(z, c);\n  }}\n  outputs {{ w; }}\n}}\n"
        ),
    )
    .unwrap();
    for embedding in [Embedding::StaticLib, Embedding::IncludeBytes] {
        let out = tempfile::tempdir().unwrap();
        let compiled = builder(pkg.path(), out.path(), "models/tied.webnn")
            .target(webnn_weights_build::Target::from_vars(|name| match name {
                "TARGET" => Some("x86_64-unknown-linux-gnu".into()),
                "CARGO_CFG_TARGET_OS" => Some("linux".into()),
                "CARGO_CFG_TARGET_ARCH" => Some("x86_64".into()),
                "CARGO_CFG_TARGET_ENV" => Some("gnu".into()),
                _ => None,
            }))
            .embedding(embedding)
            .compile()
            .unwrap();
        // One copy of the 8 MiB: the data, and the file holding it, are about its size.
        assert_eq!(compiled.data_len(), (ELEMENTS * 4) as u64);
        assert_eq!(compiled.range_count(), 1);
        let data_file = match embedding {
            Embedding::StaticLib => artifacts::library_file(compiled.key()),
            _ => artifacts::DATA_FILE.to_string(),
        };
        let file_len = fs::metadata(compiled.artifact_dir().join(data_file))
            .unwrap()
            .len();
        // (The library also links the constant table and the graph JSON: a few hundred
        // bytes.)
        assert!(
            file_len >= compiled.data_len() && file_len < compiled.data_len() + 4096,
            "{embedding:?}: {file_len} bytes"
        );
        // The three constants share one range, in the API and in the table the macro reads.
        let groups = compiled.shared_constants();
        assert_eq!(groups.len(), 1);
        let names: Vec<&str> = groups[0].iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let table_bytes = common::table_bytes(compiled.artifact_dir());
        let table = artifacts::ConstantTable::parse(&table_bytes).unwrap();
        let ranges: Vec<(u64, u64)> = table.iter().map(|e| (e.offset(), e.length())).collect();
        assert_eq!(ranges, [(0, (ELEMENTS * 4) as u64); 3]);
    }
}

/// The data file is the runtime's `DataLayout::write_data` of the plan, byte for byte, and
/// the run-time mode's buffer (the same layout with some constants left out, as it leaves
/// out those it maps) holds every other constant's bytes, tied ones on one range, as the
/// data file does.
#[test]
fn the_data_file_is_the_runtime_layout() {
    let pkg = package(&["tied/tied.webnn", "tied/tied.safetensors"]);
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/tied.webnn")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    let data = fs::read(compiled.artifact_dir().join(artifacts::DATA_FILE)).unwrap();
    let graph_path = pkg.path().join("models/tied.webnn");
    let plan = plan_external_weights(
        &read_graph_file(&graph_path).unwrap(),
        &graph_path,
        None,
        None,
    )
    .unwrap();
    let all = plan.data_layout(|_| false).unwrap();
    let mut written = Vec::new();
    all.write_data(&mut written).unwrap();
    assert_eq!(written, data);
    assert_eq!(all.ranges().len(), compiled.range_count());
    for (i, c) in compiled.constants().iter().enumerate() {
        let range = all.range_of(i).unwrap();
        assert_eq!(
            (range.offset, range.length),
            (c.offset, c.length),
            "{}",
            c.name
        );
    }
    // Leaving out the unconverted constants (those the run-time mode may map): the BF16
    // ones keep one shared range, holding the data file's bytes.
    let buffer = plan
        .data_layout(|c| c.conversion == webnn_weights_runtime::Conversion::None)
        .unwrap();
    let mut bytes = Vec::new();
    buffer.write_data(&mut bytes).unwrap();
    let kept: Vec<&str> = plan
        .constants()
        .iter()
        .enumerate()
        .filter(|&(i, _)| buffer.range_of(i).is_some())
        .map(|(_, c)| c.name.as_str())
        .collect();
    assert_eq!(kept, ["norm_a", "norm_b"]);
    assert_eq!(buffer.ranges().len(), 1);
    for (i, c) in compiled.constants().iter().enumerate() {
        if let Some(range) = buffer.range_of(i) {
            let at = |offset: u64, length: u64| offset as usize..(offset + length) as usize;
            assert_eq!(
                bytes[at(range.offset, range.length)],
                data[at(c.offset, c.length)],
                "{}",
                c.name
            );
        }
    }
}

#[test]
fn distinct_tensors_do_not_share() {
    let pkg = package(&["packed4/quant.webnn", "packed4/quant.safetensors"]);
    let out = tempfile::tempdir().unwrap();
    let compiled = builder(pkg.path(), out.path(), "models/quant.webnn")
        .embedding(Embedding::IncludeBytes)
        .compile()
        .unwrap();
    assert!(compiled.shared_constants().is_empty());
    assert_eq!(compiled.range_count(), compiled.constants().len());
    let mut offsets: Vec<u64> = compiled.constants().iter().map(|c| c.offset).collect();
    offsets.dedup();
    assert_eq!(offsets.len(), compiled.constants().len());
}

/// Sets `path`'s modification time `secs` seconds into the past.
fn age(path: &Path, secs: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    file.set_modified(past).unwrap();
}

/// The stamp's line for the data file itself, as the build helper writes it (Unix).
#[cfg(unix)]
fn output_facts(meta: &fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    let mtime = meta
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "file {} mtime {mtime} ctime {}.{:09} dev {} ino {} output\n",
        meta.len(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.dev(),
        meta.ino()
    )
}

#[cfg(unix)]
#[test]
fn unchanged_facts_skip_the_data_and_changed_facts_do_not() {
    let pkg = package(&["packed4/quant.webnn", "packed4/quant.safetensors"]);
    let st = pkg.path().join("models/quant.safetensors");
    age(&st, 60);
    let out = tempfile::tempdir().unwrap();
    let build = || {
        builder(pkg.path(), out.path(), "models/quant.webnn")
            .embedding(Embedding::IncludeBytes)
            .compile()
            .unwrap()
    };
    let compiled = build();
    let data = compiled.artifact_dir().join(artifacts::DATA_FILE);
    let stamp = compiled.artifact_dir().join("data.stamp");
    let good = fs::read(&data).unwrap();
    // The stamp is written now, but the sidecar settled long before: the stamp is trusted.
    let stamp_text = fs::read_to_string(&stamp).unwrap();
    assert!(
        stamp_text.starts_with("webnn-weights data stamp 1\n"),
        "{stamp_text}"
    );
    assert!(
        stamp_text.contains(&st.display().to_string()),
        "{stamp_text}"
    );

    // Same facts: the data file is neither read nor written. Proof: bytes planted in it,
    // with the stamp's line for the data file's own facts forged to match, stay.
    let planted: Vec<u8> = good.iter().map(|b| b ^ 0x5a).collect();
    fs::write(&data, &planted).unwrap();
    let (inputs, _) = stamp_text.split_at(stamp_text.find(" output\n").unwrap());
    let inputs = &inputs[..inputs.rfind('\n').unwrap() + 1];
    let forged = format!("{inputs}{}", output_facts(&fs::metadata(&data).unwrap()));
    fs::write(&stamp, forged).unwrap();
    age(&stamp, 1);
    build();
    assert_eq!(
        fs::read(&data).unwrap(),
        planted,
        "skipped on the facts alone"
    );
    // The real stamp's line does not match the planted file: the data is rewritten.
    fs::write(&stamp, &stamp_text).unwrap();
    age(&stamp, 1);
    build();
    assert_eq!(
        fs::read(&data).unwrap(),
        good,
        "a changed data file is rewritten"
    );
    // A touched sidecar (a new modification time) changes the facts: the bytes are
    // compared and found equal, so the data file keeps its modification time.
    let kept = fs::metadata(&data).unwrap().modified().unwrap();
    fs::File::options()
        .write(true)
        .open(&st)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    build();
    assert_eq!(fs::metadata(&data).unwrap().modified().unwrap(), kept);
    assert_eq!(fs::read(&data).unwrap(), good);

    // A changed sidecar (same size, old modification time restored) is seen by its change
    // time and inode facts: the data follows it.
    let mut bytes = fs::read(&st).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let replacement = pkg.path().join("models/replacement.tmp");
    fs::write(&replacement, &bytes).unwrap();
    age(&replacement, 60);
    fs::rename(&replacement, &st).unwrap();
    build();
    assert_ne!(fs::read(&data).unwrap(), good);
    let plan_graph = pkg.path().join("models/quant.webnn");
    let graph = read_graph_file(&plan_graph).unwrap();
    let plan = plan_external_weights(&graph, &plan_graph, None, None).unwrap();
    let compiled = build();
    let now = fs::read(&data).unwrap();
    for (c, p) in compiled.constants().iter().zip(plan.constants()) {
        let range = c.offset as usize..(c.offset + c.length) as usize;
        assert_eq!(now[range], plan.read_constant(p).unwrap()[..], "{}", c.name);
    }
}

#[cfg(unix)]
#[test]
fn a_new_layout_with_the_same_sidecar_rewrites_the_data() {
    // The sidecar stays untouched and settled, so its facts match the stamp; only the
    // layout digest can tell that the graph now puts other tensors (same sizes) where.
    let pkg = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    generated_model(pkg.path(), &[1, 2, 3], 256);
    age(&pkg.path().join("models/gen.safetensors"), 60);
    let build = || {
        builder(pkg.path(), out.path(), "models/gen.webnn")
            .embedding(Embedding::IncludeBytes)
            .compile()
            .unwrap()
    };
    let compiled = build();
    let data = compiled.artifact_dir().join(artifacts::DATA_FILE);
    let byte_of = |compiled: &webnn_weights_build::CompiledGraph, bytes: &[u8], name: &str| {
        bytes[constant_offset(compiled, name)]
    };
    let before = fs::read(&data).unwrap();
    assert_eq!(byte_of(&compiled, &before, "w0"), 1);
    // The same stamp is trusted on a rebuild of the same graph (nothing rewritten).
    let stamp = compiled.artifact_dir().join("data.stamp");
    age(&stamp, 1);
    let kept = fs::metadata(&data).unwrap().modified().unwrap();
    build();
    assert_eq!(fs::metadata(&data).unwrap().modified().unwrap(), kept);

    // w0 and w2 swap tensors: the same sidecar, the same sizes, another layout.
    let graph = pkg.path().join("models/gen.webnn");
    let text = fs::read_to_string(&graph).unwrap();
    let swapped = text
        .replace("\"t0\"", "\"t-\"")
        .replace("\"t2\"", "\"t0\"")
        .replace("\"t-\"", "\"t2\"");
    assert_ne!(swapped, text);
    fs::write(&graph, swapped).unwrap();
    let compiled = build();
    let after = fs::read(&data).unwrap();
    assert_eq!(byte_of(&compiled, &after, "w0"), 3, "w0 holds t2 now");
    assert_eq!(byte_of(&compiled, &after, "w2"), 1, "w2 holds t0 now");
}

/// Writes `models/gen.webnn` and `models/gen.safetensors` under `pkg` (see
/// [`write_u8_model`]).
fn generated_model(pkg: &Path, fills: &[u8], len: usize) {
    write_u8_model(&pkg.join("models"), "gen", fills, len);
}

/// Where the constant `name` starts in the compiled data.
fn constant_offset(compiled: &webnn_weights_build::CompiledGraph, name: &str) -> usize {
    let c = compiled
        .constants()
        .iter()
        .find(|c| c.name == name)
        .unwrap();
    c.offset as usize
}

/// No temporary file of an atomic write is left in `dir`.
fn assert_no_leftovers(dir: &Path) {
    let names: Vec<String> = listing(dir).into_iter().map(|f| f.0).collect();
    assert!(
        names.iter().all(|n| !n.contains(".webnn-weights-tmp")),
        "{names:?}"
    );
}

#[cfg(unix)]
#[test]
fn data_of_the_same_length_is_updated_in_place_other_lengths_replace_the_file() {
    use std::os::unix::fs::MetadataExt;
    let pkg = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for embedding in [Embedding::StaticLib, Embedding::IncludeBytes] {
        let build = || {
            builder(pkg.path(), out.path(), "models/gen.webnn")
                .embedding(embedding)
                .compile()
                .unwrap()
        };
        // 20 MiB of data: more than one piece of the in-place comparison.
        let len = 5 << 20;
        generated_model(pkg.path(), &[1, 2, 3, 4], len);
        let compiled = build();
        let dir = compiled.artifact_dir().to_path_buf();
        let data = match embedding {
            Embedding::StaticLib => dir.join(artifacts::library_file(compiled.key())),
            _ => dir.join(artifacts::DATA_FILE),
        };
        let first = fs::metadata(&data).unwrap();
        let old = fs::read(&data).unwrap();

        // One tensor changed, same length: the same file, updated where it differs.
        generated_model(pkg.path(), &[1, 2, 9, 4], len);
        let compiled = build();
        let updated = fs::read(&data).unwrap();
        assert_eq!(
            fs::metadata(&data).unwrap().ino(),
            first.ino(),
            "{embedding:?}"
        );
        assert_ne!(updated, old);
        let changed: Vec<usize> = (0..updated.len())
            .filter(|&i| updated[i] != old[i])
            .collect();
        // Exactly w2's bytes differ: one run of `len` bytes, all 9 now.
        assert_eq!(changed.len(), len, "{embedding:?}");
        assert_eq!(changed[len - 1] - changed[0], len - 1);
        assert!(changed.iter().all(|&i| updated[i] == 9));
        let offset = |name: &str| constant_offset(&compiled, name);
        // Where the data starts in the file (after the object's head, if any).
        let object_head = changed[0] - offset("w2");
        for (name, fill) in [("w0", 1), ("w1", 2), ("w3", 4)] {
            let at = object_head + offset(name);
            assert!(updated[at..at + len].iter().all(|&b| b == fill), "{name}");
        }
        assert!(dir.join("data.stamp").exists());
        assert_no_leftovers(&dir);

        // The same bytes a clean build writes.
        fs::remove_dir_all(&dir).unwrap();
        build();
        assert_eq!(fs::read(&data).unwrap(), updated, "{embedding:?}");

        // Nothing to change (the stamp removed, so every byte is compared): untouched.
        let before = fs::metadata(&data).unwrap();
        fs::remove_file(dir.join("data.stamp")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        build();
        let after = fs::metadata(&data).unwrap();
        assert_eq!(after.modified().unwrap(), before.modified().unwrap());
        assert_eq!(after.ino(), before.ino());

        // Another length: a new file in its place, no leftovers.
        generated_model(pkg.path(), &[1, 2, 9, 4, 5], len);
        build();
        let replaced = fs::read(&data).unwrap();
        assert_ne!(fs::metadata(&data).unwrap().ino(), before.ino());
        assert_no_leftovers(&dir);
        fs::remove_dir_all(&dir).unwrap();
        build();
        assert_eq!(fs::read(&data).unwrap(), replaced, "{embedding:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_build_checks_what_validate_checks_and_reports_every_mistake() {
    // An undefined input: what `webnn-weights validate` reports, the build reports too.
    let pkg = package(&["packed4/quant.safetensors"]);
    let graph = pkg.path().join("models/quant.webnn");
    fs::write(
        &graph,
        "webnn_graph \"q\" v1 { inputs { x: f32[3]; } consts { scale: f32[3] @weights(\"scale\"); } nodes { q = add(scale, undefined_x); } outputs { q; } }",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let err = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/quant.webnn", &err).to_string();
    assert!(
        text.contains("node 0 (`q` = add): input `undefined_x` is not defined"),
        "{text}"
    );
    assert!(!out.path().join("webnn-weights").exists());

    // A wrong data type, a wrong shape and a missing tensor: all three in one build.
    fs::write(
        &graph,
        "webnn_graph \"q\" v1 { inputs { x: f32[3]; } consts { a: i32[3] @weights(\"scale\"); b: i8[4] @weights(\"zero\"); c: f32[3] @weights(\"scael\"); } nodes { y = add(x, a); } outputs { y; } }",
    )
    .unwrap();
    let err = builder(pkg.path(), out.path(), "models/quant.webnn")
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/quant.webnn", &err).to_string();
    for wanted in [
        "3 constants cannot be resolved",
        "constant `a`",
        "constant `b`",
        "constant `c`",
        "did you mean `scale`?",
    ] {
        assert!(text.contains(wanted), "{wanted}: {text}");
    }
}

#[test]
fn an_explicit_path_written_from_the_package_root_says_what_to_write() {
    let pkg = package(&["packed4/quant.webnn", "packed4/quant.safetensors"]);
    let out = tempfile::tempdir().unwrap();
    // The graph is in models/: `models/quant.safetensors` reads as models/models/….
    let err = builder(pkg.path(), out.path(), "models/quant.webnn")
        .weights("models/quant.safetensors")
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/quant.webnn", &err).to_string();
    for wanted in [
        "models/models/quant.safetensors does not exist (explicit paths are relative to the graph's folder)",
        "models/quant.safetensors does (the same path relative to the package root)",
        "fix: write `.weights(\"quant.safetensors\")` (relative to the graph's folder)",
    ] {
        assert!(text.contains(wanted), "{wanted}: {text}");
    }
    // A manifest given the same way, for a blob.
    let pkg = package(&[
        "resnet-head/resnet_head.webnn",
        "resnet-head/resnet_head.weights",
        "resnet-head/resnet_head.manifest.json",
    ]);
    let err = builder(pkg.path(), out.path(), "models/resnet_head.webnn")
        .weights("resnet_head.weights")
        .manifest("models/resnet_head.manifest.json")
        .compile()
        .unwrap_err();
    let text = Diagnostic::new("models/resnet_head.webnn", &err).to_string();
    assert!(
        text.contains("fix: write `.manifest(\"resnet_head.manifest.json\")`"),
        "{text}"
    );
    // A path that names nothing from either folder keeps the resolver's error.
    let err = builder(pkg.path(), out.path(), "models/resnet_head.webnn")
        .weights("nowhere.weights")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Resolve(_)), "{err}");
}

/// Without the feature `onnx`, an `.onnx` path is an error naming the feature and the line to
/// add (with the feature: tests/onnx.rs).
#[cfg(not(feature = "onnx"))]
#[test]
fn an_onnx_model_without_the_feature_names_it() {
    let pkg = package(&[]);
    fs::write(pkg.path().join("models/model.ONNX"), b"\x08\x08").unwrap();
    let out = tempfile::tempdir().unwrap();
    let err = builder(pkg.path(), out.path(), "models/model.ONNX")
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::OnnxFeature { .. }), "{err:?}");
    let text = Diagnostic::new("models/model.ONNX", &err).to_string();
    assert!(text.contains("is an ONNX model"), "{text}");
    assert!(text.contains("without its feature `onnx`"), "{text}");
    assert!(text.contains("features = [\"onnx\"]"), "{text}");
    assert!(fs::read_dir(out.path()).unwrap().next().is_none());
}

/// `.override_dim(…)` and `.input_shape(…)` exist with and without the feature `onnx` (the
/// docs' example compiles either way): on a WebNN graph they are a setting error; without the
/// feature, on a model, the error names the feature (with it: tests/onnx.rs).
#[test]
fn the_onnx_setters_compile_without_the_feature() {
    let pkg = package(&[]);
    fs::write(
        pkg.path().join("models/g.webnn"),
        "webnn_graph \"g\" v1 {\n  inputs { x: f32[1]; }\n  nodes { y = relu(x); }\n  outputs { y; }\n}\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let err = builder(pkg.path(), out.path(), "models/g.webnn")
        .override_dim("batch", 1)
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Setting { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(".override_dim(…) applies to ONNX models"),
        "{err}"
    );
    let err = builder(pkg.path(), out.path(), "models/g.webnn")
        .input_shape("x", &[1])
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Setting { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(".input_shape(…) applies to ONNX models"),
        "{err}"
    );
    if cfg!(feature = "onnx") {
        return;
    }
    fs::write(pkg.path().join("models/model.onnx"), b"\x08\x08").unwrap();
    let err = builder(pkg.path(), out.path(), "models/model.onnx")
        .override_dim("batch", 1)
        .input_shape("x", &[1, 3, 224, 224])
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::OnnxFeature { .. }), "{err:?}");
    let text = Diagnostic::new("models/model.onnx", &err).to_string();
    assert!(text.contains("without its feature `onnx`"), "{text}");
    assert!(text.contains("features = [\"onnx\"]"), "{text}");
}

/// A graph file that does not exist: the fix names a graph file of the folder with a close
/// name, or else the folder searched, relative to the package root, and what to check.
#[test]
fn a_missing_graph_says_what_was_meant_or_where_it_looked() {
    let pkg = package(&[]);
    let graph = "webnn_graph \"g\" v1 {\n  inputs { x: f32[1]; }\n  nodes { y = relu(x); }\n  outputs { y; }\n}\n";
    fs::write(pkg.path().join("models/model.webnn"), graph).unwrap();
    fs::write(pkg.path().join("models/model.webnn.lock"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    let diagnose = |path: &str| {
        let err = builder(pkg.path(), out.path(), path).compile().unwrap_err();
        assert!(matches!(err, Error::GraphNotFound { .. }), "{err:?}");
        let text = Diagnostic::new(path, &err).to_string();
        println!("{text}");
        assert!(text.contains("cannot read"), "{text}");
        assert!(text.contains("caused by: "), "{text}");
        text
    };
    // A typo: the graph file of the same folder (ONNX models and GraphJson count too).
    let text = diagnose("models/modle.webnn");
    assert!(
        text.contains("fix: did you mean `models/model.webnn`?"),
        "{text}"
    );
    fs::write(pkg.path().join("models/encoder.onnx"), b"\x08\x08").unwrap();
    let text = diagnose("models/encodr.onnx");
    assert!(
        text.contains("fix: did you mean `models/encoder.onnx`?"),
        "{text}"
    );
    // Nothing near in the folder: which folder, relative to what.
    let text = diagnose("models/decoder_large.webnn");
    assert!(!text.contains("did you mean"), "{text}");
    assert!(
        text.contains("fix: the folder `models` relative to the package root (CARGO_MANIFEST_DIR"),
        "{text}"
    );
    assert!(text.contains("holds no graph file"), "{text}");
    // No such folder.
    let text = diagnose("modles/model.webnn");
    assert!(
        text.contains("fix: the folder `modles` does not exist relative to the package root"),
        "{text}"
    );
    assert!(text.contains(&pkg.path().display().to_string()), "{text}");
    assert!(fs::read_dir(out.path()).unwrap().next().is_none());
}
