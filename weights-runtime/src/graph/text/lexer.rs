//! Tokens of `.webnn` text, produced one at a time on demand.
//!
//! Tokens borrow their text from the source; positions are byte offsets, turned into
//! line and column only when an error is reported.

use std::borrow::Cow;

/// The kinds of token of `.webnn` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An identifier (keywords such as `inputs`, `true` or `dyn` are identifiers too).
    Ident,
    /// A double-quoted string; `text` includes the quotes and raw escapes.
    Str,
    /// A number: optional `-`, digits, optional fraction and exponent.
    Number,
    /// `@` followed by a name, e.g. `@weights`.
    Annotation,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Comma,
    Semi,
    Colon,
    Eq,
    /// The end of the input.
    Eof,
}

/// One token: its kind, its source text and the byte offset where it starts.
///
/// The text of a one-byte token (`{`, `;`, ...) is empty: its kind says what it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub start: usize,
}

impl Token<'_> {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        let punct = self.kind.punct_text();
        if !punct.is_empty() {
            return format!("`{punct}`");
        }
        match self.kind {
            Kind::Eof => "end of input".to_string(),
            Kind::Str => {
                let mut shown: String = self.text.chars().take(32).collect();
                if shown.len() < self.text.len() {
                    shown.push_str("...");
                }
                format!("string {shown}")
            }
            _ => {
                let mut shown: String = self.text.chars().take(32).collect();
                if shown.len() < self.text.len() {
                    shown.push_str("...");
                }
                format!("`{shown}`")
            }
        }
    }
}

/// An error located at a byte offset of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawError {
    pub offset: usize,
    pub message: String,
}

impl RawError {
    /// A boxed error: results of the lexer and the parser stay one word wider than their
    /// value, which keeps the hot path (`Ok`) cheap.
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>) -> Box<RawError> {
        Box::new(RawError {
            offset,
            message: message.into(),
        })
    }
}

/// Byte classes: bit 0 = may start an identifier, bit 1 = may continue one,
/// bit 2 = whitespace.
static CLASS: [u8; 256] = class_table();

/// The token a byte is on its own, for the ten one-byte tokens.
static PUNCT: [Option<Kind>; 256] = punct_table();

const fn punct_table() -> [Option<Kind>; 256] {
    let mut table = [None; 256];
    table[b'{' as usize] = Some(Kind::LBrace);
    table[b'}' as usize] = Some(Kind::RBrace);
    table[b'[' as usize] = Some(Kind::LBracket);
    table[b']' as usize] = Some(Kind::RBracket);
    table[b'(' as usize] = Some(Kind::LParen);
    table[b')' as usize] = Some(Kind::RParen);
    table[b',' as usize] = Some(Kind::Comma);
    table[b';' as usize] = Some(Kind::Semi);
    table[b':' as usize] = Some(Kind::Colon);
    table[b'=' as usize] = Some(Kind::Eq);
    table
}

impl Kind {
    /// The text of a one-byte token (empty for the others).
    fn punct_text(self) -> &'static str {
        match self {
            Kind::LBrace => "{",
            Kind::RBrace => "}",
            Kind::LBracket => "[",
            Kind::RBracket => "]",
            Kind::LParen => "(",
            Kind::RParen => ")",
            Kind::Comma => ",",
            Kind::Semi => ";",
            Kind::Colon => ":",
            Kind::Eq => "=",
            Kind::Ident | Kind::Str | Kind::Number | Kind::Annotation | Kind::Eof => "",
        }
    }
}

const IDENT_START: u8 = 1;
const IDENT_CONTINUE: u8 = 2;
const SPACE: u8 = 4;

const fn class_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let alpha = c.is_ascii_alphabetic();
        let mut class = 0;
        if alpha || c == b'_' || c == b'/' || c == b'$' {
            class |= IDENT_START;
        }
        if alpha || c.is_ascii_digit() || c == b'_' || c == b'.' || c == b'/' {
            class |= IDENT_CONTINUE;
        }
        if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
            class |= SPACE;
        }
        table[b] = class;
        b += 1;
    }
    table
}

/// Whether `b` may start an identifier.
#[inline]
pub(crate) fn is_ident_start(b: u8) -> bool {
    CLASS[usize::from(b)] & IDENT_START != 0
}

/// Whether `b` may continue an identifier.
#[inline]
pub(crate) fn is_ident_continue(b: u8) -> bool {
    CLASS[usize::from(b)] & IDENT_CONTINUE != 0
}

/// Produces tokens from `.webnn` source text.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer { src, pos: 0 }
    }

    /// Skips whitespace (space, tab, CR, LF) and `#` comments.
    #[inline]
    fn skip_trivia(&mut self) {
        let bytes = self.src.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if CLASS[usize::from(b)] & SPACE != 0 {
                self.pos += 1;
            } else if b == b'#' {
                self.pos = bytes[self.pos..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |i| self.pos + i);
            } else {
                break;
            }
        }
    }

    #[inline]
    fn token(&mut self, kind: Kind, start: usize, end: usize) -> Token<'a> {
        self.pos = end;
        Token {
            kind,
            text: &self.src[start..end],
            start,
        }
    }

    /// Moves to byte offset `pos` of the source, which must be where a token or trivia
    /// begins (the parser skips text it has read before; see `Parser::reuse_options`).
    pub fn seek(&mut self, pos: usize) {
        debug_assert!(self.src.is_char_boundary(pos));
        self.pos = pos;
    }

    /// The next token, or an error for text that is no token (see [`Lexer::next_into`]).
    pub fn next_token(&mut self) -> Result<Token<'a>, Box<RawError>> {
        let mut tok = Token {
            kind: Kind::Eof,
            text: "",
            start: self.pos,
        };
        self.next_into(&mut tok)?;
        Ok(tok)
    }

    /// Reads the next token into `tok`, field by field; an error for text that is no token.
    ///
    /// The parser's loop: writing the fields where the parser reads them (instead of
    /// returning a token to be copied there) spares every token a copy through memory,
    /// whose wide loads of narrow stores stalled the processor (a sixth of a parse).
    /// On an error `tok` is left as it was.
    ///
    /// The fast path, small enough to inline into the parser: spaces and newlines, then a
    /// one-byte token, an identifier or a plain integer (most of any graph); everything
    /// else (tabs, CRs, comments, strings, other numbers, annotations, the end, errors)
    /// goes to [`Lexer::next_token_slow`].
    #[inline(always)]
    pub fn next_into(&mut self, tok: &mut Token<'a>) -> Result<(), Box<RawError>> {
        let bytes = self.src.as_bytes();
        let mut pos = self.pos;
        while let Some(&(b' ' | b'\n')) = bytes.get(pos) {
            pos += 1;
        }
        if let Some(&b) = bytes.get(pos) {
            if let Some(kind) = PUNCT[usize::from(b)] {
                // The text of a one-byte token is its kind's (see `Token::describe`).
                self.pos = pos + 1;
                tok.kind = kind;
                tok.text = "";
                tok.start = pos;
                return Ok(());
            }
            if is_ident_start(b) {
                let end = scan_while(bytes, pos + 1, is_ident_continue);
                self.pos = end;
                tok.kind = Kind::Ident;
                tok.text = &self.src[pos..end];
                tok.start = pos;
                return Ok(());
            }
            if b.is_ascii_digit() {
                // An integer without sign, fraction or exponent; the others go the slow way.
                let end = scan_while(bytes, pos + 1, |b| b.is_ascii_digit());
                if !matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
                    self.pos = end;
                    tok.kind = Kind::Number;
                    tok.text = &self.src[pos..end];
                    tok.start = pos;
                    return Ok(());
                }
            }
        }
        *tok = self.next_token_slow(pos)?;
        Ok(())
    }

    /// Any token, from `pos` (which may be trivia).
    #[inline(never)]
    fn next_token_slow(&mut self, pos: usize) -> Result<Token<'a>, Box<RawError>> {
        self.pos = pos;
        self.skip_trivia();
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let Some(&b) = bytes.get(start) else {
            return Ok(self.token(Kind::Eof, start, start));
        };
        if let Some(kind) = PUNCT[usize::from(b)] {
            self.pos = start + 1;
            return Ok(Token {
                kind,
                text: "",
                start,
            });
        }
        if is_ident_start(b) {
            let end = scan_while(bytes, start + 1, is_ident_continue);
            return Ok(self.token(Kind::Ident, start, end));
        }
        if b == b'@' {
            let end = scan_while(bytes, start + 1, is_ident_continue);
            if end == start + 1 {
                return Err(RawError::new(
                    start,
                    "expected an annotation name after `@` (e.g. `@weights`)",
                ));
            }
            return Ok(self.token(Kind::Annotation, start, end));
        }
        if b == b'"' {
            let end = self.scan_string(start)?;
            return Ok(self.token(Kind::Str, start, end));
        }
        if b == b'-' || b.is_ascii_digit() {
            let end = scan_number(bytes, start)?;
            return Ok(self.token(Kind::Number, start, end));
        }
        let ch = self.src[start..].chars().next().unwrap_or('\u{fffd}');
        Err(RawError::new(start, format!("unexpected character {ch:?}")))
    }

    /// Finds the end of the string starting at `start` (a `"`), checking its escapes.
    fn scan_string(&self, start: usize) -> Result<usize, Box<RawError>> {
        let bytes = self.src.as_bytes();
        let mut i = start + 1;
        loop {
            match bytes.get(i) {
                None => {
                    return Err(RawError::new(
                        start,
                        "unterminated string: missing closing `\"`",
                    ))
                }
                Some(b'"') => return Ok(i + 1),
                Some(b'\\') => match bytes.get(i + 1) {
                    Some(b'"') | Some(b'\\') => i += 2,
                    Some(_) => {
                        let ch = self.src[i + 1..].chars().next().unwrap_or('\u{fffd}');
                        return Err(RawError::new(
                            i,
                            format!(
                                "unknown escape `\\{ch}` in string: only `\\\"` and `\\\\` are allowed"
                            ),
                        ));
                    }
                    None => {
                        return Err(RawError::new(
                            start,
                            "unterminated string: missing closing `\"`",
                        ))
                    }
                },
                Some(_) => i += 1,
            }
        }
    }
}

#[inline(always)]
fn scan_while(bytes: &[u8], mut i: usize, pred: fn(u8) -> bool) -> usize {
    while bytes.get(i).is_some_and(|&b| pred(b)) {
        i += 1;
    }
    i
}

/// Scans `-? digits (. digits)? ([eE] [+-]? digits)?` starting at `start`.
fn scan_number(bytes: &[u8], start: usize) -> Result<usize, Box<RawError>> {
    let mut i = start;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits_start = i;
    i = scan_while(bytes, i, |b| b.is_ascii_digit());
    if i == digits_start {
        return Err(RawError::new(start, "expected digits after `-`"));
    }
    if bytes.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        let end = scan_while(bytes, frac_start, |b| b.is_ascii_digit());
        if end == frac_start {
            return Err(RawError::new(i, "expected digits after the decimal point"));
        }
        i = end;
    }
    if matches!(bytes.get(i), Some(b'e') | Some(b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+') | Some(b'-')) {
            j += 1;
        }
        let end = scan_while(bytes, j, |b| b.is_ascii_digit());
        if end == j {
            return Err(RawError::new(i, "expected digits in the exponent"));
        }
        i = end;
    }
    Ok(i)
}

/// The value of a string token's text (with its quotes), escapes resolved; borrowed from
/// the text when it has no escape.
pub(crate) fn unescape(text: &str) -> Cow<'_, str> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            // The lexer admitted only `\"` and `\\`.
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Kind> {
        let mut lexer = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token().unwrap();
            out.push(t.kind);
            if t.kind == Kind::Eof {
                return out;
            }
        }
    }

    #[test]
    fn tokens() {
        use Kind::*;
        assert_eq!(
            kinds("# c\r\nx: f32[dyn(\"b\", 8)] @weights(\"a\\\"b\"); -1.5e+3 $a/b.c"),
            vec![
                Ident, Colon, Ident, LBracket, Ident, LParen, Str, Comma, Number, RParen, RBracket,
                Annotation, LParen, Str, RParen, Semi, Number, Ident, Eof
            ]
        );
    }

    #[test]
    fn numbers() {
        let mut lexer = Lexer::new("12 -3 4.25 5e7 6.5E-2");
        let texts: Vec<&str> = (0..5).map(|_| lexer.next_token().unwrap().text).collect();
        assert_eq!(texts, ["12", "-3", "4.25", "5e7", "6.5E-2"]);
        assert_eq!(
            Lexer::new("1.").next_token().unwrap_err(),
            RawError::new(1, "expected digits after the decimal point")
        );
        assert_eq!(Lexer::new("1e+").next_token().unwrap_err().offset, 1);
        assert_eq!(Lexer::new("-x").next_token().unwrap_err().offset, 0);
    }

    #[test]
    fn strings() {
        assert_eq!(unescape(r#""a\"b\\c""#), "a\"b\\c");
        assert_eq!(unescape(r#""plain""#), "plain");
        let err = Lexer::new(r#""a\nb""#).next_token().unwrap_err();
        assert_eq!(err.offset, 2);
        assert!(err.message.contains("unknown escape"));
        let err = Lexer::new("  \"abc").next_token().unwrap_err();
        assert_eq!(err.offset, 2);
        assert!(err.message.contains("unterminated string"));
    }
}
