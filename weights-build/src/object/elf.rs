//! ELF64 relocatable objects (x86-64, AArch64).
//!
//! On x86-64 the section is `.lrodata.webnn_weights` with `SHF_X86_64_LARGE`: linkers place
//! large sections apart from `.text`/`.rodata`, so gigabytes of weights never push ordinary
//! read-only data out of reach of 32-bit PC-relative relocations.
//!
//! AArch64 has no large-data section. Up to [`AARCH64_READ_ONLY_MAX`] the section is
//! `.rodata.webnn_weights`; up to [`AARCH64_BEFORE_BSS_MAX`] `.webnn_weights`, writable (the
//! program never writes it). GNU ld's AArch64 script places read-only sections (and read-only
//! orphans) between `.text` and `.eh_frame`, whose 32-bit PC-relative relocations to `.text`
//! then overflow: a 2 GiB read-only section fails to link (`relocation truncated to fit:
//! R_AARCH64_PREL32`). Named `.data.*` it would join `.data` before other objects'
//! `.data.rel.local` (which `.eh_frame` also reaches with 32-bit offsets: it failed the same
//! way). A writable section with a name no linker script matches is placed as an orphan after
//! `.data`, right before `.bss` (GNU ld, gold, lld and mold alike), where only ADRP's ±4 GiB
//! reach from code to `.bss` is crossed.
//!
//! Larger data goes in `.webnn_weights.large`, read-only, which the linker script of
//! [`linker_script`] places after every allocated section (`INSERT BEFORE .comment`, the
//! first section that is not loaded: it augments the default script), past everything the
//! program's code addresses: `.bss`, and the C library's own sections after it
//! (`__libc_freeres_ptrs`) and GNU ld's `_end`, which `INSERT AFTER .bss` left beyond the data
//! (static glibc programs then failed to link). The program reaches the data's two ends
//! through its GOT (64-bit entries). GNU ld and lld follow the script; gold and mold reject
//! it (`INSERT` and `SECTIONS` are not part of their script languages), so they fail the link
//! instead of misplacing the data. Measured by `bench/platforms.sh`.
//!
//! Every size and offset field is 64-bit: the format sets no limit below the archive's.
//! Past one archive member's ten-digit size field the data is cut over several objects, in
//! several members ([`object_part`]; `archive::wrap_members`).

use super::{Arch, Framing, ALIGN};
use object::elf::{self, FileHeader64, Ident, Rela64, SectionHeader64, Sym64};
use object::endian::{LittleEndian as LE, I64, U16, U32, U64};
use object::pod::bytes_of;

/// `SHF_X86_64_LARGE` (x86-64 psABI: "the section can hold more than 2 GiB"); the `object`
/// crate does not name it.
pub(super) const SHF_X86_64_LARGE: u64 = 0x1000_0000;
const EHDR: u64 = size_of::<FileHeader64<LE>>() as u64;
const SHDR: u64 = size_of::<SectionHeader64<LE>>() as u64;
const SYM: u64 = size_of::<Sym64<LE>>() as u64;
const RELA: u64 = size_of::<Rela64<LE>>() as u64;

/// A section header with the fields this writer sets (`sh_addr` is always 0).
#[allow(clippy::too_many_arguments)]
fn section_header(
    name: u32,
    kind: u32,
    flags: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
) -> SectionHeader64<LE> {
    SectionHeader64 {
        sh_name: U32::new(LE, name),
        sh_type: U32::new(LE, kind),
        sh_flags: U64::new(LE, flags),
        sh_addr: U64::new(LE, 0),
        sh_offset: U64::new(LE, offset),
        sh_size: U64::new(LE, size),
        sh_link: U32::new(LE, link),
        sh_info: U32::new(LE, info),
        sh_addralign: U64::new(LE, align),
        sh_entsize: U64::new(LE, entsize),
    }
}

pub(super) fn machine(arch: Arch) -> u16 {
    match arch {
        Arch::X86_64 => elf::EM_X86_64,
        Arch::Aarch64 => elf::EM_AARCH64,
    }
}

/// The largest data that stays in a read-only section on AArch64 (1 GiB: `.text`, `.rodata`
/// and the data together stay within `.eh_frame`'s ±2 GiB reach).
pub(super) const AARCH64_READ_ONLY_MAX: u64 = 1 << 30;

/// The largest data placed before `.bss` on AArch64 (as an orphan section, with no linker
/// script): code reaches `.bss` with ADRP (±4 GiB) across it, and
/// [`PROGRAM_HEADROOM`](super::PROGRAM_HEADROOM) is left for the rest of the program.
pub(super) const AARCH64_BEFORE_BSS_MAX: u64 = (4 << 30) - super::PROGRAM_HEADROOM;

/// The section of the data placed after `.bss` and all else loaded by [`linker_script`]
/// (AArch64 past [`AARCH64_BEFORE_BSS_MAX`]).
pub(super) const AFTER_BSS_SECTION: &str = ".webnn_weights.large";

pub(super) fn section(arch: Arch, data_len: u64) -> (&'static str, u64) {
    match arch {
        Arch::X86_64 => (
            ".lrodata.webnn_weights",
            u64::from(elf::SHF_ALLOC) | SHF_X86_64_LARGE,
        ),
        Arch::Aarch64 if data_len <= AARCH64_READ_ONLY_MAX => {
            (".rodata.webnn_weights", u64::from(elf::SHF_ALLOC))
        }
        Arch::Aarch64 if data_len <= AARCH64_BEFORE_BSS_MAX => {
            (".webnn_weights", u64::from(elf::SHF_ALLOC | elf::SHF_WRITE))
        }
        Arch::Aarch64 => (AFTER_BSS_SECTION, u64::from(elf::SHF_ALLOC)),
    }
}

/// The linker script the link needs for `data_len` bytes, if any: on AArch64 past
/// [`AARCH64_BEFORE_BSS_MAX`], one that places [`AFTER_BSS_SECTION`] after every allocated
/// section (before `.comment`, which every toolchain's objects carry and no loader maps).
/// `INSERT BEFORE` makes it augment the linker's default script instead of replacing it (GNU
/// ld and lld, given with `-T`).
pub(super) fn linker_script(arch: Arch, data_len: u64) -> Option<String> {
    match arch {
        Arch::Aarch64 if data_len > AARCH64_BEFORE_BSS_MAX => Some(format!(
            "/* webnn-weights: the embedded data after .bss and everything else loaded, past what\n   \
             the program's code addresses with ADRP (+-4 GiB); the code reaches the data\n   \
             through its GOT. */\n\
             SECTIONS\n{{\n  {AFTER_BSS_SECTION} : {{ *({AFTER_BSS_SECTION}) }}\n}}\n\
             INSERT BEFORE .comment;\n"
        )),
        Arch::X86_64 | Arch::Aarch64 => None,
    }
}

/// The data is cut into sections of this many bytes (the last takes the rest), so that a
/// linker copies it with all its threads: lld gives each input section to one task, and
/// one 256 MiB section was one thread's memcpy plus every page fault of the output file
/// (measured in docs/benchmarks.md, "Linking the data in pieces").
pub(super) const PIECE: u64 = 16 << 20;
/// At most this many pieces (section indices stay far below `SHN_LORESERVE`); larger data
/// gets larger pieces.
const MAX_PIECES: u64 = 4096;

/// A page: the first piece's alignment, so the data starts a page in the linked program
/// (and every piece does: pieces are whole pages). See [`data_offset`].
pub(super) const PAGE: u64 = 4096;
/// Where in a page of the library file the data starts (to within [`ALIGN`] bytes).
pub(super) const FILE_PAGE_OFFSET: u64 = PAGE / 2;

/// The length of every piece but the last, and how many pieces `data_len` bytes take.
pub(super) fn pieces(data_len: u64) -> (u64, u64) {
    let piece = PIECE.max(data_len.div_ceil(MAX_PIECES).next_multiple_of(PAGE));
    (piece, data_len.div_ceil(piece).max(1))
}

/// The data's offset in an object that starts `object_at` bytes into the library file: a
/// multiple of [`ALIGN`] after the ELF header, chosen so that the data starts
/// [`FILE_PAGE_OFFSET`] (plus less than [`ALIGN`]) bytes into a page of the file.
///
/// Why: a linker copies each piece from its mapping of the library (page-aligned, plus the
/// file offset) to its mapping of the output, where the piece starts a page. glibc's
/// `memcpy` picks its loop by the distance between the two modulo a page: under 256 bytes
/// (4K aliasing) it takes a loop with which every output page faults on its own (64,000
/// page faults for 250 MiB instead of 2,833 here), and a 256 MiB app relinks 0.02-0.06 s
/// slower; half a page apart it never does. Measured in docs/benchmarks.md, "Where the data
/// sits in the file".
pub(super) fn data_offset(object_at: u64) -> u64 {
    let at = (object_at + EHDR) % PAGE;
    EHDR + (PAGE + FILE_PAGE_OFFSET + at % ALIGN - at) % PAGE
}

/// An object, `object_at` bytes into its library file, whose `data_len` bytes start at
/// [`data_offset`] (zeros after the ELF header up to it), in one section per piece
/// ([`pieces`]), back to back: the first piece is aligned to a page and the others to
/// [`ALIGN`], pieces are whole pages, so no linker pads between them, and the sections of
/// one object keep their order in the output. The global `symbol` marks the start of the
/// first piece and the global `end_symbol` the end of the last one; both are zero-sized
/// (`st_size` 0, as Mach-O and COFF symbols, which have no size: the program declares both
/// `[u8; 0]`, takes only their addresses and checks on first use that they are `data_len`
/// apart). Each piece but the last has a `.rela` section with one `R_*_NONE`
/// relocation against the next piece: it writes nothing, but it keeps every piece alive in
/// `--gc-sections` as long as the first is (GNU ld, gold, lld and mold all follow it; mold
/// ignores section groups, GNU ld ignores `SHF_GNU_RETAIN` in a System V object), and it
/// makes every piece differ from every other for identical-code folding.
pub(super) fn object(
    arch: Arch,
    symbol: &str,
    end_symbol: &str,
    data_len: u64,
    object_at: u64,
) -> Framing {
    let part = Part {
        first: symbol,
        next: None,
        end: Some(end_symbol),
    };
    object_part(arch, data_len, part, data_len, object_at)
}

/// The symbols of one object of data cut over several (see [`object_part`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Part<'a> {
    /// The global symbol at the object's first byte of data: the data symbol in the first
    /// object, a symbol the previous object's chain names in the others.
    pub first: &'a str,
    /// The global symbol, defined by the next object, that this object's last piece names
    /// with an `R_*_NONE` relocation (so that the linker pulls that object out of the archive
    /// and keeps it); `None` in the last object.
    pub next: Option<&'a str>,
    /// The global symbol past the data, in the last object.
    pub end: Option<&'a str>,
}

/// An object holding `part_len` bytes of data (a run of whole pieces of the `data_len`
/// bytes' piece size, or the data's end) with the symbols of `part`, `object_at` bytes
/// into its library file; every global symbol is zero-sized. [`object()`] is the whole data
/// in one object.
pub(super) fn object_part(
    arch: Arch,
    data_len: u64,
    part: Part<'_>,
    part_len: u64,
    object_at: u64,
) -> Framing {
    let (section_name, section_flags) = section(arch, data_len);
    let (piece, _) = pieces(data_len);
    let n = part_len.div_ceil(piece).max(1);
    let rela_name = format!(".rela{section_name}");
    // Relocations: piece i to piece i + 1, and the last piece to the next object's symbol.
    let relas = n - 1 + u64::from(part.next.is_some());
    // String tables.
    let mut shstrtab = vec![0u8];
    let mut name = |s: &str| {
        let at = shstrtab.len() as u32;
        shstrtab.extend_from_slice(s.as_bytes());
        shstrtab.push(0);
        at
    };
    let n_data = name(section_name);
    let n_rela = if relas > 0 { name(&rela_name) } else { 0 };
    let n_stack = name(".note.GNU-stack");
    let n_symtab = name(".symtab");
    let n_strtab = name(".strtab");
    let n_shstrtab = name(".shstrtab");
    let mut strtab = vec![0u8];
    let mut string = |s: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let n_symbol = string(part.first);
    let n_end = part.end.map(&mut string);
    let n_next = part.next.map(&mut string);

    // Section indices: the null section, the pieces (1..=n), the `.rela` sections, the
    // stack note, the symbol table, the two string tables.
    let first_rela = 1 + n;
    let stack = first_rela + relas;
    let symtab = stack + 1;
    let section_count = symtab + 3;
    let section_count_u16 = u16::try_from(section_count).expect("at most 2 * 4096 + 4 sections");
    // Symbols: the null symbol, a section symbol for each piece after the first (what the
    // relocations name), then the globals: the first, the end, the next object's.
    let first_global = n;
    let next_index = first_global + 1 + u64::from(part.end.is_some());
    let symbol_count = next_index + u64::from(part.next.is_some());

    // File offsets inside the object.
    let data_off = data_offset(object_at);
    debug_assert_eq!(data_off % ALIGN, 0);
    let rela_off = (data_off + part_len).next_multiple_of(8);
    let symtab_off = rela_off + relas * RELA;
    let symtab_len = symbol_count * SYM;
    let strtab_off = symtab_off + symtab_len;
    let shstrtab_off = strtab_off + strtab.len() as u64;
    let shdr_off = (shstrtab_off + shstrtab.len() as u64).next_multiple_of(8);

    // ELF header.
    let header = FileHeader64::<LE> {
        e_ident: Ident {
            magic: elf::ELFMAG,
            class: elf::ELFCLASS64,
            data: elf::ELFDATA2LSB,
            version: elf::EV_CURRENT,
            os_abi: elf::ELFOSABI_SYSV,
            abi_version: 0,
            padding: [0; 7],
        },
        e_type: U16::new(LE, elf::ET_REL),
        e_machine: U16::new(LE, machine(arch)),
        e_version: U32::new(LE, u32::from(elf::EV_CURRENT)),
        e_entry: U64::new(LE, 0),
        e_phoff: U64::new(LE, 0),
        e_shoff: U64::new(LE, shdr_off),
        e_flags: U32::new(LE, 0),
        e_ehsize: U16::new(LE, EHDR as u16),
        e_phentsize: U16::new(LE, 0),
        e_phnum: U16::new(LE, 0),
        e_shentsize: U16::new(LE, SHDR as u16),
        e_shnum: U16::new(LE, section_count_u16),
        e_shstrndx: U16::new(LE, section_count_u16 - 1),
    };
    let mut head = bytes_of(&header).to_vec();
    head.resize(data_off as usize, 0);

    // After the data: padding, relocations, symbols, strings, section headers.
    let mut tail = vec![0u8; (rela_off - data_off - part_len) as usize];
    // Piece i - 1 refers to piece i through piece i's section symbol (index i), the last
    // piece to the next object's symbol.
    let targets = (1..n).chain(part.next.map(|_| next_index));
    for target in targets {
        let rela = Rela64::<LE> {
            r_offset: U64::new(LE, 0),
            // The symbol, type NONE (0).
            r_info: U64::new(LE, target << 32),
            r_addend: I64::new(LE, 0),
        };
        tail.extend_from_slice(bytes_of(&rela));
    }
    let mut sym = |name: u32, info: u8, shndx: u64, value: u64, size: u64| {
        let shndx = u16::try_from(shndx).expect("piece indices are below 2 * 4096");
        let sym = Sym64::<LE> {
            st_name: U32::new(LE, name),
            st_info: info,
            st_other: elf::STV_DEFAULT,
            st_shndx: U16::new(LE, shndx),
            st_value: U64::new(LE, value),
            st_size: U64::new(LE, size),
        };
        tail.extend_from_slice(bytes_of(&sym));
    };
    sym(0, 0, 0, 0, 0); // the null symbol
    for i in 1..n {
        sym(0, (elf::STB_LOCAL << 4) | elf::STT_SECTION, 1 + i, 0, 0);
    }
    let global = (elf::STB_GLOBAL << 4) | elf::STT_OBJECT;
    sym(n_symbol, global, 1, 0, 0);
    let last_len = part_len - (n - 1) * piece;
    if let Some(n_end) = n_end {
        sym(n_end, global, n, last_len, 0);
    }
    if let Some(n_next) = n_next {
        // Undefined: the next object defines it.
        sym(n_next, elf::STB_GLOBAL << 4, 0, 0, 0);
    }
    tail.extend_from_slice(&strtab);
    tail.extend_from_slice(&shstrtab);
    tail.resize((shdr_off - data_off - part_len) as usize, 0);

    // name, type, flags, offset, size, link, info, alignment, entry size
    let mut headers: Vec<SectionHeader64<LE>> = Vec::with_capacity(section_count as usize);
    headers.push(section_header(0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0));
    for i in 0..n {
        let len = if i + 1 == n { last_len } else { piece };
        let offset = data_off + i * piece;
        let align = if i == 0 { PAGE } else { ALIGN };
        headers.push(section_header(
            n_data,
            elf::SHT_PROGBITS,
            section_flags,
            offset,
            len,
            0,
            0,
            align,
            0,
        ));
    }
    for i in 0..relas {
        // sh_link: the symbol table; sh_info: the piece the relocation belongs to.
        let info = u32::try_from(1 + i).expect("piece indices are below 2 * 4096");
        let offset = rela_off + i * RELA;
        let flags = u64::from(elf::SHF_INFO_LINK);
        headers.push(section_header(
            n_rela,
            elf::SHT_RELA,
            flags,
            offset,
            RELA,
            symtab as u32,
            info,
            8,
            RELA,
        ));
    }
    headers.push(section_header(
        n_stack,
        elf::SHT_PROGBITS,
        0,
        data_off,
        0,
        0,
        0,
        1,
        0,
    ));
    // sh_link: the string table; sh_info: index of the first global symbol.
    headers.push(section_header(
        n_symtab,
        elf::SHT_SYMTAB,
        0,
        symtab_off,
        symtab_len,
        symtab as u32 + 1,
        first_global as u32,
        8,
        SYM,
    ));
    headers.push(section_header(
        n_strtab,
        elf::SHT_STRTAB,
        0,
        strtab_off,
        strtab.len() as u64,
        0,
        0,
        1,
        0,
    ));
    headers.push(section_header(
        n_shstrtab,
        elf::SHT_STRTAB,
        0,
        shstrtab_off,
        shstrtab.len() as u64,
        0,
        0,
        1,
        0,
    ));
    debug_assert_eq!(headers.len() as u64, section_count);
    for header in &headers {
        tail.extend_from_slice(bytes_of(header));
    }
    debug_assert_eq!(
        data_off + part_len + tail.len() as u64,
        shdr_off + section_count * SHDR
    );
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
        assert_eq!(
            section(Arch::Aarch64, AARCH64_BEFORE_BSS_MAX).0,
            ".webnn_weights"
        );
        assert_eq!(linker_script(Arch::Aarch64, AARCH64_BEFORE_BSS_MAX), None);
        // Past the reach of ADRP across it: read-only again, after `.bss` by a script.
        let (name, flags) = section(Arch::Aarch64, AARCH64_BEFORE_BSS_MAX + 64);
        assert_eq!(name, AFTER_BSS_SECTION);
        assert_eq!(flags, u64::from(elf::SHF_ALLOC));
        let script = linker_script(Arch::Aarch64, AARCH64_BEFORE_BSS_MAX + 64).unwrap();
        assert!(script.contains(".webnn_weights.large : { *(.webnn_weights.large) }"));
        assert!(
            script.trim_end().ends_with("INSERT BEFORE .comment;"),
            "{script}"
        );
        assert_eq!(linker_script(Arch::X86_64, 1 << 40), None);
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
            let framing = object(arch, "sym", "sym_end", data.len() as u64, 0);
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

    #[test]
    fn pieces_cover_the_data_in_order() {
        assert_eq!(pieces(0), (PIECE, 1));
        assert_eq!(pieces(64), (PIECE, 1));
        assert_eq!(pieces(PIECE), (PIECE, 1));
        assert_eq!(pieces(PIECE + 64), (PIECE, 2));
        assert_eq!(pieces(3 * PIECE), (PIECE, 3));
        // Past MAX_PIECES pieces of PIECE bytes the pieces grow, staying whole pages.
        let huge = (1 << 40) + 64;
        let (piece, n) = pieces(huge);
        assert!(
            n <= MAX_PIECES && piece % PAGE == 0 && piece * n >= huge,
            "{piece} {n}"
        );
        assert!(piece * (n - 1) < huge);
    }

    /// Wherever the object starts in its library, the data starts half a page into a page
    /// of the file (to within the alignment the object keeps), after the ELF header.
    #[test]
    fn the_data_starts_half_a_page_into_the_file() {
        for object_at in (0..2 * PAGE).step_by(2) {
            let off = data_offset(object_at);
            assert_eq!(off % ALIGN, 0, "{object_at}");
            assert!((EHDR..EHDR + PAGE).contains(&off), "{object_at}: {off}");
            let in_page = (object_at + off) % PAGE;
            assert!(
                (FILE_PAGE_OFFSET..FILE_PAGE_OFFSET + ALIGN).contains(&in_page),
                "{object_at}: {in_page}"
            );
        }
        // The object carries zeros up to it, and its sections say so.
        for object_at in [0, 172, 4095] {
            let data = [9u8; 100];
            let framing = object(Arch::X86_64, "s", "s_end", 100, object_at);
            assert_eq!(framing.head.len() as u64, data_offset(object_at));
            assert!(framing.head[EHDR as usize..].iter().all(|&b| b == 0));
            let mut bytes = framing.head;
            bytes.extend_from_slice(&data);
            bytes.extend_from_slice(&framing.tail);
            let obj = ElfFile64::<object::Endianness>::parse(&*bytes).unwrap();
            let section = obj.section_by_name(".lrodata.webnn_weights").unwrap();
            assert_eq!(section.data().unwrap(), &data[..]);
            assert_eq!(section.align(), PAGE);
        }
    }

    /// Data of two whole pieces and part of a third: three sections back to back in the
    /// file, the symbol at the first spanning all, the end symbol past the last byte, and a
    /// `NONE` relocation from each piece to the next.
    #[test]
    fn data_in_several_sections_chained_by_relocations() {
        use object::{ObjectSymbol, RelocationTarget, SymbolSection};
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let len = 2 * PIECE as usize + 4160;
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let framing = object(arch, "sym", "sym_end", len as u64, 0);
            let mut bytes = framing.head;
            bytes.extend_from_slice(&data);
            bytes.extend_from_slice(&framing.tail);
            let obj = ElfFile64::<object::Endianness>::parse(&*bytes).unwrap();
            let endian = obj.endian();
            let (name, _) = section(arch, len as u64);
            let pieces: Vec<_> = obj.sections().filter(|s| s.name() == Ok(name)).collect();
            assert_eq!(pieces.len(), 3);
            let mut joined = Vec::new();
            for (i, piece) in pieces.iter().enumerate() {
                assert_eq!(piece.align(), if i == 0 { PAGE } else { ALIGN });
                let (offset, size) = piece.file_range().unwrap();
                assert_eq!(offset, data_offset(0) + i as u64 * PIECE);
                assert_eq!(size, if i < 2 { PIECE } else { 4160 });
                joined.extend_from_slice(piece.data().unwrap());
                let relocations: Vec<_> = piece.relocations().collect();
                if i == 2 {
                    assert!(relocations.is_empty());
                    continue;
                }
                assert_eq!(relocations.len(), 1);
                let (at, reloc) = &relocations[0];
                assert_eq!(*at, 0);
                assert_eq!(reloc.size(), 0, "a NONE relocation writes nothing");
                let RelocationTarget::Symbol(target) = reloc.target() else {
                    panic!("relocation without a symbol")
                };
                let target = obj.symbol_by_index(target).unwrap();
                assert_eq!(
                    target.section(),
                    SymbolSection::Section(pieces[i + 1].index())
                );
            }
            assert_eq!(joined, data);
            // The raw relocation type is NONE (0) on both machines.
            for sh in obj.elf_section_table().iter() {
                if let Some((relas, _)) = sh.rela(endian, obj.data()).unwrap() {
                    assert!(relas.iter().all(|r| r.r_type(endian, false) == 0));
                }
            }
            let sym = obj.symbol_by_name("sym").unwrap();
            assert!(sym.is_global() && sym.is_definition());
            assert_eq!(sym.section(), SymbolSection::Section(pieces[0].index()));
            assert_eq!((sym.address(), sym.size()), (0, 0));
            let end = obj.symbol_by_name("sym_end").unwrap();
            assert!(end.is_global() && end.is_definition());
            assert_eq!(end.section(), SymbolSection::Section(pieces[2].index()));
            assert_eq!((end.address(), end.size()), (4160, 0));
        }
    }
}
