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
//!   the artifacts it prepared ([`prepared_env_var`], [`prepared_stamp`]);
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
//! It uses no JSON library and no derive macro, so the macro compiles nothing beyond it and
//! `hmac-sha256` (feature `key`): `index.json` is read and written by its own small JSON
//! reader and writer (strict: a repeated or unknown key is an error). Feature `serde` (the
//! runtime's) derives `Serialize` and `Deserialize` for [`DataType`].
//!
//! ```
//! use std::path::Path;
//! use webnn_weights_artifacts::{artifact_key, ARTIFACTS_DIR, INDEX_FILE};
//! let key = artifact_key(Path::new("/pkg"), Path::new("models/model.webnn"));
//! let index = Path::new("/out").join(ARTIFACTS_DIR).join(&key).join(INDEX_FILE);
//! assert!(index.ends_with(format!("webnn-weights/{key}/index.json")));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod dtype;
mod json;
#[cfg(feature = "key")]
mod key;
mod layout;
mod schema;
mod table;

pub use dtype::DataType;
#[cfg(feature = "key")]
pub use key::{artifact_key, normalize, prepared_env_var, prepared_stamp};
pub use layout::{DataRange, Layout, LayoutError, DATA_ALIGN};
pub use table::{
    ConstantTable, TableEntry, TableError, TableRow, TABLE_FILE, TABLE_MAGIC, TABLE_VERSION,
};

use json::Value;
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

/// How a graph's constant bytes reach the program (`mode` in the index).
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub data: Option<IndexData>,
    /// The constant table's file in the artifact folder ([`TABLE_FILE`]); present in the
    /// embedding modes (also without constants) unless the table is linked
    /// ([`IndexData::table`]).
    pub table: Option<String>,
    /// The number of `@weights` constants (entries of the table).
    pub constant_count: u64,
    /// The paths to resolve at run time; present in [`Mode::Runtime`].
    pub runtime: Option<IndexRuntime>,
    /// The sidecar that was resolved, if any.
    pub sidecar: Option<String>,
    /// The manifest that was used, for a `.weights` blob.
    pub manifest: Option<String>,
}

/// Where the embedded data is (`data` in the index).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    pub end_symbol: Option<String>,
    /// The constants' data length in bytes (a multiple of [`DATA_ALIGN`]).
    pub length: u64,
    /// [`Mode::StaticLib`]: where the [`ConstantTable`] lies in the linked bytes, after the
    /// constants' data (at a multiple of [`DATA_ALIGN`]).
    pub table: Option<DataRange>,
    /// [`Mode::StaticLib`]: where the graph JSON (UTF-8, `@weights` references kept) lies in
    /// the linked bytes, after the table.
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexRuntime {
    /// The graph file, absolute when the package root is.
    pub graph_path: String,
    /// The explicit sidecar path, if build.rs gave one.
    pub weights: Option<String>,
    /// The explicit manifest path, if build.rs gave one.
    pub manifest: Option<String>,
    /// The explicit weights lock, if build.rs gave one (else the program looks for
    /// `<graph file name>.lock` beside the graph, as the build did).
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
    /// Not JSON at all.
    Json(String),
    /// JSON, but `format` is not [`INDEX_FORMAT`].
    NotAnIndex,
    /// Another version of the schema (`found` is the JSON text of `version`).
    Version {
        /// The `version` found, as JSON (`null` when absent).
        found: String,
    },
    /// The right format and version, but a field is missing or of the wrong type.
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
        let mut json = schema::to_value(self).pretty().into_bytes();
        json.push(b'\n');
        json
    }

    /// Reads the text of an `index.json`: checks `format` and `version` first (so another
    /// version is reported as such, whatever its fields), then the schema (every key known,
    /// none repeated, each of its type), then [`Index::check_layout`].
    ///
    /// ```
    /// use webnn_weights_artifacts::{Index, IndexError};
    /// assert_eq!(Index::from_json("{}").unwrap_err(), IndexError::NotAnIndex);
    /// assert!(matches!(Index::from_json("{"), Err(IndexError::Json(_))));
    /// ```
    pub fn from_json(text: &str) -> Result<Index, IndexError> {
        let value = json::parse(text).map_err(IndexError::Json)?;
        let field = |name: &str| value.get(name).unwrap_or(&Value::Null);
        if field("format").as_str() != Some(INDEX_FORMAT) {
            return Err(IndexError::NotAnIndex);
        }
        if field("version").as_u64() != Some(u64::from(INDEX_VERSION)) {
            return Err(IndexError::Version {
                found: field("version").compact(),
            });
        }
        let index = schema::from_value(&value).map_err(IndexError::Schema)?;
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

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A static library linking data, table and graph JSON (schema.rs's tests start from it
    /// too).
    pub(crate) fn sample() -> Index {
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
