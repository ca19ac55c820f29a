//! The JSON of `index.json`, read and written without serde, so that the macro (which
//! reads the index) compiles no JSON library and no derive.
//!
//! The reader takes RFC 8259 JSON and is strict where the standard leaves a choice: a key
//! repeated in one object, nesting deeper than [`MAX_DEPTH`] and anything after the value
//! are errors. Numbers are kept as their text (the index holds only unsigned integers,
//! which [`Value::as_u64`] reads). The writer prints what serde_json's pretty printer
//! prints for the same fields in the same order (two-space indent, `"key": value`), so an
//! index keeps its bytes, and so its stamp, across the change of writer.

use std::fmt::Write as _;

/// Objects and arrays nested deeper than this are rejected (an index nests three deep).
pub(crate) const MAX_DEPTH: usize = 16;

/// A JSON value. Objects keep their keys in order, each key once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    /// The number's text as written (valid JSON number syntax).
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The value of `key` when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number as a `u64`, when this is a number written as an integer in its range
    /// (`4`, not `4.0` or `4e0`).
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// The value as compact JSON (no spaces), as error messages quote it.
    pub(crate) fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None);
        out
    }

    /// The value as pretty JSON: each member on its own line, indented by two spaces per
    /// level; no final newline.
    pub(crate) fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(0));
        out
    }

    /// Appends the value to `out`, pretty at `indent` levels when given, else compact.
    fn write(&self, out: &mut String, indent: Option<usize>) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(text) => out.push_str(text),
            Value::String(s) => write_string(s, out),
            Value::Array(items) => {
                write_members(out, indent, ('[', ']'), items, |item, out, inner| {
                    item.write(out, inner)
                })
            }
            Value::Object(entries) => write_members(
                out,
                indent,
                ('{', '}'),
                entries,
                |(key, value), out, inner| {
                    write_string(key, out);
                    out.push_str(if inner.is_some() { ": " } else { ":" });
                    value.write(out, inner);
                },
            ),
        }
    }
}

/// Writes the members of an array or object between `brackets`, one per line when
/// `indent` is given; an empty one as the two brackets.
fn write_members<T>(
    out: &mut String,
    indent: Option<usize>,
    brackets: (char, char),
    members: &[T],
    mut write: impl FnMut(&T, &mut String, Option<usize>),
) {
    out.push(brackets.0);
    let inner = indent.map(|level| level + 1);
    for (i, member) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(level) = inner {
            out.push('\n');
            push_indent(out, level);
        }
        write(member, out, inner);
    }
    if let (Some(level), false) = (indent, members.is_empty()) {
        out.push('\n');
        push_indent(out, level);
    }
    out.push(brackets.1);
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as `\b \t \n \f
/// \r` or `\u00xx`, everything else (`/`, non-ASCII) as it is.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c < ' ' => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Reads `text` as one JSON value (whitespace around it allowed). The error says what was
/// expected and where (`line L column C`, both from 1, columns in characters).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value(0)?;
    reader.skip_whitespace();
    if reader.at < text.len() {
        return Err(reader.error("expected the end of the input after the value"));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    /// Byte offset of the next character (always at a character boundary).
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.at += 1;
        }
    }

    /// `what` and the place of the next character (or of the end).
    fn error(&self, what: &str) -> String {
        self.error_at(self.at, what)
    }

    fn error_at(&self, at: usize, what: &str) -> String {
        let before = &self.text[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        let found = match self.text[at..].chars().next() {
            Some(c) => format!("found {c:?}"),
            None => "found the end of the input".to_string(),
        };
        format!("{what}, {found} at line {line} column {column}")
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_whitespace();
        match self.peek() {
            Some('{' | '[') if depth >= MAX_DEPTH => Err(self.error(&format!(
                "expected at most {MAX_DEPTH} levels of objects and arrays"
            ))),
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some('"') => self.string().map(Value::String),
            Some('-' | '0'..='9') => self.number(),
            Some(_) => {
                for (word, value) in [
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ] {
                    if self.text[self.at..].starts_with(word) {
                        self.at += word.len();
                        return Ok(value);
                    }
                }
                Err(self.error("expected a value"))
            }
            None => Err(self.error("expected a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.bump(); // `{`
        let mut entries: Vec<(String, Value)> = Vec::new();
        self.skip_whitespace();
        if self.eat('}') {
            return Ok(Value::Object(entries));
        }
        loop {
            self.skip_whitespace();
            let key_at = self.at;
            if self.peek() != Some('"') {
                return Err(self.error("expected a key (a string)"));
            }
            let key = self.string()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(self.error_at(key_at, &format!("key {key:?} is repeated")));
            }
            self.skip_whitespace();
            if !self.eat(':') {
                return Err(self.error(&format!("expected `:` after the key {key:?}")));
            }
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            self.skip_whitespace();
            if self.eat('}') {
                return Ok(Value::Object(entries));
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `}` after a member of an object"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.bump(); // `[`
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.eat(']') {
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_whitespace();
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `]` after an element of an array"));
            }
        }
    }

    /// A string, from its opening `"`.
    fn string(&mut self) -> Result<String, String> {
        self.bump(); // `"`
        let mut out = String::new();
        loop {
            let at = self.at;
            match self.bump() {
                None => return Err(self.error("expected the closing `\"` of a string")),
                Some('"') => return Ok(out),
                Some('\\') => out.push(self.escape(at)?),
                Some(c) if c < ' ' => {
                    return Err(self.error_at(
                        at,
                        "expected a string without control characters (escape them)",
                    ))
                }
                Some(c) => out.push(c),
            }
        }
    }

    /// The character of the escape whose `\` is at `start` (already read).
    fn escape(&mut self, start: usize) -> Result<char, String> {
        const LOW: &str =
            "expected a low surrogate escape `\\uDC00`..`\\uDFFF` after this high surrogate";
        let simple = match self.peek() {
            Some('"') => Some('"'),
            Some('\\') => Some('\\'),
            Some('/') => Some('/'),
            Some('b') => Some('\u{8}'),
            Some('f') => Some('\u{c}'),
            Some('n') => Some('\n'),
            Some('r') => Some('\r'),
            Some('t') => Some('\t'),
            Some('u') => None,
            _ => return Err(self.error(
                "expected an escape (`\\\"` `\\\\` `\\/` `\\b` `\\f` `\\n` `\\r` `\\t` `\\uXXXX`)",
            )),
        };
        self.bump();
        if let Some(c) = simple {
            return Ok(c);
        }
        let high = self.hex4()?;
        let code = match high {
            0xD800..=0xDBFF => {
                if !(self.eat('\\') && self.eat('u')) {
                    return Err(self.error_at(start, LOW));
                }
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.error_at(start, LOW));
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(
                    self.error_at(start, "expected a high surrogate before this low surrogate")
                )
            }
            code => code,
        };
        char::from_u32(code).ok_or_else(|| self.error_at(start, "expected a Unicode scalar value"))
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u32, String> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self.peek().and_then(|c| c.to_digit(16));
            let Some(digit) = digit else {
                return Err(self.error("expected four hex digits after `\\u`"));
            };
            self.at += 1;
            code = code * 16 + digit;
        }
        Ok(code)
    }

    /// A number: `-`, then `0` or digits not starting with 0, an optional fraction and an
    /// optional exponent.
    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        self.eat('-');
        if !self.eat('0') && self.digits() == 0 {
            return Err(self.error("expected a digit in a number"));
        }
        if self.eat('.') && self.digits() == 0 {
            return Err(self.error("expected a digit after the `.` of a number"));
        }
        if self.eat('e') || self.eat('E') {
            let _ = self.eat('+') || self.eat('-');
            if self.digits() == 0 {
                return Err(self.error("expected a digit in the exponent of a number"));
            }
        }
        if matches!(self.peek(), Some('0'..='9')) {
            return Err(self.error("expected no digit after a leading 0"));
        }
        Ok(Value::Number(self.text[start..self.at].to_string()))
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some('0'..='9')) {
            self.at += 1;
        }
        self.at - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err()
    }

    #[test]
    fn values() {
        let value =
            parse(" {\"a\": [1, -2.5e+3, true, false, null, {}, []], \"b\": \"x\"} \n").unwrap();
        assert_eq!(
            value.compact(),
            r#"{"a":[1,-2.5e+3,true,false,null,{},[]],"b":"x"}"#
        );
        assert_eq!(value.get("b").and_then(Value::as_str), Some("x"));
        assert_eq!(value.get("c"), None);
        assert_eq!(
            parse("18446744073709551615").unwrap().as_u64(),
            Some(u64::MAX)
        );
        for not_u64 in ["18446744073709551616", "-1", "4.0", "4e0", "\"4\""] {
            assert_eq!(parse(not_u64).unwrap().as_u64(), None, "{not_u64}");
        }
    }

    #[test]
    fn string_escapes() {
        let value = parse(r#""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude00 é""#).unwrap();
        assert_eq!(
            value,
            Value::String("\" \\ / \u{8} \u{c} \n \r \t A é 😀 é".into())
        );
        // Written back: `/` and non-ASCII as they are, control characters escaped.
        assert_eq!(value.compact(), r#""\" \\ / \b \f \n \r \t A é 😀 é""#);
        assert_eq!(
            Value::String("\u{1}\u{1f}\u{7f}".into()).compact(),
            "\"\\u0001\\u001f\u{7f}\""
        );
    }

    #[test]
    fn pretty_layout() {
        let value = parse(r#"{"a":1,"b":{"c":null,"d":[]},"e":[1,{}]}"#).unwrap();
        assert_eq!(
            value.pretty(),
            "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": null,\n    \"d\": []\n  },\n  \
             \"e\": [\n    1,\n    {}\n  ]\n}"
        );
        assert_eq!(parse(&value.pretty()).unwrap(), value);
    }

    #[test]
    fn every_error() {
        let at = |what: &str, found: &str, column: usize| {
            format!("{what}, found {found} at line 1 column {column}")
        };
        let end = "the end of the input";
        let low = "expected a low surrogate escape `\\uDC00`..`\\uDFFF` after this high surrogate";
        let escape =
            "expected an escape (`\\\"` `\\\\` `\\/` `\\b` `\\f` `\\n` `\\r` `\\t` `\\uXXXX`)";
        let cases = [
            ("", at("expected a value", end, 1)),
            ("{", at("expected a key (a string)", end, 2)),
            (
                "{\"a\" 1}",
                at("expected `:` after the key \"a\"", "'1'", 6),
            ),
            (
                "{\"a\":1 \"b\":2}",
                at("expected `,` or `}` after a member of an object", "'\"'", 8),
            ),
            ("{\"a\":1,}", at("expected a key (a string)", "'}'", 8)),
            (
                "{\"a\":1,\n \"a\":2}",
                "key \"a\" is repeated, found '\"' at line 2 column 2".to_string(),
            ),
            (
                "[1 2]",
                at("expected `,` or `]` after an element of an array", "'2'", 4),
            ),
            ("[1,]", at("expected a value", "']'", 4)),
            ("tru", at("expected a value", "'t'", 1)),
            (
                "{} x",
                at("expected the end of the input after the value", "'x'", 4),
            ),
            (
                "nullx",
                at("expected the end of the input after the value", "'x'", 5),
            ),
            ("\"abc", at("expected the closing `\"` of a string", end, 5)),
            (
                "\"a\tb\"",
                at(
                    "expected a string without control characters (escape them)",
                    "'\\t'",
                    3,
                ),
            ),
            ("\"\\x\"", at(escape, "'x'", 3)),
            (
                "\"\\u12g4\"",
                at("expected four hex digits after `\\u`", "'g'", 6),
            ),
            ("\"\\ud83d\"", at(low, "'\\\\'", 2)),
            ("\"\\ud83d\\u0041\"", at(low, "'\\\\'", 2)),
            (
                "\"\\ude00\"",
                at(
                    "expected a high surrogate before this low surrogate",
                    "'\\\\'",
                    2,
                ),
            ),
            ("-", at("expected a digit in a number", end, 2)),
            ("-a", at("expected a digit in a number", "'a'", 2)),
            (
                "1.",
                at("expected a digit after the `.` of a number", end, 3),
            ),
            (
                "1e+",
                at("expected a digit in the exponent of a number", end, 4),
            ),
            ("012", at("expected no digit after a leading 0", "'1'", 2)),
            ("é", at("expected a value", "'é'", 1)),
            (
                "\"é\" é",
                at("expected the end of the input after the value", "'é'", 5),
            ),
        ];
        for (text, message) in cases {
            assert_eq!(err(text), message, "{text:?}");
        }
    }

    #[test]
    fn depth_is_limited() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        assert_eq!(
            err(&deep(MAX_DEPTH + 1)),
            format!(
                "expected at most {MAX_DEPTH} levels of objects and arrays, found '[' at line 1 \
                 column {}",
                MAX_DEPTH + 1
            )
        );
        // Far deeper input is an error too, not a stack overflow.
        assert!(parse(&deep(1_000_000)).is_err());
    }
}
