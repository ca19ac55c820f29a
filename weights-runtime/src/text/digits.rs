//! Writing lists of bytes as decimal numbers without a formatter call per byte: the
//! digits of every byte value come from a 256-entry table, and the list is assembled in
//! a fixed buffer that is handed to the writer in large pieces.

use std::io::{self, Write};

/// `DECIMAL[b]`: the ASCII digits of `b` in the first bytes, their count in the last.
static DECIMAL: [[u8; 4]; 256] = decimal_table();

const fn decimal_table() -> [[u8; 4]; 256] {
    let mut table = [[0u8; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let (h, t, o) = ((b / 100) as u8, (b / 10 % 10) as u8, (b % 10) as u8);
        table[b] = if b >= 100 {
            [b'0' + h, b'0' + t, b'0' + o, 3]
        } else if b >= 10 {
            [b'0' + t, b'0' + o, 0, 2]
        } else {
            [b'0' + o, 0, 0, 1]
        };
        b += 1;
    }
    table
}

/// Size of the assembly buffer.
const CHUNK: usize = 64 * 1024;

/// Writes `bytes` as decimal numbers separated by `separator` (nothing before the first
/// or after the last) to `out`.
///
/// A separator longer than a few kilobytes is written piecewise through the buffer too.
pub(crate) fn write_byte_list<W: Write + ?Sized>(
    out: &mut W,
    bytes: &[u8],
    separator: &[u8],
) -> io::Result<()> {
    let Some((&first, rest)) = bytes.split_first() else {
        return Ok(());
    };
    let mut buf = vec![0u8; CHUNK];
    let entry = &DECIMAL[usize::from(first)];
    let mut pos = usize::from(entry[3]);
    buf[..3].copy_from_slice(&entry[..3]);
    // Room one item needs: the separator and up to 4 table bytes (the 4th is scratch).
    let item = separator.len() + 4;
    if item > CHUNK / 2 {
        // An absurdly deep indentation: no buffering trick, plain writes.
        out.write_all(&buf[..pos])?;
        for &b in rest {
            out.write_all(separator)?;
            let e = &DECIMAL[usize::from(b)];
            out.write_all(&e[..usize::from(e[3])])?;
        }
        return Ok(());
    }
    for &b in rest {
        if pos + item > CHUNK {
            out.write_all(&buf[..pos])?;
            pos = 0;
        }
        buf[pos..pos + separator.len()].copy_from_slice(separator);
        pos += separator.len();
        let e = &DECIMAL[usize::from(b)];
        buf[pos..pos + 4].copy_from_slice(e);
        pos += usize::from(e[3]);
    }
    out.write_all(&buf[..pos])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(bytes: &[u8], sep: &str) -> String {
        let mut out = Vec::new();
        write_byte_list(&mut out, bytes, sep.as_bytes()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_value_and_separator() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: Vec<String> = all.iter().map(|b| b.to_string()).collect();
        assert_eq!(list(&all, ", "), expected.join(", "));
        assert_eq!(list(&all, ",\n    "), expected.join(",\n    "));
        assert_eq!(list(&[], ","), "");
        assert_eq!(list(&[7], ","), "7");
    }

    #[test]
    fn crosses_chunk_boundaries() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 256) as u8).collect();
        let expected: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
        assert_eq!(list(&bytes, ","), expected.join(","));
        let deep = " ".repeat(CHUNK);
        assert_eq!(list(&bytes[..50], &deep), expected[..50].join(&deep));
    }
}
