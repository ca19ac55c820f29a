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
//! size; the section's and the segment's sizes are 64-bit. A
//! `LC_BUILD_VERSION` names macOS with Rust's minimum versions for the architecture (10.12
//! for x86-64, 11.0 for arm64), so linkers do not warn about a missing platform.

use super::{Arch, Framing, ALIGN};
use object::macho;

const HEADER: usize = 32;
const SEGMENT: usize = 72;
const SECTION: usize = 80;
const BUILD_VERSION: usize = 24;
const SYMTAB: usize = 24;
const DYSYMTAB: usize = 80;
const NLIST: usize = 16;

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
/// (already spelled for Mach-O, with its `_`).
pub(super) fn object(arch: Arch, symbol: &str, data_len: u64) -> Framing {
    let sizeofcmds = SEGMENT + SECTION + BUILD_VERSION + SYMTAB + DYSYMTAB;
    let symoff = HEADER + sizeofcmds;
    let stroff = symoff + NLIST;
    let mut strtab = vec![0u8];
    strtab.extend_from_slice(symbol.as_bytes());
    strtab.push(0);
    strtab.resize(strtab.len().next_multiple_of(8), 0);
    let data_off = (stroff + strtab.len()).next_multiple_of(ALIGN as usize);

    let mut h = Vec::with_capacity(data_off);
    let u32le = |h: &mut Vec<u8>, v: u32| h.extend_from_slice(&v.to_le_bytes());
    let u64le = |h: &mut Vec<u8>, v: u64| h.extend_from_slice(&v.to_le_bytes());
    let (cputype, cpusubtype) = cpu(arch);
    // mach_header_64
    u32le(&mut h, macho::MH_MAGIC_64);
    u32le(&mut h, cputype);
    u32le(&mut h, cpusubtype);
    u32le(&mut h, macho::MH_OBJECT);
    u32le(&mut h, 4); // ncmds
    u32le(&mut h, sizeofcmds as u32);
    u32le(&mut h, 0); // flags
    u32le(&mut h, 0); // reserved
                      // segment_command_64: the one unnamed segment of an object file
    u32le(&mut h, macho::LC_SEGMENT_64);
    u32le(&mut h, (SEGMENT + SECTION) as u32);
    h.extend_from_slice(&[0; 16]);
    u64le(&mut h, 0); // vmaddr
    u64le(&mut h, data_len); // vmsize
    u64le(&mut h, data_off as u64); // fileoff
    u64le(&mut h, data_len); // filesize
    u32le(
        &mut h,
        macho::VM_PROT_READ | macho::VM_PROT_WRITE | macho::VM_PROT_EXECUTE,
    );
    u32le(
        &mut h,
        macho::VM_PROT_READ | macho::VM_PROT_WRITE | macho::VM_PROT_EXECUTE,
    );
    u32le(&mut h, 1); // nsects
    u32le(&mut h, 0); // flags
                      // section_64
    h.extend_from_slice(&name16(SECTION_NAME));
    h.extend_from_slice(&name16(SEGMENT_NAME));
    u64le(&mut h, 0); // addr
    u64le(&mut h, data_len); // size
    u32le(&mut h, data_off as u32); // offset: small, the tables come first
    u32le(&mut h, ALIGN.trailing_zeros()); // align, as a power of two
    u32le(&mut h, 0); // reloff
    u32le(&mut h, 0); // nreloc
    u32le(&mut h, macho::S_REGULAR);
    u32le(&mut h, 0); // reserved1
    u32le(&mut h, 0); // reserved2
    u32le(&mut h, 0); // reserved3
                      // build_version_command
    let minos = match arch {
        Arch::X86_64 => version(10, 12),
        Arch::Aarch64 => version(11, 0),
    };
    u32le(&mut h, macho::LC_BUILD_VERSION);
    u32le(&mut h, BUILD_VERSION as u32);
    u32le(&mut h, macho::PLATFORM_MACOS);
    u32le(&mut h, minos);
    u32le(&mut h, minos); // sdk
    u32le(&mut h, 0); // ntools
                      // symtab_command
    u32le(&mut h, macho::LC_SYMTAB);
    u32le(&mut h, SYMTAB as u32);
    u32le(&mut h, symoff as u32);
    u32le(&mut h, 1); // nsyms
    u32le(&mut h, stroff as u32);
    u32le(&mut h, strtab.len() as u32);
    // dysymtab_command: no locals, one defined external, no undefined
    u32le(&mut h, macho::LC_DYSYMTAB);
    u32le(&mut h, DYSYMTAB as u32);
    for v in [0u32, 0, 0, 1, 1, 0] {
        u32le(&mut h, v);
    }
    h.resize(h.len() + DYSYMTAB - 8 - 6 * 4, 0);
    debug_assert_eq!(h.len(), symoff);
    // nlist_64
    u32le(&mut h, 1); // n_strx
    h.push(macho::N_SECT | macho::N_EXT);
    h.push(1); // n_sect
    h.extend_from_slice(&0u16.to_le_bytes()); // n_desc
    u64le(&mut h, 0); // n_value: the section's start
    h.extend_from_slice(&strtab);
    h.resize(data_off, 0);
    Framing {
        head: h,
        tail: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::macho::{MachHeader, MachOFile64, Section};
    use object::{Object, ObjectSection};

    #[test]
    fn header_and_section_fields() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let data = [9u8; 192];
            let framing = object(arch, "_sym", data.len() as u64);
            let mut bytes = framing.head;
            bytes.extend_from_slice(&data);
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
        }
    }
}
