//! Sharded SafeTensors archives in the Hugging Face layout: an index
//! `<stem>.safetensors.index.json` = `{"metadata": {"total_size": N}, "weight_map":
//! {"tensor.name": "model-00001-of-00003.safetensors", ...}}` with the shards beside it.
//!
//! Reading is two steps, so that only the shards holding a requested tensor are opened:
//! [`ShardIndex::read`] (or [`ShardIndex::parse`]) reads the index alone into a [`ShardIndex`] (the stored names
//! and which shard holds each; shard paths are checked here), then
//! [`ShardIndex::open`] reads the headers of the chosen shards, each validated exactly
//! like a single archive, into one [`Catalog`] whose tensors name their shard
//! ([`StoredTensor::file`] is an index into [`Catalog::files`]).

use super::{safetensors, Catalog, FormatError, SidecarFormat, StoredTensor};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

/// The file name ending of a sharded archive's index.
pub(crate) const INDEX_SUFFIX: &str = ".safetensors.index.json";

/// Whether `path` names a sharded archive's index: its file name ends in
/// `.safetensors.index.json` (any letter case, like the archive extension). Public as
/// [`SidecarFormat::of_path`](super::SidecarFormat::of_path).
pub(crate) fn is_index_path(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.len() > INDEX_SUFFIX.len()
            && n.is_char_boundary(n.len() - INDEX_SUFFIX.len())
            && n[n.len() - INDEX_SUFFIX.len()..].eq_ignore_ascii_case(INDEX_SUFFIX)
    })
}

/// One shard named by an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    entry: String,
    path: PathBuf,
    first_tensor: String,
}

impl Shard {
    /// The shard as the index spells it (a path relative to the index's folder).
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The shard's path: the index's folder joined with [`Shard::entry`].
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A sharded archive's index, read without opening any shard: the stored names, the
/// shard of each, and the index's `metadata` (informational; `total_size` is not checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardIndex {
    path: PathBuf,
    len: u64,
    shards: Vec<Shard>,
    /// Stored name -> index into `shards`, sorted by name.
    entries: Vec<(String, usize)>,
    metadata: BTreeMap<String, String>,
}

/// Checks one shard entry of the index: a plain relative path inside the index's folder
/// naming a SafeTensors archive.
fn check_entry(index: &Path, tensor: &str, entry: &str) -> Result<PathBuf, FormatError> {
    let bad = |why: &str| FormatError::ShardPath {
        index: index.to_path_buf(),
        tensor: tensor.to_string(),
        entry: entry.to_string(),
        why: why.to_string(),
    };
    if entry.is_empty() {
        return Err(bad("an empty shard name"));
    }
    let relative = Path::new(entry);
    let mut clean = PathBuf::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(bad("a path that leaves the index's folder (`..`)"))
            }
            Component::RootDir | Component::Prefix(_) => return Err(bad("an absolute path")),
        }
    }
    // The same verdict on every platform: a leading `/` or `\`, or a drive (`C:`), is
    // absolute even where this platform's path parser would not call it so; a `..`
    // between backslashes leaves the folder on Windows.
    let bytes = entry.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if entry.starts_with('/') || entry.starts_with('\\') || drive {
        return Err(bad("an absolute path"));
    }
    if entry.split(['/', '\\']).any(|part| part == "..") {
        return Err(bad("a path that leaves the index's folder (`..`)"));
    }
    if clean.as_os_str().is_empty() {
        return Err(bad("a path that names no file"));
    }
    if SidecarFormat::of_path(&clean) != SidecarFormat::SafeTensors {
        return Err(bad(
            "a file that is not a SafeTensors archive (expected a .safetensors shard)",
        ));
    }
    Ok(clean)
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The index at `path` is not what an index should be: `expected` against what it has.
fn invalid(path: &Path, expected: &str, found: String) -> FormatError {
    FormatError::ShardIndex {
        path: path.to_path_buf(),
        expected: expected.to_string(),
        found,
    }
}

/// The index's top-level JSON object, each of whose keys (at any depth) is given once.
fn index_object(
    json: &[u8],
    path: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, FormatError> {
    let value: serde_json::Value = serde_json::from_slice(json)
        .map_err(|e| invalid(path, "a JSON object", format!("invalid JSON: {e}")))?;
    let serde_json::Value::Object(top) = value else {
        return Err(invalid(path, "a JSON object", kind_of(&value).to_string()));
    };
    // A tensor listed twice could name two shards; which one would be a guess.
    crate::json_keys::check_unique_keys(json, crate::json_keys::duplicate_key).map_err(|e| {
        invalid(
            path,
            "every key once (a tensor names one shard)",
            e.to_string(),
        )
    })?;
    Ok(top)
}

/// The index's `metadata` (empty when absent or `null`), strings as they are and other
/// values as their JSON text.
fn index_metadata(
    top: &serde_json::Map<String, serde_json::Value>,
    path: &Path,
) -> Result<BTreeMap<String, String>, FormatError> {
    let mut metadata = BTreeMap::new();
    match top.get("metadata") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(m)) => {
            for (k, v) in m {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                metadata.insert(k.clone(), text);
            }
        }
        Some(other) => {
            return Err(invalid(
                path,
                "`metadata` to be an object",
                kind_of(other).to_string(),
            ))
        }
    }
    Ok(metadata)
}

/// The index's `weight_map` object.
fn weight_map<'j>(
    top: &'j serde_json::Map<String, serde_json::Value>,
    path: &Path,
) -> Result<&'j serde_json::Map<String, serde_json::Value>, FormatError> {
    match top.get("weight_map") {
        Some(serde_json::Value::Object(m)) => Ok(m),
        Some(other) => Err(invalid(
            path,
            "`weight_map` to be an object of tensor name -> shard file",
            kind_of(other).to_string(),
        )),
        None => Err(invalid(
            path,
            "a `weight_map` object of tensor name -> shard file",
            "no `weight_map`".to_string(),
        )),
    }
}

/// The shards of an index and the shard of each tensor.
struct ShardMap {
    shards: Vec<Shard>,
    /// Stored name -> index into `shards`.
    entries: Vec<(String, usize)>,
}

/// The shards `map` names, in the order of first mention, each entry checked once, and
/// every tensor with the index of its shard, in the map's order.
fn shards_of(
    map: &serde_json::Map<String, serde_json::Value>,
    path: &Path,
) -> Result<ShardMap, FormatError> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut shards: Vec<Shard> = Vec::new();
    let mut by_entry: HashMap<String, usize> = HashMap::new();
    let mut entries = Vec::with_capacity(map.len());
    for (tensor, shard) in map {
        let serde_json::Value::String(entry) = shard else {
            return Err(invalid(
                path,
                "every `weight_map` value to be a shard file name",
                format!("{} for tensor `{tensor}`", kind_of(shard)),
            ));
        };
        let shard_index = match by_entry.get(entry) {
            Some(&i) => i,
            None => {
                let relative = check_entry(path, tensor, entry)?;
                shards.push(Shard {
                    entry: entry.clone(),
                    path: folder.join(relative),
                    first_tensor: tensor.clone(),
                });
                by_entry.insert(entry.clone(), shards.len() - 1);
                shards.len() - 1
            }
        };
        entries.push((tensor.clone(), shard_index));
    }
    Ok(ShardMap { shards, entries })
}

impl ShardMap {
    /// Shards in a stable order (by entry), tensors by name, each tensor's shard index
    /// following its shard.
    fn in_stable_order(self) -> ShardMap {
        let ShardMap {
            shards,
            mut entries,
        } = self;
        let mut order: Vec<usize> = (0..shards.len()).collect();
        order.sort_by(|&a, &b| shards[a].entry.cmp(&shards[b].entry));
        let mut position = vec![0; shards.len()];
        for (new, &old) in order.iter().enumerate() {
            position[old] = new;
        }
        let shards: Vec<Shard> = order.iter().map(|&i| shards[i].clone()).collect();
        for e in &mut entries {
            e.1 = position[e.1];
        }
        entries.sort();
        ShardMap { shards, entries }
    }
}

impl ShardIndex {
    /// Reads the index at `path` (the index file only; no shard is opened).
    ///
    /// Rejects a file that is not a JSON object with a `weight_map` object of strings, and
    /// shard entries that are absolute, empty, leave the index's folder (`..`) or do not name
    /// a `.safetensors` file, naming the tensor and the entry.
    pub fn read(path: &Path) -> Result<ShardIndex, FormatError> {
        let bytes = std::fs::read(path).map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        ShardIndex::parse(&bytes, path)
    }

    /// Parses index JSON held in memory; `path` is where it stands (shard paths are relative
    /// to its folder) and names it in messages.
    ///
    /// ```
    /// use std::path::Path;
    /// use webnn_weights_runtime::formats::sharded::ShardIndex;
    /// let index = ShardIndex::parse(br#"{"metadata":{"total_size":8},"weight_map":{
    ///     "a.w":"m-00001-of-00002.safetensors","b.w":"m-00002-of-00002.safetensors"}}"#,
    ///     Path::new("ckpt/m.safetensors.index.json")).unwrap();
    /// assert_eq!(index.shards().len(), 2);
    /// assert_eq!(index.shard_of("b.w").unwrap().path(), Path::new("ckpt/m-00002-of-00002.safetensors"));
    /// assert_eq!(index.metadata()["total_size"], "8");
    /// let err = ShardIndex::parse(br#"{"weight_map":{"a":"../elsewhere.safetensors"}}"#,
    ///     Path::new("m.safetensors.index.json")).unwrap_err();
    /// assert!(err.to_string().contains("`a`"));
    /// ```
    pub fn parse(json: &[u8], path: &Path) -> Result<ShardIndex, FormatError> {
        let top = index_object(json, path)?;
        let metadata = index_metadata(&top, path)?;
        let map = weight_map(&top, path)?;
        let ShardMap { shards, entries } = shards_of(map, path)?.in_stable_order();
        let len = json.len() as u64;
        Ok(ShardIndex {
            path: path.to_path_buf(),
            len,
            shards,
            entries,
            metadata,
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index file's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the index file was empty (it never is once parsed).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The distinct shards the index names, sorted by entry.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// The stored names (the `weight_map` keys), sorted, each with the index of its shard
    /// in [`ShardIndex::shards`].
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&str, usize)> + '_ {
        self.entries.iter().map(|(n, s)| (n.as_str(), *s))
    }

    /// The index's `metadata` (values that are not strings as JSON text).
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The shard the index names for the stored name `tensor`.
    pub fn shard_of(&self, tensor: &str) -> Option<&Shard> {
        self.entries
            .binary_search_by(|(n, _)| n.as_str().cmp(tensor))
            .ok()
            .and_then(|i| self.shards.get(self.entries[i].1))
    }

    /// Reads the headers of the shards `wanted` (indices into [`ShardIndex::shards`];
    /// others are not opened) from disk, into one catalog. See [`ShardIndex::open_with`].
    pub fn open(&self, wanted: &[usize]) -> Result<Catalog, FormatError> {
        self.open_with(wanted, |shard| match safetensors::read(shard.path()) {
            Err(FormatError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Err(FormatError::MissingShard {
                    index: self.path.clone(),
                    tensor: shard.first_tensor.clone(),
                    shard: shard.path.clone(),
                    why: "does not exist".to_string(),
                })
            }
            other => other,
        })
    }

    /// Reads every shard's header from disk ([`ShardIndex::open`] of all of them).
    pub fn open_all(&self) -> Result<Catalog, FormatError> {
        let all: Vec<usize> = (0..self.shards.len()).collect();
        self.open(&all)
    }

    /// Builds the catalog of the shards `wanted`, reading each one's catalog with `read`
    /// (a single-archive reader: from disk, or from bytes in memory).
    ///
    /// The catalog's files are the wanted shards in index order; its tensors are the
    /// `weight_map` entries of those shards, each with the type, shape and range its
    /// shard's header gives, and its metadata the index's. Every `weight_map` entry of a
    /// wanted shard must be in that shard's header ([`FormatError::NotInShard`]);
    /// tensors of a shard that the index does not list are not part of the archive.
    /// [`Catalog::packed_marker_of`] reads the packed-4-bit marker of the shard holding
    /// a tensor.
    pub fn open_with(
        &self,
        wanted: &[usize],
        mut read: impl FnMut(&Shard) -> Result<Catalog, FormatError>,
    ) -> Result<Catalog, FormatError> {
        let mut wanted = wanted.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let mut files = Vec::with_capacity(wanted.len());
        let mut markers = Vec::with_capacity(wanted.len());
        let mut position = HashMap::with_capacity(wanted.len());
        let mut shard_tensors: Vec<HashMap<String, StoredTensor>> = Vec::new();
        for &s in &wanted {
            let Some(shard) = self.shards.get(s) else {
                continue;
            };
            let catalog = read(shard)?;
            position.insert(s, files.len());
            markers.push(catalog.packed_marker().map(str::to_string));
            files.extend(catalog.files.first().cloned());
            shard_tensors.push(
                catalog
                    .tensors
                    .into_iter()
                    .map(|t| (t.name.clone(), t))
                    .collect(),
            );
        }
        let mut tensors = Vec::new();
        for (name, s) in &self.entries {
            let Some(&file) = position.get(s) else {
                continue;
            };
            match shard_tensors[file].remove(name) {
                Some(mut t) => {
                    t.file = file;
                    tensors.push(t);
                }
                None => {
                    return Err(FormatError::NotInShard {
                        index: self.path.clone(),
                        tensor: name.clone(),
                        shard: self.shards[*s].path.clone(),
                    })
                }
            }
        }
        tensors.sort_by_key(|t| (t.file, t.offset));
        Ok(Catalog {
            format: SidecarFormat::ShardedSafeTensors,
            names_file: self.path.clone(),
            files,
            tensors,
            metadata: self.metadata.clone(),
            packed_markers: markers,
        })
    }
}
