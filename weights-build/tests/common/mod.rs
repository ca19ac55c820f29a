//! What the build helper's integration tests share: the fixtures, a package folder made
//! of them, a generated model, and a builder that writes into a given output folder without
//! printing cargo directives.
#![allow(dead_code)] // each test binary uses its own part

use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_build::Builder;

/// The shared fixtures, `tests/fixtures/` at the repository's root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A package folder with `models/` holding copies of the given fixture files.
pub fn package(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("models")).unwrap();
    for file in files {
        let name = Path::new(file).file_name().unwrap();
        fs::copy(fixtures().join(file), dir.path().join("models").join(name)).unwrap();
    }
    dir
}

/// A builder for `graph` (relative to the package `pkg`) writing under `out`, printing no
/// cargo directives.
pub fn builder(pkg: &Path, out: &Path, graph: &str) -> Builder {
    Builder::new(graph)
        .package_dir(pkg)
        .out_dir(out)
        .emit_directives(false)
}

/// Every file of `dir` with its bytes and modification time, sorted by name (to prove
/// what was written, and what was left untouched).
pub fn listing(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
                e.metadata().unwrap().modified().unwrap(),
            )
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// Writes `models/<stem>.webnn` and `models/<stem>.safetensors`: one u8 tensor of `len`
/// bytes per fill, every byte the fill; constant `w<i>` refers to tensor `t<i>`.
pub fn write_u8_model(models: &Path, stem: &str, fills: &[u8], len: usize) {
    use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};
    let mut graph = GraphJson::new(Some(stem.to_string()));
    let mut tensors = Vec::new();
    for (i, &fill) in fills.iter().enumerate() {
        graph.consts.insert(
            format!("w{i}"),
            ConstDecl {
                data_type: DataType::Uint8,
                shape: vec![len as u32],
                init: ConstInit::Weights {
                    r#ref: format!("t{i}"),
                },
            },
        );
        tensors.push((format!("t{i}"), vec![fill; len]));
    }
    let weights = tensors
        .iter()
        .map(|(r, b)| (r.clone(), b.as_slice()))
        .collect();
    fs::create_dir_all(models).unwrap();
    webnn_weights_tools::write_external_weights_safetensors(
        &graph,
        &weights,
        &models.join(format!("{stem}.safetensors")),
    )
    .unwrap();
    let text = webnn_weights_runtime::to_webnn_text(&graph).unwrap();
    fs::write(models.join(format!("{stem}.webnn")), text).unwrap();
}

/// Writes the weights lock of the graph at `graph_path` for its current sidecar (what
/// `webnn-weights lock` writes, beside the graph); returns it.
pub fn write_lock(graph_path: &Path) -> webnn_weights_runtime::WeightsLock {
    use webnn_weights_runtime::{plan_external_weights, read_graph_file, WeightsLock};
    let graph = read_graph_file(graph_path).unwrap();
    let lock = plan_external_weights(&graph, graph_path, None, None)
        .unwrap()
        .to_lock()
        .unwrap();
    fs::write(WeightsLock::path_for(graph_path), lock.to_json()).unwrap();
    lock
}

/// The constant table the artifacts in `dir` hold: the file (`include_bytes!` mode), or the
/// bytes the static library links after the data (found where its magic starts a table of
/// the length the index gives). Also checks that the linked graph JSON follows it.
pub fn table_bytes(dir: &Path) -> Vec<u8> {
    use webnn_weights_artifacts::{ConstantTable, Index, INDEX_FILE, TABLE_FILE, TABLE_MAGIC};
    let index = Index::from_json(&std::fs::read_to_string(dir.join(INDEX_FILE)).unwrap()).unwrap();
    let linked = index
        .data
        .as_ref()
        .and_then(|d| Some((d, d.table?, d.graph?)));
    let Some((data, table, graph)) = linked else {
        return std::fs::read(dir.join(TABLE_FILE)).unwrap();
    };
    let file = std::fs::read(dir.join(&data.file)).unwrap();
    let len = table.length as usize;
    let at = (0..file.len().saturating_sub(len))
        .filter(|&at| file[at..].starts_with(&TABLE_MAGIC))
        .find(|&at| ConstantTable::parse(&file[at..at + len]).is_ok())
        .expect("the library links the constant table");
    let data_start = at - table.offset as usize;
    let json = &file[data_start + graph.offset as usize..][..graph.length as usize];
    serde_json::from_slice::<serde_json::Value>(json).expect("the linked graph JSON parses");
    file[at..at + len].to_vec()
}
