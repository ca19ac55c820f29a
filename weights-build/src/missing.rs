//! A graph file that does not exist: what was looked for, and where the user probably meant.

use crate::Error;
use std::path::Path;

/// The extensions of the files a build script prepares: WebNN text, GraphJson, ONNX.
const GRAPH_EXTENSIONS: [&str; 3] = ["webnn", "json", "onnx"];

/// [`Error::GraphNotFound`] when the graph `graph` (as given, relative to `package_dir`) is
/// not at `graph_path`; `Ok` when it is there, or cannot be looked at for another reason
/// (the read that follows reports that).
pub(crate) fn check(graph: &Path, graph_path: &Path, package_dir: &Path) -> Result<(), Error> {
    let source = match std::fs::metadata(graph_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => e,
        _ => return Ok(()),
    };
    let folder = graph_path.parent().unwrap_or(Path::new(""));
    let near = graph_path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| nearest_graph_file(folder, name))
        .map(|name| graph.with_file_name(name));
    Err(Error::GraphNotFound {
        graph: graph.to_path_buf(),
        path: graph_path.to_path_buf(),
        package_dir: package_dir.to_path_buf(),
        folder_exists: folder.is_dir(),
        near,
        source,
    })
}

/// The graph file of `folder` (by extension) whose name is nearest to `name`, if close.
fn nearest_graph_file(folder: &Path, name: &str) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|file| {
            Path::new(file).extension().is_some_and(|ext| {
                GRAPH_EXTENSIONS
                    .iter()
                    .any(|graph| ext.eq_ignore_ascii_case(graph))
            })
        })
        .collect();
    // Sorted: of equally near names, the same one on every file system.
    names.sort();
    webnn_weights_artifacts::closest(name, names.iter().map(String::as_str)).map(str::to_string)
}
