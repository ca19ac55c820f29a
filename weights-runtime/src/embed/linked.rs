//! The bytes a static library links, and the one `unsafe` of embedding: the slice over
//! them, made only once the linker's placement is checked ([`Linked::bytes`]).

use super::EmbedErrorKind;

/// The address of a symbol the static library defines, as the macro's expansion reads it:
/// `&raw const` of a zero-sized `extern` static, so no reference to zero bytes (which
/// would claim nothing beyond them) is ever made.
pub(super) type SymbolAddress = fn() -> *const u8;

/// The bytes a static library links, between two zero-sized symbols it defines: nothing
/// claims them until the first use has checked that the symbols are `len` bytes apart
/// ([`linked_data`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Linked {
    /// The symbol at the first byte.
    pub(super) start: SymbolAddress,
    /// The symbol just past the last byte.
    pub(super) end: SymbolAddress,
    /// The length in bytes, from the artifacts.
    pub(super) len: usize,
}

impl Linked {
    /// The bytes, once their placement is checked.
    pub(super) fn bytes(&self) -> Result<&'static [u8], EmbedErrorKind> {
        linked_data((self.start)(), (self.end)(), self.len)
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
/// bytes must be `len` bytes after their first. On ELF the data is in several sections, and
/// this holds when the linker placed them back to back, in order, as every linker we support
/// does (a section ordering option or linker script could break it); on Mach-O and COFF both
/// symbols are in one section, which a linker places whole, so the check proves that the
/// library defines the `len` bytes the artifacts describe. Fails, without claiming a byte,
/// when it does not hold.
fn linked_data(
    start: *const u8,
    end: *const u8,
    len: usize,
) -> Result<&'static [u8], EmbedErrorKind> {
    let distance = end.addr().wrapping_sub(start.addr());
    if distance != len {
        return Err(EmbedErrorKind::Inconsistent(format!(
            "the linker did not place the {len} embedded bytes in one piece: the symbol past them \
             is {} bytes from their start, not {len} (a linker option reordered or \
             dropped the sections of the static library: a symbol ordering file, a section \
             sorting or shuffling option, or a linker script; remove it for this library, or \
             build with `Embedding::IncludeBytes`)",
            (end.addr() as isize).wrapping_sub(start.addr() as isize),
        )));
    }
    #[allow(unsafe_code)]
    // SAFETY: `start` and `end` are the addresses (`&raw const`, with the provenance of the
    // symbols' definitions, not of zero-byte references) of two symbols of the static
    // library the build script wrote, declared by `include_webnn_graph!` from the same
    // artifacts: `start` at the first of the linked bytes, `end` just past the last. The
    // check above proved that they are `len` bytes apart, so the range is the linked bytes,
    // whole and in one piece: read-only sections of the program (immutable for its
    // lifetime, hence `'static`), never written, `len` bytes that fit the address space
    // (they are mapped).
    let data = unsafe { std::slice::from_raw_parts(start, len) };
    Ok(data)
}
