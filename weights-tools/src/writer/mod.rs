//! Writing a graph's external constants as SafeTensors: one archive
//! ([`write_external_weights_safetensors`], in `single`) or the Hugging Face sharded layout
//! ([`write_external_weights_safetensors_sharded`], in `sharded`). Both check every
//! constant against its supplied bytes the same way first (`prepare`) and fail with
//! [`WriteError`] (in `error`).

// Errors are cold and carry the context of their message (for every file of the writer).
#![allow(clippy::result_large_err)]

mod error;
mod prepare;
mod sharded;
mod single;

pub use error::WriteError;
pub(crate) use sharded::stage_sharded;
pub use sharded::{write_external_weights_safetensors_sharded, ShardedOutput};
pub use single::write_external_weights_safetensors;

/// Stages the SafeTensors archive of `graph`'s `@weights` constants (bytes by reference, as
/// [`write_external_weights_safetensors`] takes them) as part of a set of files: serialized
/// and synced under a marked temporary name in `destination`'s folder, installed with the rest
/// of the set by [`Staging::commit`](crate::weight_tools::Staging::commit) (nothing is
/// installed if the set fails). What a command that writes a graph and its archive together
/// uses (`convert-onnx`).
///
/// ```
/// use std::collections::HashMap;
/// use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};
/// let mut graph = GraphJson::new(None);
/// graph.consts.insert("w".into(), ConstDecl {
///     data_type: DataType::Uint8,
///     shape: vec![2],
///     init: ConstInit::Weights { r#ref: "w".into() },
/// });
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("model.safetensors");
/// let mut staging = webnn_weights_tools::weight_tools::Staging::new();
/// let weights = HashMap::from([("w".to_string(), &[1u8, 2][..])]);
/// webnn_weights_tools::stage_external_weights_safetensors(&graph, &weights, &path, &mut staging)
///     .unwrap();
/// assert!(!path.exists(), "staged, not installed");
/// staging.commit().unwrap();
/// assert!(path.exists());
/// ```
pub fn stage_external_weights_safetensors(
    graph: &webnn_weights_runtime::GraphJson,
    weights: &std::collections::HashMap<String, &[u8]>,
    destination: &std::path::Path,
    staging: &mut crate::weight_tools::Staging,
) -> Result<(), crate::weight_tools::ToolError> {
    let (_, files) = stage_sharded(graph, weights, destination, u64::MAX)?;
    for (file, path) in files {
        staging.push(file, path);
    }
    Ok(())
}

/// What the writers' tests share: a graph of `@weights` constants and a file count.
#[cfg(test)]
mod test_graphs {
    use std::path::Path;
    use webnn_weights_runtime::{ConstDecl, ConstInit, DataType, GraphJson};

    /// A graph whose constants are `(name, type, shape, reference)`.
    pub(super) fn graph(consts: &[(&str, DataType, &[u32], &str)]) -> GraphJson {
        let mut g = GraphJson::new(None);
        for &(name, data_type, shape, reference) in consts {
            g.consts.insert(
                name.to_string(),
                ConstDecl {
                    data_type,
                    shape: shape.to_vec(),
                    init: ConstInit::Weights {
                        r#ref: reference.to_string(),
                    },
                },
            );
        }
        g
    }

    /// The number of entries in `dir` (0 when it cannot be read).
    pub(super) fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
    }
}
