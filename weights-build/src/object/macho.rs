//! Mach-O 64-bit relocatable objects (x86-64, arm64).
//!
//! The data is section [`SECTION_NAME`] of its own segment [`SEGMENT_NAME`], aligned to 2^6.
//! Linkers place a segment they do not know after `__TEXT`, `__DATA_CONST` and `__DATA`,
//! right before `__LINKEDIT`: past everything the program's code addresses, so no 32-bit
//! PC-relative offset (x86-64) or ADRP (arm64) of the program crosses the data (in
//! `__TEXT,__const`, as before, x86-64 code failed to reach `__DATA` across 2 GiB). The
//! output segment is readable and writable (the program never writes it). The symbol and
//! string tables come *before* the data, so the only 32-bit fields
//! (`section_64.offset`, `symtab_command.symoff`/`stroff`) stay small whatever the data's
//! size; the section's and the segment's sizes are 64-bit. The external `end_symbol` is
//! `data_len` bytes after `symbol`, followed by [`END_PAD`] zero bytes of the same section. A
//! `LC_BUILD_VERSION` names macOS with Rust's minimum versions for the architecture (10.12
//! for x86-64, 11.0 for arm64), so linkers do not warn about a missing platform.

use super::{Arch, Framing, ALIGN, END_PAD};
use object::endian::{BigEndian, LittleEndian as LE, U64Bytes, U16, U32, U64};
use object::macho::{
    self, BuildVersionCommand, DysymtabCommand, MachHeader64, Nlist64, Section64, SegmentCommand64,
    SymtabCommand,
};
use object::pod::bytes_of;

const HEADER: usize = size_of::<MachHeader64<LE>>();
const SEGMENT: usize = size_of::<SegmentCommand64<LE>>();
const SECTION: usize = size_of::<Section64<LE>>();
const BUILD_VERSION: usize = size_of::<BuildVersionCommand<LE>>();
const SYMTAB: usize = size_of::<SymtabCommand<LE>>();
const DYSYMTAB: usize = size_of::<DysymtabCommand<LE>>();
const NLIST: usize = size_of::<Nlist64<LE>>();

/// The segment of the data: its own, which linkers place after `__DATA`.
pub(super) const SEGMENT_NAME: &str = "__WEBNN_WEIGHTS";
/// The data's section.
pub(super) const SECTION_NAME: &str = "__weights";

pub(super) fn cpu(arch: Arch) -> (u32, u32) {
    match arch {
        Arch::X86_64 => (macho::CPU_TYPE_X86_64, macho::CPU_SUBTYPE_X86_64_ALL),
        Arch::Aarch64 => (macho::CPU_TYPE_ARM64, macho::CPU_SUBTYPE_ARM64_ALL),
    }
}

/// `xxxx.yy.zz` as Mach-O encodes versions.
fn version(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor << 8)
}

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..name.len()].copy_from_slice(name.as_bytes());
    out
}

/// An object whose only section holds `data_len` bytes, defined by the external `symbol`
/// and ended by the external `end_symbol` (both already spelled for Mach-O, with their `_`),
/// then [`END_PAD`] zeros.
pub(super) fn object(arch: Arch, symbol: &str, end_symbol: &str, data_len: u64) -> Framing {
    let sizeofcmds = SEGMENT + SECTION + BUILD_VERSION + SYMTAB + DYSYMTAB;
    let symoff = HEADER + sizeofcmds;
    let stroff = symoff + 2 * NLIST;
    let section_len = data_len + END_PAD;
    let (strtab, symbol_at, end_at) = string_table(symbol, end_symbol);
    let data_off = (stroff + strtab.len()).next_multiple_of(ALIGN as usize);

    let mut h = Vec::with_capacity(data_off);
    h.extend_from_slice(bytes_of(&mach_header(arch, sizeofcmds)));
    h.extend_from_slice(bytes_of(&segment_command(section_len, data_off)));
    h.extend_from_slice(bytes_of(&section_64(section_len, data_off)));
    h.extend_from_slice(bytes_of(&build_version_command(arch)));
    h.extend_from_slice(bytes_of(&symtab_command(symoff, stroff, strtab.len())));
    h.extend_from_slice(bytes_of(&dysymtab_command()));
    debug_assert_eq!(h.len(), symoff);
    // The section's start, and just past the data (inside the section: `END_PAD`).
    h.extend_from_slice(bytes_of(&external_symbol(symbol_at, 0)));
    h.extend_from_slice(bytes_of(&external_symbol(end_at, data_len)));
    h.extend_from_slice(&strtab);
    h.resize(data_off, 0);
    Framing {
        head: h,
        tail: vec![0; END_PAD as usize],
    }
}

fn u32le(v: u32) -> U32<LE> {
    U32::new(LE, v)
}

fn u64le(v: u64) -> U64<LE> {
    U64::new(LE, v)
}

/// The string table: both names, NUL-terminated, after the empty name, in name order, as
/// the external symbols are (`_x` before `_x_end`), padded to 8 bytes; and where each name
/// starts.
fn string_table(symbol: &str, end_symbol: &str) -> (Vec<u8>, u32, u32) {
    let mut strtab = vec![0u8];
    let mut name_at = |name: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        at
    };
    let (symbol_at, end_at) = (name_at(symbol), name_at(end_symbol));
    strtab.resize(strtab.len().next_multiple_of(8), 0);
    (strtab, symbol_at, end_at)
}

/// The header of an object for `arch` with four load commands of `sizeofcmds` bytes.
fn mach_header(arch: Arch, sizeofcmds: usize) -> MachHeader64<LE> {
    let (cputype, cpusubtype) = cpu(arch);
    MachHeader64::<LE> {
        // Read as big-endian, the little-endian magic is `MH_CIGAM_64`.
        magic: U32::new(BigEndian, macho::MH_CIGAM_64),
        cputype: u32le(cputype),
        cpusubtype: u32le(cpusubtype),
        filetype: u32le(macho::MH_OBJECT),
        ncmds: u32le(4),
        sizeofcmds: u32le(sizeofcmds as u32),
        flags: u32le(0),
        reserved: u32le(0),
    }
}

/// The one unnamed segment of an object file, holding the section of `section_len` bytes
/// at `data_off`.
fn segment_command(section_len: u64, data_off: usize) -> SegmentCommand64<LE> {
    let rwx = macho::VM_PROT_READ | macho::VM_PROT_WRITE | macho::VM_PROT_EXECUTE;
    SegmentCommand64::<LE> {
        cmd: u32le(macho::LC_SEGMENT_64),
        cmdsize: u32le((SEGMENT + SECTION) as u32),
        segname: [0; 16],
        vmaddr: u64le(0),
        vmsize: u64le(section_len),
        fileoff: u64le(data_off as u64),
        filesize: u64le(section_len),
        maxprot: u32le(rwx),
        initprot: u32le(rwx),
        nsects: u32le(1),
        flags: u32le(0),
    }
}

/// The data's section, [`SECTION_NAME`] of [`SEGMENT_NAME`]: `section_len` bytes at
/// `data_off`.
fn section_64(section_len: u64, data_off: usize) -> Section64<LE> {
    Section64::<LE> {
        sectname: name16(SECTION_NAME),
        segname: name16(SEGMENT_NAME),
        addr: u64le(0),
        size: u64le(section_len),
        // Small: the tables come first.
        offset: u32le(data_off as u32),
        // As a power of two.
        align: u32le(ALIGN.trailing_zeros()),
        reloff: u32le(0),
        nreloc: u32le(0),
        flags: u32le(macho::S_REGULAR),
        reserved1: u32le(0),
        reserved2: u32le(0),
        reserved3: u32le(0),
    }
}

/// macOS with Rust's minimum version for `arch`, as both the minimum and the SDK.
fn build_version_command(arch: Arch) -> BuildVersionCommand<LE> {
    let minos = match arch {
        Arch::X86_64 => version(10, 12),
        Arch::Aarch64 => version(11, 0),
    };
    BuildVersionCommand::<LE> {
        cmd: u32le(macho::LC_BUILD_VERSION),
        cmdsize: u32le(BUILD_VERSION as u32),
        platform: u32le(macho::PLATFORM_MACOS),
        minos: u32le(minos),
        sdk: u32le(minos),
        ntools: u32le(0),
    }
}

/// The two symbols at `symoff` and the string table of `strsize` bytes at `stroff`.
fn symtab_command(symoff: usize, stroff: usize, strsize: usize) -> SymtabCommand<LE> {
    SymtabCommand::<LE> {
        cmd: u32le(macho::LC_SYMTAB),
        cmdsize: u32le(SYMTAB as u32),
        symoff: u32le(symoff as u32),
        nsyms: u32le(2),
        stroff: u32le(stroff as u32),
        strsize: u32le(strsize as u32),
    }
}

/// No locals, two defined externals, no undefined.
fn dysymtab_command() -> DysymtabCommand<LE> {
    DysymtabCommand::<LE> {
        cmd: u32le(macho::LC_DYSYMTAB),
        cmdsize: u32le(DYSYMTAB as u32),
        ilocalsym: u32le(0),
        nlocalsym: u32le(0),
        iextdefsym: u32le(0),
        nextdefsym: u32le(2),
        iundefsym: u32le(2),
        nundefsym: u32le(0),
        tocoff: u32le(0),
        ntoc: u32le(0),
        modtaboff: u32le(0),
        nmodtab: u32le(0),
        extrefsymoff: u32le(0),
        nextrefsyms: u32le(0),
        indirectsymoff: u32le(0),
        nindirectsyms: u32le(0),
        extreloff: u32le(0),
        nextrel: u32le(0),
        locreloff: u32le(0),
        nlocrel: u32le(0),
    }
}

/// An external symbol of section 1, named at `n_strx`, at the address `n_value` in it.
fn external_symbol(n_strx: u32, n_value: u64) -> Nlist64<LE> {
    Nlist64::<LE> {
        n_strx: u32le(n_strx),
        n_type: macho::N_SECT | macho::N_EXT,
        n_sect: 1,
        n_desc: U16::new(LE, 0),
        n_value: U64Bytes::new(LE, n_value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::macho::{MachHeader, MachOFile64, Section};
    use object::{Object, ObjectSection, ObjectSymbol};

    #[test]
    fn header_and_section_fields() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let data = [9u8; 192];
            let framing = object(arch, "_sym", "_sym_end", data.len() as u64);
            let mut bytes = framing.head;
            bytes.extend_from_slice(&data);
            bytes.extend_from_slice(&framing.tail);
            let obj = MachOFile64::<object::Endianness>::parse(&*bytes).unwrap();
            let endian = obj.endian();
            let header = obj.macho_header();
            assert_eq!(
                (header.cputype(endian), header.cpusubtype(endian)),
                cpu(arch)
            );
            assert_eq!(header.filetype(endian), macho::MH_OBJECT);
            let section = obj.section_by_name("__weights").unwrap();
            assert_eq!(section.segment_name().unwrap(), Some("__WEBNN_WEIGHTS"));
            let raw = section.macho_section();
            assert_eq!(raw.align(endian), 6);
            assert_eq!(raw.flags(endian), macho::S_REGULAR);
            assert_eq!(section.size(), 192 + END_PAD);
            let at = |name| obj.symbol_by_name(name).unwrap();
            assert_eq!(at("_sym").address(), 0);
            assert_eq!(at("_sym_end").address(), 192);
            assert_eq!(at("_sym_end").section_index(), Some(section.index()));
            assert!(at("_sym_end").is_global());
        }
    }
}
