//! Helpers shared by the weight-tool commands.

use super::{CliError, GraphFormat};
use std::path::Path;
use webnn_weights_runtime::{GraphJson, JsonStyle};
use webnn_weights_tools::weight_tools::{Staging, ToolError};

/// Stages `graph` as the file `path`, streamed into the staging file: `.webnn` text when
/// the extension is `.webnn`, otherwise GraphJson in `style` (pretty is byte-identical to
/// what `webnn-graph` 0.4.0 writes, no trailing newline).
pub fn stage_graph(
    staging: &mut Staging,
    path: &Path,
    graph: &GraphJson,
    style: JsonStyle,
) -> Result<(), CliError> {
    let format = GraphFormat::for_tool_output(path);
    format.check_style(style, path)?;
    let mut failure = None;
    let result = staging.stage(path, |w| {
        format.write_to(graph, style, w, path).map_err(|e| {
            let tool = ToolError::invalid(path, e.to_string());
            failure = Some(e);
            tool
        })
    });
    match (result, failure) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e.into()),
        (Err(e), None) => Err(e.into()),
    }
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
