//! The `.webnn` writer as it was before streaming (test reference for byte identity).
#![allow(dead_code)]

use super::error::WriteTextError;
use super::is_identifier;
use super::parser::MAX_DEPTH;
use crate::graph::{ConstInit, Dimension, GraphJson, Node, GRAPH_JSON_FORMAT};
use serde_json::{Number, Value};
use std::collections::HashMap;
use std::fmt::Write as _;

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
/// `i64::MAX` (it would read back as a float), values nested deeper than
/// [`MAX_DEPTH`](crate::text::MAX_DEPTH), or a multi-output node whose `id` is not its
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

    let mut names = Names::default();

    let mut out = String::with_capacity(64 + 48 * graph.nodes.len());
    let _ = write!(out, "webnn_graph {} v{}", quote(name), graph.version);
    if graph.quantized {
        out.push_str(" @quantized");
    }
    out.push_str(" {\n");

    if !graph.inputs.is_empty() {
        out.push_str("  inputs {\n");
        for (name, desc) in &graph.inputs {
            names.declare(name, format!("input `{name}`"))?;
            let _ = write!(out, "    {name}: {}[", desc.data_type.text_name());
            for (i, dim) in desc.shape.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match dim {
                    Dimension::Static(v) => {
                        let _ = write!(out, "{v}");
                    }
                    Dimension::Dynamic { name, max_size } => {
                        let _ = write!(out, "dyn({}, {max_size})", quote(name));
                    }
                }
            }
            out.push_str("];\n");
        }
        out.push_str("  }\n\n");
    }

    if !graph.consts.is_empty() {
        out.push_str("  consts {\n");
        for (name, decl) in &graph.consts {
            names.declare(name, format!("constant `{name}`"))?;
            let _ = write!(out, "    {name}: {}[", decl.data_type.text_name());
            for (i, dim) in decl.shape.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{dim}");
            }
            out.push_str("] ");
            match &decl.init {
                ConstInit::Weights { r#ref } => {
                    let _ = write!(out, "@weights({})", quote(r#ref));
                }
                ConstInit::Scalar { value } => {
                    let Value::Number(n) = value else {
                        return Err(WriteTextError::new(
                            format!("constant `{name}`"),
                            format!("the scalar value {value} is not a number"),
                        ));
                    };
                    let text = number_text(n).map_err(|reason| {
                        WriteTextError::new(format!("constant `{name}` scalar"), reason)
                    })?;
                    let _ = write!(out, "@scalar({text})");
                }
                ConstInit::InlineBytes { bytes } => {
                    out.push_str("@bytes([");
                    for (i, b) in bytes.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        let _ = write!(out, "{b}");
                    }
                    out.push_str("])");
                }
            }
            out.push_str(";\n");
        }
        out.push_str("  }\n\n");
    }

    if !graph.nodes.is_empty() {
        out.push_str("  nodes {\n");
        for (index, node) in graph.nodes.iter().enumerate() {
            let item = format!("node {index} (`{}` = {})", node.id, node.op);
            write_node(&mut out, node, &item, &mut names)?;
        }
        out.push_str("  }\n\n");
    }

    out.push_str("  outputs {");
    for (binding, operand) in &graph.outputs {
        let item = format!("output `{binding}`");
        if binding != operand {
            return Err(WriteTextError::new(
                item,
                format!(
                    "it is bound to operand `{operand}`, but text outputs are always bound to an operand of the same name"
                ),
            ));
        }
        if !is_identifier(binding) {
            return Err(WriteTextError::new(item, NOT_IDENTIFIER));
        }
        let _ = write!(out, " {binding};");
    }
    out.push_str(if graph.outputs.is_empty() {
        "}\n"
    } else {
        " }\n"
    });
    out.push_str("}\n");
    Ok(out)
}

/// The operand names declared so far, with a description of their declaration.
#[derive(Default)]
struct Names<'g> {
    map: HashMap<&'g str, String>,
}

impl<'g> Names<'g> {
    /// Records `name`; an error if it is no identifier or already declared.
    fn declare(&mut self, name: &'g str, what: String) -> Result<(), WriteTextError> {
        if !is_identifier(name) {
            return Err(WriteTextError::new(what, NOT_IDENTIFIER));
        }
        if let Some(first) = self.map.get(name) {
            return Err(WriteTextError::new(
                what,
                format!("the name is already used by {first}"),
            ));
        }
        self.map.insert(name, what);
        Ok(())
    }
}

const NOT_IDENTIFIER: &str = "the name is not an identifier (first character an ASCII letter, `_`, `/` or `$`; then letters, digits, `_`, `.`, `/`)";

fn write_node<'g>(
    out: &mut String,
    node: &'g Node,
    item: &str,
    names: &mut Names<'g>,
) -> Result<(), WriteTextError> {
    out.push_str("    ");
    match &node.outputs {
        None => {
            names.declare(&node.id, format!("{item} output `{}`", node.id))?;
            out.push_str(&node.id);
        }
        Some(outputs) => {
            let Some(first) = outputs.first() else {
                return Err(WriteTextError::new(
                    item,
                    "a multi-output node with an empty `outputs` list",
                ));
            };
            if *first != node.id {
                return Err(WriteTextError::new(
                    item,
                    format!(
                        "its id `{}` is not its first output `{first}` (text takes the id from the first output)",
                        node.id
                    ),
                ));
            }
            out.push('[');
            for (i, name) in outputs.iter().enumerate() {
                names.declare(name, format!("{item} output `{name}`"))?;
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
            }
            out.push(']');
        }
    }
    if !is_identifier(&node.op) {
        return Err(WriteTextError::new(
            item,
            format!("the operation {:?} is not an identifier", node.op),
        ));
    }
    let _ = write!(out, " = {}(", node.op);
    let mut first_arg = true;
    for input in &node.inputs {
        if !first_arg {
            out.push_str(", ");
        }
        first_arg = false;
        // `webnn-graph` reads a bare `true...`, `false...` or `null...` in an argument as
        // a literal (its grammar tries literals first), so such references are quoted.
        let literal_prefix = ["true", "false", "null"]
            .iter()
            .any(|keyword| input.starts_with(keyword));
        if is_identifier(input) && !literal_prefix {
            out.push_str(input);
        } else {
            out.push_str(&quote(input));
        }
    }
    for (key, value) in &node.options {
        let option_item = || format!("{item} option `{key}`");
        if !is_identifier(key) {
            return Err(WriteTextError::new(
                option_item(),
                "the option name is not an identifier",
            ));
        }
        if !first_arg {
            out.push_str(", ");
        }
        first_arg = false;
        let _ = write!(out, "{key}=");
        write_value(out, value, 0).map_err(|reason| WriteTextError::new(option_item(), reason))?;
    }
    out.push_str(");\n");
    Ok(())
}

fn write_value(out: &mut String, value: &Value, depth: usize) -> Result<(), String> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)?),
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "arrays and objects nested deeper than {MAX_DEPTH} levels"
                ));
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "arrays and objects nested deeper than {MAX_DEPTH} levels"
                ));
            }
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if is_identifier(key) {
                    out.push_str(key);
                } else {
                    out.push_str(&quote(key));
                }
                out.push_str(": ");
                write_value(out, item, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// The text of a number that reads back to the same JSON number.
fn number_text(n: &Number) -> Result<String, String> {
    if let Some(i) = n.as_i64() {
        return Ok(i.to_string());
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
            let mut text = format!("{f:?}");
            if !text.contains(['.', 'e', 'E']) {
                text.push_str(".0");
            }
            Ok(text)
        }
        _ => Err(format!("the number {n} is not finite")),
    }
}

/// A string literal: `"` and `\` escaped, everything else verbatim.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
