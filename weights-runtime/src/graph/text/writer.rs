//! Writing a [`GraphJson`] as canonical `.webnn` text, into a string or streaming into
//! any writer.

use super::error::{TextOutputError, WriteTextError};
use super::is_identifier;
use super::parser::MAX_DEPTH;
use crate::graph::digits::write_byte_list;
use crate::graph::{ConstInit, Dimension, GraphJson, Node, GRAPH_JSON_FORMAT};
use serde_json::{Number, Value};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{self, Write};

/// Writes `graph` as `.webnn` text in the canonical layout: the header, then the blocks
/// `inputs`, `consts`, `nodes` and `outputs` (empty blocks other than `outputs` left out),
/// blocks indented by 2 spaces and entries by 4, every constant with an explicit
/// annotation, `@bytes` in decimal.
///
/// [`parse_webnn`](crate::parse_webnn) reads the result back to a graph equal to `graph`.
/// A graph that text cannot express is an error naming the item: a format other than
/// `"webnn-graph-json"`, a version other than 1 and 2, a missing graph name, an output
/// binding whose operand differs from its key, a name, operation or option key outside
/// the identifier grammar, a name used twice, a non-number scalar, an integer above
/// `i64::MAX` (it would read back as a float), values nested deeper than 128 arrays and
/// objects (what the reader accepts), or a multi-output node whose `id` is not its
/// first output.
///
/// ```
/// use webnn_weights_runtime::{parse_webnn, to_webnn_text};
/// let src = "webnn_graph \"g\" v2 {\n  inputs {\n    x: f32[2];\n  }\n\n  consts {\n    w: f32[2];\n  }\n\n  nodes {\n    y = add(x, w, alpha=0.5);\n  }\n\n  outputs { y; }\n}\n";
/// let g = parse_webnn(src).unwrap();
/// let text = to_webnn_text(&g).unwrap();
/// assert!(text.contains("    w: f32[2] @weights(\"w\");\n"));
/// assert_eq!(parse_webnn(&text).unwrap(), g);
/// ```
pub fn to_webnn_text(graph: &GraphJson) -> Result<String, WriteTextError> {
    let mut out: Out<'_, io::Sink> = Out {
        buf: Vec::with_capacity(64 + 48 * graph.nodes.len()),
        sink: None,
    };
    match emit(graph, &mut out) {
        Ok(()) => {}
        Err(TextOutputError::Graph(e)) => return Err(e),
        // Without a sink nothing is written but memory.
        Err(TextOutputError::Io(e)) => return Err(WriteTextError::new("output", e.to_string())),
    }
    String::from_utf8(out.buf).map_err(|e| WriteTextError::new("output", e.to_string()))
}

/// Writes `graph` as `.webnn` text to `out`, streaming: the same bytes as
/// [`to_webnn_text`], with no more memory than a small buffer besides the graph.
///
/// A graph that text cannot express fails as [`to_webnn_text`] does
/// ([`TextOutputError::Graph`]), possibly after part of the text was written: write to a
/// temporary file and install it only on success (e.g. with `webnn_weights_atomic`,
/// as the CLI does). Errors of `out` are
/// [`TextOutputError::Io`]. `@bytes` lists go through a digit table, not a formatter call
/// per byte.
///
/// ```
/// use webnn_weights_runtime::{parse_webnn, to_webnn_text, write_webnn_text};
/// let g = parse_webnn("webnn_graph \"g\" v2 { consts { b: u8[2] @bytes([1, 200]); } outputs { } }").unwrap();
/// let mut out = Vec::new();
/// write_webnn_text(&g, &mut out).unwrap();
/// assert_eq!(out, to_webnn_text(&g).unwrap().into_bytes());
/// ```
pub fn write_webnn_text<W: Write + ?Sized>(
    graph: &GraphJson,
    out: &mut W,
) -> Result<(), TextOutputError> {
    let mut state = Out {
        buf: Vec::with_capacity(CHUNK + 4096),
        sink: Some(out),
    };
    emit(graph, &mut state)?;
    state.flush()?;
    Ok(())
}

/// How much text is gathered before it is handed to the writer.
const CHUNK: usize = 64 * 1024;

/// Text gathered in `buf`, handed to `sink` in large pieces (kept whole when there is no
/// sink).
struct Out<'w, W: Write + ?Sized> {
    buf: Vec<u8>,
    sink: Option<&'w mut W>,
}

impl<W: Write + ?Sized> Out<'_, W> {
    fn push(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn push_byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    fn push_u32(&mut self, v: u32) {
        let _ = write!(self.buf, "{v}");
    }

    /// A string literal: `"` and `\` escaped, everything else verbatim.
    fn quoted(&mut self, s: &str) {
        self.buf.push(b'"');
        for piece in s.split_inclusive(['"', '\\']) {
            match piece.as_bytes().last() {
                Some(&last @ (b'"' | b'\\')) => {
                    self.buf
                        .extend_from_slice(&piece.as_bytes()[..piece.len() - 1]);
                    self.buf.push(b'\\');
                    self.buf.push(last);
                }
                _ => self.buf.extend_from_slice(piece.as_bytes()),
            }
        }
        self.buf.push(b'"');
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(sink) = self.sink.as_mut() {
            sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Bytes as decimal numbers separated by `, `.
    fn byte_list(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.sink.is_some() && bytes.len() > 1024 {
            self.flush()?;
            if let Some(sink) = self.sink.as_mut() {
                return write_byte_list(&mut **sink, bytes, b", ");
            }
        }
        write_byte_list(&mut self.buf, bytes, b", ")
    }
}

/// Writes the whole graph: the checked header line, then each block in canonical order,
/// declaring every name as it is written (so a repeated name fails where it repeats).
fn emit<W: Write + ?Sized>(graph: &GraphJson, out: &mut Out<'_, W>) -> Result<(), TextOutputError> {
    let name = expressible_header(graph)?;
    let mut names =
        Names::with_capacity(graph.inputs.len() + graph.consts.len() + graph.nodes.len());
    write_header(out, graph, name);
    write_inputs(out, graph, &mut names)?;
    write_consts(out, graph, &mut names)?;
    write_nodes(out, graph, &mut names)?;
    write_outputs(out, graph)?;
    out.push("}\n");
    Ok(())
}

/// The graph's name, once its format and version are ones text can express.
fn expressible_header(graph: &GraphJson) -> Result<&str, WriteTextError> {
    if graph.format != GRAPH_JSON_FORMAT {
        return Err(WriteTextError::new(
            "format",
            format!(
                "{:?} cannot be expressed (text always reads as {GRAPH_JSON_FORMAT:?})",
                graph.format
            ),
        ));
    }
    if graph.version != 1 && graph.version != 2 {
        return Err(WriteTextError::new(
            "version",
            format!("unsupported version {} (expected 1 or 2)", graph.version),
        ));
    }
    let Some(name) = &graph.name else {
        return Err(WriteTextError::new(
            "graph name",
            "the graph has no name, but .webnn text always carries one (set `name`)",
        ));
    };
    Ok(name)
}

/// `webnn_graph "name" vN [@quantized] {`.
fn write_header<W: Write + ?Sized>(out: &mut Out<'_, W>, graph: &GraphJson, name: &str) {
    out.push("webnn_graph ");
    out.quoted(name);
    out.push(" v");
    out.push_u32(graph.version);
    if graph.quantized {
        out.push(" @quantized");
    }
    out.push(" {\n");
}

/// The `inputs` block (left out when there are none).
fn write_inputs<'g, W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    graph: &'g GraphJson,
    names: &mut Names<'g>,
) -> Result<(), WriteTextError> {
    if graph.inputs.is_empty() {
        return Ok(());
    }
    out.push("  inputs {\n");
    for (name, desc) in &graph.inputs {
        names.declare(name, Declared::Input)?;
        out.push("    ");
        out.push(name);
        out.push(": ");
        out.push(desc.data_type.text_name());
        out.push_byte(b'[');
        for (i, dim) in desc.shape.iter().enumerate() {
            if i > 0 {
                out.push(", ");
            }
            write_dimension(out, dim);
        }
        out.push("];\n");
    }
    out.push("  }\n\n");
    Ok(())
}

/// One dimension of an input: a number, or `dyn("name", max)`.
fn write_dimension<W: Write + ?Sized>(out: &mut Out<'_, W>, dim: &Dimension) {
    match dim {
        Dimension::Static(v) => out.push_u32(*v),
        Dimension::Dynamic { name, max_size } => {
            out.push("dyn(");
            out.quoted(name);
            out.push(", ");
            out.push_u32(*max_size);
            out.push_byte(b')');
        }
    }
}

/// The `consts` block (left out when there are none), every constant with its annotation.
fn write_consts<'g, W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    graph: &'g GraphJson,
    names: &mut Names<'g>,
) -> Result<(), TextOutputError> {
    if graph.consts.is_empty() {
        return Ok(());
    }
    out.push("  consts {\n");
    for (name, decl) in &graph.consts {
        names.declare(name, Declared::Const)?;
        out.push("    ");
        out.push(name);
        out.push(": ");
        out.push(decl.data_type.text_name());
        out.push_byte(b'[');
        for (i, dim) in decl.shape.iter().enumerate() {
            if i > 0 {
                out.push(", ");
            }
            out.push_u32(*dim);
        }
        out.push("] ");
        write_const_init(out, name, &decl.init)?;
        out.push(";\n");
        out.flush_if_full()?;
    }
    out.push("  }\n\n");
    Ok(())
}

/// The annotation of constant `name`: `@weights(..)`, `@scalar(..)` or `@bytes([..])`.
fn write_const_init<W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    name: &str,
    init: &ConstInit,
) -> Result<(), TextOutputError> {
    match init {
        ConstInit::Weights { r#ref } => {
            out.push("@weights(");
            out.quoted(r#ref);
            out.push_byte(b')');
        }
        ConstInit::Scalar { value } => {
            let Value::Number(n) = value else {
                return Err(WriteTextError::new(
                    format!("constant `{name}`"),
                    format!("the scalar value {value} is not a number"),
                )
                .into());
            };
            out.push("@scalar(");
            push_number(out, n).map_err(|reason| {
                WriteTextError::new(format!("constant `{name}` scalar"), reason)
            })?;
            out.push_byte(b')');
        }
        ConstInit::InlineBytes { bytes } => {
            out.push("@bytes([");
            out.byte_list(bytes)?;
            out.push("])");
        }
    }
    Ok(())
}

/// The `nodes` block (left out when there are none).
fn write_nodes<'g, W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    graph: &'g GraphJson,
    names: &mut Names<'g>,
) -> Result<(), TextOutputError> {
    if graph.nodes.is_empty() {
        return Ok(());
    }
    out.push("  nodes {\n");
    for (index, node) in graph.nodes.iter().enumerate() {
        write_node(out, node, index, names)?;
        out.flush_if_full()?;
    }
    out.push("  }\n\n");
    Ok(())
}

/// The `outputs` block (always written), each binding named after its operand.
fn write_outputs<W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    graph: &GraphJson,
) -> Result<(), TextOutputError> {
    out.push("  outputs {");
    for (binding, operand) in &graph.outputs {
        let item = || format!("output `{binding}`");
        if binding != operand {
            return Err(WriteTextError::new(
                item(),
                format!(
                    "it is bound to operand `{operand}`, but text outputs are always bound to an operand of the same name"
                ),
            )
            .into());
        }
        if !is_identifier(binding) {
            return Err(WriteTextError::new(item(), NOT_IDENTIFIER).into());
        }
        out.push_byte(b' ');
        out.push(binding);
        out.push_byte(b';');
        out.flush_if_full()?;
    }
    out.push(if graph.outputs.is_empty() {
        "}\n"
    } else {
        " }\n"
    });
    Ok(())
}

/// Where a name was declared; described in words only when an error needs it.
#[derive(Clone, Copy)]
enum Declared<'g> {
    Input,
    Const,
    /// An output of the node at this index.
    NodeOutput(usize, &'g Node),
}

impl Declared<'_> {
    fn describe(self, name: &str) -> String {
        match self {
            Declared::Input => format!("input `{name}`"),
            Declared::Const => format!("constant `{name}`"),
            Declared::NodeOutput(index, node) => {
                format!("{} output `{name}`", node_item(index, node))
            }
        }
    }
}

fn node_item(index: usize, node: &Node) -> String {
    format!("node {index} (`{}` = {})", node.id, node.op)
}

/// The operand names declared so far, with where they were declared.
struct Names<'g> {
    map: HashMap<&'g str, Declared<'g>, foldhash::fast::RandomState>,
}

impl<'g> Names<'g> {
    fn with_capacity(n: usize) -> Names<'g> {
        Names {
            map: HashMap::with_capacity_and_hasher(n, foldhash::fast::RandomState::default()),
        }
    }

    /// Records `name`; an error if it is no identifier or already declared.
    fn declare(&mut self, name: &'g str, what: Declared<'g>) -> Result<(), WriteTextError> {
        if !is_identifier(name) {
            return Err(WriteTextError::new(what.describe(name), NOT_IDENTIFIER));
        }
        match self.map.entry(name) {
            Entry::Occupied(first) => Err(WriteTextError::new(
                what.describe(name),
                format!("the name is already used by {}", first.get().describe(name)),
            )),
            Entry::Vacant(slot) => {
                slot.insert(what);
                Ok(())
            }
        }
    }
}

const NOT_IDENTIFIER: &str = "the name is not an identifier (first character an ASCII letter, `_`, `/` or `$`; then letters, digits, `_`, `.`, `/`)";

/// One line of the `nodes` block: `targets = op(inputs, options);`.
fn write_node<'g, W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    node: &'g Node,
    index: usize,
    names: &mut Names<'g>,
) -> Result<(), WriteTextError> {
    out.push("    ");
    write_node_targets(out, node, index, names)?;
    if !is_identifier(&node.op) {
        return Err(WriteTextError::new(
            node_item(index, node),
            format!("the operation {:?} is not an identifier", node.op),
        ));
    }
    out.push(" = ");
    out.push(&node.op);
    out.push_byte(b'(');
    write_node_arguments(out, node, index)?;
    out.push(");\n");
    Ok(())
}

/// What a node assigns: its id, or `[first, ...]` for a multi-output node (whose id must
/// be its first output), each name declared.
fn write_node_targets<'g, W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    node: &'g Node,
    index: usize,
    names: &mut Names<'g>,
) -> Result<(), WriteTextError> {
    let Some(outputs) = &node.outputs else {
        names.declare(&node.id, Declared::NodeOutput(index, node))?;
        out.push(&node.id);
        return Ok(());
    };
    let Some(first) = outputs.first() else {
        return Err(WriteTextError::new(
            node_item(index, node),
            "a multi-output node with an empty `outputs` list",
        ));
    };
    if *first != node.id {
        return Err(WriteTextError::new(
            node_item(index, node),
            format!(
                "its id `{}` is not its first output `{first}` (text takes the id from the first output)",
                node.id
            ),
        ));
    }
    out.push_byte(b'[');
    for (i, name) in outputs.iter().enumerate() {
        names.declare(name, Declared::NodeOutput(index, node))?;
        if i > 0 {
            out.push(", ");
        }
        out.push(name);
    }
    out.push_byte(b']');
    Ok(())
}

/// A node's arguments, separated by `, `: its inputs, then its options as `key=value`.
fn write_node_arguments<W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    node: &Node,
    index: usize,
) -> Result<(), WriteTextError> {
    let mut first_arg = true;
    for input in &node.inputs {
        if !first_arg {
            out.push(", ");
        }
        first_arg = false;
        // `webnn-graph` reads a bare `true...`, `false...` or `null...` in an argument as
        // a literal (its grammar tries literals first), so such references are quoted.
        let literal_prefix = ["true", "false", "null"]
            .iter()
            .any(|keyword| input.starts_with(keyword));
        if is_identifier(input) && !literal_prefix {
            out.push(input);
        } else {
            out.quoted(input);
        }
    }
    for (key, value) in &node.options {
        let option_item = || format!("{} option `{key}`", node_item(index, node));
        if !is_identifier(key) {
            return Err(WriteTextError::new(
                option_item(),
                "the option name is not an identifier",
            ));
        }
        if !first_arg {
            out.push(", ");
        }
        first_arg = false;
        out.push(key);
        out.push_byte(b'=');
        write_value(out, value, 0).map_err(|reason| WriteTextError::new(option_item(), reason))?;
    }
    Ok(())
}

fn write_value<W: Write + ?Sized>(
    out: &mut Out<'_, W>,
    value: &Value,
    depth: usize,
) -> Result<(), String> {
    match value {
        Value::Null => out.push("null"),
        Value::Bool(b) => out.push(if *b { "true" } else { "false" }),
        Value::Number(n) => push_number(out, n)?,
        Value::String(s) => out.quoted(s),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "arrays and objects nested deeper than {MAX_DEPTH} levels"
                ));
            }
            out.push_byte(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(", ");
                }
                write_value(out, item, depth + 1)?;
            }
            out.push_byte(b']');
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "arrays and objects nested deeper than {MAX_DEPTH} levels"
                ));
            }
            out.push_byte(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(", ");
                }
                if is_identifier(key) {
                    out.push(key);
                } else {
                    out.quoted(key);
                }
                out.push(": ");
                write_value(out, item, depth + 1)?;
            }
            out.push_byte(b'}');
        }
    }
    Ok(())
}

/// Appends the text of a number that reads back to the same JSON number.
fn push_number<W: Write + ?Sized>(out: &mut Out<'_, W>, n: &Number) -> Result<(), String> {
    if let Some(i) = n.as_i64() {
        let _ = write!(out.buf, "{i}");
        return Ok(());
    }
    if let Some(u) = n.as_u64() {
        return Err(format!(
            "the integer {u} is larger than {} and would read back as a float",
            i64::MAX
        ));
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => {
            // `Debug` is the shortest text that parses back to the same f64.
            let start = out.buf.len();
            let _ = write!(out.buf, "{f:?}");
            if !out.buf[start..]
                .iter()
                .any(|&b| matches!(b, b'.' | b'e' | b'E'))
            {
                out.push(".0");
            }
            Ok(())
        }
        _ => Err(format!("the number {n} is not finite")),
    }
}
