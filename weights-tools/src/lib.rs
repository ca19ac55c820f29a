//! # webnn-weights-tools
//!
//! What the `webnn-weights` command needs beside the runtime, and applications do not: the
//! SafeTensors writer ([`write_external_weights_safetensors`]) and the WGWT blob tools
//! ([`weight_tools`]); outputs are installed by `webnn-weights-atomic` (each file atomically,
//! a set of files all or nothing on error, not against a kill). Sidecars are read through the
//! runtime's readers (`webnn_weights_runtime::formats`), so a file gets the same verdict here
//! as in the resolver (one documented exception: a blob whose WGWT header has a version other
//! than 1 is read by the resolver, which interprets no header, and rejected by the blob tools).
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod weight_tools;
mod writer;

pub use writer::{
    write_external_weights_safetensors, write_external_weights_safetensors_sharded, ShardedOutput,
    WriteError,
};
