//! Errors of reading and writing `.webnn` text.

use std::fmt;

/// A `.webnn` text that cannot be read: where (1-based line and column, the column
/// counted in characters), what is wrong, and the offending source line.
///
/// Its `Display` reads like a compiler diagnostic:
///
/// ```
/// let err = webnn_weights_runtime::parse_webnn(
///     "webnn_graph \"g\" v2 {\n  consts {\n    m: u8[1] @bytes([256]);\n  }\n}\n",
/// )
/// .unwrap_err()
/// .with_file("graph.webnn");
/// assert_eq!((err.line(), err.column()), (3, 22));
/// assert_eq!(
///     err.to_string(),
///     "graph.webnn:3:22: @bytes value 256 is out of range 0..=255\n    \
///      m: u8[1] @bytes([256]);\n                     ^"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    line: usize,
    column: usize,
    message: String,
    source_line: String,
    /// 1-based position of the caret within `source_line` (differs from `column` when
    /// `source_line` is an excerpt of a long line).
    caret: usize,
    file: Option<String>,
}

/// Lines longer than this many characters are shown as an excerpt around the column.
const MAX_SHOWN: usize = 160;

impl ParseError {
    /// Locates byte `offset` of `src` and builds the error.
    pub(crate) fn at(src: &str, offset: usize, message: impl Into<String>) -> ParseError {
        let mut offset = offset.min(src.len());
        while !src.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &src[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let column = src[line_start..offset].chars().count() + 1;
        let line_end = src[line_start..]
            .find('\n')
            .map_or(src.len(), |i| line_start + i);
        let full = src[line_start..line_end]
            .strip_suffix('\r')
            .unwrap_or(&src[line_start..line_end]);
        let (source_line, caret) = excerpt(full, column);
        ParseError {
            line,
            column,
            message: message.into(),
            source_line,
            caret,
            file: None,
        }
    }

    /// The same error, naming the file it was read from.
    pub fn with_file(mut self, name: impl Into<String>) -> ParseError {
        self.file = Some(name.into());
        self
    }

    /// The 1-based line.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The 1-based column, counted in characters.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What is wrong, without the location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The source line the error points into (without its line ending); for lines longer
    /// than 160 characters, an excerpt around the column with `...` where it is cut.
    pub fn source_line(&self) -> &str {
        &self.source_line
    }

    /// The file name given with [`ParseError::with_file`], if any.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        write!(f, "{}:{}: {}", self.line, self.column, self.message)?;
        write!(f, "\n{}\n", self.source_line)?;
        // Keep tabs so that the caret lines up under the column.
        for c in self.source_line.chars().take(self.caret.saturating_sub(1)) {
            f.write_str(if c == '\t' { "\t" } else { " " })?;
        }
        f.write_str("^")
    }
}

impl std::error::Error for ParseError {}

/// The line as shown, and the caret position in it: the whole line when it is short,
/// otherwise `MAX_SHOWN` characters around `column`.
fn excerpt(line: &str, column: usize) -> (String, usize) {
    let count = line.chars().count();
    if count <= MAX_SHOWN {
        return (line.to_string(), column);
    }
    let start = column
        .saturating_sub(1 + MAX_SHOWN / 2)
        .min(count - MAX_SHOWN);
    let end = start + MAX_SHOWN;
    let mut shown = String::new();
    let mut caret = column - start;
    if start > 0 {
        shown.push_str("...");
        caret += 3;
    }
    shown.extend(line.chars().skip(start).take(MAX_SHOWN));
    if end < count {
        shown.push_str("...");
    }
    (shown, caret)
}

/// A graph that `.webnn` text cannot express, naming the offending item.
///
/// ```
/// let mut g = webnn_weights_runtime::GraphJson::new(Some("g".into()));
/// g.outputs.insert("y".into(), "x".into());
/// let err = webnn_weights_runtime::to_webnn_text(&g).unwrap_err();
/// assert_eq!(err.item(), "output `y`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTextError {
    item: String,
    reason: String,
}

impl WriteTextError {
    pub(crate) fn new(item: impl Into<String>, reason: impl Into<String>) -> WriteTextError {
        WriteTextError {
            item: item.into(),
            reason: reason.into(),
        }
    }

    /// The offending item, e.g. ``output `y` `` or ``node 3 (`relu`) option `axis` ``.
    pub fn item(&self) -> &str {
        &self.item
    }

    /// Why text cannot express it.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for WriteTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write as .webnn text: {}: {}",
            self.item, self.reason
        )
    }
}

impl std::error::Error for WriteTextError {}

/// Why [`write_webnn_text`](crate::write_webnn_text) failed: the graph cannot be
/// expressed as text, or the writer failed.
///
/// ```
/// use webnn_weights_runtime::{write_webnn_text, TextOutputError};
/// let g = webnn_weights_runtime::GraphJson::new(None); // text needs a graph name
/// let err = write_webnn_text(&g, &mut Vec::new()).unwrap_err();
/// assert!(matches!(err, TextOutputError::Graph(_)));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TextOutputError {
    /// The graph cannot be written as `.webnn` text.
    #[error(transparent)]
    Graph(#[from] WriteTextError),
    /// The writer failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
