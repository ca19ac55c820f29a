//! # webnn-weights-artifacts
//!
//! **Internal: not for applications.** This crate is the private contract between
//! `webnn-weights-build` and `include_webnn_graph!` (`webnn-weights-macro`); it is published
//! only because they depend on it. Applications never name it: they use
//! `webnn-weights-runtime` (which re-exports [`DataType`], the one item users meet) and
//! `webnn-weights-build`. Its API follows what those crates need and changes with them, in
//! any release.
//!
//! The contract between the two halves of build-time embedding, in one place:
//! `webnn-weights-build` (in build.rs) **writes** the artifacts of a graph under
//! `OUT_DIR/webnn-weights/<key>/`, and `include_webnn_graph!` (the proc macro of
//! `webnn-weights-macro`) **reads** them. Both use this crate for
//!
//! - the key of a graph ([`artifact_key`], with [`normalize`]; feature `key`, on by
//!   default, the only user of SHA-256), and how the build script's current run vouches for
//!   the artifacts it prepared ([`prepared_env_var`], [`prepared_stamp`]), and the nearest
//!   name for their messages' "did you mean" ([`closest`], feature `key`);
//! - the folder and file names ([`ARTIFACTS_DIR`], [`INDEX_FILE`], [`GRAPH_FILE`],
//!   [`DATA_FILE`], [`TABLE_FILE`], [`library_name`], [`library_file`]);
//! - the data types ([`DataType`]: spellings, sizes, byte lengths; the runtime re-exports
//!   it), the data alignment ([`DATA_ALIGN`]) and the artifact layout ([`Layout`]: stored
//!   ranges to aligned places in the data, computed here and nowhere else);
//! - the `index.json` schema ([`Index`], [`INDEX_FORMAT`], [`INDEX_VERSION`]), written with
//!   [`Index::to_json`] and read with [`Index::from_json`], which checks the format, the
//!   version and the layout and says what is wrong in an [`IndexError`];
//! - the constant table ([`ConstantTable`], [`TABLE_VERSION`]): every constant's name,
//!   reference, type, shape and range as one compact binary form. In [`Mode::StaticLib`]
//!   the static library links the table and the graph JSON after the data
//!   ([`IndexData::table`], [`IndexData::graph`]), so the macro's expansion holds no file's
//!   content and rustc's work does not grow with the graph; in [`Mode::IncludeBytes`] they
//!   are files ([`TABLE_FILE`], [`GRAPH_FILE`]) for `include_bytes!` and `include_str!`.
//!
//! The crate depends on neither the runtime nor the build helper (the macro can use neither:
//! the runtime re-exports the macro and the build helper depends on the runtime); all three
//! depend on it.
//!
//! `index.json` is read and written with `serde` (derive) and `serde_json`, strictly: an
//! unknown, repeated or missing key, a value of the wrong type and anything after the index
//! are errors. The macro compiles no crate more for it: an application that embeds has
//! `webnn-weights-build` as a build-dependency, which compiles both for the host anyway
//! (`cargo +nightly build --unit-graph -Z unstable-options` on an app with the runtime and
//! the build helper: 45 compile units with and without them in the macro's dependencies).
//!
//! ```
//! # #[cfg(feature = "key")] {
//! use std::path::Path;
//! use webnn_weights_artifacts::{artifact_key, ARTIFACTS_DIR, INDEX_FILE};
//! let key = artifact_key(Path::new("/pkg"), Path::new("models/model.webnn"));
//! let index = Path::new("/out").join(ARTIFACTS_DIR).join(&key).join(INDEX_FILE);
//! assert!(index.ends_with(format!("webnn-weights/{key}/index.json")));
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dtype;
#[cfg(feature = "key")]
mod key;
mod layout;
#[cfg(feature = "key")]
mod near;
mod table;

pub use dtype::DataType;
#[cfg(feature = "key")]
pub use key::{artifact_key, normalize, prepared_env_var, prepared_stamp};
pub use layout::{DataRange, Layout, LayoutError, DATA_ALIGN};
#[cfg(feature = "key")]
pub use near::closest;
pub use table::{
    ConstantTable, TableEntry, TableError, TableRow, TABLE_FILE, TABLE_MAGIC, TABLE_VERSION,
};

use serde::{de, Deserialize, Serialize};
use std::fmt;

/// Lower-case hex digits of `bytes`, two per byte: how the contract spells digests (the
/// 16 digits of an artifact key, the data symbol's name), and the one spelling the other
/// crates use for SHA-256 digests in locks, messages and `inspect`.
///
/// ```
/// assert_eq!(webnn_weights_artifacts::hex(&[0x0f, 0xa0]), "0fa0");
/// ```
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The folder under `OUT_DIR` that holds one sub-folder per graph key.
pub const ARTIFACTS_DIR: &str = "webnn-weights";

/// The index of a graph's artifacts: what the macro reads first and trusts (written last).
pub const INDEX_FILE: &str = "index.json";

/// The graph as GraphJson, `@weights` references kept (when it is not linked: see
/// [`IndexData::graph`]).
pub const GRAPH_FILE: &str = "graph.json";

/// The data file of the portable path (an aligned `include_bytes!`).
pub const DATA_FILE: &str = "data.bin";

/// The value of `format` in every index.
pub const INDEX_FORMAT: &str = "webnn-weights-artifacts";

/// The version of the index schema: the writer puts it in, the reader accepts only it.
/// Version 2 moved the constants out of the index into the [`ConstantTable`]; version 4
/// links the table and the graph JSON in [`Mode::StaticLib`]; version 5 gives the end
/// symbol ([`IndexData::end_symbol`]) for every object format, not only ELF.
pub const INDEX_VERSION: u32 = 5;

/// The name of the static library holding a graph's data (for `cargo:rustc-link-lib`):
/// `webnn_weights_` and the key with `-` replaced by `_`.
///
/// ```
/// assert_eq!(
///     webnn_weights_artifacts::library_name("model-0123456789abcdef"),
///     "webnn_weights_model_0123456789abcdef"
/// );
/// ```
pub fn library_name(key: &str) -> String {
    format!("webnn_weights_{}", key.replace('-', "_"))
}

/// The file name of that static library: `lib<library_name>.a`.
///
/// ```
/// assert_eq!(
///     webnn_weights_artifacts::library_file("model-0123456789abcdef"),
///     "libwebnn_weights_model_0123456789abcdef.a"
/// );
/// ```
pub fn library_file(key: &str) -> String {
    format!("lib{}.a", library_name(key))
}

/// How a graph's constant bytes reach the program (`mode` in the index, spelled as
/// [`Mode::as_str`] says).
///
/// ```
/// use webnn_weights_artifacts::Mode;
/// assert_eq!(Mode::StaticLib.as_str(), "static-lib");
/// assert_eq!(Mode::from_name("include-bytes"), Some(Mode::IncludeBytes));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The data is a static library ([`library_file`]) with one symbol ([`IndexData::symbol`]),
    /// followed by the constant table and the graph JSON ([`IndexData::table`],
    /// [`IndexData::graph`]).
    StaticLib,
    /// The data is [`DATA_FILE`], for an aligned `include_bytes!`.
    IncludeBytes,
    /// Nothing embedded: the program resolves the sidecar on first use ([`IndexRuntime`]).
    Runtime,
}

impl Mode {
    /// The spelling in the index (`static-lib`, `include-bytes`, `runtime`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::StaticLib => "static-lib",
            Mode::IncludeBytes => "include-bytes",
            Mode::Runtime => "runtime",
        }
    }

    /// The mode spelled `name` in the index ([`Mode::as_str`]), if any.
    pub fn from_name(name: &str) -> Option<Mode> {
        [Mode::StaticLib, Mode::IncludeBytes, Mode::Runtime]
            .into_iter()
            .find(|mode| mode.as_str() == name)
    }
}

/// The content of `index.json`: small and of a fixed size whatever the graph; the constants
/// are in the [`ConstantTable`] it places (a file, or a range of the linked bytes).
///
/// The keys are the fields' names in camelCase, in the order of the fields. An absent
/// optional field is written `null`, except the ones added after the first version
/// ([`IndexData::end_symbol`], [`IndexData::table`], [`IndexData::graph`],
/// [`IndexRuntime::lock`]), which are left out; the reader takes either.
///
/// ```
/// use webnn_weights_artifacts::{Index, IndexData, Mode, TABLE_FILE};
/// let data = IndexData { file: "data.bin".into(), length: 64, ..IndexData::default() };
/// let index = Index {
///     graph: "models/model.webnn".into(),
///     data: Some(data),
///     table: Some(TABLE_FILE.into()),
///     constant_count: 1,
///     ..Index::new(Mode::IncludeBytes)
/// };
/// let json = index.to_json();
/// assert_eq!(Index::from_json(std::str::from_utf8(&json).unwrap()).unwrap(), index);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Index {
    /// Always [`INDEX_FORMAT`].
    pub format: String,
    /// Always [`INDEX_VERSION`].
    pub version: u32,
    /// The graph path as given to the build helper, normalized.
    pub graph: String,
    /// How the bytes reach the program.
    pub mode: Mode,
    /// The graph file in the artifact folder ([`GRAPH_FILE`]); absent when the graph JSON
    /// is linked ([`IndexData::graph`]).
    pub graph_json: Option<String>,
    /// The data file; present when the mode embeds and the graph has constants.
    #[serde(default, deserialize_with = "object")]
    pub data: Option<IndexData>,
    /// The constant table's file in the artifact folder ([`TABLE_FILE`]); present in the
    /// embedding modes (also without constants) unless the table is linked
    /// ([`IndexData::table`]).
    pub table: Option<String>,
    /// The number of `@weights` constants (entries of the table).
    pub constant_count: u64,
    /// The paths to resolve at run time; present in [`Mode::Runtime`].
    #[serde(default, deserialize_with = "object")]
    pub runtime: Option<IndexRuntime>,
    /// The sidecar that was resolved, if any.
    pub sidecar: Option<String>,
    /// The manifest that was used, for a `.weights` blob.
    pub manifest: Option<String>,
}

/// Where the embedded data is (`data` in the index).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IndexData {
    /// The data file's name in the artifact folder.
    pub file: String,
    /// The data's symbol in the static library ([`Mode::StaticLib`] only).
    pub symbol: Option<String>,
    /// The symbol just past the linked bytes' last byte ([`Mode::StaticLib`] only, always
    /// with [`IndexData::symbol`]): the program checks on first use that it is
    /// [`IndexData::linked_len`] bytes after [`IndexData::symbol`] (on ELF the data is in
    /// several sections the linker must place back to back; on Mach-O and COFF in one, and
    /// the check proves the library's symbols span the length the index gives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_symbol: Option<String>,
    /// The constants' data length in bytes (a multiple of [`DATA_ALIGN`]).
    pub length: u64,
    /// [`Mode::StaticLib`]: where the [`ConstantTable`] lies in the linked bytes, after the
    /// constants' data (at a multiple of [`DATA_ALIGN`]).
    #[serde(default, deserialize_with = "object")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<DataRange>,
    /// [`Mode::StaticLib`]: where the graph JSON (UTF-8, `@weights` references kept) lies in
    /// the linked bytes, after the table.
    #[serde(default, deserialize_with = "object")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<DataRange>,
}

impl IndexData {
    /// How many bytes the symbol spans: the data, then the table and the graph JSON where
    /// they are linked, rounded up to [`DATA_ALIGN`] (saturating).
    ///
    /// ```
    /// use webnn_weights_artifacts::{DataRange, IndexData};
    /// let data = IndexData {
    ///     length: 128,
    ///     table: Some(DataRange { offset: 128, length: 100 }),
    ///     graph: Some(DataRange { offset: 256, length: 10 }),
    ///     ..IndexData::default()
    /// };
    /// assert_eq!(data.linked_len(), 320);
    /// ```
    pub fn linked_len(&self) -> u64 {
        let end = [self.table, self.graph]
            .iter()
            .flatten()
            .map(DataRange::end)
            .fold(self.length, u64::max);
        end.checked_next_multiple_of(DATA_ALIGN).unwrap_or(u64::MAX)
    }
}

/// What the program resolves on first use in [`Mode::Runtime`] (`runtime` in the index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IndexRuntime {
    /// The graph file, absolute when the package root is.
    pub graph_path: String,
    /// The explicit sidecar path, if build.rs gave one.
    pub weights: Option<String>,
    /// The explicit manifest path, if build.rs gave one.
    pub manifest: Option<String>,
    /// The explicit weights lock, if build.rs gave one (else the program looks for
    /// `<graph file name>.lock` beside the graph, as the build did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
}

/// Why an `index.json` was not accepted. The texts follow the file's name, as in
/// `format!("{path} {err}")`.
///
/// ```
/// use webnn_weights_artifacts::Index;
/// let err = Index::from_json(r#"{"format":"webnn-weights-artifacts","version":99}"#).unwrap_err();
/// assert_eq!(
///     format!("OUT_DIR/index.json {err}"),
///     "OUT_DIR/index.json has version 99, expected 5 \
///      (webnn-weights-build and webnn-weights-runtime versions differ?)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexError {
    /// Not JSON at all (serde_json's message, with line and column).
    Json(String),
    /// JSON, but `format` is not [`INDEX_FORMAT`].
    NotAnIndex,
    /// Another version of the schema (`found` is the JSON text of `version`).
    Version {
        /// The `version` found, as JSON (`null` when absent).
        found: String,
    },
    /// The right format and version, but a key is missing, unknown or repeated, or a value
    /// is of the wrong type (serde_json's message, with line and column).
    Schema(String),
    /// The fields parse but contradict each other (the text says how).
    Layout(String),
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Json(text) => write!(f, "is not valid JSON ({text})"),
            IndexError::NotAnIndex => f.write_str("is not a webnn-weights index"),
            IndexError::Version { found } => write!(
                f,
                "has version {found}, expected {INDEX_VERSION} \
                 (webnn-weights-build and webnn-weights-runtime versions differ?)"
            ),
            IndexError::Schema(text) => write!(f, "does not match the index schema ({text})"),
            IndexError::Layout(text) => write!(f, "is inconsistent: {text}"),
        }
    }
}

impl std::error::Error for IndexError {}

impl Index {
    /// An index of the current format and version in `mode`, for the graph file
    /// [`GRAPH_FILE`], with nothing else filled in.
    ///
    /// ```
    /// let index = webnn_weights_artifacts::Index::new(webnn_weights_artifacts::Mode::Runtime);
    /// assert_eq!((index.format.as_str(), index.version), ("webnn-weights-artifacts", 5));
    /// ```
    pub fn new(mode: Mode) -> Index {
        Index {
            format: INDEX_FORMAT.to_string(),
            version: INDEX_VERSION,
            graph: String::new(),
            mode,
            graph_json: Some(GRAPH_FILE.to_string()),
            data: None,
            runtime: None,
            table: None,
            constant_count: 0,
            sidecar: None,
            manifest: None,
        }
    }

    /// The bytes of `index.json`: pretty JSON and a final newline (the same bytes for the same
    /// index, so an unchanged index is not rewritten).
    ///
    /// ```
    /// let index = webnn_weights_artifacts::Index::new(webnn_weights_artifacts::Mode::Runtime);
    /// assert!(index.to_json().ends_with(b"}\n"));
    /// ```
    pub fn to_json(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec_pretty(self)
            .expect("an Index is strings, integers and objects: serializing cannot fail");
        json.push(b'\n');
        json
    }

    /// Reads the text of an `index.json`: checks `format` and `version` first (so another
    /// version is reported as such, whatever its fields), then the schema (every key known,
    /// none repeated, none required missing, each value of its type: integers unsigned and
    /// without fraction or exponent, sections objects or `null`), then
    /// [`Index::check_layout`].
    ///
    /// ```
    /// use webnn_weights_artifacts::{Index, IndexError};
    /// assert_eq!(Index::from_json("{}").unwrap_err(), IndexError::NotAnIndex);
    /// assert!(matches!(Index::from_json("{"), Err(IndexError::Json(_))));
    /// ```
    pub fn from_json(text: &str) -> Result<Index, IndexError> {
        // Twice through the text (an index is small): first as any JSON, for the format and
        // the version, then as an `Index`, which also refuses a repeated key.
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| IndexError::Json(e.to_string()))?;
        let field = |name: &str| value.get(name).unwrap_or(&serde_json::Value::Null);
        if field("format").as_str() != Some(INDEX_FORMAT) {
            return Err(IndexError::NotAnIndex);
        }
        if field("version").as_u64() != Some(u64::from(INDEX_VERSION)) {
            return Err(IndexError::Version {
                found: field("version").to_string(),
            });
        }
        let index: Index =
            serde_json::from_str(text).map_err(|e| IndexError::Schema(schema_error(text, &e)))?;
        index.check_layout()?;
        Ok(index)
    }

    /// Checks what the schema cannot: a runtime section and a graph file in
    /// [`Mode::Runtime`]; in the embedding modes a data section (with a symbol for
    /// [`Mode::StaticLib`]) of a [`DATA_ALIGN`] multiple of bytes when there are constants,
    /// and a table and graph JSON: both linked after the data in [`Mode::StaticLib`] with
    /// data, both files otherwise. The table itself is checked by [`ConstantTable::parse`].
    ///
    /// ```
    /// use webnn_weights_artifacts::{Index, IndexError, Mode};
    /// let index = Index::new(Mode::Runtime); // no `runtime` section
    /// assert!(matches!(index.check_layout(), Err(IndexError::Layout(_))));
    /// ```
    pub fn check_layout(&self) -> Result<(), IndexError> {
        let layout = |text: String| Err(IndexError::Layout(text));
        if self.mode == Mode::Runtime {
            return match (&self.runtime, &self.graph_json) {
                (None, _) => layout("mode runtime without a runtime section".into()),
                (_, None) => layout("mode runtime without graphJson".into()),
                _ => Ok(()),
            };
        }
        let Some(data) = &self.data else {
            return match (self.constant_count, &self.table, &self.graph_json) {
                (0, Some(_), Some(_)) => Ok(()),
                (0, ..) => layout("an embedding mode without a table and graph file".into()),
                _ => layout("constants without a data section".into()),
            };
        };
        if self.constant_count == 0 {
            return layout("a data section without constants".into());
        }
        if data.end_symbol.is_some() && data.symbol.is_none() {
            return layout("data.endSymbol without data.symbol".into());
        }
        if data.length % DATA_ALIGN != 0 {
            return layout(format!(
                "data.length {} is not a multiple of {DATA_ALIGN}",
                data.length
            ));
        }
        let files = (&self.table, &self.graph_json);
        match (self.mode, data.table, data.graph) {
            (Mode::StaticLib, _, _) if data.symbol.is_none() || data.end_symbol.is_none() => {
                layout("mode static-lib without data.symbol and data.endSymbol".into())
            }
            (Mode::StaticLib, Some(table), Some(graph)) => {
                if files.0.is_some() || files.1.is_some() {
                    return layout("a linked table and graph also named as files".into());
                }
                if table.offset < data.length
                    || table.offset % DATA_ALIGN != 0
                    || graph.offset < table.end()
                    || graph.end() == u64::MAX
                {
                    return layout(format!(
                        "data.table {}..+{} and data.graph {}..+{} do not follow the {} data \
                         bytes in order, the table at a multiple of {DATA_ALIGN}",
                        table.offset, table.length, graph.offset, graph.length, data.length
                    ));
                }
                Ok(())
            }
            (Mode::StaticLib, _, _) => {
                layout("mode static-lib with data but without data.table and data.graph".into())
            }
            (_, None, None) if files.0.is_some() && files.1.is_some() => Ok(()),
            (_, None, None) => layout("an embedding mode without a table and graph file".into()),
            (mode, _, _) => layout(format!("data.table or data.graph in mode {mode}")),
        }
    }

    /// The length of the data the table's offsets refer to (0 without a data section).
    pub fn data_len(&self) -> u64 {
        self.data.as_ref().map_or(0, |d| d.length)
    }
}

impl Serialize for Mode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Mode, D::Error> {
        let name = String::deserialize(deserializer)?;
        Mode::from_name(&name).ok_or_else(|| {
            de::Error::invalid_value(
                de::Unexpected::Str(&name),
                &"\"static-lib\", \"include-bytes\" or \"runtime\"",
            )
        })
    }
}

/// An optional section of the index (`data`, `runtime`, `data.table`, `data.graph`): `null`
/// (or absent, with `#[serde(default)]`) or an object. Not an array, which a derived
/// `Deserialize` would take as the fields in order.
fn object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Section<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for Section<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object or null")
        }

        fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }

        fn visit_some<D: de::Deserializer<'de>>(self, inner: D) -> Result<Option<T>, D::Error> {
            inner.deserialize_map(self)
        }

        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }

    deserializer.deserialize_option(Section(std::marker::PhantomData))
}

/// serde_json's message for an index it could not read, and, when the line it points at
/// has a key and its value, that text up to the place (serde_json's own messages name the
/// key only when it is missing or unknown).
fn schema_error(text: &str, error: &serde_json::Error) -> String {
    let line = text
        .lines()
        .nth(error.line().saturating_sub(1))
        .unwrap_or("");
    // The column counts bytes, from 1 (its byte is included).
    let mut end = error.column().min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    let near = line[..end].trim();
    // The last 60 characters at most (compact JSON is one long line).
    let near = match near.char_indices().rev().nth(59) {
        Some((at, _)) => &near[at..],
        None => near,
    };
    if error.line() == 0 || !near.contains(':') {
        return error.to_string();
    }
    format!("{error}, near `{near}`")
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A static library linking data, table and graph JSON.
    fn sample() -> Index {
        Index {
            graph: "models/model.webnn".into(),
            graph_json: None,
            data: Some(IndexData {
                file: library_file("model-0123456789abcdef"),
                symbol: Some("webnn_weights_data_00".into()),
                end_symbol: Some("webnn_weights_data_00_end".into()),
                length: 128,
                table: Some(DataRange {
                    offset: 128,
                    length: 100,
                }),
                graph: Some(DataRange {
                    offset: 256,
                    length: 30,
                }),
            }),
            constant_count: 2,
            ..Index::new(Mode::StaticLib)
        }
    }

    fn text(index: &Index) -> String {
        String::from_utf8(index.to_json()).unwrap()
    }

    #[test]
    fn round_trip_and_field_names() {
        let index = sample();
        let json = text(&index);
        for field in [
            "\"format\": \"webnn-weights-artifacts\"",
            "\"version\": 5",
            "\"mode\": \"static-lib\"",
            "\"graphJson\": null",
            "\"table\": null",
            "\"endSymbol\": \"webnn_weights_data_00_end\"",
            "\"offset\": 256",
            "\"constantCount\": 2",
            "\"runtime\": null",
        ] {
            assert!(json.contains(field), "{field} in {json}");
        }
        assert_eq!(Index::from_json(&json).unwrap(), index);
        assert_eq!(index.data.unwrap().linked_len(), 320);
    }

    #[test]
    fn format_and_version_are_checked_first() {
        let json = text(&sample());
        let other = json.replace("\"version\": 5", "\"version\": 3");
        assert_eq!(
            Index::from_json(&other).unwrap_err(),
            IndexError::Version { found: "3".into() }
        );
        let other = json.replace("webnn-weights-artifacts", "something-else");
        assert_eq!(
            Index::from_json(&other).unwrap_err(),
            IndexError::NotAnIndex
        );
        assert_eq!(
            Index::from_json(r#"{"format":"webnn-weights-artifacts"}"#).unwrap_err(),
            IndexError::Version {
                found: "null".into()
            }
        );
        let other = json.replace("\"mode\": \"static-lib\"", "\"mode\": \"teleport\"");
        assert!(matches!(
            Index::from_json(&other),
            Err(IndexError::Schema(e)) if e.contains("teleport")
        ));
    }

    fn layout_error(index: &Index) -> String {
        index.check_layout().unwrap_err().to_string()
    }

    #[test]
    fn layout_is_checked() {
        let mut index = sample();
        index.data.as_mut().unwrap().length = 65;
        let err = Index::from_json(&text(&index)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "is inconsistent: data.length 65 is not a multiple of 64"
        );
        let mut index = sample();
        index.data.as_mut().unwrap().symbol = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: data.endSymbol without data.symbol"
        );
        index.data.as_mut().unwrap().end_symbol = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: mode static-lib without data.symbol and data.endSymbol"
        );
        // The end symbol is what the program checks the length against: never left out.
        let mut index = sample();
        index.data.as_mut().unwrap().end_symbol = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: mode static-lib without data.symbol and data.endSymbol"
        );
        // Linked table and graph, in order, the table aligned; not also as files.
        for (table_at, graph_at) in [(64, 256), (130, 256), (128, 200)] {
            let mut index = sample();
            let data = index.data.as_mut().unwrap();
            data.table.as_mut().unwrap().offset = table_at;
            data.graph.as_mut().unwrap().offset = graph_at;
            assert!(
                layout_error(&index).contains("do not follow the 128 data bytes in order"),
                "{table_at} {graph_at}"
            );
        }
        let mut index = sample();
        index.table = Some(TABLE_FILE.into());
        assert_eq!(
            layout_error(&index),
            "is inconsistent: a linked table and graph also named as files"
        );
        let mut index = sample();
        index.data.as_mut().unwrap().graph = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: mode static-lib with data but without data.table and data.graph"
        );
        // include_bytes!: files, never linked ranges.
        let mut index = sample();
        index.mode = Mode::IncludeBytes;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: data.table or data.graph in mode include-bytes"
        );
        let data = index.data.as_mut().unwrap();
        (data.table, data.graph, data.symbol, data.end_symbol) = (None, None, None, None);
        assert_eq!(
            layout_error(&index),
            "is inconsistent: an embedding mode without a table and graph file"
        );
        index.table = Some(TABLE_FILE.into());
        index.graph_json = Some(GRAPH_FILE.into());
        assert!(index.check_layout().is_ok());
        assert_eq!(index.data_len(), 128);
        assert_eq!(index.data.as_ref().unwrap().linked_len(), 128);
        index.data = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: constants without a data section"
        );
        index.constant_count = 0;
        assert!(index.check_layout().is_ok());
        assert_eq!(index.data_len(), 0);
        // Run time: the paths and the graph file.
        let mut index = Index::new(Mode::Runtime);
        index.runtime = Some(IndexRuntime {
            graph_path: "/pkg/model.webnn".into(),
            weights: None,
            manifest: None,
            lock: None,
        });
        assert!(index.check_layout().is_ok());
        index.graph_json = None;
        assert_eq!(
            layout_error(&index),
            "is inconsistent: mode runtime without graphJson"
        );
    }

    /// Every optional field present (in [`Mode::Runtime`], whose layout allows them all),
    /// the largest integers and every character the writer escapes.
    fn full() -> Index {
        Index {
            graph: "models/\u{e9}\u{1F600}\"q\\\u{1}\u{8}\u{c}\r\n\t\u{1f}\u{7f}/m.webnn".into(),
            graph_json: Some(GRAPH_FILE.into()),
            data: Some(IndexData {
                file: library_file("model-0123456789abcdef"),
                symbol: Some("webnn_weights_data_00".into()),
                end_symbol: Some("webnn_weights_data_00_end".into()),
                length: u64::MAX,
                table: Some(DataRange {
                    offset: 0,
                    length: u64::MAX,
                }),
                graph: Some(DataRange {
                    offset: 256,
                    length: 30,
                }),
            }),
            table: Some(TABLE_FILE.into()),
            constant_count: 7,
            runtime: Some(IndexRuntime {
                graph_path: "/pkg/models/m.webnn".into(),
                weights: Some("/pkg/m.safetensors".into()),
                manifest: Some("/pkg/m.manifest.json".into()),
                lock: Some("/pkg/m.webnn.lock".into()),
            }),
            sidecar: Some("/pkg/m.safetensors".into()),
            manifest: Some("/pkg/m.manifest.json".into()),
            ..Index::new(Mode::Runtime)
        }
    }

    // The bytes of `full()` and of an index with every optional field absent, as the
    // writer has written them (the build script's stamp is their hash): pinned, byte for
    // byte. `\u{7f}` is written as itself.
    const FULL: &str = concat!(
        r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "models/é😀\"q\\\u0001\b\f\r\n\t\u001f"#,
        "\u{7f}",
        r#"/m.webnn",
  "mode": "runtime",
  "graphJson": "graph.json",
  "data": {
    "file": "libwebnn_weights_model_0123456789abcdef.a",
    "symbol": "webnn_weights_data_00",
    "endSymbol": "webnn_weights_data_00_end",
    "length": 18446744073709551615,
    "table": {
      "offset": 0,
      "length": 18446744073709551615
    },
    "graph": {
      "offset": 256,
      "length": 30
    }
  },
  "table": "constants.bin",
  "constantCount": 7,
  "runtime": {
    "graphPath": "/pkg/models/m.webnn",
    "weights": "/pkg/m.safetensors",
    "manifest": "/pkg/m.manifest.json",
    "lock": "/pkg/m.webnn.lock"
  },
  "sidecar": "/pkg/m.safetensors",
  "manifest": "/pkg/m.manifest.json"
}
"#
    );

    const MINIMAL: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "",
  "mode": "include-bytes",
  "graphJson": null,
  "data": null,
  "table": null,
  "constantCount": 0,
  "runtime": null,
  "sidecar": null,
  "manifest": null
}
"#;

    #[test]
    fn pinned_bytes_of_a_full_and_a_minimal_index() {
        let index = full();
        assert_eq!(String::from_utf8(index.to_json()).unwrap(), FULL);
        assert_eq!(Index::from_json(FULL).unwrap(), index);
        let minimal = Index {
            graph_json: None,
            ..Index::new(Mode::IncludeBytes)
        };
        assert_eq!(String::from_utf8(minimal.to_json()).unwrap(), MINIMAL);
        // It reads (the schema accepts it) and only its layout is refused.
        assert_eq!(
            Index::from_json(MINIMAL).unwrap_err(),
            IndexError::Layout("an embedding mode without a table and graph file".into())
        );
    }

    // What every writer so far (serde_json's, then a hand-written one, serde_json's again)
    // wrote for these indexes, byte for byte: the build script's stamp is their hash.
    const LINKED: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "models/model.webnn",
  "mode": "static-lib",
  "graphJson": null,
  "data": {
    "file": "libwebnn_weights_model_0123456789abcdef.a",
    "symbol": "webnn_weights_data_00",
    "endSymbol": "webnn_weights_data_00_end",
    "length": 128,
    "table": {
      "offset": 128,
      "length": 100
    },
    "graph": {
      "offset": 256,
      "length": 30
    }
  },
  "table": null,
  "constantCount": 2,
  "runtime": null,
  "sidecar": "C:\\w\\m\"x\u0001é\n\t/",
  "manifest": null
}
"#;

    const RUNTIME: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "m.webnn",
  "mode": "runtime",
  "graphJson": "graph.json",
  "data": null,
  "table": null,
  "constantCount": 0,
  "runtime": {
    "graphPath": "/pkg/m.webnn",
    "weights": "/w",
    "manifest": null,
    "lock": "/l"
  },
  "sidecar": null,
  "manifest": "man"
}
"#;

    const RUNTIME_BARE: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "",
  "mode": "runtime",
  "graphJson": "graph.json",
  "data": null,
  "table": null,
  "constantCount": 0,
  "runtime": {
    "graphPath": "/g",
    "weights": null,
    "manifest": null
  },
  "sidecar": null,
  "manifest": null
}
"#;

    const INCLUDE_BYTES: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "",
  "mode": "include-bytes",
  "graphJson": "graph.json",
  "data": {
    "file": "data.bin",
    "symbol": null,
    "length": 64
  },
  "table": "constants.bin",
  "constantCount": 1,
  "runtime": null,
  "sidecar": null,
  "manifest": null
}
"#;

    fn samples() -> [(Index, &'static str); 4] {
        let linked = Index {
            sidecar: Some("C:\\w\\m\"x\u{1}\u{7f}é\n\t/".into()),
            ..sample()
        };
        let runtime = Index {
            graph: "m.webnn".into(),
            runtime: Some(IndexRuntime {
                graph_path: "/pkg/m.webnn".into(),
                weights: Some("/w".into()),
                manifest: None,
                lock: Some("/l".into()),
            }),
            manifest: Some("man".into()),
            ..Index::new(Mode::Runtime)
        };
        let runtime_bare = Index {
            runtime: Some(IndexRuntime {
                graph_path: "/g".into(),
                weights: None,
                manifest: None,
                lock: None,
            }),
            ..Index::new(Mode::Runtime)
        };
        let include_bytes = Index {
            data: Some(IndexData {
                file: "data.bin".into(),
                length: 64,
                ..IndexData::default()
            }),
            table: Some(TABLE_FILE.into()),
            constant_count: 1,
            ..Index::new(Mode::IncludeBytes)
        };
        [
            (linked, LINKED),
            (runtime, RUNTIME),
            (runtime_bare, RUNTIME_BARE),
            (include_bytes, INCLUDE_BYTES),
        ]
    }

    #[test]
    fn writes_the_earlier_bytes_and_reads_them_back() {
        for (index, text) in samples() {
            assert_eq!(String::from_utf8(index.to_json()).unwrap(), text);
            assert_eq!(Index::from_json(text).unwrap(), index);
            // Compact and in another order: the same index.
            // (serde_json's `Value` sorts the keys.)
            let compact = serde_json::from_str::<serde_json::Value>(text)
                .unwrap()
                .to_string();
            assert!(!compact.starts_with("{\"format\""), "{compact}");
            assert_eq!(Index::from_json(&compact).unwrap(), index, "{compact}");
        }
        // `null` for a field the writer leaves out: the same index.
        let with_nulls = RUNTIME_BARE.replace(
            "\"manifest\": null\n  },",
            "\"manifest\": null,\n    \"lock\": null\n  },",
        );
        assert_ne!(with_nulls, RUNTIME_BARE);
        assert_eq!(Index::from_json(&with_nulls).unwrap(), samples()[2].0);
        // The modes as the index spells them: `Mode::as_str`.
        for mode in [Mode::StaticLib, Mode::IncludeBytes, Mode::Runtime] {
            let json = format!("\"{mode}\"");
            assert_eq!(serde_json::to_string(&mode).unwrap(), json);
            assert_eq!(serde_json::from_str::<Mode>(&json).unwrap(), mode);
        }
    }

    fn schema_error(text: &str) -> String {
        match Index::from_json(text) {
            Err(IndexError::Schema(message)) => message,
            other => panic!("{other:?} for {text}"),
        }
    }

    #[test]
    fn every_schema_error_names_the_key() {
        let modes = r#""static-lib", "include-bytes" or "runtime""#;
        let index_keys = "`format`, `version`, `graph`, `mode`, `graphJson`, `data`, `table`, \
                          `constantCount`, `runtime`, `sidecar`, `manifest`";
        let cases = [
            (
                LINKED.replace("  \"graph\": \"models/model.webnn\",\n", ""),
                "missing field `graph` at line 25 column 1".to_string(),
            ),
            (
                LINKED.replace("\"models/model.webnn\"", "1"),
                r#"invalid type: integer `1`, expected a string at line 4 column 12, near `"graph": 1`"#.into(),
            ),
            (
                LINKED.replace("\"static-lib\"", "\"teleport\""),
                format!(
                    r#"invalid value: string "teleport", expected {modes} at line 5 column 20, near `"mode": "teleport"`"#
                ),
            ),
            (
                LINKED.replace("\"static-lib\"", "null"),
                r#"invalid type: null, expected a string at line 5 column 14, near `"mode": null`"#.into(),
            ),
            (
                LINKED.replace("\"graphJson\": null", "\"graphJson\": false"),
                r#"invalid type: boolean `false`, expected a string at line 6 column 20, near `"graphJson": false`"#.into(),
            ),
            (
                LINKED.replace("\"constantCount\": 2", "\"constantCount\": -2"),
                r#"invalid value: integer `-2`, expected u64 at line 22 column 21, near `"constantCount": -2`"#.into(),
            ),
            (
                LINKED.replace("\"constantCount\": 2", "\"constantCount\": 2.5"),
                r#"invalid type: floating point `2.5`, expected u64 at line 22 column 22, near `"constantCount": 2.5`"#.into(),
            ),
            (
                LINKED.replace("\"constantCount\": 2", "\"constantCount\": 2e0"),
                r#"invalid type: floating point `2.0`, expected u64 at line 22 column 22, near `"constantCount": 2e0`"#.into(),
            ),
            (
                LINKED.replace("  \"constantCount\": 2,\n", ""),
                "missing field `constantCount` at line 25 column 1".into(),
            ),
            (
                LINKED.replace("\"manifest\": null", "\"manifest\": null, \"extra\": {}"),
                format!(
                    r#"unknown field `extra`, expected one of {index_keys} at line 25 column 27, near `"manifest": null, "extra"`"#
                ),
            ),
            (
                RUNTIME.replace("\"data\": null", "\"data\": []"),
                r#"invalid type: sequence, expected an object or null at line 7 column 10, near `"data":`"#.into(),
            ),
            (
                // The fields in order: a derived `Deserialize` alone would take it.
                INCLUDE_BYTES.replace(
                    "{\n    \"file\": \"data.bin\",\n    \"symbol\": null,\n    \"length\": 64\n  }",
                    "[\"data.bin\", null, null, 64, null, null]",
                ),
                r#"invalid type: sequence, expected an object or null at line 7 column 10, near `"data":`"#.into(),
            ),
            (
                LINKED.replace("\"length\": 128", "\"length\": \"128\""),
                r#"invalid type: string "128", expected u64 at line 11 column 19, near `"length": "128"`"#.into(),
            ),
            (
                LINKED.replace("\"symbol\": \"webnn_weights_data_00\"", "\"symbol\": [1]"),
                r#"invalid type: sequence, expected a string at line 9 column 14, near `"symbol":`"#.into(),
            ),
            (
                LINKED.replace(
                    "\"offset\": 128,\n      \"length\": 100\n",
                    "\"offset\": 128\n",
                ),
                "missing field `length` at line 14 column 5".into(),
            ),
            (
                LINKED.replace("\"length\": 30\n", "\"length\": 30, \"size\": 30\n"),
                r#"unknown field `size`, expected `offset` or `length` at line 18 column 26, near `"length": 30, "size"`"#.into(),
            ),
            (
                LINKED.replace("\"table\": {", "\"table\": 7, \"x\": {"),
                r#"invalid type: integer `7`, expected an object or null at line 12 column 14, near `"table": 7`"#.into(),
            ),
            (
                LINKED.replace("\"endSymbol\"", "\"end_symbol\""),
                "unknown field `end_symbol`, expected one of `file`, `symbol`, `endSymbol`, \
                 `length`, `table`, `graph` at line 10 column 16"
                    .into(),
            ),
            (
                RUNTIME.replace("\"graphPath\": \"/pkg/m.webnn\",\n", ""),
                "missing field `graphPath` at line 14 column 3".into(),
            ),
            (
                RUNTIME.replace("\"lock\": \"/l\"", "\"lock\": 3"),
                r#"invalid type: integer `3`, expected a string at line 14 column 13, near `"lock": 3`"#.into(),
            ),
            (
                LINKED.replace(
                    "\"graph\": \"models/model.webnn\"",
                    "\"graph\": \"a\", \"graph\": \"b\"",
                ),
                r#"duplicate field `graph` at line 4 column 23, near `"graph": "a", "graph"`"#.into(),
            ),
            (
                LINKED.replace("\"offset\": 256", "\"offset\": 256, \"offset\": 256"),
                r#"duplicate field `offset` at line 17 column 29, near `"offset": 256, "offset"`"#.into(),
            ),
        ];
        for (text, message) in cases {
            assert_eq!(schema_error(&text), message, "{text}");
        }
        // Compact JSON (keys sorted) is one line: the text near the place is its last 60
        // characters.
        let compact = serde_json::from_str::<serde_json::Value>(LINKED)
            .unwrap()
            .to_string()
            .replace("\"length\":128", "\"length\":\"128\"");
        assert_eq!(
            schema_error(&compact),
            r#"invalid type: string "128", expected u64 at line 1 column 167, near `9abcdef.a","graph":{"length":30,"offset":256},"length":"128"`"#
        );
        // Not reachable through `Index::from_json`, which checks format and version first.
        let as_index = |text: &str| serde_json::from_str::<Index>(text).unwrap_err().to_string();
        assert_eq!(
            as_index("null"),
            "invalid type: null, expected struct Index at line 1 column 4"
        );
        let too_big = LINKED.replace("\"version\": 5", "\"version\": 4294967296");
        assert_eq!(
            as_index(&too_big),
            "invalid value: integer `4294967296`, expected u32 at line 3 column 23"
        );
    }

    #[test]
    fn malformed_json_format_and_version() {
        for text in ["", "{", "{\"format\": }", "[1] [2]", "{\"a\": 01}"] {
            assert!(
                matches!(Index::from_json(text), Err(IndexError::Json(_))),
                "{text:?}"
            );
        }
        assert_eq!(
            Index::from_json("[1] [2]").unwrap_err().to_string(),
            "is not valid JSON (trailing characters at line 1 column 5)"
        );
        assert_eq!(
            Index::from_json(&format!("{LINKED}{{}}")).unwrap_err(),
            IndexError::Json("trailing characters at line 27 column 1".into())
        );
        // A key repeated is a schema error (the derived `Deserialize` refuses it).
        let repeated = LINKED.replace(
            "\"graph\": \"models/model.webnn\"",
            "\"graph\": \"a\", \"graph\": \"b\"",
        );
        assert_eq!(
            Index::from_json(&repeated).unwrap_err().to_string(),
            "does not match the index schema (duplicate field `graph` at line 4 column 23, \
             near `\"graph\": \"a\", \"graph\"`)"
        );
        assert_eq!(Index::from_json("[1]").unwrap_err(), IndexError::NotAnIndex);
        assert_eq!(
            Index::from_json("{\"format\": 1}").unwrap_err(),
            IndexError::NotAnIndex
        );
        for version in ["4.0", "\"4\"", "[4]", "-4"] {
            let text = LINKED.replace("\"version\": 5", &format!("\"version\": {version}"));
            assert_eq!(
                Index::from_json(&text).unwrap_err(),
                IndexError::Version {
                    found: version.into()
                }
            );
        }
    }

    #[test]
    #[cfg(feature = "key")]
    fn key_of_the_committed_ui_fixtures() {
        // tests/ui/*.stderr name this folder; the key rule must not drift.
        assert_eq!(
            artifact_key(
                std::path::Path::new("/anywhere/pkg"),
                std::path::Path::new("models/model.webnn")
            ),
            "model-87cb0dc51b7405c5"
        );
    }
}
