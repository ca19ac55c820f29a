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
