//! A static library (`lib<name>.a`) holding one ELF relocatable object with one read-only,
//! 64-byte aligned data section and one global symbol at its start.
//!
//! Written as a stream: the caller fills the section's bytes between [`Layout::prefix`] and
//! [`Layout::suffix`], so tensor bytes go from the sidecar to the archive by
//! `copy_file_range` and are never held in memory. The archive is in the GNU `ar` format
//! with a symbol index (what GNU ld and lld require); member and index carry no time
//! stamps, so identical inputs give identical bytes.
//!
//! On x86-64 the section is `.lrodata.webnn_weights` with `SHF_X86_64_LARGE`: linkers
//! place large sections apart from `.text`/`.rodata`, so gigabytes of weights never push
//! ordinary read-only data out of reach of 32-bit PC-relative relocations. Elsewhere it is
//! `.rodata.webnn_weights`.

use object::elf;

/// The machines the static-library path writes objects for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Machine {
    X86_64,
    Aarch64,
}

impl Machine {
    /// The ELF machine for a target, or `None` when the target is not a 64-bit little-endian
    /// ELF target this writer supports (then the portable path is used).
    pub(crate) fn for_target(arch: &str, os: &str, endian: &str) -> Option<Machine> {
        const ELF_OSES: [&str; 9] = [
            "linux",
            "android",
            "freebsd",
            "netbsd",
            "openbsd",
            "dragonfly",
            "illumos",
            "solaris",
            "fuchsia",
        ];
        if endian != "little" || !ELF_OSES.contains(&os) {
            return None;
        }
        match arch {
            "x86_64" => Some(Machine::X86_64),
            "aarch64" => Some(Machine::Aarch64),
            _ => None,
        }
    }

    fn code(self) -> u16 {
        match self {
            Machine::X86_64 => elf::EM_X86_64,
            Machine::Aarch64 => elf::EM_AARCH64,
        }
    }

    fn section(self) -> (&'static str, u64) {
        match self {
            Machine::X86_64 => (
                ".lrodata.webnn_weights",
                u64::from(elf::SHF_ALLOC) | SHF_X86_64_LARGE,
            ),
            Machine::Aarch64 => (".rodata.webnn_weights", u64::from(elf::SHF_ALLOC)),
        }
    }
}

/// The section's alignment, which is also the constants' alignment.
pub(crate) const ALIGN: u64 = webnn_weights_artifacts::DATA_ALIGN;
/// `SHF_X86_64_LARGE` (x86-64 psABI: "the section can hold more than 2 GiB"); the `object`
/// crate does not name it.
const SHF_X86_64_LARGE: u64 = 0x1000_0000;
const EHDR: u64 = 64;
const SHDR: u64 = 64;
const SYM: u64 = 24;
const AR_HEADER: usize = 60;
const MEMBER_NAME: &str = "webnn_weights.o/";

/// The bytes around the section data of one archive.
pub(crate) struct Layout {
    /// Archive header, symbol index, member header and ELF header.
    pub(crate) prefix: Vec<u8>,
    /// Symbol table, string tables, section headers and padding.
    pub(crate) suffix: Vec<u8>,
}

impl Layout {
    /// Lays out an archive whose object defines `symbol` as `data_len` bytes.
    pub(crate) fn new(machine: Machine, symbol: &str, data_len: u64) -> Layout {
        let (section_name, section_flags) = machine.section();

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
        let symtab_off = (data_off + data_len).next_multiple_of(8);
        let symtab_len = 2 * SYM;
        let strtab_off = symtab_off + symtab_len;
        let shstrtab_off = strtab_off + strtab.len() as u64;
        let shdr_off = (shstrtab_off + shstrtab.len() as u64).next_multiple_of(8);
        let object_len = shdr_off + 6 * SHDR;

        // ELF header.
        let mut ehdr = Vec::with_capacity(EHDR as usize);
        ehdr.extend_from_slice(&elf::ELFMAG);
        ehdr.extend_from_slice(&[
            elf::ELFCLASS64,
            elf::ELFDATA2LSB,
            elf::EV_CURRENT,
            elf::ELFOSABI_SYSV,
        ]);
        ehdr.extend_from_slice(&[0; 8]);
        ehdr.extend_from_slice(&elf::ET_REL.to_le_bytes());
        ehdr.extend_from_slice(&machine.code().to_le_bytes());
        ehdr.extend_from_slice(&u32::from(elf::EV_CURRENT).to_le_bytes());
        ehdr.extend_from_slice(&0u64.to_le_bytes()); // e_entry
        ehdr.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
        ehdr.extend_from_slice(&shdr_off.to_le_bytes());
        ehdr.extend_from_slice(&0u32.to_le_bytes()); // e_flags
        ehdr.extend_from_slice(&(EHDR as u16).to_le_bytes());
        ehdr.extend_from_slice(&0u16.to_le_bytes()); // e_phentsize
        ehdr.extend_from_slice(&0u16.to_le_bytes()); // e_phnum
        ehdr.extend_from_slice(&(SHDR as u16).to_le_bytes());
        ehdr.extend_from_slice(&6u16.to_le_bytes()); // e_shnum
        ehdr.extend_from_slice(&5u16.to_le_bytes()); // e_shstrndx
        debug_assert_eq!(ehdr.len() as u64, EHDR);

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
        let mut section = |name: u32,
                           kind: u32,
                           flags: u64,
                           offset: u64,
                           size: u64,
                           link: u32,
                           info: u32,
                           align: u64,
                           entsize: u64| {
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
        };
        section(0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0);
        let progbits = elf::SHT_PROGBITS;
        section(
            n_data,
            progbits,
            section_flags,
            data_off,
            data_len,
            0,
            0,
            ALIGN,
            0,
        );
        section(n_stack, progbits, 0, data_off, 0, 0, 0, 1, 0);
        let sym_len = symtab_len;
        section(
            n_symtab,
            elf::SHT_SYMTAB,
            0,
            symtab_off,
            sym_len,
            4,
            1,
            8,
            SYM,
        );
        let str_len = strtab.len() as u64;
        section(
            n_strtab,
            elf::SHT_STRTAB,
            0,
            strtab_off,
            str_len,
            0,
            0,
            1,
            0,
        );
        let shstr_len = shstrtab.len() as u64;
        section(
            n_shstrtab,
            elf::SHT_STRTAB,
            0,
            shstrtab_off,
            shstr_len,
            0,
            0,
            1,
            0,
        );
        debug_assert_eq!(EHDR + data_len + tail.len() as u64, object_len);

        // The archive around it: global header, symbol index, member header.
        let mut index = Vec::new();
        index.extend_from_slice(&1u32.to_be_bytes());
        let index_len = 4 + 4 + symbol.len() + 1;
        let member_at = 8 + AR_HEADER + index_len + index_len % 2;
        index.extend_from_slice(&(member_at as u32).to_be_bytes());
        index.extend_from_slice(symbol.as_bytes());
        index.push(0);
        if index.len() % 2 == 1 {
            index.push(b'\n');
        }
        let mut prefix = b"!<arch>\n".to_vec();
        prefix.extend_from_slice(&ar_header("/", "0", index_len as u64));
        prefix.extend_from_slice(&index);
        debug_assert_eq!(prefix.len(), member_at);
        prefix.extend_from_slice(&ar_header(MEMBER_NAME, "644", object_len));
        prefix.extend_from_slice(&ehdr);
        if object_len % 2 == 1 {
            tail.push(b'\n');
        }
        Layout {
            prefix,
            suffix: tail,
        }
    }
}

fn ar_header(name: &str, mode: &str, size: u64) -> Vec<u8> {
    let header = format!(
        "{name:<16}{date:<12}{uid:<6}{gid:<6}{mode:<8}{size:<10}`\n",
        date = 0,
        uid = 0,
        gid = 0
    );
    debug_assert_eq!(header.len(), AR_HEADER);
    header.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::archive::ArchiveFile;
    use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
    use object::{Object, ObjectSection, ObjectSymbol};

    fn archive(machine: Machine, data: &[u8]) -> Vec<u8> {
        let layout = Layout::new(machine, "webnn_weights_data_test", data.len() as u64);
        let mut out = layout.prefix;
        out.extend_from_slice(data);
        out.extend_from_slice(&layout.suffix);
        out
    }

    #[test]
    fn archive_holds_an_aligned_global_symbol() {
        for (machine, name, large) in [
            (Machine::X86_64, ".lrodata.webnn_weights", true),
            (Machine::Aarch64, ".rodata.webnn_weights", false),
        ] {
            for len in [0usize, 1, 63, 64, 129] {
                let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
                let bytes = archive(machine, &data);
                let ar = ArchiveFile::parse(&*bytes).unwrap();
                let symbols: Vec<_> = ar
                    .symbols()
                    .unwrap()
                    .unwrap()
                    .map(|s| s.unwrap().name().to_vec())
                    .collect();
                assert_eq!(symbols, vec![b"webnn_weights_data_test".to_vec()]);
                let members: Vec<_> = ar.members().map(|m| m.unwrap()).collect();
                assert_eq!(members.len(), 1);
                assert_eq!(members[0].name(), b"webnn_weights.o");
                let obj_bytes = members[0].data(&*bytes).unwrap();
                let obj = ElfFile64::<object::Endianness>::parse(obj_bytes).unwrap();
                let sym = obj.symbol_by_name("webnn_weights_data_test").unwrap();
                assert!(sym.is_global());
                assert_eq!(sym.size(), len as u64);
                let section = obj.section_by_name(name).unwrap();
                assert_eq!(section.align(), 64);
                assert_eq!(section.data().unwrap(), &data[..]);
                assert_eq!(sym.section_index(), Some(section.index()));
                let endian = obj.endian();
                let header = obj.elf_header();
                assert_eq!(header.e_machine(endian), machine.code());
                let sh = obj.elf_section_table().section(section.index()).unwrap();
                let flags = sh.sh_flags(endian);
                assert_eq!(flags & SHF_X86_64_LARGE != 0, large);
                assert_eq!(flags & u64::from(elf::SHF_WRITE), 0);
                assert_eq!(flags & u64::from(elf::SHF_EXECINSTR), 0);
                assert!(obj.section_by_name(".note.GNU-stack").is_some());
            }
        }
    }

    #[test]
    fn layout_is_deterministic() {
        assert_eq!(
            archive(Machine::X86_64, b"abc"),
            archive(Machine::X86_64, b"abc")
        );
    }

    #[test]
    fn targets() {
        assert_eq!(
            Machine::for_target("x86_64", "linux", "little"),
            Some(Machine::X86_64)
        );
        assert_eq!(
            Machine::for_target("aarch64", "android", "little"),
            Some(Machine::Aarch64)
        );
        assert_eq!(Machine::for_target("x86_64", "macos", "little"), None);
        assert_eq!(Machine::for_target("x86_64", "windows", "little"), None);
        assert_eq!(Machine::for_target("wasm32", "unknown", "little"), None);
        assert_eq!(Machine::for_target("riscv64", "linux", "little"), None);
    }
}
