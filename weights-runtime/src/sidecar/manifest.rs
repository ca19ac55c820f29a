//! Reading weight manifests: the JSON file that addresses tensors inside a raw `.weights` blob.
//!
//! Only `tensors.<name>.byteOffset` and `tensors.<name>.byteLength` are required, as the
//! format says ("the external resolver accepts related manifest layouts"); they must be
//! non-negative JSON integers that fit `u64`. The richer version-1 fields (`format`,
//! `version`, `endianness`, and per tensor `dataType`, `shape`, `layout`) are read when
//! present and of the expected JSON type, and are `None` otherwise: the pack/unpack tools
//! decide what to demand of them. Tensor entries keep the order of the file, and no object
//! may repeat a key (a tensor name, a top-level key or a key of an entry): JSON parsers
//! disagree on which duplicate wins.

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

/// A parsed weight manifest.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_runtime::manifest::Manifest;
/// let json = br#"{"format":"wg-weights-manifest","version":1,"endianness":"little",
///   "tensors":{"w":{"dataType":"float32","shape":[2,2],"byteOffset":8,"byteLength":16,"layout":"row-major"},
///              "b":{"byteOffset":24,"byteLength":4,"layout":null}}}"#;
/// let manifest = Manifest::parse(json, Path::new("model.manifest.json")).unwrap();
/// assert_eq!(manifest.version, Some(1));
/// assert_eq!(manifest.tensors[0].name, "w");          // file order
/// assert_eq!(manifest.tensors[0].end(), Some(24));
/// assert_eq!(manifest.tensors[0].shape, Some(vec![2, 2]));
/// assert_eq!(manifest.tensors[1].layout, Some(None)); // present but null
/// assert_eq!(manifest.tensors[1].data_type, None);    // absent
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Manifest {
    /// Top-level `format` (`"wg-weights-manifest"` for version 1), if it is a string.
    pub format: Option<String>,
    /// Top-level `version`, if it is a non-negative integer.
    pub version: Option<u64>,
    /// Top-level `endianness` (`"little"`), if it is a string.
    pub endianness: Option<String>,
    /// The tensor entries, in the order of the file.
    pub tensors: Vec<ManifestEntry>,
}

/// One entry of a manifest's `tensors` object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestEntry {
    /// The key of the entry (the stored tensor name).
    pub name: String,
    /// Absolute offset of the first byte in the blob.
    pub byte_offset: u64,
    /// Number of bytes.
    pub byte_length: u64,
    /// `dataType`, if it is a string.
    pub data_type: Option<String>,
    /// `shape`, if it is an array of non-negative integers.
    pub shape: Option<Vec<u64>>,
    /// `layout`: `None` when absent, `Some(None)` when `null`, `Some(Some(s))` for a string
    /// (any other JSON type reads as absent).
    pub layout: Option<Option<String>>,
}

impl ManifestEntry {
    /// The exclusive end of the byte range (`byteOffset + byteLength`), or `None` when the
    /// sum does not fit `u64`.
    pub fn end(&self) -> Option<u64> {
        self.byte_offset.checked_add(self.byte_length)
    }
}

/// Why a manifest could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest file could not be read.
    #[error("cannot read manifest {}: {message}", path.display())]
    Io {
        /// The manifest file.
        path: PathBuf,
        /// What the operating system reported.
        message: String,
    },
    /// The file is not JSON of the manifest shape (an object with a `tensors` object).
    #[error("invalid manifest {}: {message}", path.display())]
    Syntax {
        /// The manifest file.
        path: PathBuf,
        /// What was wrong, with line and column where the JSON parser gave them.
        message: String,
    },
    /// A required field of a tensor entry is missing or has the wrong type or range.
    #[error(
        "invalid manifest {}: tensor `{entry}`: field `{field}` must be {expected}, found {found}",
        path.display()
    )]
    Field {
        /// The manifest file.
        path: PathBuf,
        /// The tensor entry's name.
        entry: String,
        /// The JSON field (`byteOffset`, `byteLength`, or the entry itself as `tensors.<name>`).
        field: String,
        /// What the field must be.
        expected: String,
        /// What the file holds (`absent`, or the JSON value).
        found: String,
    },
}

impl Manifest {
    /// Parses manifest JSON; `path` is only used in error messages.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Manifest, ManifestError> {
        let syntax = |e: serde_json::Error| ManifestError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let raw: RawManifest = serde_json::from_slice(bytes).map_err(syntax)?;
        crate::json_keys::check_unique_keys(bytes, duplicate_key).map_err(syntax)?;
        let Some(raw_tensors) = raw.tensors else {
            return Err(ManifestError::Syntax {
                path: path.to_path_buf(),
                message: "missing the `tensors` object".to_string(),
            });
        };
        let mut tensors = Vec::with_capacity(raw_tensors.len());
        for (name, value) in raw_tensors {
            tensors.push(parse_entry(path, name, value)?);
        }
        Ok(Manifest {
            format: raw.format.and_then(as_string),
            version: raw.version.as_ref().and_then(Value::as_u64),
            endianness: raw.endianness.and_then(as_string),
            tensors,
        })
    }

    /// Reads and parses the manifest file at `path`.
    pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
        let bytes = std::fs::read(path).map_err(|e| ManifestError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Manifest::parse(&bytes, path)
    }

    /// The entry stored under exactly `name`, if any.
    pub fn entry(&self, name: &str) -> Option<&ManifestEntry> {
        self.tensors.iter().find(|e| e.name == name)
    }
}

/// The message for a key that an object of a manifest repeats: a tensor name in `tensors`, a
/// key of the top object or of a tensor entry (the entry named).
fn duplicate_key(path: &[Cow<'_, str>], key: &str) -> String {
    match path {
        [] => format!("duplicate key `{key}`"),
        [tensors] if tensors == "tensors" => {
            format!("tensor `{key}` appears more than once in `tensors`")
        }
        _ => format!("duplicate key `{key}` in `{}`", path.join(".")),
    }
}

fn as_string(value: Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn describe(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 80 {
        let cut = (0..=77)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

fn parse_entry(path: &Path, name: String, value: Value) -> Result<ManifestEntry, ManifestError> {
    let Value::Object(mut map) = value else {
        return Err(ManifestError::Field {
            path: path.to_path_buf(),
            field: format!("tensors.{name}"),
            entry: name,
            expected: "an object with byteOffset and byteLength".to_string(),
            found: describe(&value),
        });
    };
    let required = |field: &str| -> Result<u64, ManifestError> {
        let found = match map.get(field) {
            None => "absent".to_string(),
            Some(v) => match v.as_u64() {
                Some(n) => return Ok(n),
                None => describe(v),
            },
        };
        Err(ManifestError::Field {
            path: path.to_path_buf(),
            entry: name.clone(),
            field: field.to_string(),
            expected: "a non-negative integer that fits 64 bits".to_string(),
            found,
        })
    };
    let byte_offset = required("byteOffset")?;
    let byte_length = required("byteLength")?;
    let data_type = map.remove("dataType").and_then(as_string);
    let shape = map.remove("shape").and_then(|v| match v {
        Value::Array(items) => items.iter().map(Value::as_u64).collect(),
        _ => None,
    });
    let layout = match map.remove("layout") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s)),
        Some(_) => None,
    };
    Ok(ManifestEntry {
        name,
        byte_offset,
        byte_length,
        data_type,
        shape,
        layout,
    })
}

/// The top level, read with a visitor so that `tensors` keeps file order without
/// turning on serde_json's crate-wide `preserve_order`.
struct RawManifest {
    format: Option<Value>,
    version: Option<Value>,
    endianness: Option<Value>,
    tensors: Option<Vec<(String, Value)>>,
}

impl<'de> Deserialize<'de> for RawManifest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = RawManifest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a manifest object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawManifest, A::Error> {
        let mut out = RawManifest {
            format: None,
            version: None,
            endianness: None,
            tensors: None,
        };
        // Repeated keys are refused by `Manifest::parse`'s walk, after this reading.
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => out.format = Some(map.next_value()?),
                "version" => out.version = Some(map.next_value()?),
                "endianness" => out.endianness = Some(map.next_value()?),
                "tensors" => out.tensors = Some(map.next_value::<OrderedEntries>()?.0),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// The `tensors` object as a list of (name, value) in file order.
struct OrderedEntries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for OrderedEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EntriesVisitor)
    }
}

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = OrderedEntries;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of tensor entries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedEntries, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value: Value = map.next_value()?;
            entries.push((key, value));
        }
        Ok(OrderedEntries(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text.as_bytes(), Path::new("m.manifest.json"))
    }

    #[test]
    fn keeps_file_order() {
        let m = parse(r#"{"tensors":{"z":{"byteOffset":0,"byteLength":1},"a":{"byteOffset":1,"byteLength":2},"m":{"byteOffset":3,"byteLength":0}}}"#).unwrap();
        let names: Vec<_> = m.tensors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["z", "a", "m"]);
        assert_eq!(m.entry("a").map(|e| e.byte_length), Some(2));
        assert_eq!(m.format, None);
        assert_eq!(m.version, None);
    }

    #[test]
    fn optional_fields() {
        let m = parse(
            r#"{"format":"wg-weights-manifest","version":1,"endianness":"little","extra":[1],
            "tensors":{"w":{"dataType":"float32","shape":[2,3],"byteOffset":8,"byteLength":24,"layout":"row-major"},
                       "n":{"byteOffset":0,"byteLength":0,"layout":null,"shape":"2x3","dataType":7},
                       "o":{"byteOffset":0,"byteLength":0,"layout":5,"shape":[-1]}}}"#,
        )
        .unwrap();
        assert_eq!(m.format.as_deref(), Some("wg-weights-manifest"));
        assert_eq!(m.endianness.as_deref(), Some("little"));
        assert_eq!(m.version, Some(1));
        let w = &m.tensors[0];
        assert_eq!(w.data_type.as_deref(), Some("float32"));
        assert_eq!(w.shape, Some(vec![2, 3]));
        assert_eq!(w.layout, Some(Some("row-major".to_string())));
        let n = &m.tensors[1];
        assert_eq!(
            (n.layout.clone(), n.shape.clone(), n.data_type.clone()),
            (Some(None), None, None)
        );
        let o = &m.tensors[2];
        assert_eq!((o.layout.clone(), o.shape.clone()), (None, None));
    }

    fn field_error(entry_json: &str) -> String {
        let text = format!(r#"{{"tensors":{{"w":{entry_json}}}}}"#);
        let err = parse(&text).unwrap_err();
        assert!(matches!(err, ManifestError::Field { .. }), "{err:?}");
        err.to_string()
    }

    #[test]
    fn rejects_bad_offsets_and_lengths() {
        let msg = field_error(r#"{"byteOffset":1.5,"byteLength":1}"#);
        assert!(
            msg.contains("m.manifest.json")
                && msg.contains("`w`")
                && msg.contains("byteOffset")
                && msg.contains("1.5"),
            "{msg}"
        );
        let msg = field_error(r#"{"byteOffset":-1,"byteLength":1}"#);
        assert!(msg.contains("byteOffset") && msg.contains("-1"), "{msg}");
        let msg = field_error(r#"{"byteOffset":"8","byteLength":1}"#);
        assert!(msg.contains("\"8\""), "{msg}");
        let msg = field_error(r#"{"byteOffset":0,"byteLength":18446744073709551616}"#);
        assert!(
            msg.contains("byteLength") && msg.contains("64 bits"),
            "{msg}"
        );
        let msg = field_error(r#"{"byteOffset":0}"#);
        assert!(
            msg.contains("byteLength") && msg.contains("absent"),
            "{msg}"
        );
        let msg = field_error(r#"{"byteOffset":8.0,"byteLength":1}"#);
        assert!(msg.contains("byteOffset"), "{msg}");
        let msg = field_error("[1,2]");
        assert!(msg.contains("tensors.w"), "{msg}");
        // the largest u64 is accepted; its end overflows
        let m = parse(r#"{"tensors":{"w":{"byteOffset":18446744073709551615,"byteLength":1}}}"#)
            .unwrap();
        assert_eq!(m.tensors[0].byte_offset, u64::MAX);
        assert_eq!(m.tensors[0].end(), None);
    }

    #[test]
    fn rejects_duplicates_and_bad_shapes() {
        let err = parse(r#"{"tensors":{"w":{"byteOffset":0,"byteLength":1},"w":{"byteOffset":1,"byteLength":1}}}"#).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("`w`")
                && msg.contains("more than once")
                && msg.contains("m.manifest.json"),
            "{msg}"
        );
        for bad in [
            r#"{}"#,
            r#"{"tensors":[]}"#,
            r#"[1]"#,
            r#"{"tensors":{}"#,
            "",
            r#"{"tensors":{},"tensors":{}}"#,
        ] {
            let err = parse(bad).unwrap_err();
            assert!(
                matches!(err, ManifestError::Syntax { .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("m.manifest.json"));
        }
        assert!(parse(r#"{"tensors":{}}"#).unwrap().tensors.is_empty());
        let top = parse(r#"{"tensors":{},"tensors":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(top.contains("duplicate key `tensors` at line 1"), "{top}");
        // Inside an entry too: which offset would count?
        let entry = parse(r#"{"tensors":{"w":{"byteOffset":0,"byteLength":1,"byteOffset":8}}}"#)
            .unwrap_err();
        assert!(matches!(entry, ManifestError::Syntax { .. }), "{entry:?}");
        let entry = entry.to_string();
        assert!(
            entry.contains("duplicate key `byteOffset` in `tensors.w` at line 1"),
            "{entry}"
        );
    }
}
