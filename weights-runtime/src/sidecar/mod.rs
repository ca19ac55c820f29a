//! The sidecar readers: files in, a catalog of stored tensors out, with no graph knowledge
//! (the resolver adds the graph). Public as [`formats`](crate::formats) (one reader per
//! format) and [`manifest`](crate::manifest) (the blob's JSON manifest); [`StoredFile`] is
//! a file as a reader found it.

// The modules are layers; `LAYERS` gives their order and what each holds.
mod file;
pub mod formats;
pub mod manifest;

/// The sidecar modules from the bottom up, each importing (`super::…`,
/// `crate::sidecar::…`, or a name re-exported here or at the crate root) only from those
/// before it; `layer_tests` reads the sources and fails on an import that goes up.
#[cfg(test)]
const LAYERS: [(&str, &str); 3] = [
    ("file", "a file as read: path, size, modified time"),
    ("manifest", "the JSON manifest addressing a blob"),
    ("formats", "one reader per format: files -> catalog"),
];

pub(crate) use file::Stamp;
pub use file::StoredFile;

#[cfg(test)]
mod layer_tests {
    #[test]
    fn every_import_goes_down_the_layers() {
        webnn_weights_test_support::layers::assert_layered(
            &crate::layer_tests::src(),
            "sidecar",
            &super::LAYERS,
        );
    }
}
