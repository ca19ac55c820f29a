//! Finding the sidecar and its manifest, per the format's discovery rules (planning layer).

use super::error::ResolveError;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// The graph being resolved, for paths and messages.
pub(crate) struct Context<'a> {
    pub graph: &'a Path,
    folder: PathBuf,
}

impl<'a> Context<'a> {
    pub fn new(graph: &'a Path) -> Context<'a> {
        let folder = match graph.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Context { graph, folder }
    }

    /// The graph's folder (`.` for a bare file name).
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// `path` joined to the graph's folder unless it is absolute.
    pub fn relative(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.folder.join(path)
        }
    }

    /// A file beside the graph named `<stem><suffix>`, if the graph has a stem.
    fn beside_stem(&self, suffix: &str) -> Option<PathBuf> {
        let stem = self.graph.file_stem()?;
        let mut name = OsString::from(stem);
        name.push(suffix);
        Some(self.folder.join(name))
    }

    pub fn io(&self, path: &Path, source: io::Error) -> ResolveError {
        ResolveError::Io {
            graph: self.graph.to_path_buf(),
            path: path.to_path_buf(),
            source,
        }
    }

    /// Whether `path` is an existing regular file; `Ok(false)` when it does not exist;
    /// an error when it is a folder or cannot be inspected.
    pub fn is_file(&self, path: &Path, role: &'static str) -> Result<bool, ResolveError> {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => Ok(true),
            Ok(_) => Err(ResolveError::NotAFile {
                graph: self.graph.to_path_buf(),
                role,
                path: path.to_path_buf(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.io(path, e)),
        }
    }

    /// `path` joined to the graph's folder, which must be an existing file (`role` names it
    /// in errors).
    pub fn explicit(&self, path: &Path, role: &'static str) -> Result<PathBuf, ResolveError> {
        let path = self.relative(path);
        if self.is_file(&path, role)? {
            Ok(path)
        } else {
            Err(ResolveError::NotFound {
                graph: self.graph.to_path_buf(),
                role,
                path,
            })
        }
    }

    /// The explicit weights path, or the first existing discovery candidate (the format's
    /// four, then the two sharded-index names).
    pub fn find_sidecar(
        &self,
        weights: Option<&Path>,
        watched: &mut Vec<PathBuf>,
        constant: &str,
        reference: &str,
    ) -> Result<PathBuf, ResolveError> {
        if let Some(w) = weights {
            let path = self.relative(w);
            watched.push(path.clone());
            return self.explicit(w, "weights file");
        }
        let candidates: Vec<PathBuf> = [
            self.beside_stem(".safetensors"),
            self.beside_stem(".weights"),
            Some(self.folder.join("model.safetensors")),
            Some(self.folder.join("model.weights")),
        ]
        .into_iter()
        .flatten()
        .fold(Vec::new(), |mut v, p| {
            // a graph named model.* has the same stem and default candidates
            push_unique(&mut v, &p);
            v
        });
        // An extension: only when the format's candidates are all absent, a sharded
        // archive's index, `<stem>.safetensors.index.json`, then the default name.
        let index_candidates: Vec<PathBuf> = [
            self.beside_stem(crate::sidecar::formats::sharded::INDEX_SUFFIX),
            Some(self.folder.join("model.safetensors.index.json")),
        ]
        .into_iter()
        .flatten()
        .fold(Vec::new(), |mut v, p| {
            push_unique(&mut v, &p);
            v
        });
        for candidate in candidates.iter().chain(&index_candidates) {
            push_unique(watched, candidate);
            if self.is_file(candidate, "weights file")? {
                return Ok(candidate.clone());
            }
        }
        Err(ResolveError::NoSidecar {
            graph: self.graph.to_path_buf(),
            constant: constant.to_string(),
            reference: reference.to_string(),
            candidates,
            index_candidates,
        })
    }

    /// The explicit manifest, or `<stem>.manifest.json`, then `manifest.json`.
    pub fn find_manifest(
        &self,
        manifest: Option<&Path>,
        blob: &Path,
        watched: &mut Vec<PathBuf>,
    ) -> Result<PathBuf, ResolveError> {
        if let Some(m) = manifest {
            push_unique(watched, &self.relative(m));
            return self.explicit(m, "manifest");
        }
        let candidates: Vec<PathBuf> = [
            self.beside_stem(".manifest.json"),
            Some(self.folder.join("manifest.json")),
        ]
        .into_iter()
        .flatten()
        .collect();
        for candidate in &candidates {
            push_unique(watched, candidate);
            if self.is_file(candidate, "manifest")? {
                return Ok(candidate.clone());
            }
        }
        Err(ResolveError::NoManifest {
            graph: self.graph.to_path_buf(),
            sidecar: blob.to_path_buf(),
            candidates,
        })
    }
}

fn push_unique(watched: &mut Vec<PathBuf>, path: &Path) {
    if !watched.iter().any(|p| p == path) {
        watched.push(path.to_path_buf());
    }
}
