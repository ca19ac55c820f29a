//! `ar` archives with one member and a symbol index, in the flavour each linker wants.
//!
//! - **GNU** (GNU ld, gold, lld, mold; MinGW's ld): a `/` index with big-endian offsets.
//! - **Darwin** (ld64, ld64.lld): a `__.SYMDEF SORTED` index with little-endian `ranlib`
//!   entries; names in the BSD `#1/<length>` form, padded so that the object starts at a
//!   multiple of 64 in the archive (ld64 wants 8).
//! - **COFF** (link.exe, lld-link): the first linker member (as GNU) and the second linker
//!   member (little-endian member offsets and 1-based indices), which Microsoft's tools read.
//!
//! Member headers are [`object::archive::Header`]s (decimal fields, the mode in octal, padded
//! with spaces). Every member has time stamp, user and group 0 and mode 644 (an index: mode
//! 0), so identical inputs give identical archives. `object` has no struct for what the
//! indexes hold (its reader takes them as runs of 32-bit and 64-bit integers), so their
//! fields are named values written in the byte order of their flavour.
//!
//! Data past one member's ten-digit size field (ELF) goes in several members in a GNU archive
//! ([`wrap_members`]), whose index is `/SYM64/` (64-bit offsets: the later members start past
//! 4 GiB).

use super::{ArchiveFraming, Framing, Gap, ALIGN};
use object::archive::{Header, MAGIC, TERMINATOR};
use object::pod::bytes_of;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavour {
    Gnu,
    Darwin,
    Coff,
}

/// A member header's length (60 bytes).
const HEADER: usize = std::mem::size_of::<Header>();
/// The member's name (15 characters and the GNU `/` fit the 16-byte field).
const MEMBER: &str = "webnn_weights.o";
/// The mode of the object member (`rw-r--r--`).
const MODE_MEMBER: u32 = 0o644;
/// The mode of an index member.
const MODE_INDEX: u32 = 0;

/// The header of a member called `name` (at most 16 bytes), of mode `mode` and `size` bytes.
fn header(name: &str, mode: u32, size: u64) -> Header {
    Header {
        name: field(name),
        date: field(0),
        uid: field(0),
        gid: field(0),
        mode: field(format!("{mode:o}")),
        size: field(size),
        terminator: TERMINATOR,
    }
}

/// `value` as text, left-aligned in a field of `N` bytes and padded with spaces. Every value
/// written fits its field (a member's size has at most ten digits: `AR_MEMBER_MAX`).
fn field<const N: usize>(value: impl std::fmt::Display) -> [u8; N] {
    let text = value.to_string();
    assert!(
        text.len() <= N,
        "{text:?} does not fit an archive header field of {N} bytes"
    );
    let mut field = [b' '; N];
    field[..text.len()].copy_from_slice(text.as_bytes());
    field
}

fn pad_even(out: &mut Vec<u8>) {
    if out.len() % 2 == 1 {
        out.push(b'\n');
    }
}

/// The archive around `object`, whose data (`data_len` bytes) the caller writes between
/// [`ArchiveFraming::prefix`] and [`ArchiveFraming::suffix`]; its index names `symbol`.
pub(super) fn wrap(
    flavour: Flavour,
    symbol: &str,
    object: Framing,
    data_len: u64,
) -> ArchiveFraming {
    let object_len = object.head.len() as u64 + data_len + object.tail.len() as u64;
    let mut prefix = before_object(flavour, symbol, object_len);
    // Members are padded to an even length.
    let odd = (prefix.len() as u64 + object_len) % 2 == 1;
    prefix.extend_from_slice(&object.head);
    let mut suffix = object.tail;
    if odd {
        suffix.push(b'\n');
    }
    ArchiveFraming {
        prefix,
        gaps: Vec::new(),
        suffix,
    }
}

/// One member of [`wrap_members`]: the symbols its object defines (in the index, in this
/// order) and its data's length.
pub(super) struct Member {
    pub symbols: Vec<String>,
    pub data_len: u64,
}

/// A GNU archive of several members, each an object around a run of the data, in order:
/// the data of member `k` follows member `k - 1`'s in the caller's stream, with the bytes
/// between them (the object's tail, the next member's header and object head) as a
/// [`Gap`]. `object(k, object_at)` makes member `k`'s object for a start `object_at` bytes
/// into the file. The index (`/SYM64/`) lists every member's symbols in member order, which
/// is the order linkers pull the members in (GNU ld scans the index in order; lld and mold
/// follow it as well: checked with small archives, and by `bench/platforms.sh`).
pub(super) fn wrap_members(
    members: &[Member],
    mut object: impl FnMut(usize, u64) -> Framing,
) -> ArchiveFraming {
    let names: Vec<&str> = members
        .iter()
        .flat_map(|m| m.symbols.iter().map(String::as_str))
        .collect();
    let symbol_count = names.len();
    let index_len = 8 + 8 * symbol_count + names.iter().map(|n| n.len() + 1).sum::<usize>();
    let mut at = (MAGIC.len() + HEADER + index_len + index_len % 2) as u64;
    // Where each member starts, and its object.
    let mut placed: Vec<(u64, Framing)> = Vec::with_capacity(members.len());
    for (k, m) in members.iter().enumerate() {
        let framing = object(k, at + HEADER as u64);
        let size = framing.head.len() as u64 + m.data_len + framing.tail.len() as u64;
        placed.push((at, framing));
        at += HEADER as u64 + size + size % 2;
    }
    let mut prefix = MAGIC.to_vec();
    // The index: the symbol count, each symbol's member offset (64-bit, big-endian), the
    // names.
    prefix.extend_from_slice(bytes_of(&header("/SYM64/", MODE_INDEX, index_len as u64)));
    prefix.extend_from_slice(&(symbol_count as u64).to_be_bytes());
    for (m, (member_offset, _)) in members.iter().zip(&placed) {
        for _ in &m.symbols {
            prefix.extend_from_slice(&member_offset.to_be_bytes());
        }
    }
    for name in &names {
        prefix.extend_from_slice(name.as_bytes());
        prefix.push(0);
    }
    pad_even(&mut prefix);
    let mut gaps = Vec::new();
    let mut data_at = 0u64;
    let mut pending: Option<Vec<u8>> = None;
    for (k, (m, (member_at, framing))) in members.iter().zip(placed).enumerate() {
        let mut before = pending.take().unwrap_or_default();
        let size = framing.head.len() as u64 + m.data_len + framing.tail.len() as u64;
        let name = format!("webnn_w_{k:03}.o/");
        before.extend_from_slice(bytes_of(&header(&name, MODE_MEMBER, size)));
        before.extend_from_slice(&framing.head);
        if k == 0 {
            debug_assert_eq!(prefix.len() as u64, member_at);
            prefix.extend_from_slice(&before);
        } else {
            gaps.push(Gap {
                at: data_at,
                bytes: before,
            });
        }
        let mut tail = framing.tail;
        if size % 2 == 1 {
            tail.push(b'\n');
        }
        pending = Some(tail);
        data_at += m.data_len;
    }
    ArchiveFraming {
        prefix,
        gaps,
        suffix: pending.unwrap_or_default(),
    }
}

/// Where the object starts in the archive of `flavour` whose index names `symbol` (the
/// same for every object length: the member header's size field has a fixed width).
pub(super) fn object_offset(flavour: Flavour, symbol: &str) -> u64 {
    before_object(flavour, symbol, 0).len() as u64
}

/// Everything before the object: magic, symbol index, member header (and, in the Darwin
/// flavour, the member's name).
fn before_object(flavour: Flavour, symbol: &str, object_len: u64) -> Vec<u8> {
    let mut prefix = MAGIC.to_vec();
    match flavour {
        Flavour::Gnu | Flavour::Coff => linker_members(&mut prefix, flavour, symbol, object_len),
        Flavour::Darwin => symdef_member(&mut prefix, symbol, object_len),
    }
    prefix
}

/// The GNU and COFF flavours after the magic: the first linker member (the GNU index), the
/// second in the COFF flavour, then the object's member header.
fn linker_members(prefix: &mut Vec<u8>, flavour: Flavour, symbol: &str, object_len: u64) {
    // One symbol in one member, the object.
    let symbol_count: u32 = 1;
    let member_count: u32 = 1;
    let member_index: u16 = 1;
    // First linker member: symbol count, each symbol's member offset (u32 each,
    // big-endian), names.
    let first_len = 4 + 4 + symbol.len() + 1;
    // Second linker member: member count, each member's offset, symbol count (u32
    // each), each symbol's 1-based member index (u16), names.
    let second_len = 4 + 4 + 4 + 2 + symbol.len() + 1;
    let mut member_at = MAGIC.len() + HEADER + first_len + first_len % 2;
    if flavour == Flavour::Coff {
        member_at += HEADER + second_len + second_len % 2;
    }
    let member_offset = member_at as u32;
    prefix.extend_from_slice(bytes_of(&header("/", MODE_INDEX, first_len as u64)));
    prefix.extend_from_slice(&symbol_count.to_be_bytes());
    prefix.extend_from_slice(&member_offset.to_be_bytes());
    prefix.extend_from_slice(symbol.as_bytes());
    prefix.push(0);
    pad_even(prefix);
    if flavour == Flavour::Coff {
        // Little-endian; the names sorted (there is one).
        prefix.extend_from_slice(bytes_of(&header("/", MODE_INDEX, second_len as u64)));
        prefix.extend_from_slice(&member_count.to_le_bytes());
        prefix.extend_from_slice(&member_offset.to_le_bytes());
        prefix.extend_from_slice(&symbol_count.to_le_bytes());
        prefix.extend_from_slice(&member_index.to_le_bytes());
        prefix.extend_from_slice(symbol.as_bytes());
        prefix.push(0);
        pad_even(prefix);
    }
    debug_assert_eq!(prefix.len(), member_at);
    let name = format!("{MEMBER}/");
    prefix.extend_from_slice(bytes_of(&header(&name, MODE_MEMBER, object_len)));
}

/// The Darwin flavour after the magic: the `__.SYMDEF SORTED` index, then the object's
/// member header and name, padded so that the object starts at a multiple of [`ALIGN`].
fn symdef_member(prefix: &mut Vec<u8>, symbol: &str, object_len: u64) {
    // `__.SYMDEF SORTED`, its name stored after the header (`#1/20`).
    let index_name = b"__.SYMDEF SORTED\0\0\0\0";
    let mut strings = symbol.as_bytes().to_vec();
    strings.push(0);
    strings.resize(strings.len().next_multiple_of(8), 0);
    let index_len = 4 + 8 + 4 + strings.len();
    let index_member = index_name.len() + index_len;
    let member_at = MAGIC.len() + HEADER + index_member;
    // The member's name is padded so that the object starts at a multiple of ALIGN.
    let align = ALIGN as usize;
    let unpadded = member_at + HEADER + MEMBER.len() + 1;
    let name_len = MEMBER.len() + 1 + (unpadded.next_multiple_of(align) - unpadded);
    let index_header = header(
        &format!("#1/{}", index_name.len()),
        MODE_INDEX,
        index_member as u64,
    );
    prefix.extend_from_slice(bytes_of(&index_header));
    prefix.extend_from_slice(index_name);
    // The index (little-endian, u32 each): the ranlib entries' length in bytes, one
    // entry (`ran_strx`: the name's offset in the strings; `ran_off`: the member's
    // offset), the strings' length, the strings.
    let ranlib_len: u32 = 8;
    let ran_strx: u32 = 0;
    let ran_off = member_at as u32;
    let strings_len = strings.len() as u32;
    prefix.extend_from_slice(&ranlib_len.to_le_bytes());
    prefix.extend_from_slice(&ran_strx.to_le_bytes());
    prefix.extend_from_slice(&ran_off.to_le_bytes());
    prefix.extend_from_slice(&strings_len.to_le_bytes());
    prefix.extend_from_slice(&strings);
    debug_assert_eq!(prefix.len(), member_at);
    let member_header = header(
        &format!("#1/{name_len}"),
        MODE_MEMBER,
        name_len as u64 + object_len,
    );
    prefix.extend_from_slice(bytes_of(&member_header));
    let mut name = MEMBER.as_bytes().to_vec();
    name.resize(name_len, 0);
    prefix.extend_from_slice(&name);
    debug_assert_eq!(prefix.len() % align, 0);
}
