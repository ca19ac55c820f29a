//! Reading graph files of either format, and reading/writing GraphJson text.

use crate::error::Error;
use crate::graph::GraphJson;
use crate::text::parse_webnn;
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

/// The two graph file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFileFormat {
    /// `.webnn` text (starts with `webnn_graph`).
    Text,
    /// GraphJson (starts with `{`).
    Json,
}

/// Detects the format of a graph file by content: after leading whitespace (space, tab,
/// CR, LF) and `#` comments, text starts with `webnn_graph` and JSON with `{`.
/// `None` for anything else.
///
/// ```
/// use webnn_weights_runtime::{detect_graph_format, GraphFileFormat};
/// assert_eq!(detect_graph_format("# c\nwebnn_graph \"g\" v2 {}"), Some(GraphFileFormat::Text));
/// assert_eq!(detect_graph_format("\n {\"format\": 1}"), Some(GraphFileFormat::Json));
/// assert_eq!(detect_graph_format("PK\u{3}\u{4}"), None);
/// ```
pub fn detect_graph_format(text: &str) -> Option<GraphFileFormat> {
    let rest = skip_leading_trivia(text);
    if rest.starts_with("webnn_graph") {
        Some(GraphFileFormat::Text)
    } else if rest.starts_with('{') {
        Some(GraphFileFormat::Json)
    } else {
        None
    }
}

fn skip_leading_trivia(text: &str) -> &str {
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        match trimmed.strip_prefix('#') {
            Some(comment) => {
                rest = comment.find('\n').map_or("", |i| &comment[i..]);
            }
            None => return trimmed,
        }
    }
}

/// Why a GraphJson text cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphJsonError {
    /// Not JSON, or JSON of the wrong shape; serde_json's message carries line and column.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A `version` other than 1 and 2.
    #[error("unsupported version {0} (expected 1 or 2)")]
    Version(u32),
}

/// Reads GraphJson text, checking that `version` is 1 or 2 and that no object repeats a
/// key (serde would otherwise keep the last value silently).
///
/// Unknown keys are ignored at every level, as the format requires.
///
/// ```
/// use webnn_weights_runtime::parse_graph_json;
/// let g = parse_graph_json(
///     r#"{"format":"webnn-graph-json","version":2,"inputs":{},"nodes":[],"outputs":{}}"#,
/// ).unwrap();
/// assert_eq!(g.version, 2);
/// let err = parse_graph_json(r#"{"format":"webnn-graph-json","version":3,"inputs":{},"nodes":[],"outputs":{}}"#)
///     .unwrap_err();
/// assert_eq!(err.to_string(), "unsupported version 3 (expected 1 or 2)");
/// assert!(parse_graph_json("{\n  \"version\": 2,\n}").unwrap_err().to_string().contains("line 3 column 1"));
/// ```
pub fn parse_graph_json(text: &str) -> Result<GraphJson, GraphJsonError> {
    let graph: GraphJson = serde_json::from_str(text)?;
    // Only a well-formed document gets the second pass, so syntax errors keep their
    // usual messages.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde::de::DeserializeSeed::deserialize(UniqueKeys, &mut deserializer)?;
    if graph.version != 1 && graph.version != 2 {
        return Err(GraphJsonError::Version(graph.version));
    }
    Ok(graph)
}

/// Walks any JSON value, failing on an object that repeats a key.
///
/// serde_json attaches the line and column to the error and limits nesting to 128
/// levels, so the recursion is bounded.
struct UniqueKeys;

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(UniqueKeys)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Most objects have a handful of keys: a linear scan beats hashing them.
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let duplicate = if many.is_empty() && few.len() < 16 {
                let found = few.contains(&key);
                if !found {
                    few.push(key.clone());
                }
                found
            } else {
                many.extend(few.drain(..));
                !many.insert(key.clone())
            };
            if duplicate {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key {key:?}"
                )));
            }
            map.next_value_seed(UniqueKeys)?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Writes GraphJson as `webnn-graph` does: pretty-printed, keys in the format's order,
/// maps sorted, no trailing newline.
///
/// ```
/// let g = webnn_weights_runtime::GraphJson::new(None);
/// let text = webnn_weights_runtime::to_graph_json_string(&g).unwrap();
/// assert!(text.starts_with("{\n  \"format\": \"webnn-graph-json\",\n  \"version\": 2,"));
/// assert_eq!(webnn_weights_runtime::parse_graph_json(&text).unwrap(), g);
/// ```
pub fn to_graph_json_string(graph: &GraphJson) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(graph)
}

/// Reads a graph file, `.webnn` text or GraphJson, detected by content
/// ([`detect_graph_format`]), not by extension.
///
/// Errors name the file: [`Error::Io`] when it cannot be read (or is not UTF-8),
/// [`Error::Parse`] for text (with line, column and the file name),
/// [`Error::Json`] for GraphJson, [`Error::UnknownGraphFormat`] for anything else.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("g.txt");
/// std::fs::write(&path, "webnn_graph \"g\" v1 { outputs { } }").unwrap();
/// let g = webnn_weights_runtime::read_graph_file(&path).unwrap();
/// assert_eq!(g.version, 1);
/// ```
pub fn read_graph_file(path: impl AsRef<Path>) -> Result<GraphJson, Error> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_graph_text(&text, path)
}

/// Reads a graph of either format from `text`, naming `path` in errors
/// (the content-detecting core of [`read_graph_file`]).
pub fn parse_graph_text(text: &str, path: &Path) -> Result<GraphJson, Error> {
    match detect_graph_format(text) {
        Some(GraphFileFormat::Text) => parse_webnn(text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            source: e.with_file(path.display().to_string()),
        }),
        Some(GraphFileFormat::Json) => parse_graph_json(text).map_err(|e| Error::Json {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        None => {
            let rest = skip_leading_trivia(text);
            let found = if rest.is_empty() {
                "an empty file".to_string()
            } else {
                let start: String = rest.chars().take(16).collect();
                format!("{start:?}")
            };
            Err(Error::UnknownGraphFormat {
                path: path.to_path_buf(),
                found,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trivia() {
        assert_eq!(skip_leading_trivia("  # a\r\n#b\n\t x"), "x");
        assert_eq!(skip_leading_trivia("# only a comment"), "");
        assert_eq!(detect_graph_format(""), None);
        assert_eq!(detect_graph_format("[1]"), None);
    }

    #[test]
    fn read_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("bad.webnn");
        std::fs::write(&text, "webnn_graph \"g\" v3 {}").unwrap();
        let err = read_graph_file(&text).unwrap_err().to_string();
        let shown = text.display().to_string();
        assert!(
            err.starts_with(&format!("{shown}:1:18: unsupported version 3")),
            "{err}"
        );

        let json = dir.path().join("bad.json");
        std::fs::write(&json, "{\"format\":\"webnn-graph-json\"}").unwrap();
        let err = read_graph_file(&json).unwrap_err().to_string();
        assert!(err.starts_with(&json.display().to_string()), "{err}");
        assert!(err.contains("missing field `version`"), "{err}");

        let other = dir.path().join("x.webnn");
        std::fs::write(&other, "# hi\n  graph {}").unwrap();
        let err = read_graph_file(&other).unwrap_err().to_string();
        assert!(err.contains("x.webnn"), "{err}");
        assert!(err.contains("\"graph {}\""), "{err}");

        let missing = dir.path().join("missing.webnn");
        let err = read_graph_file(&missing).unwrap_err().to_string();
        assert!(err.starts_with(&missing.display().to_string()), "{err}");
    }

    #[test]
    fn duplicate_json_keys_are_errors() {
        let text = "{\"format\":\"webnn-graph-json\",\"version\":2,\"inputs\":{},\"nodes\":[\n {\"id\":\"y\",\"op\":\"relu\",\"inputs\":[],\"options\":{\"axis\":1,\"axis\":2}}],\"outputs\":{}}";
        let err = parse_graph_json(text).unwrap_err().to_string();
        assert_eq!(err, "duplicate key \"axis\" at line 2 column 61");
        let top = "{\"format\":\"webnn-graph-json\",\"version\":2,\"inputs\":{},\"nodes\":[],\"outputs\":{},\"outputs\":{}}";
        let err = parse_graph_json(top).unwrap_err().to_string();
        assert!(err.contains("duplicate field `outputs`"), "{err}");
        let deep = "{\"format\":\"webnn-graph-json\",\"version\":2,\"inputs\":{\"x\":{\"dataType\":\"float32\",\"shape\":[]},\"x\":{\"dataType\":\"int8\",\"shape\":[]}},\"nodes\":[],\"outputs\":{}}";
        let err = parse_graph_json(deep).unwrap_err().to_string();
        assert!(err.starts_with("duplicate key \"x\""), "{err}");
    }

    #[test]
    fn json_round_trip_and_version() {
        let g = crate::GraphJson::new(Some("n".into()));
        let text = to_graph_json_string(&g).unwrap();
        assert_eq!(parse_graph_json(&text).unwrap(), g);
        let v0 = text.replace("\"version\": 2", "\"version\": 0");
        assert!(matches!(
            parse_graph_json(&v0),
            Err(GraphJsonError::Version(0))
        ));
    }
}
