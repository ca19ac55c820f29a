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
/// bytes must be `len` bytes after their first. What that proves is a distance: the `len`
/// bytes from the start symbol on end exactly at the end symbol, so they lie between two
/// symbols of the library and none lies beyond it. On Mach-O and COFF both symbols are in
/// one section, which a linker places whole, so those are the section's bytes in the
/// library's order. On ELF the data is in several sections: every linker we support places
/// them back to back and in order, and a linker option that moves or drops one of them
/// (a symbol ordering file, section sorting, a linker script) almost always moves an end
/// and fails the check; but the check cannot see a reordering that keeps both ends in
/// place (the pieces between them shuffled), which would hand out other bytes of the same
/// library as the constants. Fails, without claiming a byte, when the distance is not
/// `len`.
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
    // SAFETY: `start` and `end` are the addresses, taken with `&raw const` (never through a
    // reference to the declared zero bytes), of two symbols of the static library the build
    // script wrote, declared by `include_webnn_graph!` from the same artifacts: `start` at
    // the first of the linked bytes, `end` just past the last. That a pointer so taken may
    // read the `len` bytes the definition's section holds past it is the usual linker-symbol
    // idiom (C's `__start_`/`__stop_` symbols, the `linkme` crate); Rust's memory model does
    // not guarantee it, and the compiler knows nothing of the bytes beyond the declared
    // `[u8; 0]`. The check above proved that `end` is `len` bytes after `start`, so the
    // range lies in the library's linked bytes, loaded with the program, `len` bytes that
    // fit the address space (they are mapped). They stay unchanged for the program's
    // lifetime (hence `'static`) because nothing writes them, not because the memory is
    // read-only: on Mach-O, and on AArch64 ELF between 1 and 4 GiB, they are in a writable
    // segment. No code of ours or of the application has a path to write them: the symbols
    // are not exported mutable (the expansion declares them as immutable `static`s of zero
    // bytes and takes only `*const` addresses; no other code declares their names, which
    // carry a hash of the artifacts), and the runtime hands the bytes out only as shared
    // `&'static [u8]`.
    let data = unsafe { std::slice::from_raw_parts(start, len) };
    Ok(data)
}
