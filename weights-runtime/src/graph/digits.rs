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

/// Stride of a prepared item: a separator of up to `STRIDE - 3` bytes and 3 digits.
const STRIDE: usize = 32;

/// Writes `bytes` as decimal numbers separated by `separator` (nothing before the first
/// or after the last) to `out`.
///
/// The 256 possible items (`separator` followed by the digits) are prepared once per call,
/// so each byte costs one fixed-size copy; a separator too long for that (deeper than
/// ~14 levels of indentation) takes a slower path.
pub(crate) fn write_byte_list<W: Write + ?Sized>(
    out: &mut W,
    bytes: &[u8],
    separator: &[u8],
) -> io::Result<()> {
    let Some((&first, rest)) = bytes.split_first() else {
        return Ok(());
    };
    let digits = |b: u8| {
        let e = &DECIMAL[usize::from(b)];
        &e[..usize::from(e[3])]
    };
    out.write_all(digits(first))?;
    // Short lists (where preparing the table would cost more than it saves) and very long
    // separators go piece by piece.
    if rest.len() < 512 || separator.len() > STRIDE - 3 {
        for &b in rest {
            out.write_all(separator)?;
            out.write_all(digits(b))?;
        }
        return Ok(());
    }
    let mut items = vec![[0u8; STRIDE]; 256];
    let mut lengths = [0u8; 256];
    for (b, (item, length)) in items.iter_mut().zip(lengths.iter_mut()).enumerate() {
        let d = digits(b as u8);
        item[..separator.len()].copy_from_slice(separator);
        item[separator.len()..separator.len() + d.len()].copy_from_slice(d);
        *length = (separator.len() + d.len()) as u8;
    }
    let mut buf = vec![0u8; CHUNK.min(rest.len() * STRIDE) + STRIDE];
    let mut pos = 0;
    for &b in rest {
        if pos + STRIDE > buf.len() {
            out.write_all(&buf[..pos])?;
            pos = 0;
        }
        buf[pos..pos + STRIDE].copy_from_slice(&items[usize::from(b)]);
        pos += usize::from(lengths[usize::from(b)]);
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
    fn every_separator_length() {
        let bytes: Vec<u8> = (0..2000u32).map(|i| (i * 13 % 256) as u8).collect();
        let expected: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
        for n in 0..40 {
            let sep: String = std::iter::once(',')
                .chain(std::iter::repeat_n(' ', n))
                .collect();
            assert_eq!(list(&bytes, &sep), expected.join(&sep), "{n}");
        }
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
