//! Reading graph files of either format, and reading/writing GraphJson text.

use crate::graph::name::Name;
use crate::graph::{ConstDecl, ConstInit, GraphJson, Node};
use serde::Serialize;
use std::io::{self, Write};

/// The two graph file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFileFormat {
    /// `.webnn` text (starts with `webnn_graph`).
    Text,
    /// GraphJson (starts with `{`).
    Json,
}

impl GraphFileFormat {
    /// Detects the format of a graph file by content: after leading whitespace (space, tab,
    /// CR, LF) and `#` comments, text starts with `webnn_graph` and JSON with `{`.
    /// `None` for anything else.
    ///
    /// ```
    /// use webnn_weights_runtime::GraphFileFormat;
    /// assert_eq!(GraphFileFormat::detect("# c\nwebnn_graph \"g\" v2 {}"), Some(GraphFileFormat::Text));
    /// assert_eq!(GraphFileFormat::detect("\n {\"format\": 1}"), Some(GraphFileFormat::Json));
    /// assert_eq!(GraphFileFormat::detect("PK\u{3}\u{4}"), None);
    /// ```
    pub fn detect(text: &str) -> Option<GraphFileFormat> {
        let rest = skip_leading_trivia(text);
        if rest.starts_with("webnn_graph") {
            Some(GraphFileFormat::Text)
        } else if rest.starts_with('{') {
            Some(GraphFileFormat::Json)
        } else {
            None
        }
    }
}

pub(crate) fn skip_leading_trivia(text: &str) -> &str {
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
    #[error(transparent)]
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
    crate::json_keys::check_unique_keys(text.as_bytes(), crate::json_keys::duplicate_key)?;
    if graph.version != 1 && graph.version != 2 {
        return Err(GraphJsonError::Version(graph.version));
    }
    Ok(graph)
}

/// How [`write_graph_json`] lays GraphJson out.
///
/// Both styles write the same keys in the same order and read back to the same graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonStyle {
    /// Two-space indentation, one value per line, no trailing newline: byte-identical to
    /// the files of `webnn-graph`'s CLI (`serde_json::to_string_pretty`). An inline byte
    /// takes a line of its own (about 14 bytes of output per byte of tensor data).
    #[default]
    Pretty,
    /// One line without whitespace, as `webnn-graph`'s library writes
    /// (`serde_json::to_string`): about 3.6 bytes of output per byte of tensor data.
    Compact,
}

/// Writes `graph` as GraphJson to `out`, streaming: nothing but a small buffer is held
/// besides the graph, whatever the size of the output.
///
/// The output is byte-identical to `serde_json::to_string_pretty(graph)`
/// ([`JsonStyle::Pretty`]) or `serde_json::to_string(graph)` ([`JsonStyle::Compact`]);
/// `inlineBytes` arrays are written through a digit table, not one formatter call per
/// byte. Give `out` a buffer (e.g. `BufWriter`) when it is a file: small pieces are
/// written one by one. The only errors are those of `out`.
///
/// ```
/// use webnn_weights_runtime::{write_graph_json, GraphJson, JsonStyle};
/// let g = GraphJson::new(Some("g".into()));
/// let mut out = Vec::new();
/// write_graph_json(&g, &mut out, JsonStyle::Compact).unwrap();
/// assert_eq!(out, serde_json::to_vec(&g).unwrap());
/// let mut pretty = Vec::new();
/// write_graph_json(&g, &mut pretty, JsonStyle::Pretty).unwrap();
/// assert_eq!(pretty, serde_json::to_vec_pretty(&g).unwrap());
/// ```
pub fn write_graph_json<W: Write + ?Sized>(
    graph: &GraphJson,
    out: &mut W,
    style: JsonStyle,
) -> io::Result<()> {
    let mut j = JsonOut {
        out,
        pretty: style == JsonStyle::Pretty,
    };
    j.raw(b"{")?;
    j.key("format", true, 1)?;
    j.string(&graph.format)?;
    j.key("version", false, 1)?;
    j.raw(graph.version.to_string().as_bytes())?;
    if let Some(name) = &graph.name {
        j.key("name", false, 1)?;
        j.string(name)?;
    }
    j.key("quantized", false, 1)?;
    j.raw(if graph.quantized { b"true" } else { b"false" })?;

    j.key("inputs", false, 1)?;
    j.raw(b"{")?;
    for (i, (name, desc)) in graph.inputs.iter().enumerate() {
        j.key(name, i == 0, 2)?;
        j.value(desc, 2)?;
    }
    j.close(b'}', !graph.inputs.is_empty(), 1)?;

    j.key("consts", false, 1)?;
    j.raw(b"{")?;
    for (i, (name, decl)) in graph.consts.iter().enumerate() {
        j.key(name, i == 0, 2)?;
        j.const_decl(decl)?;
    }
    j.close(b'}', !graph.consts.is_empty(), 1)?;

    j.key("nodes", false, 1)?;
    j.raw(b"[")?;
    for (i, node) in graph.nodes.iter().enumerate() {
        j.item(i == 0, 2)?;
        j.node(node)?;
    }
    j.close(b']', !graph.nodes.is_empty(), 1)?;

    j.key("outputs", false, 1)?;
    j.raw(b"{")?;
    for (i, (binding, operand)) in graph.outputs.iter().enumerate() {
        j.key(binding, i == 0, 2)?;
        j.string(operand)?;
    }
    j.close(b'}', !graph.outputs.is_empty(), 1)?;
    j.close(b'}', true, 0)
}

/// The GraphJson emitter: structure by hand, arbitrary values through serde_json with a
/// formatter that continues at the current indentation.
struct JsonOut<'w, W: Write + ?Sized> {
    out: &'w mut W,
    pretty: bool,
}

impl<W: Write + ?Sized> JsonOut<'_, W> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    fn indent(&mut self, depth: usize) -> io::Result<()> {
        const SPACES: &[u8] = b"                                                                ";
        let mut n = depth * 2;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    /// Starts an array item or object entry at `depth` (the depth of the items).
    fn item(&mut self, first: bool, depth: usize) -> io::Result<()> {
        match (self.pretty, first) {
            (true, true) => self.raw(b"\n")?,
            (true, false) => self.raw(b",\n")?,
            (false, true) => {}
            (false, false) => self.raw(b",")?,
        }
        if self.pretty {
            self.indent(depth)?;
        }
        Ok(())
    }

    fn key(&mut self, key: &str, first: bool, depth: usize) -> io::Result<()> {
        self.item(first, depth)?;
        self.string(key)?;
        self.raw(if self.pretty { b": " } else { b":" })
    }

    /// Closes a container whose items were at `depth + 1`.
    fn close(&mut self, close: u8, had_items: bool, depth: usize) -> io::Result<()> {
        if self.pretty && had_items {
            self.raw(b"\n")?;
            self.indent(depth)?;
        }
        self.raw(&[close])
    }

    /// A constant's declaration, an object at depth 2: `dataType`, `shape` and `init`.
    fn const_decl(&mut self, decl: &ConstDecl) -> io::Result<()> {
        self.raw(b"{")?;
        self.key("dataType", true, 3)?;
        self.string(decl.data_type.json_name())?;
        self.key("shape", false, 3)?;
        self.value(&decl.shape, 3)?;
        self.key("init", false, 3)?;
        self.raw(b"{")?;
        self.key("kind", true, 4)?;
        match &decl.init {
            ConstInit::Weights { r#ref } => {
                self.string("weights")?;
                self.key("ref", false, 4)?;
                self.string(r#ref)?;
            }
            ConstInit::Scalar { value } => {
                self.string("scalar")?;
                self.key("value", false, 4)?;
                self.value(value, 4)?;
            }
            ConstInit::InlineBytes { bytes } => {
                self.string("inlineBytes")?;
                self.key("bytes", false, 4)?;
                self.bytes(bytes, 5)?;
            }
        }
        self.close(b'}', true, 3)?;
        self.close(b'}', true, 2)
    }

    /// A node, an object at depth 2: `id`, `op`, `inputs`, `options` and `outputs`.
    fn node(&mut self, node: &Node) -> io::Result<()> {
        self.raw(b"{")?;
        self.key("id", true, 3)?;
        self.string(&node.id)?;
        self.key("op", false, 3)?;
        self.string(&node.op)?;
        self.key("inputs", false, 3)?;
        self.strings(&node.inputs, 4)?;
        self.key("options", false, 3)?;
        if node.options.is_empty() {
            self.raw(b"{}")?;
        } else {
            self.value(&node.options, 3)?;
        }
        self.key("outputs", false, 3)?;
        match &node.outputs {
            None => self.raw(b"null")?,
            Some(outputs) => self.strings(outputs, 4)?,
        }
        self.close(b'}', true, 2)
    }

    /// A JSON string, escaped exactly as serde_json escapes.
    fn string(&mut self, s: &str) -> io::Result<()> {
        if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.raw(b"\"")?;
            self.raw(s.as_bytes())?;
            self.raw(b"\"")
        } else {
            self.value(s, 0)
        }
    }

    /// An array of strings whose items are at `depth`.
    fn strings(&mut self, items: &[Name], depth: usize) -> io::Result<()> {
        self.raw(b"[")?;
        for (i, s) in items.iter().enumerate() {
            self.item(i == 0, depth)?;
            self.string(s)?;
        }
        self.close(b']', !items.is_empty(), depth - 1)
    }

    /// Inline bytes: an array of numbers whose items are at `depth`, without a formatter
    /// call per byte.
    fn bytes(&mut self, bytes: &[u8], depth: usize) -> io::Result<()> {
        self.raw(b"[")?;
        if bytes.is_empty() {
            return self.raw(b"]");
        }
        if self.pretty {
            let mut separator = Vec::with_capacity(2 + 2 * depth);
            separator.extend_from_slice(b",\n");
            separator.resize(2 + 2 * depth, b' ');
            self.raw(&separator[1..])?;
            crate::graph::digits::write_byte_list(self.out, bytes, &separator)?;
            self.close(b']', true, depth - 1)
        } else {
            crate::graph::digits::write_byte_list(self.out, bytes, b",")?;
            self.raw(b"]")
        }
    }

    /// Any serializable value, written as serde_json would at this depth (`depth` is the
    /// depth of the value itself).
    fn value<T: Serialize + ?Sized>(&mut self, value: &T, depth: usize) -> io::Result<()> {
        let result = if self.pretty {
            let mut ser = serde_json::Serializer::with_formatter(
                &mut *self.out,
                PrettyAt {
                    depth,
                    has_value: false,
                },
            );
            value.serialize(&mut ser)
        } else {
            value.serialize(&mut serde_json::Serializer::new(&mut *self.out))
        };
        result.map_err(io::Error::from)
    }
}

/// serde_json's `PrettyFormatter` (two spaces), starting at a given depth.
struct PrettyAt {
    depth: usize,
    has_value: bool,
}

impl PrettyAt {
    fn newline_indent<W: Write + ?Sized>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// `[` or `{`: one level deeper, nothing in it yet.
    fn open<W: Write + ?Sized>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// `]` or `}`: on a line of its own unless the array or object is empty.
    fn close<W: Write + ?Sized>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(bracket)
    }

    /// Before an array value or an object key: a comma after the first, then a new line.
    fn item<W: Write + ?Sized>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }
}

impl serde_json::ser::Formatter for PrettyAt {
    fn begin_array<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: Write + ?Sized>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: Write + ?Sized>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: Write + ?Sized>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: Write + ?Sized>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

impl GraphJson {
    /// Writes GraphJson as `webnn-graph` does: pretty-printed, keys in the format's order,
    /// maps sorted, no trailing newline ([`write_graph_json`] with [`JsonStyle::Pretty`],
    /// into a string).
    ///
    /// ```
    /// let g = webnn_weights_runtime::GraphJson::new(None);
    /// let text = g.to_json_string().unwrap();
    /// assert!(text.starts_with("{\n  \"format\": \"webnn-graph-json\",\n  \"version\": 2,"));
    /// assert_eq!(webnn_weights_runtime::parse_graph_json(&text).unwrap(), g);
    /// ```
    pub fn to_json_string(&self) -> Result<String, serde_json::Error> {
        let mut out = Vec::new();
        write_graph_json(self, &mut out, JsonStyle::Pretty).map_err(serde_json::Error::io)?;
        String::from_utf8(out)
            .map_err(|e| serde_json::Error::io(io::Error::new(io::ErrorKind::InvalidData, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trivia() {
        assert_eq!(skip_leading_trivia("  # a\r\n#b\n\t x"), "x");
        assert_eq!(skip_leading_trivia("# only a comment"), "");
        assert_eq!(GraphFileFormat::detect(""), None);
        assert_eq!(GraphFileFormat::detect("[1]"), None);
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

    fn written(graph: &GraphJson, style: JsonStyle) -> Vec<u8> {
        let mut out = Vec::new();
        write_graph_json(graph, &mut out, style).unwrap();
        out
    }

    #[test]
    fn streamed_json_is_byte_identical_to_serde() {
        let graphs = samples::fixtures()
            .into_iter()
            .map(|(_, g)| g)
            .chain(samples::generated(0x5eed, 400));
        let mut with_bytes = 0;
        for graph in graphs {
            let pretty = written(&graph, JsonStyle::Pretty);
            assert_eq!(
                String::from_utf8_lossy(&pretty),
                serde_json::to_string_pretty(&graph).unwrap()
            );
            let compact = written(&graph, JsonStyle::Compact);
            assert_eq!(
                String::from_utf8_lossy(&compact),
                serde_json::to_string(&graph).unwrap()
            );
            assert!(!compact.contains(&b'\n'));
            let text = std::str::from_utf8(&compact).unwrap();
            assert_eq!(parse_graph_json(text).unwrap(), graph);
            assert_eq!(graph.to_json_string().unwrap().into_bytes(), pretty);
            with_bytes += graph
                .consts
                .values()
                .filter(
                    |c| matches!(&c.init, ConstInit::InlineBytes { bytes } if bytes.len() > 1000),
                )
                .count();
        }
        assert!(
            with_bytes > 10,
            "too few large inline constants: {with_bytes}"
        );
    }

    /// A writer that fails after `left` bytes.
    struct FailAfter {
        left: usize,
    }

    impl Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::other("disk full"));
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writer_errors_come_back() {
        let graph = samples::generated(7, 50)
            .into_iter()
            .max_by_key(|g| serde_json::to_vec(g).unwrap().len())
            .unwrap();
        let len = serde_json::to_vec(&graph).unwrap().len();
        for left in [0, 1, len / 2, len - 1] {
            let err =
                write_graph_json(&graph, &mut FailAfter { left }, JsonStyle::Compact).unwrap_err();
            assert_eq!(err.to_string(), "disk full");
        }
        write_graph_json(&graph, &mut FailAfter { left: len }, JsonStyle::Compact).unwrap();
    }

    #[test]
    fn json_round_trip_and_version() {
        let g = crate::GraphJson::new(Some("n".into()));
        let text = g.to_json_string().unwrap();
        assert_eq!(parse_graph_json(&text).unwrap(), g);
        let v0 = text.replace("\"version\": 2", "\"version\": 0");
        assert!(matches!(
            parse_graph_json(&v0),
            Err(GraphJsonError::Version(0))
        ));
    }
}

/// Graphs for the writer tests: the repository's fixtures and generated graphs with every
/// kind of item, awkward strings (quotes, backslashes, control characters, non-ASCII),
/// floats, nested and empty options, and inline bytes of every value.
#[cfg(test)]
pub(crate) mod samples {
    use crate::graph::{ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc};
    use crate::DataType;
    use serde_json::{json, Value};
    use std::path::{Path, PathBuf};

    /// Every graph file under `tests/fixtures`, with its path.
    pub fn fixtures() -> Vec<(PathBuf, GraphJson)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut found = Vec::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    if let Ok(graph) = crate::parse_graph_text(&text, &path) {
                        found.push((path, graph));
                    }
                }
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(found.len() >= 8, "fixtures not found: {found:?}");
        found
    }

    use webnn_weights_test_support::Rng;

    const NAMES: [&str; 8] = ["x", "a.b/c", "$t", "_y0", "w", "n/1", "z.z", "q"];
    const ODD: [&str; 7] = [
        "quote\"d",
        "back\\slash",
        "tab\tnew\nline\u{1}",
        "h\u{e9}llo \u{1F600}",
        "",
        "true_ish",
        "del\u{7f}",
    ];

    fn string(rng: &mut Rng) -> String {
        if rng.below(3) == 0 {
            ODD[rng.below(ODD.len() as u64) as usize].to_string()
        } else {
            NAMES[rng.below(NAMES.len() as u64) as usize].to_string()
        }
    }

    fn value(rng: &mut Rng, depth: u32) -> Value {
        match rng.below(if depth > 3 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(rng.below(2) == 0),
            2 => json!(rng.next_u64() as i64 >> rng.below(60)),
            3 => {
                json!((rng.next_u64() as f64 / 7.0e15) * if rng.below(2) == 0 { -1.0 } else { 1.0 })
            }
            4 => Value::String(string(rng)),
            5 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
            _ => Value::Object(
                (0..rng.below(4))
                    .map(|i| (format!("{}{i}", string(rng)), value(rng, depth + 1)))
                    .collect(),
            ),
        }
    }

    /// `count` generated graphs from `seed`. Names are made unique, but may fall outside
    /// the identifier grammar (so text writing may fail, as it should).
    pub fn generated(seed: u64, count: usize) -> Vec<GraphJson> {
        let mut rng = Rng::new(seed);
        (0..count)
            .map(|g| {
                let name = match rng.below(4) {
                    0 => None,
                    _ => Some(string(&mut rng)),
                };
                let mut graph = GraphJson::new(name);
                graph.quantized = rng.below(2) == 0;
                graph.version = 1 + rng.below(2) as u32;
                for i in 0..rng.below(3) {
                    let shape = (0..rng.below(4))
                        .map(|_| match rng.below(3) {
                            0 => Dimension::Dynamic {
                                name: string(&mut rng),
                                max_size: rng.next_u64() as u32,
                            },
                            _ => Dimension::Static(rng.next_u64() as u32),
                        })
                        .collect();
                    graph.inputs.insert(
                        format!("in{i}_{}", string(&mut rng)),
                        OperandDesc {
                            data_type: DataType::ALL[rng.below(10) as usize],
                            shape,
                        },
                    );
                }
                for i in 0..rng.below(5) {
                    let init = match rng.below(3) {
                        0 => ConstInit::Weights {
                            r#ref: string(&mut rng),
                        },
                        1 => ConstInit::Scalar {
                            value: value(&mut rng, 5),
                        },
                        _ => ConstInit::InlineBytes {
                            bytes: (0..rng.below(if g % 5 == 0 { 3000 } else { 20 }))
                                .map(|_| rng.next_u64() as u8)
                                .collect(),
                        },
                    };
                    graph.consts.insert(
                        format!("c{i}"),
                        ConstDecl {
                            data_type: DataType::ALL[rng.below(10) as usize],
                            shape: (0..rng.below(3)).map(|_| rng.below(9) as u32).collect(),
                            init,
                        },
                    );
                }
                for i in 0..rng.below(6) {
                    let id = format!("n{i}");
                    let options: crate::NodeOptions = (0..rng.below(4))
                        .map(|k| (format!("o{k}"), value(&mut rng, 0)))
                        .collect();
                    let outputs = (rng.below(3) == 0)
                        .then(|| vec![id.clone().into(), format!("n{i}_b").into()]);
                    graph.nodes.push(Node {
                        id: id.into(),
                        op: if rng.below(5) == 0 {
                            string(&mut rng).into()
                        } else {
                            "add".into()
                        },
                        inputs: (0..rng.below(3)).map(|_| string(&mut rng).into()).collect(),
                        options,
                        outputs,
                    });
                }
                for i in 0..rng.below(3) {
                    let name = format!("n{i}");
                    let operand = if rng.below(6) == 0 {
                        string(&mut rng)
                    } else {
                        name.clone()
                    };
                    graph.outputs.insert(name, operand);
                }
                graph
            })
            .collect()
    }
}
