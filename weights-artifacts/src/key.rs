//! The artifact key of a graph: `<stem>-<16 hex digits>`.
//!
//! `webnn-weights-build` computes it from the package root and the path given in build.rs;
//! `include_webnn_graph!` computes it from `CARGO_MANIFEST_DIR` and its literal; both call
//! [`artifact_key`] here (the tests crate checks the agreement end to end). The hash covers the graph's path relative to the package root after
//! lexical normalization (`.` and `..` folded), so `models/model.webnn` and
//! `./models/../models/model.webnn` share one key, and the key does not depend on where the
//! package is checked out. Paths outside the package keep their absolute normalized form.

use crate::hex;
use std::path::{Component, Path, PathBuf};

/// Folds `.` and `..` components without touching the file system. A `..` that would climb
/// above the start of a relative path is kept.
///
/// ```
/// use std::path::{Path, PathBuf};
/// use webnn_weights_artifacts::normalize;
/// assert_eq!(normalize(Path::new("a/./b/../c")), PathBuf::from("a/c"));
/// assert_eq!(normalize(Path::new("../x/./y")), PathBuf::from("../x/y"));
/// ```
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The key of the graph at `literal` (as written in build.rs / the macro) in the package
/// whose root is `package_dir` (`CARGO_MANIFEST_DIR`): the file stem (ASCII letters and
/// digits kept, anything else `_`, at most 40 characters), `-`, and 16 hex digits of the
/// SHA-256 of the package-relative path with forward slashes.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_artifacts::artifact_key;
/// let key = artifact_key(Path::new("/pkg"), Path::new("models/model.webnn"));
/// assert!(key.starts_with("model-") && key.len() == "model-".len() + 16);
/// // The same file written another way, or the package checked out elsewhere: same key.
/// assert_eq!(key, artifact_key(Path::new("/pkg"), Path::new("./models/../models/model.webnn")));
/// assert_eq!(key, artifact_key(Path::new("/src/pkg"), Path::new("models/model.webnn")));
/// ```
pub fn artifact_key(package_dir: &Path, literal: &Path) -> String {
    let package_dir = normalize(package_dir);
    let full = normalize(&package_dir.join(literal));
    let relative = full.strip_prefix(&package_dir).unwrap_or(&full);
    // Forward slashes so that the key is the same on every host.
    let text: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let digest = hmac_sha256::Hash::hash(text.join("/").as_bytes());
    let stem: String = full
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    format!("{stem}-{}", hex(&digest[..8]))
}

/// The environment variable by which the build helper tells the macro that the build
/// script's **current run** prepared the graph of `key`: it prints
/// `cargo:rustc-env=<this name>=<`[`prepared_stamp`]`>`, and cargo hands exactly the current
/// run's values to rustc, where `include_webnn_graph!` reads them. Artifacts that an earlier
/// run left in `OUT_DIR` have no such variable, so the macro refuses them.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_artifacts::{artifact_key, prepared_env_var};
/// let key = artifact_key(Path::new("/pkg"), Path::new("models/model.webnn"));
/// let var = prepared_env_var(&key);
/// assert!(var.starts_with("WEBNN_WEIGHTS_PREPARED_MODEL_"));
/// assert!(var.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'));
/// ```
pub fn prepared_env_var(key: &str) -> String {
    let name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("WEBNN_WEIGHTS_PREPARED_{name}")
}

/// The value of [`prepared_env_var`]: 16 hex digits of the SHA-256 of the `index.json` that
/// the run wrote, so that the macro also refuses an index that is not the one this run
/// wrote.
///
/// ```
/// let stamp = webnn_weights_artifacts::prepared_stamp(b"{}");
/// assert_eq!(stamp.len(), 16);
/// assert_ne!(stamp, webnn_weights_artifacts::prepared_stamp(b"{ }"));
/// ```
pub fn prepared_stamp(index_json: &[u8]) -> String {
    hex(&hmac_sha256::Hash::hash(index_json)[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_sha256() {
        // FIPS 180-2's first example: SHA-256("abc") starts ba7816bf8f01cfea.
        assert_eq!(prepared_stamp(b"abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn same_key_for_equivalent_literals() {
        let root = Path::new("/pkg");
        let a = artifact_key(root, Path::new("models/model.webnn"));
        assert_eq!(
            a,
            artifact_key(root, Path::new("./models/../models/model.webnn"))
        );
        assert_eq!(a, artifact_key(root, Path::new("/pkg/models/model.webnn")));
        // Independent of where the package lives.
        assert_eq!(
            a,
            artifact_key(Path::new("/elsewhere/pkg"), Path::new("models/model.webnn"))
        );
        assert!(a.starts_with("model-"));
        assert_eq!(a.len(), "model-".len() + 16);
        assert_ne!(a, artifact_key(root, Path::new("models/other/model.webnn")));
    }

    #[test]
    fn stem_is_sanitized() {
        let key = artifact_key(Path::new("/p"), Path::new("my model.v2.webnn"));
        assert!(key.starts_with("my_model_v2-"), "{key}");
    }

    #[test]
    fn parent_dirs_are_kept_outside_the_package() {
        assert_ne!(
            artifact_key(Path::new("/a/pkg"), Path::new("../m.webnn")),
            artifact_key(Path::new("/a/pkg"), Path::new("m.webnn"))
        );
        assert_eq!(normalize(Path::new("../x/./y")), PathBuf::from("../x/y"));
    }
}
