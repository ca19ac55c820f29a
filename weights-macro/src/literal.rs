//! The macro's one argument: a string literal, read from the tokens `proc_macro` gives
//! (a literal's source text, decoded here as the Rust reference describes string literals).

use proc_macro::{Delimiter, Span, TokenStream, TokenTree};

/// What the argument must be, for every error about its shape.
const EXPECTED: &str = "expected string literal: the graph path as given to \
                        `webnn_weights_build::compile` in build.rs, such as \
                        `include_webnn_graph!(\"models/model.webnn\")`";

/// The value of the one string literal in `input` and its span, or the error and the span
/// of the token that is wrong.
pub fn one_string(input: TokenStream) -> Result<(String, Span), (String, Span)> {
    let mut tokens = input.into_iter();
    let first = match tokens.next() {
        // A literal passed through `macro_rules!` as `$path:literal` or `$path:expr` comes
        // wrapped in an invisible group.
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::None => {
            if let Some(extra) = tokens.next() {
                return Err(unexpected(&extra));
            }
            return one_string(group.stream());
        }
        Some(token) => token,
        None => return Err((format!("{EXPECTED}; found nothing"), Span::call_site())),
    };
    let value = match &first {
        TokenTree::Literal(literal) => decode(&literal.to_string()),
        _ => None,
    };
    let Some(value) = value else {
        return Err((EXPECTED.to_string(), first.span()));
    };
    match tokens.next() {
        Some(extra) => Err(unexpected(&extra)),
        None => Ok((value, first.span())),
    }
}

fn unexpected(token: &TokenTree) -> (String, Span) {
    (
        format!("unexpected token after the string literal; {EXPECTED}"),
        token.span(),
    )
}

/// The value of a string literal written as `source` (`"…"` with escapes, or raw
/// `r"…"`, `r#"…"#`); `None` for anything else (byte and C strings, characters, numbers,
/// a suffix, a malformed escape).
pub fn decode(source: &str) -> Option<String> {
    if let Some(raw) = source.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let fence = &raw[..hashes];
        let body = raw[hashes..].strip_prefix('"')?;
        let body = body.strip_suffix(fence)?.strip_suffix('"')?;
        // The first `"` followed by the fence ends a raw string: none may come earlier.
        let closing = format!("\"{fence}");
        return (!body.contains(&closing)).then(|| body.to_string());
    }
    let body = source.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None, // the literal ended before its last character: a suffix
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                '\\' => out.push('\\'),
                '0' => out.push('\0'),
                '\'' => out.push('\''),
                '"' => out.push('"'),
                'x' => {
                    let digits: String = [chars.next()?, chars.next()?].iter().collect();
                    let byte = u8::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|b| *b <= 0x7F)?;
                    out.push(char::from(byte));
                }
                'u' => {
                    if chars.next()? != '{' {
                        return None;
                    }
                    let mut digits = String::new();
                    loop {
                        match chars.next()? {
                            '}' => break,
                            '_' => {}
                            d if d.is_ascii_hexdigit() && digits.len() < 6 => digits.push(d),
                            _ => return None,
                        }
                    }
                    out.push(char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?);
                }
                '\n' => {
                    // A line continuation: the newline and the whitespace after it vanish.
                    while chars
                        .next_if(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
                        .is_some()
                    {}
                }
                _ => return None,
            },
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn plain_and_escaped_strings() {
        assert_eq!(
            decode(r#""models/model.webnn""#).unwrap(),
            "models/model.webnn"
        );
        assert_eq!(decode(r#""""#).unwrap(), "");
        assert_eq!(decode(r#""a\nb\r\t\\\0\'\"""#).unwrap(), "a\nb\r\t\\\0'\"");
        assert_eq!(
            decode(r#""\x41\u{e9}\u{1F600}\u{0_041}""#).unwrap(),
            "Aé😀A"
        );
        assert_eq!(decode("\"a\\\n    b\"").unwrap(), "ab");
        assert_eq!(decode("\"é/ü\"").unwrap(), "é/ü");
    }

    #[test]
    fn raw_strings() {
        assert_eq!(decode(r#"r"a\n""#).unwrap(), "a\\n");
        assert_eq!(decode(r###"r#"a"b"#"###).unwrap(), "a\"b");
        assert_eq!(decode(r###"r##"x"#y"##"###).unwrap(), "x\"#y");
        assert_eq!(decode(r#"r"""#).unwrap(), "");
    }

    #[test]
    fn anything_else_is_refused() {
        for source in [
            r#"b"x""#,
            r#"br"x""#,
            r#"c"x""#,
            "'x'",
            "42",
            r#""x"suffix"#,
            r#""\x80""#,
            r#""\xZZ""#,
            r#""\u{110000}""#,
            r#""\u{D800}""#,
            r#""\u{1234567}""#,
            r#""\u1234""#,
            r#""\q""#,
            r#""unterminated"#,
            r#"r#"x""#,
            r##"r#"x"#suffix"##,
            "\"a\\\"",
        ] {
            assert_eq!(decode(source), None, "{source}");
        }
    }
}
