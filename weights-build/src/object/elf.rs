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
    let layout = PartShape::new(piece, part, part_len);
    let names = Names::new(section_name, layout.relas > 0, part);
    let offsets = Offsets::new(&layout, &names, object_at);

    let mut head = bytes_of(&file_header(arch, &layout, &offsets)).to_vec();
    head.resize(offsets.data as usize, 0);
    // After the data: padding, relocations, symbols, strings, section headers.
    let mut tail = vec![0u8; (offsets.rela - offsets.data - part_len) as usize];
    relocations(&mut tail, &layout);
    symbols(&mut tail, &layout, &names);
    tail.extend_from_slice(&names.strtab);
    tail.extend_from_slice(&names.shstrtab);
    tail.resize((offsets.headers - offsets.data - part_len) as usize, 0);
    let headers = section_headers(&layout, &names, &offsets, section_flags);
    debug_assert_eq!(headers.len() as u64, layout.section_count);
    for header in &headers {
        tail.extend_from_slice(bytes_of(header));
    }
    debug_assert_eq!(
        offsets.data + part_len + tail.len() as u64,
        offsets.headers + layout.section_count * SHDR
    );
    Framing { head, tail }
}

/// What one object of [`object_part`] holds: its pieces, sections and symbols.
struct PartShape {
    /// The length of every piece but the last.
    piece: u64,
    /// How many pieces (sections of data) the object has.
    pieces: u64,
    /// The data's length, and the last piece's.
    part_len: u64,
    last_len: u64,
    /// How many relocations, each in its own `.rela` section: piece i to piece i + 1, and
    /// the last piece to the next object's symbol.
    relas: u64,
    /// Section indices: the null section, the pieces (1..=pieces), the `.rela` sections,
    /// the stack note, the symbol table (`symtab`), the two string tables.
    symtab: u64,
    section_count: u64,
    /// Symbols: the null symbol, a section symbol for each piece after the first (what the
    /// relocations name), then the globals from `first_global`: the first, the end, the
    /// next object's (`next_index`).
    first_global: u64,
    next_index: u64,
    symbol_count: u64,
    /// Whether the last piece names the next object's symbol.
    has_next: bool,
}

impl PartShape {
    fn new(piece: u64, part: Part<'_>, part_len: u64) -> PartShape {
        let pieces = part_len.div_ceil(piece).max(1);
        let has_next = part.next.is_some();
        let relas = pieces - 1 + u64::from(has_next);
        let stack = 1 + pieces + relas;
        let symtab = stack + 1;
        let first_global = pieces;
        let next_index = first_global + 1 + u64::from(part.end.is_some());
        PartShape {
            piece,
            pieces,
            part_len,
            last_len: part_len - (pieces - 1) * piece,
            relas,
            symtab,
            section_count: symtab + 3,
            first_global,
            next_index,
            symbol_count: next_index + u64::from(has_next),
            has_next,
        }
    }
}

/// The object's two string tables, and where each name is in them.
struct Names {
    /// Section names.
    shstrtab: Vec<u8>,
    /// Symbol names.
    strtab: Vec<u8>,
    /// Offsets in `shstrtab`: the data sections', the `.rela` sections' (0 without any),
    /// the stack note's, the symbol table's and the two string tables'.
    data: u32,
    rela: u32,
    stack: u32,
    symtab: u32,
    strtab_name: u32,
    shstrtab_name: u32,
    /// Offsets in `strtab`: the symbols of [`Part`].
    first: u32,
    end: Option<u32>,
    next: Option<u32>,
}

impl Names {
    fn new(section_name: &str, with_rela: bool, part: Part<'_>) -> Names {
        let mut shstrtab = vec![0u8];
        let data = add_name(&mut shstrtab, section_name);
        let rela = if with_rela {
            add_name(&mut shstrtab, &format!(".rela{section_name}"))
        } else {
            0
        };
        let stack = add_name(&mut shstrtab, ".note.GNU-stack");
        let symtab = add_name(&mut shstrtab, ".symtab");
        let strtab_name = add_name(&mut shstrtab, ".strtab");
        let shstrtab_name = add_name(&mut shstrtab, ".shstrtab");
        let mut strtab = vec![0u8];
        let first = add_name(&mut strtab, part.first);
        let end = part.end.map(|end| add_name(&mut strtab, end));
        let next = part.next.map(|next| add_name(&mut strtab, next));
        Names {
            shstrtab,
            strtab,
            data,
            rela,
            stack,
            symtab,
            strtab_name,
            shstrtab_name,
            first,
            end,
            next,
        }
    }
}

/// Appends `name` and its NUL to the string table `table`; where it starts.
fn add_name(table: &mut Vec<u8>, name: &str) -> u32 {
    let at = table.len() as u32;
    table.extend_from_slice(name.as_bytes());
    table.push(0);
    at
}

/// File offsets inside the object.
struct Offsets {
    /// The data, at [`data_offset`].
    data: u64,
    /// After the data: the relocations, the symbol table, the two string tables, the
    /// section headers.
    rela: u64,
    symtab: u64,
    strtab: u64,
    shstrtab: u64,
    headers: u64,
}

impl Offsets {
    fn new(layout: &PartShape, names: &Names, object_at: u64) -> Offsets {
        let data = data_offset(object_at);
        debug_assert_eq!(data % ALIGN, 0);
        let rela = (data + layout.part_len).next_multiple_of(8);
        let symtab = rela + layout.relas * RELA;
        let strtab = symtab + layout.symbol_count * SYM;
        let shstrtab = strtab + names.strtab.len() as u64;
        let headers = (shstrtab + names.shstrtab.len() as u64).next_multiple_of(8);
        Offsets {
            data,
            rela,
            symtab,
            strtab,
            shstrtab,
            headers,
        }
    }
}

/// The ELF header of a relocatable object for `arch`.
fn file_header(arch: Arch, layout: &PartShape, offsets: &Offsets) -> FileHeader64<LE> {
    let section_count = u16::try_from(layout.section_count).expect("at most 2 * 4096 + 4 sections");
    FileHeader64::<LE> {
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
        e_shoff: U64::new(LE, offsets.headers),
        e_flags: U32::new(LE, 0),
        e_ehsize: U16::new(LE, EHDR as u16),
        e_phentsize: U16::new(LE, 0),
        e_phnum: U16::new(LE, 0),
        e_shentsize: U16::new(LE, SHDR as u16),
        e_shnum: U16::new(LE, section_count),
        e_shstrndx: U16::new(LE, section_count - 1),
    }
}

/// Appends the relocations, type NONE: piece i - 1 names piece i through piece i's
/// section symbol (index i), the last piece the next object's symbol.
fn relocations(tail: &mut Vec<u8>, layout: &PartShape) {
    let targets = (1..layout.pieces).chain(layout.has_next.then_some(layout.next_index));
    for target in targets {
        let rela = Rela64::<LE> {
            r_offset: U64::new(LE, 0),
            // The symbol, type NONE (0).
            r_info: U64::new(LE, target << 32),
            r_addend: I64::new(LE, 0),
        };
        tail.extend_from_slice(bytes_of(&rela));
    }
}

/// Appends the symbol table: the null symbol, the pieces' section symbols, the globals.
fn symbols(tail: &mut Vec<u8>, layout: &PartShape, names: &Names) {
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
    for i in 1..layout.pieces {
        sym(0, (elf::STB_LOCAL << 4) | elf::STT_SECTION, 1 + i, 0, 0);
    }
    let global = (elf::STB_GLOBAL << 4) | elf::STT_OBJECT;
    sym(names.first, global, 1, 0, 0);
    if let Some(end) = names.end {
        sym(end, global, layout.pieces, layout.last_len, 0);
    }
    if let Some(next) = names.next {
        // Undefined: the next object defines it.
        sym(next, elf::STB_GLOBAL << 4, 0, 0, 0);
    }
}

/// The section headers, in the order of [`PartShape`]'s section indices.
fn section_headers(
    layout: &PartShape,
    names: &Names,
    offsets: &Offsets,
    section_flags: u64,
) -> Vec<SectionHeader64<LE>> {
    // name, type, flags, offset, size, link, info, alignment, entry size
    let mut headers: Vec<SectionHeader64<LE>> = Vec::with_capacity(layout.section_count as usize);
    headers.push(section_header(0, elf::SHT_NULL, 0, 0, 0, 0, 0, 0, 0));
    for i in 0..layout.pieces {
        let len = if i + 1 == layout.pieces {
            layout.last_len
        } else {
            layout.piece
        };
        let offset = offsets.data + i * layout.piece;
        let align = if i == 0 { PAGE } else { ALIGN };
        headers.push(section_header(
            names.data,
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
    for i in 0..layout.relas {
        // sh_link: the symbol table; sh_info: the piece the relocation belongs to.
        let info = u32::try_from(1 + i).expect("piece indices are below 2 * 4096");
        let offset = offsets.rela + i * RELA;
        let flags = u64::from(elf::SHF_INFO_LINK);
        headers.push(section_header(
            names.rela,
            elf::SHT_RELA,
            flags,
            offset,
            RELA,
            layout.symtab as u32,
            info,
            8,
            RELA,
        ));
    }
    headers.extend(table_headers(layout, names, offsets));
    headers
}

/// The headers of the sections after the relocations: the stack note, the symbol table
/// and the two string tables.
fn table_headers(layout: &PartShape, names: &Names, offsets: &Offsets) -> [SectionHeader64<LE>; 4] {
    [
        section_header(
            names.stack,
            elf::SHT_PROGBITS,
            0,
            offsets.data,
            0,
            0,
            0,
            1,
            0,
        ),
        // sh_link: the string table; sh_info: index of the first global symbol.
        section_header(
            names.symtab,
            elf::SHT_SYMTAB,
            0,
            offsets.symtab,
            layout.symbol_count * SYM,
            layout.symtab as u32 + 1,
            layout.first_global as u32,
            8,
            SYM,
        ),
        section_header(
            names.strtab_name,
            elf::SHT_STRTAB,
            0,
            offsets.strtab,
            names.strtab.len() as u64,
            0,
            0,
            1,
            0,
        ),
        section_header(
            names.shstrtab_name,
            elf::SHT_STRTAB,
            0,
            offsets.shstrtab,
            names.shstrtab.len() as u64,
            0,
            0,
            1,
            0,
        ),
    ]
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
    /// file, the zero-sized symbol at the start of the first, the zero-sized end symbol past
    /// the last byte, and a `NONE` relocation from each piece to the next.
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
