//! ELF64 relocatable objects (x86-64, AArch64).
//!
//! On x86-64 the section is `.lrodata.webnn_weights` with `SHF_X86_64_LARGE`: linkers place
//! large sections apart from `.text`/`.rodata`, so gigabytes of weights never push ordinary
//! read-only data out of reach of 32-bit PC-relative relocations.
//!
//! AArch64 has no large-data section. Up to [`AARCH64_READ_ONLY_MAX`] the section is
//! `.rodata.webnn_weights`; above it `.webnn_weights`, writable (the program never writes it).
//! GNU ld's AArch64 script places read-only sections (and read-only orphans) between `.text`
//! and `.eh_frame`, whose 32-bit PC-relative relocations to `.text` then overflow: a 2 GiB
//! read-only section fails to link (`relocation truncated to fit: R_AARCH64_PREL32`). Named
//! `.data.*` it would join `.data` before other objects' `.data.rel.local` (which
//! `.eh_frame` also reaches with 32-bit offsets: it failed the same way). A writable section
//! with a name no linker script matches is placed as an orphan after `.data`, right before
//! `.bss`, where only ADRP's ±4 GiB reach from code to `.bss` is crossed. Measured by
//! `bench/platforms.sh`.
//!
//! Every size and offset field is 64-bit: the format sets no limit below the archive's.

use super::{Arch, Framing, ALIGN};
use object::elf;

/// `SHF_X86_64_LARGE` (x86-64 psABI: "the section can hold more than 2 GiB"); the `object`
/// crate does not name it.
pub(super) const SHF_X86_64_LARGE: u64 = 0x1000_0000;
const EHDR: u64 = 64;
const SHDR: u64 = 64;
const SYM: u64 = 24;

/// The fields of a section header this writer sets (`sh_addr` is always 0).
type SectionHeader = (u32, u32, u64, u64, u64, u32, u32, u64, u64);

pub(super) fn machine(arch: Arch) -> u16 {
    match arch {
        Arch::X86_64 => elf::EM_X86_64,
        Arch::Aarch64 => elf::EM_AARCH64,
    }
}

/// The largest data that stays in a read-only section on AArch64 (1 GiB: `.text`, `.rodata`
/// and the data together stay within `.eh_frame`'s ±2 GiB reach).
pub(super) const AARCH64_READ_ONLY_MAX: u64 = 1 << 30;

pub(super) fn section(arch: Arch, data_len: u64) -> (&'static str, u64) {
    match arch {
        Arch::X86_64 => (
            ".lrodata.webnn_weights",
            u64::from(elf::SHF_ALLOC) | SHF_X86_64_LARGE,
        ),
        Arch::Aarch64 if data_len <= AARCH64_READ_ONLY_MAX => {
            (".rodata.webnn_weights", u64::from(elf::SHF_ALLOC))
        }
        Arch::Aarch64 => (".webnn_weights", u64::from(elf::SHF_ALLOC | elf::SHF_WRITE)),
    }
}

/// An object whose section 1 holds `data_len` bytes, defined by the global `symbol`.
pub(super) fn object(arch: Arch, symbol: &str, data_len: u64) -> Framing {
    let (section_name, section_flags) = section(arch, data_len);

    // String tables.
    let mut shstrtab = vec![0u8];
    let mut name = |s: &str| {
        let at = shstrtab.len() as u32;
        shstrtab.extend_from_slice(s.as_bytes());
        shstrtab.push(0);
        at
    };
    let n_data = name(section_name);
    let n_stack = name(".note.GNU-stack");
    let n_symtab = name(".symtab");
    let n_strtab = name(".strtab");
    let n_shstrtab = name(".shstrtab");
    let mut strtab = vec![0u8];
    strtab.extend_from_slice(symbol.as_bytes());
    strtab.push(0);

    // File offsets inside the object.
    let data_off = EHDR; // already a multiple of ALIGN
    debug_assert_eq!(data_off % ALIGN, 0);
    let symtab_off = (data_off + data_len).next_multiple_of(8);
    let symtab_len = 2 * SYM;
    let strtab_off = symtab_off + symtab_len;
    let shstrtab_off = strtab_off + strtab.len() as u64;
    let shdr_off = (shstrtab_off + shstrtab.len() as u64).next_multiple_of(8);

    // ELF header.
    let mut head = Vec::with_capacity(EHDR as usize);
    head.extend_from_slice(&elf::ELFMAG);
    head.extend_from_slice(&[
        elf::ELFCLASS64,
        elf::ELFDATA2LSB,
        elf::EV_CURRENT,
        elf::ELFOSABI_SYSV,
    ]);
    head.extend_from_slice(&[0; 8]);
    head.extend_from_slice(&elf::ET_REL.to_le_bytes());
    head.extend_from_slice(&machine(arch).to_le_bytes());
    head.extend_from_slice(&u32::from(elf::EV_CURRENT).to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    head.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
    head.extend_from_slice(&shdr_off.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    head.extend_from_slice(&(EHDR as u16).to_le_bytes());
    head.extend_from_slice(&0u16.to_le_bytes()); // e_phentsize
    head.extend_from_slice(&0u16.to_le_bytes()); // e_phnum
    head.extend_from_slice(&(SHDR as u16).to_le_bytes());
    head.extend_from_slice(&6u16.to_le_bytes()); // e_shnum
    head.extend_from_slice(&5u16.to_le_bytes()); // e_shstrndx
    debug_assert_eq!(head.len() as u64, EHDR);

    // After the data: padding, symbols, strings, section headers.
    let mut tail = vec![0u8; (symtab_off - data_off - data_len) as usize];
    tail.extend_from_slice(&[0; SYM as usize]); // the null symbol
    tail.extend_from_slice(&1u32.to_le_bytes()); // st_name
    tail.push((elf::STB_GLOBAL << 4) | elf::STT_OBJECT);
    tail.push(elf::STV_DEFAULT);
    tail.extend_from_slice(&1u16.to_le_bytes()); // st_shndx: the data section
    tail.extend_from_slice(&0u64.to_le_bytes()); // st_value
    tail.extend_from_slice(&data_len.to_le_bytes()); // st_size
    tail.extend_from_slice(&strtab);
    tail.extend_from_slice(&shstrtab);
    tail.resize((shdr_off - data_off - data_len) as usize, 0);
    // name, type, flags, offset, size, link, info, alignment, entry size
    let headers: [SectionHeader; 6] = [
        (0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0),
        (
            n_data,
            elf::SHT_PROGBITS,
            section_flags,
            data_off,
            data_len,
            0,
            0,
            ALIGN,
            0,
        ),
        (n_stack, elf::SHT_PROGBITS, 0, data_off, 0, 0, 0, 1, 0),
        // sh_link: the string table; sh_info: index of the first global symbol.
        (
            n_symtab,
            elf::SHT_SYMTAB,
            0,
            symtab_off,
            symtab_len,
            4,
            1,
            8,
            SYM,
        ),
        (
            n_strtab,
            elf::SHT_STRTAB,
            0,
            strtab_off,
            strtab.len() as u64,
            0,
            0,
            1,
            0,
        ),
        (
            n_shstrtab,
            elf::SHT_STRTAB,
            0,
            shstrtab_off,
            shstrtab.len() as u64,
            0,
            0,
            1,
            0,
        ),
    ];
    for (name, kind, flags, offset, size, link, info, align, entsize) in headers {
        tail.extend_from_slice(&name.to_le_bytes());
        tail.extend_from_slice(&kind.to_le_bytes());
        tail.extend_from_slice(&flags.to_le_bytes());
        tail.extend_from_slice(&0u64.to_le_bytes()); // sh_addr
        tail.extend_from_slice(&offset.to_le_bytes());
        tail.extend_from_slice(&size.to_le_bytes());
        tail.extend_from_slice(&link.to_le_bytes());
        tail.extend_from_slice(&info.to_le_bytes());
        tail.extend_from_slice(&align.to_le_bytes());
        tail.extend_from_slice(&entsize.to_le_bytes());
    }
    debug_assert_eq!(EHDR + data_len + tail.len() as u64, shdr_off + 6 * SHDR);
    Framing { head, tail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
    use object::{Object, ObjectSection};

    #[test]
    fn large_aarch64_data_moves_to_a_writable_section() {
        assert_eq!(
            section(Arch::Aarch64, AARCH64_READ_ONLY_MAX).0,
            ".rodata.webnn_weights"
        );
        let (name, flags) = section(Arch::Aarch64, AARCH64_READ_ONLY_MAX + 64);
        assert_eq!(name, ".webnn_weights");
        assert_ne!(flags & u64::from(elf::SHF_WRITE), 0);
        // x86-64 keeps its large read-only section at any size.
        assert_eq!(section(Arch::X86_64, 1 << 33).0, ".lrodata.webnn_weights");
    }

    #[test]
    fn section_flags_per_machine() {
        for (arch, name, large) in [
            (Arch::X86_64, ".lrodata.webnn_weights", true),
            (Arch::Aarch64, ".rodata.webnn_weights", false),
        ] {
            let data = [5u8; 129];
            let framing = object(arch, "sym", data.len() as u64);
            let mut bytes = framing.head;
            bytes.extend_from_slice(&data);
            bytes.extend_from_slice(&framing.tail);
            let obj = ElfFile64::<object::Endianness>::parse(&*bytes).unwrap();
            let endian = obj.endian();
            assert_eq!(obj.elf_header().e_machine(endian), machine(arch));
            let section = obj.section_by_name(name).unwrap();
            let sh = obj.elf_section_table().section(section.index()).unwrap();
            let flags = sh.sh_flags(endian);
            assert_eq!(flags & SHF_X86_64_LARGE != 0, large);
            assert_eq!(flags & u64::from(elf::SHF_WRITE), 0);
            assert_eq!(flags & u64::from(elf::SHF_EXECINSTR), 0);
            assert!(obj.section_by_name(".note.GNU-stack").is_some());
        }
    }
}
