//! A recursive-descent reader of `.webnn` text into [`GraphJson`].
//!
//! Recursion happens only in option values and is capped at `MAX_DEPTH`.

use super::error::ParseError;
use super::lexer::{unescape, Kind, Lexer, RawError, Token};
use crate::graph::dtype::DataType;
use crate::graph::name::Name;
use crate::graph::node_options::NodeOptions;
use crate::graph::{
    ConstDecl, ConstInit, Dimension, GraphJson, Node, OperandDesc, GRAPH_JSON_FORMAT,
};
use serde_json::{Map, Number, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The deepest nesting of arrays and objects accepted in option values.
pub const MAX_DEPTH: usize = 128;

type PResult<T> = Result<T, Box<RawError>>;

/// What the graph's body may hold where a block may begin.
const BLOCK_OR_END: &str = "a block (`inputs`, `consts`, `nodes`, `outputs`) or `}`";

/// Reads `.webnn` text into a [`GraphJson`] (`format` is `"webnn-graph-json"`).
///
/// Everything `webnn-graph` 0.4.0 reads without losing information reads here too;
/// the stricter rules of the format page (bytes above 255, overflowing numbers, versions
/// other than 1 and 2, dynamic constant shapes, positional literals, unbalanced braces,
/// anything after the graph, names or blocks declared twice) are errors with a line and a
/// column. Option values nest at most 128 arrays and objects deep; deeper is an error, never
/// a stack overflow. It never panics.
///
/// ```
/// let g = webnn_weights_runtime::parse_webnn(r#"
/// ## comments are allowed anywhere (`##` is rustdoc for a leading `#`)
/// webnn_graph "demo" v2 {
///   inputs { x: f32[dyn("batch", 8), 4]; }
///   consts { w: f32[4, 4]; }          # = @weights("w")
///   nodes { y = matmul(x, w, transpose={a: false}); }
///   outputs { y; }
/// }"#).unwrap();
/// assert_eq!(g.name.as_deref(), Some("demo"));
/// assert_eq!(g.nodes[0].inputs, ["x", "w"]);
/// assert_eq!(g.nodes[0].options["transpose"]["a"], false);
/// ```
pub fn parse_webnn(text: &str) -> Result<GraphJson, ParseError> {
    parse_sharing(text, SHARED_OPTIONS)
}

/// [`parse_webnn`] keeping at most `shared` options texts for sharing (0: none; the tests
/// check that sharing never changes a result).
pub(crate) fn parse_sharing(text: &str, shared: usize) -> Result<GraphJson, ParseError> {
    let mut parser = match Parser::new(text) {
        Ok(parser) => parser,
        Err(e) => return Err(ParseError::at(text, e.offset, e.message)),
    };
    parser.max_shared = shared;
    parser
        .file()
        .map_err(|e| ParseError::at(text, e.offset, e.message))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum NameKind {
    Input,
    Const,
    NodeOutput,
}

impl NameKind {
    fn describe(self) -> &'static str {
        match self {
            NameKind::Input => "an input",
            NameKind::Const => "a constant",
            NameKind::NodeOutput => "a node output",
        }
    }
}

/// The most options texts a parse keeps for sharing (a graph whose options are all
/// different stops paying for the map there).
const SHARED_OPTIONS: usize = 4096;

struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    tok: Token<'a>,
    /// Declared operand names: kind and offset of the declaration.
    names: HashMap<&'a str, (NameKind, usize), foldhash::fast::RandomState>,
    /// The number of `;` in the source.
    statements: usize,
    /// Option names seen so far, one shared `Arc<str>` each.
    option_names: HashMap<&'a str, Arc<str>, foldhash::fast::RandomState>,
    /// Scratch of `call`: the operand references of the current call as their token's
    /// text, an identifier or a string token with its quotes (unescaped when the node is
    /// made; an identifier never starts with `"`). Two words each, so that a push copies
    /// nothing through memory.
    inputs: Vec<&'a str>,
    /// Scratch of `call`: the options of the current call.
    options: Vec<(Arc<str>, Value)>,
    /// Scratch of `array`: the items of the arrays being read, innermost last.
    values: Vec<Value>,
    /// Scratch of a multi-output statement: its output names.
    output_names: Vec<&'a str>,
    /// Scratch of `call`: the option names of a call with many options.
    option_set: HashSet<Arc<str>, foldhash::fast::RandomState>,
    /// Options texts read so far (from a call's first option to its `)`, options only)
    /// and the options read from each: a later call whose options are the same text
    /// shares them, unread (see [`Parser::reuse_options`]). At most `SHARED_OPTIONS`.
    shared_options: HashMap<&'a str, NodeOptions, foldhash::fast::RandomState>,
    /// The most texts `shared_options` keeps.
    max_shared: usize,
    /// Scratch of `call`: where its first option begins and the first `)` after it,
    /// whether an operand reference follows an option, and the options shared from an
    /// earlier call.
    first_option: Option<(usize, Option<usize>)>,
    operand_after_option: bool,
    reused_options: Option<NodeOptions>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> PResult<Parser<'a>> {
        let mut lexer = Lexer::new(src);
        let tok = lexer.next_token()?;
        // Every declaration ends in `;`: an upper bound on the names to come, so that the
        // map never grows by rehashing (bounded, in case of a file of semicolons).
        let statements = count_byte(src.as_bytes(), b';');
        Ok(Parser {
            src,
            lexer,
            tok,
            names: HashMap::with_capacity_and_hasher(
                statements.min(src.len() / 8),
                foldhash::fast::RandomState::default(),
            ),
            statements,
            option_names: HashMap::default(),
            inputs: Vec::new(),
            options: Vec::new(),
            values: Vec::new(),
            output_names: Vec::new(),
            option_set: HashSet::default(),
            shared_options: HashMap::default(),
            max_shared: SHARED_OPTIONS,
            first_option: None,
            operand_after_option: false,
            reused_options: None,
        })
    }

    /// Returns the current token and moves to the next.
    ///
    /// For the declarations; the loop over nodes reads the fields it needs and calls
    /// [`Parser::advance`]: a copy of the whole token loads it in wide loads, which stall
    /// on the lexer's narrow stores of a moment before (130 -> 107 ms for the 100k-node
    /// bench graph when the node loop stopped copying tokens).
    fn bump(&mut self) -> PResult<Token<'a>> {
        let previous = self.tok;
        self.advance()?;
        Ok(previous)
    }

    /// Moves to the next token.
    #[inline(always)]
    fn advance(&mut self) -> PResult<()> {
        self.lexer.next_into(&mut self.tok)
    }

    /// Moves past the current token if it is a `kind`; the error says what was `expected`.
    #[inline(always)]
    fn eat(&mut self, kind: Kind, expected: &str) -> PResult<()> {
        if self.tok.kind == kind {
            self.advance()
        } else {
            Err(self.unexpected(expected))
        }
    }

    #[cold]
    fn unexpected(&self, expected: &str) -> Box<RawError> {
        RawError::new(
            self.tok.start,
            format!("expected {expected}, found {}", self.tok.describe()),
        )
    }

    fn expect(&mut self, kind: Kind, expected: &str) -> PResult<Token<'a>> {
        if self.tok.kind == kind {
            self.bump()
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Token<'a>> {
        self.expect(Kind::Ident, what)
    }

    fn line_of(&self, offset: usize) -> usize {
        self.src.as_bytes()[..offset.min(self.src.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// Records operand `name`, declared at offset `start`; an error if it already is.
    fn declare(&mut self, name: &'a str, start: usize, kind: NameKind) -> PResult<()> {
        // One probe (an `entry` costs more); the first declaration comes back to be
        // reported (the map is not used after an error).
        match self.names.insert(name, (kind, start)) {
            None => Ok(()),
            Some((first_kind, first)) => Err(RawError::new(
                start,
                format!(
                    "name `{name}` declared twice: already {} (line {})",
                    first_kind.describe(),
                    self.line_of(first)
                ),
            )),
        }
    }

    /// The whole file: the header, the blocks up to the graph's closing `}`, then nothing.
    fn file(&mut self) -> PResult<GraphJson> {
        let (mut graph, open) = self.header()?;
        self.blocks(&mut graph, open)?;
        self.end_of_file()?;
        Ok(graph)
    }

    /// `webnn_graph "name" vN [@quantized] {`: the graph it starts, with no blocks yet,
    /// and its `{`.
    fn header(&mut self) -> PResult<(GraphJson, Token<'a>)> {
        let header = self.tok;
        if !(header.kind == Kind::Ident && header.text == "webnn_graph") {
            return Err(self.unexpected("the header `webnn_graph \"name\" v2 {`"));
        }
        self.bump()?;
        let name_tok = self.expect(Kind::Str, "the graph name as a string")?;
        let name = unescape(name_tok.text).into_owned();
        let version = self.version()?;
        let mut quantized = false;
        if self.tok.kind == Kind::Annotation {
            if self.tok.text != "@quantized" {
                return Err(RawError::new(
                    self.tok.start,
                    format!(
                        "unknown header annotation `{}` (only `@quantized` is allowed)",
                        self.tok.text
                    ),
                ));
            }
            quantized = true;
            self.bump()?;
        }
        let open = self.expect(Kind::LBrace, "`{` to open the graph")?;

        let mut graph = GraphJson::new(Some(name));
        graph.version = version;
        graph.quantized = quantized;
        graph.format = GRAPH_JSON_FORMAT.to_string();
        Ok((graph, open))
    }

    /// The blocks of the graph opened by `open`, up to and including its closing `}`.
    fn blocks(&mut self, graph: &mut GraphJson, open: Token<'a>) -> PResult<()> {
        // Offsets of the blocks seen, in the order inputs, consts, nodes, outputs.
        let mut seen: [Option<usize>; 4] = [None; 4];
        loop {
            let tok = self.tok;
            match tok.kind {
                Kind::RBrace => {
                    self.bump()?;
                    return Ok(());
                }
                Kind::Eof => {
                    return Err(RawError::new(
                        tok.start,
                        format!(
                            "missing closing `}}` of the graph opened at line {}",
                            self.line_of(open.start)
                        ),
                    ))
                }
                Kind::Ident => self.block(graph, tok, &mut seen)?,
                _ => return Err(self.unexpected(BLOCK_OR_END)),
            }
        }
    }

    /// The block named by the current token `tok`, into `graph`; `seen` holds where each
    /// block was first seen (in the order inputs, consts, nodes, outputs), as none may
    /// repeat.
    fn block(
        &mut self,
        graph: &mut GraphJson,
        tok: Token<'a>,
        seen: &mut [Option<usize>; 4],
    ) -> PResult<()> {
        let slot = match tok.text {
            "inputs" => 0,
            "consts" => 1,
            "nodes" => 2,
            "outputs" => 3,
            _ => return Err(self.unexpected(BLOCK_OR_END)),
        };
        if let Some(first) = seen[slot] {
            return Err(RawError::new(
                tok.start,
                format!(
                    "block `{}` declared twice (first at line {})",
                    tok.text,
                    self.line_of(first)
                ),
            ));
        }
        seen[slot] = Some(tok.start);
        self.bump()?;
        let block_open = self.expect(Kind::LBrace, "`{` to open the block")?;
        match slot {
            0 => self.inputs_block(&mut graph.inputs, tok.text, block_open),
            1 => self.consts_block(&mut graph.consts, tok.text, block_open),
            2 => {
                // Every statement ends in `;`: an upper bound on the node count
                // that spares the growing vector its copies.
                graph
                    .nodes
                    .reserve(self.statements.min(self.src.len() / 16));
                self.nodes_block(&mut graph.nodes, tok.text, block_open)
            }
            _ => self.outputs_block(&mut graph.outputs, tok.text, block_open),
        }
    }

    /// After the graph's closing `}`: the end of the text, or an error saying what follows.
    fn end_of_file(&self) -> PResult<()> {
        match self.tok.kind {
            Kind::Eof => Ok(()),
            Kind::RBrace => Err(RawError::new(
                self.tok.start,
                "extra closing `}` after the end of the graph",
            )),
            Kind::Ident
                if matches!(self.tok.text, "inputs" | "consts" | "nodes" | "outputs") =>
            {
                Err(RawError::new(
                    self.tok.start,
                    format!(
                        "block `{}` after the end of the graph (the graph was closed by a `}}` before it)",
                        self.tok.text
                    ),
                ))
            }
            _ => Err(RawError::new(
                self.tok.start,
                format!(
                    "unexpected {} after the end of the graph",
                    self.tok.describe()
                ),
            )),
        }
    }

    /// `v2` (one identifier) or `v 2`.
    fn version(&mut self) -> PResult<u32> {
        let tok = self.tok;
        if tok.kind != Kind::Ident || !tok.text.starts_with('v') {
            return Err(self.unexpected("the version, `v1` or `v2`"));
        }
        let (digits, offset) = if tok.text == "v" {
            self.bump()?;
            let num = self.tok;
            if num.kind != Kind::Number {
                return Err(self.unexpected("the version number after `v`"));
            }
            self.bump()?;
            (num.text, num.start)
        } else {
            self.bump()?;
            (&tok.text[1..], tok.start + 1)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(RawError::new(
                offset,
                format!("expected the version as `v1` or `v2`, found `v{digits}`"),
            ));
        }
        match digits.parse::<u32>() {
            Ok(v @ (1 | 2)) => Ok(v),
            Ok(v) => Err(RawError::new(
                offset,
                format!("unsupported version {v} (expected 1 or 2)"),
            )),
            Err(_) => Err(RawError::new(
                offset,
                format!("version {digits} overflows u32 (expected 1 or 2)"),
            )),
        }
    }

    #[cold]
    fn block_end(&mut self, block: &str, open: Token<'a>) -> Box<RawError> {
        if self.tok.kind == Kind::Eof {
            RawError::new(
                self.tok.start,
                format!(
                    "missing closing `}}` of the `{block}` block opened at line {}",
                    self.line_of(open.start)
                ),
            )
        } else {
            self.unexpected(&format!(
                "a declaration or `}}` closing the `{block}` block"
            ))
        }
    }

    /// The entries of a block of declarations up to its closing `}`: each starts with a
    /// name (already consumed when `entry` runs); anything else is the block's end error.
    fn declarations(
        &mut self,
        block: &str,
        open: Token<'a>,
        mut entry: impl FnMut(&mut Self, Token<'a>) -> PResult<()>,
    ) -> PResult<()> {
        loop {
            match self.tok.kind {
                Kind::RBrace => {
                    self.bump()?;
                    return Ok(());
                }
                Kind::Ident => {
                    let name = self.bump()?;
                    entry(self, name)?;
                }
                _ => return Err(self.block_end(block, open)),
            }
        }
    }

    fn inputs_block(
        &mut self,
        out: &mut BTreeMap<String, OperandDesc>,
        block: &str,
        open: Token<'a>,
    ) -> PResult<()> {
        self.declarations(block, open, |p, name| {
            p.declare(name.text, name.start, NameKind::Input)?;
            p.expect(Kind::Colon, "`:` before the type")?;
            let data_type = p.data_type()?;
            let shape = p.shape(true)?;
            p.expect(Kind::Semi, "`;` after the input declaration")?;
            out.insert(name.text.to_string(), OperandDesc { data_type, shape });
            Ok(())
        })
    }

    fn consts_block(
        &mut self,
        out: &mut BTreeMap<String, ConstDecl>,
        block: &str,
        open: Token<'a>,
    ) -> PResult<()> {
        self.declarations(block, open, |p, name| {
            p.declare(name.text, name.start, NameKind::Const)?;
            p.expect(Kind::Colon, "`:` before the type")?;
            let data_type = p.data_type()?;
            let dims = p.shape(false)?;
            let shape = dims
                .into_iter()
                .filter_map(|d| match d {
                    Dimension::Static(v) => Some(v),
                    Dimension::Dynamic { .. } => None,
                })
                .collect();
            let init = if p.tok.kind == Kind::Annotation {
                let init = p.const_annotation()?;
                if p.tok.kind == Kind::Annotation {
                    return Err(RawError::new(
                        p.tok.start,
                        format!(
                            "constant `{}` has a second annotation `{}` (only one is allowed)",
                            name.text, p.tok.text
                        ),
                    ));
                }
                init
            } else {
                ConstInit::Weights {
                    r#ref: name.text.to_string(),
                }
            };
            p.expect(Kind::Semi, "`;` after the constant declaration")?;
            out.insert(
                name.text.to_string(),
                ConstDecl {
                    data_type,
                    shape,
                    init,
                },
            );
            Ok(())
        })
    }

    fn const_annotation(&mut self) -> PResult<ConstInit> {
        let ann = self.bump()?;
        match ann.text {
            "@weights" => {
                self.expect(Kind::LParen, "`(` after `@weights`")?;
                let s = self.expect(Kind::Str, "the weight reference as a string")?;
                self.expect(Kind::RParen, "`)` closing `@weights(`")?;
                Ok(ConstInit::Weights {
                    r#ref: unescape(s.text).into_owned(),
                })
            }
            "@scalar" => {
                self.expect(Kind::LParen, "`(` after `@scalar`")?;
                let num = self.expect(Kind::Number, "a number in `@scalar(...)`")?;
                let value = number_value(num.text, num.start)?;
                self.expect(Kind::RParen, "`)` closing `@scalar(`")?;
                Ok(ConstInit::Scalar { value })
            }
            "@bytes" => {
                self.expect(Kind::LParen, "`(` after `@bytes`")?;
                self.expect(Kind::LBracket, "`[` opening the byte list")?;
                let mut bytes = Vec::new();
                if self.tok.kind != Kind::RBracket {
                    loop {
                        let num = self.tok;
                        let value = self.unsigned("a byte value (0..=255)")?;
                        match u8::try_from(value) {
                            Ok(b) => bytes.push(b),
                            Err(_) => {
                                return Err(RawError::new(
                                    num.start,
                                    format!("@bytes value {} is out of range 0..=255", num.text),
                                ))
                            }
                        }
                        if self.tok.kind == Kind::Comma {
                            self.bump()?;
                        } else {
                            break;
                        }
                    }
                }
                self.expect(Kind::RBracket, "`,` or `]` in the byte list")?;
                self.expect(Kind::RParen, "`)` closing `@bytes(`")?;
                Ok(ConstInit::InlineBytes {
                    bytes: bytes.into(),
                })
            }
            other => Err(RawError::new(
                ann.start,
                format!(
                    "unknown annotation `{other}` (expected `@weights`, `@scalar` or `@bytes`)"
                ),
            )),
        }
    }

    fn data_type(&mut self) -> PResult<DataType> {
        let tok =
            self.expect_ident("a data type (f32, f16, i4, u4, i32, u32, i64, u64, i8, u8)")?;
        DataType::from_text_name(tok.text).ok_or_else(|| {
            RawError::new(
                tok.start,
                format!(
                    "unknown data type `{}` (expected one of f32, f16, i4, u4, i32, u32, i64, u64, i8, u8)",
                    tok.text
                ),
            )
        })
    }

    /// An unsigned integer token (digits only); the value must not be larger than u64
    /// (callers narrow it further).
    fn unsigned(&mut self, what: &str) -> PResult<u64> {
        let tok = self.tok;
        if tok.kind != Kind::Number || !tok.text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.unexpected(what));
        }
        self.bump()?;
        // Any digit string too long for u64 is reported by the caller's range check.
        Ok(tok.text.parse::<u64>().unwrap_or(u64::MAX))
    }

    fn u32_value(&mut self, what: &str, role: &str) -> PResult<u32> {
        let tok = self.tok;
        let value = self.unsigned(what)?;
        u32::try_from(value).map_err(|_| {
            RawError::new(
                tok.start,
                format!("{role} {} overflows u32 (at most {})", tok.text, u32::MAX),
            )
        })
    }

    fn shape(&mut self, allow_dynamic: bool) -> PResult<Vec<Dimension>> {
        self.expect(Kind::LBracket, "`[` opening the shape")?;
        let mut dims = Vec::new();
        if self.tok.kind == Kind::RBracket {
            self.bump()?;
            return Ok(dims);
        }
        loop {
            if self.tok.kind == Kind::Ident && self.tok.text == "dyn" {
                let dyn_tok = self.bump()?;
                if !allow_dynamic {
                    return Err(RawError::new(
                        dyn_tok.start,
                        "constant shapes must be static: `dyn(...)` is only allowed in input shapes",
                    ));
                }
                self.expect(Kind::LParen, "`(` after `dyn`")?;
                let name = self.expect(Kind::Str, "the dimension name as a string")?;
                self.expect(Kind::Comma, "`,` after the dimension name")?;
                let max_size =
                    self.u32_value("the maximum size (an unsigned integer)", "maximum size")?;
                self.expect(Kind::RParen, "`)` closing `dyn(`")?;
                dims.push(Dimension::Dynamic {
                    name: unescape(name.text).into_owned(),
                    max_size,
                });
            } else {
                let what = if allow_dynamic {
                    "a dimension (an unsigned integer or `dyn(\"name\", max)`)"
                } else {
                    "a dimension (an unsigned integer)"
                };
                dims.push(Dimension::Static(self.u32_value(what, "dimension")?));
            }
            match self.tok.kind {
                Kind::Comma => {
                    self.bump()?;
                }
                Kind::RBracket => {
                    self.bump()?;
                    return Ok(dims);
                }
                _ => return Err(self.unexpected("`,` or `]` in the shape")),
            }
        }
    }

    fn nodes_block(&mut self, out: &mut Vec<Node>, block: &str, open: Token<'a>) -> PResult<()> {
        loop {
            match self.tok.kind {
                Kind::RBrace => {
                    self.advance()?;
                    return Ok(());
                }
                Kind::Ident => {
                    let (id, start) = (self.tok.text, self.tok.start);
                    self.advance()?;
                    self.declare(id, start, NameKind::NodeOutput)?;
                    self.eat(Kind::Eq, "`=` after the output name")?;
                    let (op, inputs, options) = self.call()?;
                    self.eat(Kind::Semi, "`;` after the statement")?;
                    out.push(Node {
                        id: Name::from(id),
                        op,
                        inputs,
                        options,
                        outputs: None,
                    });
                }
                Kind::LBracket => {
                    self.advance()?;
                    let first = self.expect_ident("an output name")?;
                    self.declare(first.text, first.start, NameKind::NodeOutput)?;
                    self.output_names.clear();
                    self.output_names.push(first.text);
                    while self.tok.kind == Kind::Comma {
                        self.advance()?;
                        let name = self.expect_ident("an output name")?;
                        self.declare(name.text, name.start, NameKind::NodeOutput)?;
                        self.output_names.push(name.text);
                    }
                    let outputs: Vec<Name> =
                        self.output_names.iter().map(|&n| Name::from(n)).collect();
                    self.eat(Kind::RBracket, "`,` or `]` in the output list")?;
                    self.eat(Kind::Eq, "`=` after the output list")?;
                    let (op, inputs, options) = self.call()?;
                    self.eat(Kind::Semi, "`;` after the statement")?;
                    out.push(Node {
                        id: Name::from(first.text),
                        op,
                        inputs,
                        options,
                        outputs: Some(outputs),
                    });
                }
                _ => return Err(self.block_end(block, open)),
            }
        }
    }

    /// `op(args)`: the operation name, operand references and options.
    fn call(&mut self) -> PResult<(Name, Vec<Name>, NodeOptions)> {
        if self.tok.kind != Kind::Ident {
            return Err(self.unexpected("an operation name"));
        }
        let op = self.tok.text;
        self.advance()?;
        if self.tok.kind == Kind::Semi {
            return Err(RawError::new(
                self.tok.start,
                format!(
                    "expected `(` after the operation name `{op}`: statements are calls `id = op(args);` (an alias `y = x;` is not supported)"
                ),
            ));
        }
        self.eat(Kind::LParen, "`(` after the operation name")?;
        // Arguments gather in the parser's scratch vectors, and move into vectors of the
        // exact size at the end: one allocation each, none for a node without options.
        self.inputs.clear();
        self.options.clear();
        self.option_set.clear();
        self.first_option = None;
        self.operand_after_option = false;
        self.reused_options = None;
        if self.tok.kind != Kind::RParen {
            loop {
                self.argument()?;
                match self.tok.kind {
                    Kind::Comma => self.advance()?,
                    Kind::RParen => break,
                    _ => return Err(self.unexpected("`,` or `)` in the argument list")),
                }
            }
        }
        let close = self.tok.start;
        self.advance()?;
        let inputs: Vec<Name> = self
            .inputs
            .iter()
            .map(|&text| {
                if text.starts_with('"') {
                    Name::from(&*unescape(text))
                } else {
                    Name::from(text)
                }
            })
            .collect();
        let options = if let Some(shared) = self.reused_options.take() {
            shared
        } else if self.options.is_empty() {
            NodeOptions::new()
        } else {
            // Options are written sorted; sort only when they are not.
            if !self.options.windows(2).all(|w| w[0].0 < w[1].0) {
                self.options.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            }
            let options = NodeOptions::from_sorted(self.options.drain(..).collect());
            // Options texts that hold a `)` are never looked up (see `reuse_options`).
            if let (Some((first, Some(end))), false) =
                (self.first_option, self.operand_after_option)
            {
                if end == close && self.shared_options.len() < self.max_shared {
                    let text = &self.src[first..close];
                    self.shared_options.insert(text, options.clone());
                }
            }
            options
        };
        Ok((Name::from(op), inputs, options))
    }

    /// At the first option of a call (its name at `start`): records where it begins and
    /// the first `)` byte after it (`call` keeps the text between when it held options
    /// alone); when that text is options text read before, shares the options read from
    /// it, moves to the `)` and returns true.
    ///
    /// The same text followed by `)` reads as the same options (an option's value depends
    /// on its text alone), and it read without error before; only texts that held options
    /// alone and ended at their call's `)` are kept. Graphs repeat options a great deal
    /// (every convolution of a block, every normalization of a model): sharing them spares
    /// the reading and the memory of each repeat.
    fn reuse_options(&mut self, start: usize) -> PResult<bool> {
        let rest = &self.src[start..];
        let end = rest.bytes().position(|b| b == b')');
        self.first_option = Some((start, end.map(|end| start + end)));
        let Some(end) = end else {
            return Ok(false);
        };
        let Some(options) = self.shared_options.get(&rest[..end]) else {
            return Ok(false);
        };
        self.reused_options = Some(options.clone());
        self.lexer.seek(start + end);
        self.advance()?;
        Ok(true)
    }

    /// One argument of a call: an operand reference, a list of them, or `name=value`.
    fn argument(&mut self) -> PResult<()> {
        match self.tok.kind {
            Kind::Ident => {
                let (text, start) = (self.tok.text, self.tok.start);
                self.advance()?;
                if self.tok.kind == Kind::Eq {
                    if self.first_option.is_none() && self.reuse_options(start)? {
                        return Ok(());
                    }
                    self.advance()?;
                    self.push_value(0)?;
                    self.add_option(text, start)
                } else {
                    check_positional(text, start)?;
                    self.operand_after_option |= self.first_option.is_some();
                    self.inputs.push(text);
                    Ok(())
                }
            }
            Kind::Str => {
                let text = self.tok.text;
                self.advance()?;
                self.operand_after_option |= self.first_option.is_some();
                self.inputs.push(text);
                Ok(())
            }
            Kind::LBracket => {
                self.operand_after_option |= self.first_option.is_some();
                self.advance()?;
                if self.tok.kind != Kind::RBracket {
                    loop {
                        match self.tok.kind {
                            Kind::Ident => {
                                check_positional(self.tok.text, self.tok.start)?;
                                self.inputs.push(self.tok.text);
                            }
                            Kind::Str => self.inputs.push(self.tok.text),
                            _ => {
                                return Err(RawError::new(
                                    self.tok.start,
                                    format!(
                                    "a positional array holds operand references only, found {}",
                                    self.tok.describe()
                                ),
                                ))
                            }
                        }
                        self.advance()?;
                        if self.tok.kind == Kind::Comma {
                            self.advance()?;
                        } else {
                            break;
                        }
                    }
                }
                self.eat(Kind::RBracket, "`,` or `]` in the operand list")
            }
            Kind::Number | Kind::LBrace => {
                let what = if self.tok.kind == Kind::Number {
                    "number"
                } else {
                    "object"
                };
                Err(RawError::new(
                    self.tok.start,
                    format!(
                        "positional {what} argument {}: only operand references may be positional; give it a name (`name=value`)",
                        self.tok.describe()
                    ),
                ))
            }
            _ => Err(self.unexpected("an argument")),
        }
    }

    /// Adds option `name` (at offset `start`) of the current call, with the value on top of
    /// the value stack, unless the call already has it; names are interned, so every node
    /// shares one `Arc<str>` per distinct option name.
    fn add_option(&mut self, name: &'a str, start: usize) -> PResult<()> {
        let interned = match self.option_names.get(name) {
            Some(interned) => Arc::clone(interned),
            None => {
                let interned: Arc<str> = Arc::from(name);
                self.option_names.insert(name, Arc::clone(&interned));
                interned
            }
        };
        // A handful of options: a linear scan; more: a set, filled once.
        let repeated = if self.options.len() < 16 {
            // Interned: the same name is the same `Arc`.
            self.options.iter().any(|(k, _)| Arc::ptr_eq(k, &interned))
        } else {
            if self.option_set.is_empty() {
                let names: Vec<Arc<str>> =
                    self.options.iter().map(|(k, _)| Arc::clone(k)).collect();
                self.option_set.extend(names);
            }
            !self.option_set.insert(Arc::clone(&interned))
        };
        if repeated {
            return Err(RawError::new(start, format!("option `{name}` given twice")));
        }
        // Taken off the stack only now, when the stores that made it are done with: a copy
        // right after them stalls.
        match self.values.pop() {
            Some(value) => {
                self.options.push((interned, value));
                Ok(())
            }
            None => Err(RawError::new(
                start,
                format!("option `{name}` has no value"),
            )),
        }
    }

    /// An option value; `depth` counts the enclosing arrays and objects.
    #[inline(always)]
    fn value(&mut self, depth: usize) -> PResult<Value> {
        match self.tok.kind {
            Kind::Ident => {
                let text = self.tok.text;
                self.advance()?;
                Ok(match text {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    other => Value::String(other.to_string()),
                })
            }
            Kind::Str => {
                let text = self.tok.text;
                self.advance()?;
                Ok(Value::String(unescape(text).into_owned()))
            }
            Kind::Number => {
                let (text, start) = (self.tok.text, self.tok.start);
                self.advance()?;
                number_value(text, start)
            }
            kind @ (Kind::LBracket | Kind::LBrace) => self.nested(kind, depth),
            _ => Err(self.unexpected("a value")),
        }
    }

    /// An array item onto the value stack: a number (the common item) is made in its
    /// place on the stack, not returned and copied there.
    #[inline(always)]
    fn push_value(&mut self, depth: usize) -> PResult<()> {
        if self.tok.kind == Kind::Number {
            let (text, start) = (self.tok.text, self.tok.start);
            self.advance()?;
            match short_number(text.as_bytes()) {
                Some(number) => self.values.push(Value::Number(number)),
                None => {
                    let value = long_number_value(text, start)?;
                    self.values.push(value);
                }
            }
        } else {
            let value = self.value(depth)?;
            self.values.push(value);
        }
        Ok(())
    }

    /// An array or object value (the current token opens it) inside `depth` others.
    ///
    /// Out of line, so that [`Parser::value`]'s scalars inline into the loops that read
    /// them (a value returned through memory is copied in pieces that stall).
    #[inline(never)]
    fn nested(&mut self, kind: Kind, depth: usize) -> PResult<Value> {
        if depth >= MAX_DEPTH {
            return Err(RawError::new(
                self.tok.start,
                format!("arrays and objects nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.advance()?;
        if kind == Kind::LBracket {
            self.array(depth + 1)
        } else {
            self.object(depth + 1)
        }
    }

    /// The items gather on the parser's value stack (nested arrays above their parent's
    /// items) and move into a vector of the exact size at the `]`.
    fn array(&mut self, depth: usize) -> PResult<Value> {
        if self.tok.kind == Kind::RBracket {
            self.advance()?;
            return Ok(Value::Array(Vec::new()));
        }
        let base = self.values.len();
        loop {
            self.push_value(depth)?;
            match self.tok.kind {
                Kind::Comma => self.advance()?,
                Kind::RBracket => {
                    self.advance()?;
                    return Ok(Value::Array(self.values.drain(base..).collect()));
                }
                _ => return Err(self.unexpected("`,` or `]` in the array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> PResult<Value> {
        let mut map = Map::new();
        if self.tok.kind == Kind::RBrace {
            self.advance()?;
            return Ok(Value::Object(map));
        }
        loop {
            let key_start = self.tok.start;
            let key = match self.tok.kind {
                Kind::Ident => self.tok.text.to_string(),
                Kind::Str => unescape(self.tok.text).into_owned(),
                _ => return Err(self.unexpected("an object key (identifier or string)")),
            };
            self.advance()?;
            self.eat(Kind::Colon, "`:` after the object key")?;
            let value = self.value(depth)?;
            if map.contains_key(&key) {
                return Err(RawError::new(
                    key_start,
                    format!("object key {key:?} given twice"),
                ));
            }
            map.insert(key, value);
            match self.tok.kind {
                Kind::Comma => self.advance()?,
                Kind::RBrace => {
                    self.advance()?;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.unexpected("`,` or `}` in the object")),
            }
        }
    }
    fn outputs_block(
        &mut self,
        out: &mut BTreeMap<String, String>,
        block: &str,
        open: Token<'a>,
    ) -> PResult<()> {
        let mut seen: HashMap<&'a str, usize> = HashMap::new();
        loop {
            match self.tok.kind {
                Kind::RBrace => {
                    self.bump()?;
                    return Ok(());
                }
                Kind::Ident => loop {
                    let name = self.bump()?;
                    if let Some(&first) = seen.get(name.text) {
                        return Err(RawError::new(
                            name.start,
                            format!(
                                "output `{}` declared twice (first at line {})",
                                name.text,
                                self.line_of(first)
                            ),
                        ));
                    }
                    seen.insert(name.text, name.start);
                    out.insert(name.text.to_string(), name.text.to_string());
                    match self.tok.kind {
                        Kind::Comma => {
                            self.bump()?;
                            if self.tok.kind != Kind::Ident {
                                return Err(self.unexpected("an output name after `,`"));
                            }
                        }
                        Kind::Semi => {
                            self.bump()?;
                            break;
                        }
                        _ => break,
                    }
                },
                _ => return Err(self.block_end(block, open)),
            }
        }
    }
}

/// How many times `needle` occurs in `bytes`: in blocks of 32 with a byte-wide count,
/// which the compiler turns into vector compares (`filter().count()` went byte by byte:
/// a sixteenth of a parse).
fn count_byte(bytes: &[u8], needle: u8) -> usize {
    let mut blocks = bytes.chunks_exact(32);
    let mut n = 0usize;
    for block in &mut blocks {
        let mut in_block = 0u8;
        for &b in block {
            in_block += u8::from(b == needle);
        }
        n += usize::from(in_block);
    }
    n + blocks.remainder().iter().filter(|&&b| b == needle).count()
}

/// A positional identifier is an operand reference, unless it is a literal keyword.
#[inline]
fn check_positional(text: &str, start: usize) -> PResult<()> {
    match text {
        "true" | "false" | "null" => Err(RawError::new(
            start,
            format!(
                "positional `{text}` argument: only operand references may be positional; give it a name (`name=value`) or quote an operand named so"
            ),
        )),
        _ => Ok(()),
    }
}

/// A number token as a JSON number: an integer when it has no fraction or exponent and
/// fits i64, a float otherwise; floats that overflow f64 are errors.
#[inline(always)]
fn number_value(text: &str, start: usize) -> PResult<Value> {
    match short_number(text.as_bytes()) {
        Some(value) => Ok(Value::Number(value)),
        None => long_number_value(text, start),
    }
}

/// [`number_value`] of the numbers that [`short_number`] leaves.
#[inline(never)]
fn long_number_value(text: &str, start: usize) -> PResult<Value> {
    if !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Number(Number::from(i)));
        }
    }
    let f = text
        .parse::<f64>()
        .map_err(|_| RawError::new(start, format!("invalid number `{text}`")))?;
    Number::from_f64(f).map(Value::Number).ok_or_else(|| {
        RawError::new(
            start,
            format!("number `{text}` overflows f64 (its magnitude is too large)"),
        )
    })
}

/// Powers of ten that f64 holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The common numbers without the general conversions: `-?digits` of at most 18 digits
/// (an exact i64), and `-?digits.digits` of at most 15 digits in all, whose value is an
/// integer below 2^53 divided by an exact power of ten (one correctly rounded division:
/// the same f64 as `str::parse`). `None` for anything else (the caller converts).
#[inline]
fn short_number(text: &[u8]) -> Option<Number> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut fraction_digits = None;
    let mut count = 0usize;
    for (i, &b) in digits.iter().enumerate() {
        if b.is_ascii_digit() {
            mantissa = mantissa * 10 + u64::from(b - b'0');
            count += 1;
        } else if b == b'.' && fraction_digits.is_none() && i > 0 && i + 1 < digits.len() {
            fraction_digits = Some(digits.len() - i - 1);
        } else {
            return None;
        }
    }
    match fraction_digits {
        // At most 18 digits: below 10^18 < 2^63.
        None => {
            let value = mantissa as i64;
            Some(Number::from(if negative { -value } else { value }))
        }
        Some(k) if count <= 15 => {
            // Below 10^15 < 2^53: exact in f64, as is 10^k for k <= 15.
            let value = mantissa as f64 / EXACT_POWERS_OF_TEN[k];
            Number::from_f64(if negative { -value } else { value })
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod number_tests {
    use super::*;

    #[test]
    fn count_byte_counts_every_block_and_the_rest() {
        for len in [0usize, 1, 31, 32, 33, 64, 100, 1000] {
            let bytes: Vec<u8> = (0..len)
                .map(|i| if i % 3 == 0 { b';' } else { b'x' })
                .collect();
            assert_eq!(count_byte(&bytes, b';'), len.div_ceil(3), "{len}");
        }
        assert_eq!(count_byte(&[b';'; 255], b';'), 255);
    }

    /// The short path gives exactly what the general conversion gives.
    #[test]
    fn short_numbers_match_the_general_conversion() {
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "0.5",
            "-0.5",
            "0.0",
            "-0.0",
            "1.25",
            "0.1",
            "0.3",
            "123.456",
            "999999999999999999",
            "-999999999999999999",
            "9007199254740993.0",
            "0.000000000000001",
            "123456789012345",
            "12345678901234.5",
            "1.00000000000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every split of a few digit strings into integer and fraction parts.
        for digits in [
            "1",
            "17",
            "333",
            "12345",
            "987654321",
            "100000000000001",
            "999999999999999",
        ] {
            for split in 1..digits.len() {
                cases.push(format!("{}.{}", &digits[..split], &digits[split..]));
            }
        }
        for case in &cases {
            let general: Number = if case.contains('.') {
                Number::from_f64(case.parse::<f64>().unwrap()).unwrap()
            } else {
                Number::from(case.parse::<i64>().unwrap())
            };
            if let Some(short) = short_number(case.as_bytes()) {
                assert_eq!(short, general, "{case}");
                if let (Some(a), Some(b)) = (short.as_f64(), general.as_f64()) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{case}: sign of zero");
                }
            }
        }
        for not_short in [
            "1e5",
            "1.5e3",
            "-",
            ".5",
            "5.",
            "1.2.3",
            "1234567890123456.7",
            "9223372036854775807",
        ] {
            assert_eq!(short_number(not_short.as_bytes()), None, "{not_short}");
        }
    }
}
