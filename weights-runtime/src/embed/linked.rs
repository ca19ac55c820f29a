//! The bytes a static library links, and the one `unsafe` of embedding: the slice over
//! them, made only once the linker's placement is checked ([`Linked::bytes`]).

use super::EmbedErrorKind;

/// The bytes a static library links.
#[derive(Debug)]
pub(super) enum Linked {
    /// One symbol of known length (Mach-O, COFF: one section, placed whole).
    Symbol(&'static [u8]),
    /// Several sections (ELF): nothing claims the bytes until the first use has checked
    /// that they lie back to back ([`linked_data`]).
    Ends {
        /// The zero-sized symbol at the first byte.
        start: &'static [u8; 0],
        /// The zero-sized symbol the static library defines just past the last byte.
        end: &'static [u8; 0],
        /// The length in bytes, from the artifacts.
        len: usize,
    },
}

impl Linked {
    /// The bytes, once their placement is checked.
    pub(super) fn bytes(&self) -> Result<&'static [u8], EmbedErrorKind> {
        match *self {
            Linked::Symbol(bytes) => Ok(bytes),
            Linked::Ends { start, end, len } => linked_data(start, end, len),
        }
    }
}

/// `what`'s `(offset, length)` range of the linked `bytes`.
pub(super) fn part(
    bytes: &'static [u8],
    (offset, length): (usize, usize),
    what: &str,
) -> Result<&'static [u8], EmbedErrorKind> {
    offset
        .checked_add(length)
        .and_then(|end| bytes.get(offset..end))
        .ok_or_else(|| {
            EmbedErrorKind::Inconsistent(format!(
                "the {what} at {offset}..+{length} is not within the {} linked bytes",
                bytes.len()
            ))
        })
}

/// The linked bytes as a slice, once the linker's placement is checked: the symbol past the
/// bytes must be `len` bytes after their first, which holds when the linker placed the
/// sections back to back, in order, as every linker we support does (a section
/// ordering option or linker script could break it). Fails, without claiming a byte, when
/// it does not hold.
fn linked_data(
    start: &'static [u8; 0],
    end: &'static [u8; 0],
    len: usize,
) -> Result<&'static [u8], EmbedErrorKind> {
    let distance = (end.as_ptr() as usize).wrapping_sub(start.as_ptr() as usize);
    if distance != len {
        return Err(EmbedErrorKind::Inconsistent(format!(
            "the linker did not place the {len} embedded bytes in one piece: the symbol past them \
             is {} bytes from their start, not {len} (a linker option reordered or \
             dropped the sections of the static library: a symbol ordering file, a section \
             sorting or shuffling option, or a linker script; remove it for this library, or \
             build with `Embedding::IncludeBytes`)",
            (end.as_ptr() as isize).wrapping_sub(start.as_ptr() as isize),
        )));
    }
    #[allow(unsafe_code)]
    // SAFETY: `start` and `end` are symbols of the static library the build script wrote
    // (declared by `include_webnn_graph!` from the same artifacts): `start` at the first of
    // the data's `len` bytes, `end` just past the last. The check above proved that they
    // are `len` bytes apart, so the range is the data, whole and in one piece: read-only
    // sections of the program (immutable for its lifetime, hence `'static`), never written,
    // `len` bytes that fit the address space (they are mapped).
    let data = unsafe { std::slice::from_raw_parts(start.as_ptr(), len) };
    Ok(data)
}
