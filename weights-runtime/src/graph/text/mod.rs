//! The `.webnn` text format: [`parse_webnn`] reads it, [`to_webnn_text`] writes it (both
//! public at the crate root).
//!
//! Grammar and layout follow `webnn-graph` 0.4.0; where that crate silently loses
//! information (bytes above 255, numbers overflowing f64, duplicate names, stray
//! braces, ...) reading here is an error with a line and a column instead.

mod error;
mod lexer;
mod parser;
mod writer;

pub use error::{ParseError, TextOutputError, WriteTextError};
pub use parser::parse_webnn;
#[cfg(test)]
use parser::MAX_DEPTH;
pub use writer::{to_webnn_text, write_webnn_text};

/// Whether `name` is an identifier of `.webnn` text: first character an ASCII letter,
/// `_`, `/` or `$`; then ASCII letters, digits, `_`, `.` or `/`: the writer quotes every
/// other name.
pub(crate) fn is_identifier(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.split_first() {
        Some((&first, rest)) => {
            lexer::is_ident_start(first) && rest.iter().all(|&b| lexer::is_ident_continue(b))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
