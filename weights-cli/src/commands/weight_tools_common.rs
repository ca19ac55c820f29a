//! Helpers shared by the weight-tool commands.

use super::{CliError, GraphFormat};
use std::path::Path;
use webnn_weights_runtime::GraphJson;
use webnn_weights_tools::weight_tools::{Staging, ToolError};

/// Serializes `graph` for `path`: `.webnn` text when the extension is `.webnn`, otherwise
/// pretty GraphJson without a trailing newline (what `webnn-graph` 0.4.0 writes).
pub fn graph_bytes(graph: &GraphJson, path: &Path) -> Result<Vec<u8>, CliError> {
    GraphFormat::for_tool_output(path).render(graph, path)
}

/// Stages `bytes` as the file `path`.
pub fn stage_bytes(staging: &mut Staging, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    staging.stage(path, |w| {
        std::io::Write::write_all(w, bytes).map_err(|e| ToolError::io(path, e))
    })
}

/// Prints a line on stderr unless `--quiet` was given.
pub fn note(message: std::fmt::Arguments<'_>) {
    if !super::quiet() {
        eprintln!("{message}");
    }
}

/// Fails with a usage error when two output flags name the same file.
pub fn distinct_outputs(outputs: &[(&str, &Path)]) -> Result<(), CliError> {
    for (i, (flag_a, a)) in outputs.iter().enumerate() {
        for (flag_b, b) in &outputs[i + 1..] {
            let same = match (std::path::absolute(a), std::path::absolute(b)) {
                (Ok(x), Ok(y)) => x == y,
                _ => a == b,
            };
            if same {
                return Err(CliError::Usage(format!(
                    "{flag_a} and {flag_b} both name {}; give each output its own file",
                    a.display()
                )));
            }
        }
    }
    Ok(())
}
