//! Sidecar readers: one module per format, each turning files into a [`Catalog`] of
//! stored tensors (name, storage type, shape, file, byte range); every format reports its
//! problems as the one typed [`FormatError`]. No graph is involved: the resolver and
//! `inspect` read sidecars through these functions, and the blob tools through the resolver
//! (`unpack_weights` through the manifest reader the blob format uses), so one file gets one
//! verdict everywhere.
//!
//! The kind of a sidecar is decided by its file name, as the format says
//! ([`SidecarFormat::of_path`]); [`SidecarFormat::sniff`] looks at content only to
//! suggest the right name or flag in a message, never to read a file differently.
//!
//! Formats: [`safetensors`] (a SafeTensors archive), a `.weights` blob addressed by a JSON
//! manifest (read with [`Catalog::read_blob`]; its module is private, as it has nothing
//! else to offer) and [`sharded`] (a Hugging Face index `model.safetensors.index.json` over
//! several archives, producing a catalog whose tensors span several files,
//! [`Catalog::files`]).

pub(crate) mod blob;
pub mod safetensors;
pub mod sharded;

use crate::sidecar::manifest::ManifestError;
use crate::sidecar::{Stamp, StoredFile};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The kinds of sidecar files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SidecarFormat {
    /// A SafeTensors archive.
    SafeTensors,
    /// A raw blob whose tensors a JSON manifest addresses.
    Blob,
    /// A sharded SafeTensors archive: a Hugging Face index (`*.safetensors.index.json`)
    /// naming, for every tensor, the archive (shard) beside it that holds it.
    ShardedSafeTensors,
}

impl SidecarFormat {
    /// The kind of the file at `path`, by its name, as the format decides: an extension
    /// `safetensors` or `safetensor` (any letter case) is an archive, anything else a blob;
    /// and (an extension) a name ending in `.safetensors.index.json` is a sharded
    /// archive's index.
    ///
    /// ```
    /// use std::path::Path;
    /// use webnn_weights_runtime::formats::SidecarFormat;
    /// assert_eq!(SidecarFormat::of_path(Path::new("m.SafeTensors")), SidecarFormat::SafeTensors);
    /// assert_eq!(SidecarFormat::of_path(Path::new("content.bin")), SidecarFormat::Blob);
    /// assert_eq!(
    ///     SidecarFormat::of_path(Path::new("ckpt/Model.SafeTensors.Index.JSON")),
    ///     SidecarFormat::ShardedSafeTensors
    /// );
    /// assert_eq!(SidecarFormat::of_path(Path::new("model.index.json")), SidecarFormat::Blob);
    /// ```
    pub fn of_path(path: &Path) -> SidecarFormat {
        if sharded::is_index_path(path) {
            return SidecarFormat::ShardedSafeTensors;
        }
        let archive = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            e.eq_ignore_ascii_case("safetensors") || e.eq_ignore_ascii_case("safetensor")
        });
        if archive {
            SidecarFormat::SafeTensors
        } else {
            SidecarFormat::Blob
        }
    }

    /// What the first bytes of a file of `file_len` bytes look like: `Some(SafeTensors)`
    /// when they start like an archive (an 8-byte little-endian header length that fits
    /// the file, then `{`). Only for hints in messages: the kind of a file is its name's.
    ///
    /// ```
    /// use webnn_weights_runtime::formats::SidecarFormat;
    /// let mut head = 2u64.to_le_bytes().to_vec();
    /// head.extend_from_slice(b"{}");
    /// assert_eq!(SidecarFormat::sniff(&head, 10), Some(SidecarFormat::SafeTensors));
    /// assert_eq!(SidecarFormat::sniff(b"WGWT\x01\0\0\0", 8), None);
    /// ```
    pub fn sniff(head: &[u8], file_len: u64) -> Option<SidecarFormat> {
        let (prefix, rest) = head.split_first_chunk::<8>()?;
        let n = u64::from_le_bytes(*prefix);
        let fits = (2..=safetensors::SAFETENSORS_MAX_HEADER_SIZE).contains(&n)
            && n <= file_len.saturating_sub(8);
        (fits && rest.first() == Some(&b'{')).then_some(SidecarFormat::SafeTensors)
    }

    /// [`SidecarFormat::sniff`] of the first bytes of the file at `path`; `None` when it
    /// cannot be read.
    pub fn sniff_file(path: &Path) -> Option<SidecarFormat> {
        use std::io::Read;
        let file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        let mut head = Vec::with_capacity(9);
        Read::take(&file, 9).read_to_end(&mut head).ok()?;
        SidecarFormat::sniff(&head, len)
    }
}

/// One stored tensor of a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTensor {
    pub(crate) name: String,
    pub(crate) storage: Storage,
    pub(crate) file: usize,
    pub(crate) offset: u64,
    pub(crate) length: u64,
}

/// What a format says about a tensor's type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Storage {
    /// An archive tensor: its SafeTensors type and shape (checked by the resolver).
    Typed {
        dtype: safetensors::Dtype,
        shape: Vec<u64>,
    },
    /// A manifest entry: untyped bytes, with the manifest's informative `dataType` and
    /// `shape` when present (not checked by the resolver; the graph is authoritative).
    Untyped {
        data_type: Option<String>,
        shape: Option<Vec<u64>>,
    },
}

impl StoredTensor {
    /// The stored name (archive key or manifest entry).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The storage type as the file spells it: the SafeTensors dtype (`F32`, `BF16`, …)
    /// or the manifest's `dataType`, when it gives one.
    pub fn data_type(&self) -> Option<String> {
        match &self.storage {
            Storage::Typed { dtype, .. } => Some(dtype.to_string()),
            Storage::Untyped { data_type, .. } => data_type.clone(),
        }
    }

    /// The stored shape, when the file gives one.
    pub fn shape(&self) -> Option<&[u64]> {
        match &self.storage {
            Storage::Typed { shape, .. } => Some(shape),
            Storage::Untyped { shape, .. } => shape.as_deref(),
        }
    }

    /// Index of the file holding the bytes in [`Catalog::files`].
    pub fn file(&self) -> usize {
        self.file
    }

    /// Absolute offset of the first byte in its file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of stored bytes.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// The exclusive end of the range, `None` when `offset + length` overflows.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.length)
    }

    /// Whether the range lies within a file of `file_len` bytes.
    pub fn fits(&self, file_len: u64) -> bool {
        self.end().is_some_and(|end| end <= file_len)
    }
}

/// What a sidecar holds: its stored tensors (in file order: by offset for archives,
/// manifest order for blobs), the files they live in, and the format's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub(crate) format: SidecarFormat,
    /// The file where stored names live (the archive; the manifest for blobs).
    pub(crate) names_file: PathBuf,
    pub(crate) files: Vec<StoredFile>,
    pub(crate) tensors: Vec<StoredTensor>,
    pub(crate) metadata: BTreeMap<String, String>,
    /// Per file: the packed-4-bit marker of that archive (empty for blobs).
    pub(crate) packed_markers: Vec<Option<String>>,
}

impl Catalog {
    /// Reads and validates the header of the SafeTensors archive at `path` (and nothing
    /// else).
    ///
    /// Rejects a header length beyond 100,000,000 bytes (the `safetensors` crate's limit) or
    /// the file, a header that is not valid JSON of contiguous tensor entries, and a file
    /// whose size is not exactly 8 + header + data (truncated, or with trailing bytes).
    pub fn read_safetensors(path: &Path) -> Result<Catalog, FormatError> {
        safetensors::read(path)
    }

    /// Reads the manifest at `manifest` for the `.weights` blob at `blob` (of which only the
    /// size is read). Ranges are not checked here: the resolver checks the requested ones,
    /// [`Catalog::check_ranges`] all of them.
    pub fn read_blob(blob: &Path, manifest: &Path) -> Result<Catalog, FormatError> {
        blob::read(blob, manifest)
    }

    /// The sidecar's format.
    pub fn format(&self) -> SidecarFormat {
        self.format
    }

    /// The file whose stored names the tensors carry: the archive, a blob's manifest, or
    /// a sharded archive's index.
    pub fn names_file(&self) -> &Path {
        &self.names_file
    }

    /// The files holding tensor bytes: the archive or blob, or the opened shards.
    pub fn files(&self) -> &[StoredFile] {
        &self.files
    }

    /// The stored tensors, in file order.
    pub fn tensors(&self) -> &[StoredTensor] {
        &self.tensors
    }

    /// Archive metadata (`__metadata__`), a manifest's `format`, `version` and
    /// `endianness` when present, or a sharded index's `metadata` (`total_size`).
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The archive's packed-4-bit marker value, if any (for a sharded archive: the first
    /// opened shard's; see [`Catalog::packed_marker_of`]).
    pub fn packed_marker(&self) -> Option<&str> {
        self.packed_markers.first().and_then(Option::as_deref)
    }

    /// The packed-4-bit marker value of the archive holding `tensor` (for a sharded
    /// archive, the shard's own metadata), if any.
    pub fn packed_marker_of(&self, tensor: &StoredTensor) -> Option<&str> {
        self.packed_markers
            .get(tensor.file)
            .and_then(Option::as_deref)
    }

    /// Checks that every tensor lies within its file (archives guarantee it; a manifest
    /// may address anything). The resolver checks this per requested constant, tools
    /// that describe a whole sidecar for all.
    pub fn check_ranges(&self) -> Result<(), FormatError> {
        for t in &self.tensors {
            let file_len = self.files.get(t.file).map_or(0, StoredFile::len);
            if !t.fits(file_len) {
                return Err(FormatError::RangeOutOfBounds {
                    sidecar: self
                        .files
                        .get(t.file)
                        .map(|f| f.path().to_path_buf())
                        .unwrap_or_default(),
                    manifest: self.names_file.clone(),
                    entry: t.name.clone(),
                    offset: t.offset,
                    length: t.length,
                    file_len,
                });
            }
        }
        Ok(())
    }
}

/// Why a sidecar could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A file could not be opened, inspected or read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The SafeTensors archive's header is invalid or disagrees with the file's size.
    #[error("invalid SafeTensors archive {}: expected {expected}, found {found}", path.display())]
    SafeTensorsHeader {
        /// The archive.
        path: PathBuf,
        /// What a valid archive has.
        expected: String,
        /// What this one has.
        found: String,
    },
    /// The manifest is not valid.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A manifest entry addresses bytes beyond the end of the blob.
    #[error(
        "entry `{entry}` of manifest {}: expected a byte range within {} ({file_len} bytes), found byteOffset {offset} + byteLength {length} = {}",
        manifest.display(), sidecar.display(),
        match offset.checked_add(*length) { Some(end) => end.to_string(), None => "more than 2^64".to_string() }
    )]
    RangeOutOfBounds {
        /// The blob.
        sidecar: PathBuf,
        /// The manifest.
        manifest: PathBuf,
        /// The entry's name.
        entry: String,
        /// byteOffset.
        offset: u64,
        /// byteLength.
        length: u64,
        /// The blob's size.
        file_len: u64,
    },
    /// A sharded archive's index is not valid JSON of the Hugging Face layout.
    #[error("invalid sharded SafeTensors index {}: expected {expected}, found {found}", path.display())]
    ShardIndex {
        /// The index file.
        path: PathBuf,
        /// What a valid index has.
        expected: String,
        /// What this one has.
        found: String,
    },
    /// A shard entry of an index is not a plain relative path inside the index's folder.
    #[error(
        "sharded SafeTensors index {}: tensor `{tensor}` names shard \"{entry}\": expected a .safetensors file name relative to the index's folder, found {why}",
        index.display()
    )]
    ShardPath {
        /// The index file.
        index: PathBuf,
        /// The tensor whose entry it is.
        tensor: String,
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        why: String,
    },
    /// A shard the index names (and that holds a requested tensor) is missing.
    #[error(
        "sharded SafeTensors index {}: shard {} (holding tensor `{tensor}`) {why}",
        index.display(), shard.display()
    )]
    MissingShard {
        /// The index file.
        index: PathBuf,
        /// A tensor the index places in that shard.
        tensor: String,
        /// The shard.
        shard: PathBuf,
        /// Why it is missing.
        why: String,
    },
    /// The index places a tensor in a shard whose header does not have it.
    #[error(
        "sharded SafeTensors index {}: expected tensor `{tensor}` in shard {}, as its weight_map says, found no such tensor in that shard's header",
        index.display(), shard.display()
    )]
    NotInShard {
        /// The index file.
        index: PathBuf,
        /// The tensor.
        tensor: String,
        /// The shard.
        shard: PathBuf,
    },
    /// The file's size changed while its header was read.
    #[error("{} changed while its header was read: expected {expected}, found {found}", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// What was recorded when it was opened.
        expected: String,
        /// What was found.
        found: String,
    },
}

impl FormatError {
    /// How to fix the input, where there is an obvious way.
    pub fn fix(&self) -> Option<String> {
        let fix = match self {
            FormatError::RangeOutOfBounds { .. } => "regenerate the manifest for this blob",
            FormatError::ShardPath { .. } => "name shards by file name, in the index's folder or below it",
            FormatError::MissingShard { .. } => "put the shard beside the index (or regenerate the index)",
            FormatError::NotInShard { .. } => "regenerate the index from the shards (its weight_map is stale)",
            FormatError::Changed { .. } => "do not modify sidecars while they are read (write a new file and rename it into place), then try again",
            _ => return None,
        };
        Some(fix.to_string())
    }
}

/// Opens `path` and records its size and modification time.
pub(crate) fn open_stamped(path: &Path) -> Result<(std::fs::File, Stamp), FormatError> {
    let io = |source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    Ok((file, Stamp::of(&meta)))
}
