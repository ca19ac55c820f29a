//! Static libraries holding one relocatable object with the data in aligned sections
//! (Mach-O and COFF: one, 64-byte aligned; ELF: pieces, the first page-aligned; past 8 GiB
//! several objects in several archive members), a global symbol at its start and one just
//! past its end, for ELF, Mach-O and COFF.
//!
//! Written as a stream: [`ArchiveFraming`] holds the bytes before and after the section data (archive
//! headers, symbol index, object headers; symbol and string tables), and those between
//! members ([`Gap`]s, written by [`Gapped`]); the caller writes the data between them, so
//! tensor bytes go from the sidecar to the archive (by `copy_file_range` where there is no
//! gap) and are never held in memory.
//!
//! One file per object format ([`elf`], [`macho`], [`coff`]), one for the archive flavours
//! ([`archive`]); the table of supported targets, the symbol's spelling and the size limits
//! are decided here, once. Every header carries zero time stamps, user and group ids and a
//! fixed mode, so identical inputs give identical bytes.
//!
//! **Why not `object::write`.** The headers are `object`'s typed structs (`object::elf`,
//! `object::macho`, `object::pe`, `object::archive`), written by these files; `object`'s
//! writers are not used, for three reasons checked against `object` 0.37.3:
//! - Mach-O has no streaming writer there: only `write::Object`, whose sections hold their
//!   bytes (`set_section_data`, `append_section_data`), so up to 4 GiB of data would sit in
//!   memory (`append_section_bss` makes zero fill, not data).
//! - The build helper rewrites only the changed bytes of the library in place
//!   (`write::in_place`), which needs the framing computed without the data: the bytes before,
//!   between and after the data as above. `write::elf::Writer` and `write::coff::Writer`
//!   write headers, data and tables in file order through one buffer.
//! - Their feature `write_std` brings 7 crates the build helper does not otherwise compile
//!   (cfg-if, crc32fast, equivalent, foldhash 0.1, hashbrown 0.15 and 0.17, indexmap):
//!   24 crates in its normal dependency tree would become 31 (`cargo tree -p
//!   webnn-weights-build -e normal`).

mod archive;
mod coff;
mod elf;
mod macho;

use crate::target::{Endian, ObjectFormat, Target};
use archive::Flavour;

/// The section's alignment, which is also the constants' alignment.
pub(crate) const ALIGN: u64 = webnn_weights_artifacts::DATA_ALIGN;

/// Mach-O and COFF: the zero bytes the section holds after the end symbol, so that the end
/// symbol lies inside its one section rather than at its very end, where nothing in either
/// format says which section a linker attributes it to (one alignment unit: the section's
/// size stays a multiple of [`ALIGN`]). ELF's end symbol is at the end of the last piece,
/// where its linkers are checked to keep it (`bench/platforms.sh`).
pub(crate) const END_PAD: u64 = ALIGN;

/// The two architectures the static-library path writes objects for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arch {
    X86_64,
    Aarch64,
}

/// An object format and the flavour of its surroundings (archive, symbol spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// ELF in a GNU archive (GNU ld, gold, lld, mold).
    Elf,
    /// Mach-O in a Darwin (BSD) archive (ld64, ld64.lld); C symbols get a `_` prefix.
    MachO,
    /// COFF in a GNU archive (MinGW's GNU ld, or lld in MinGW mode).
    CoffGnu,
    /// COFF in a COFF archive with both linker members (link.exe, lld-link), named `.lib`.
    CoffMsvc,
}

/// What one target's static library is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObjectTarget {
    pub(crate) kind: Kind,
    pub(crate) arch: Arch,
}

/// The most data one target's library can hold, and why: a hard limit of the format or of
/// the code's reach. [`ObjectTarget::archive_framing`] returns it as the error for data
/// past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataLimit {
    /// The largest data length (a multiple of [`ALIGN`]) the writer accepts.
    pub(crate) limit: u64,
    /// Which field or tool sets the limit.
    pub(crate) reason: &'static str,
}

/// What the size limits leave for the rest of a program (code, other data) where the data
/// sits between code and what code references.
pub(crate) const PROGRAM_HEADROOM: u64 = 128 << 20;

/// The largest member an `ar` archive header can describe: its size field is ten decimal
/// digits (the same in the GNU, BSD and COFF flavours).
const AR_MEMBER_MAX: u64 = 9_999_999_999;

/// ELF data past this many bytes goes in several archive members of at most this much data
/// each (whole pieces), so that no member passes [`AR_MEMBER_MAX`].
pub(crate) const MEMBER_DATA_MAX: u64 = 8 << 30;

/// The largest ELF data: the size checked with real linkers in several members
/// (`bench/platforms.sh`).
const ELF_MAX: u64 = 16 << 30;

impl ObjectTarget {
    /// The static-library writer for `target`, or `None` when the target keeps the portable
    /// `include_bytes!` path. The table (documented in docs/embedding.md, "Platforms"):
    ///
    /// | target | object | archive |
    /// |---|---|---|
    /// | x86-64 / AArch64, little-endian, 64-bit ELF OSes (Linux, Android, BSDs, illumos, Fuchsia) | ELF | GNU |
    /// | `x86_64-apple-darwin`, `aarch64-apple-darwin` | Mach-O | Darwin |
    /// | `x86_64-pc-windows-gnu` | COFF x86-64 | GNU |
    /// | `x86_64-pc-windows-msvc`, `aarch64-pc-windows-msvc` | COFF | COFF (`.lib`) |
    pub(crate) fn for_target(target: &Target) -> Option<ObjectTarget> {
        if target.endian() != Endian::Little || target.pointer_width() != 64 {
            return None;
        }
        let arch = match target.arch() {
            "x86_64" => Arch::X86_64,
            "aarch64" => Arch::Aarch64,
            _ => return None,
        };
        let kind = match target.object_format() {
            ObjectFormat::Elf => {
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
                if !ELF_OSES.contains(&target.os()) {
                    return None;
                }
                Kind::Elf
            }
            ObjectFormat::MachO if target.os() == "macos" => Kind::MachO,
            ObjectFormat::Coff if target.os() == "windows" => match (target.env(), arch) {
                ("msvc", _) => Kind::CoffMsvc,
                // aarch64-pc-windows-gnullvm is not checked with a real linker here.
                ("gnu", Arch::X86_64) => Kind::CoffGnu,
                _ => return None,
            },
            _ => return None,
        };
        Some(ObjectTarget { kind, arch })
    }

    /// The name of the symbol in the object for the name that Rust code declares with
    /// `#[link_name = "…"]`: what rustc (LLVM's name mangler for the target's data layout)
    /// references. Mach-O prefixes every C-level symbol with `_` (data layout `m:o`); ELF and
    /// 64-bit COFF (`m:e`, `m:w`) use the name as written. Checked against rustc's own
    /// output by `bench/platforms.sh`.
    pub(crate) fn object_symbol(self, link_name: &str) -> String {
        match self.kind {
            Kind::MachO => format!("_{link_name}"),
            Kind::Elf | Kind::CoffGnu | Kind::CoffMsvc => link_name.to_string(),
        }
    }

    /// The archive's file name for the library `name` as rustc's linker invocation searches
    /// it for `-l static=name`: `name.lib` for MSVC, `libname.a` elsewhere.
    pub(crate) fn library_file(self, name: &str) -> String {
        match self.kind {
            Kind::CoffMsvc => format!("{name}.lib"),
            Kind::Elf | Kind::MachO | Kind::CoffGnu => format!("lib{name}.a"),
        }
    }

    /// The format's name for messages.
    pub(crate) fn format_name(self) -> &'static str {
        match self.kind {
            Kind::Elf => "ELF",
            Kind::MachO => "Mach-O",
            Kind::CoffGnu | Kind::CoffMsvc => "COFF",
        }
    }

    fn flavour(self) -> Flavour {
        match self.kind {
            Kind::Elf | Kind::CoffGnu => Flavour::Gnu,
            Kind::MachO => Flavour::Darwin,
            Kind::CoffMsvc => Flavour::Coff,
        }
    }

    /// The largest data length this writer accepts (a multiple of [`ALIGN`]), and why.
    ///
    /// Besides the formats' own fields, the reach of the references a program makes across
    /// the data sets a limit where linkers place the data between code and what the code
    /// addresses with 32-bit PC-relative offsets (±2 GiB on x86-64) or ADRP (±4 GiB on
    /// AArch64); [`PROGRAM_HEADROOM`] is left for the rest of the program. ELF places the
    /// data past all of it (x86-64: `.lrodata`; AArch64 past 4 GiB - 128 MiB: after `.bss`,
    /// by [`ObjectTarget::linker_script`]), so only the archive member's size field is
    /// left. Measured with real linkers by `bench/platforms.sh` (docs/embedding.md, "Size
    /// limits").
    pub(crate) fn data_limit(self) -> DataLimit {
        const GIB: u64 = 1 << 30;
        let (limit, reason) = match (self.kind, self.arch) {
            // x86-64: `.lrodata` is placed apart from what the code addresses; AArch64: past
            // 4 GiB - 128 MiB the data goes after `.bss` (elf.rs, `linker_script`).
            // Past one member's ten-digit size field the data goes in several members.
            (Kind::Elf, _) => (
                ELF_MAX,
                "the largest size checked with real linkers (16 GiB, in archive members of 8 GiB)",
            ),
            (Kind::MachO, _) => (
                4 * GIB - PROGRAM_HEADROOM,
                "a Mach-O file stops at 4 GiB: the linker puts __LINKEDIT after the data, and its offsets are 32-bit",
            ),
            (Kind::CoffGnu, _) => (
                2 * GIB - PROGRAM_HEADROOM,
                "MinGW's GNU ld places the section before .bss, which x86-64 code reaches with 32-bit PC-relative offsets (±2 GiB)",
            ),
            (Kind::CoffMsvc, _) => (
                2 * GIB - PROGRAM_HEADROOM,
                "link.exe refuses images over 2 GiB (LNK1248); COFF's section size is 32-bit",
            ),
        };
        let limit = match self.kind {
            Kind::CoffGnu | Kind::CoffMsvc => limit.min(coff::MAX_DATA_LEN),
            Kind::Elf | Kind::MachO => limit,
        };
        // The largest data whose whole member still fits the archive header (ELF: each of
        // several members holds at most MEMBER_DATA_MAX).
        let overhead = self.object_overhead();
        let ar_limit = match self.kind {
            Kind::Elf => u64::MAX,
            Kind::MachO | Kind::CoffGnu | Kind::CoffMsvc => AR_MEMBER_MAX.saturating_sub(overhead),
        };
        let (limit, reason) = if limit <= ar_limit {
            (limit, reason)
        } else {
            (
                ar_limit,
                "the archive member size field (10 decimal digits)",
            )
        };
        DataLimit {
            limit: limit - limit % ALIGN,
            reason,
        }
    }

    /// The object's bytes besides the data (an upper bound used for the archive's limit:
    /// computed for the largest member, since ELF adds headers per piece of data).
    fn object_overhead(self) -> u64 {
        // ELF: the headers of up to 4096 pieces, and the padding that places the data in a
        // page of the file (less than a page wherever the object starts).
        let (largest, padding) = match self.kind {
            Kind::Elf => (AR_MEMBER_MAX, elf::PAGE),
            // One section whatever the size.
            Kind::MachO | Kind::CoffGnu | Kind::CoffMsvc => (0, 0),
        };
        let framing = self.object("webnn_weights_data_0000000000000000", largest, 0);
        // The member name of the Darwin flavour is part of the member; 128 covers it.
        (framing.head.len() + framing.tail.len()) as u64 + 128 + padding
    }

    /// The linker script a link of `data_len` bytes needs besides the library, if any (ELF on
    /// AArch64 past 4 GiB - 128 MiB: it places the data after `.bss`; see [`elf`]). The
    /// build script passes it with `-T`.
    pub(crate) fn linker_script(self, data_len: u64) -> Option<String> {
        match self.kind {
            Kind::Elf => elf::linker_script(self.arch, data_len),
            Kind::MachO | Kind::CoffGnu | Kind::CoffMsvc => None,
        }
    }

    /// The name Rust code declares for the symbol just past the data of `link_name` (every
    /// format has one: the program checks on first use that it is the data's length after
    /// the data's symbol).
    pub(crate) fn end_link_name(self, link_name: &str) -> String {
        format!("{link_name}_end")
    }

    /// The object for `link_name`, which starts `object_at` bytes into its library file.
    fn object(self, link_name: &str, data_len: u64, object_at: u64) -> Framing {
        let symbol = self.object_symbol(link_name);
        let end = self.object_symbol(&self.end_link_name(link_name));
        match self.kind {
            Kind::Elf => elf::object(self.arch, &symbol, &end, data_len, object_at),
            Kind::MachO => macho::object(self.arch, &symbol, &end, data_len),
            Kind::CoffGnu | Kind::CoffMsvc => coff::object(self.arch, &symbol, &end, data_len),
        }
    }

    /// The bytes of a static library whose object defines `link_name` (spelled for the
    /// format) as `data_len` bytes, without the data; or the limit `data_len` is past,
    /// decided before anything is written.
    pub(crate) fn archive_framing(
        self,
        link_name: &str,
        data_len: u64,
    ) -> Result<ArchiveFraming, DataLimit> {
        let max = self.data_limit();
        if data_len > max.limit {
            return Err(max);
        }
        let symbol = self.object_symbol(link_name);
        if self.kind == Kind::Elf && data_len > MEMBER_DATA_MAX {
            return Ok(self.elf_members(link_name, data_len));
        }
        let object_at = archive::object_offset(self.flavour(), &symbol);
        let object = self.object(link_name, data_len, object_at);
        Ok(archive::wrap(self.flavour(), &symbol, object, data_len))
    }

    /// ELF data past [`MEMBER_DATA_MAX`]: members of whole pieces, at most that much data
    /// each, chained (`<symbol>_part<k>` starts member `k`, which member `k - 1`'s last piece
    /// names), the data symbol in the first and the end symbol in the last.
    fn elf_members(self, link_name: &str, data_len: u64) -> ArchiveFraming {
        self.elf_members_of(link_name, data_len, MEMBER_DATA_MAX)
    }

    /// [`ObjectTarget::elf_members`] with members of at most `member_max` bytes of data.
    fn elf_members_of(self, link_name: &str, data_len: u64, member_max: u64) -> ArchiveFraming {
        let symbol = self.object_symbol(link_name);
        let end = self.object_symbol(&self.end_link_name(link_name));
        let (piece, _) = elf::pieces(data_len);
        let per_member = (member_max / piece).max(1) * piece;
        let count = data_len.div_ceil(per_member) as usize;
        let part_symbol = |k: usize| match k {
            0 => symbol.clone(),
            k => format!("{symbol}_part{k}"),
        };
        let members: Vec<archive::Member> = (0..count)
            .map(|k| {
                let mut symbols = vec![part_symbol(k)];
                if k + 1 == count {
                    symbols.push(end.clone());
                }
                let data = per_member.min(data_len - k as u64 * per_member);
                archive::Member {
                    symbols,
                    data_len: data,
                }
            })
            .collect();
        archive::wrap_members(&members, |k, object_at| {
            let first = part_symbol(k);
            let next = (k + 1 < count).then(|| part_symbol(k + 1));
            let part = elf::Part {
                first: &first,
                next: next.as_deref(),
                end: (k + 1 == count).then_some(end.as_str()),
            };
            elf::object_part(self.arch, data_len, part, members[k].data_len, object_at)
        })
    }
}

/// An object file around its section data: `head`, then the data, then `tail`.
pub(crate) struct Framing {
    /// Everything before the data (its length is a multiple of [`ALIGN`]).
    pub(crate) head: Vec<u8>,
    /// Everything after it.
    pub(crate) tail: Vec<u8>,
}

/// The bytes around the section data of one archive.
#[derive(Debug)]
pub(crate) struct ArchiveFraming {
    /// Archive header, symbol index, member header and the object's head.
    pub(crate) prefix: Vec<u8>,
    /// Bytes inside the data's stream, where it is cut over several archive members (ELF
    /// past [`MEMBER_DATA_MAX`]), in order; empty otherwise.
    pub(crate) gaps: Vec<Gap>,
    /// The object's tail and the archive's padding.
    pub(crate) suffix: Vec<u8>,
}

/// Bytes written before the data's byte `at` (one object's tail, the next member's header
/// and object head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gap {
    /// The offset in the data before which the bytes go.
    pub(crate) at: u64,
    /// The bytes.
    pub(crate) bytes: Vec<u8>,
}

impl ArchiveFraming {
    /// The bytes of the file besides the data.
    pub(crate) fn framing_len(&self) -> u64 {
        let gaps: usize = self.gaps.iter().map(|g| g.bytes.len()).sum();
        (self.prefix.len() + gaps + self.suffix.len()) as u64
    }

    /// A writer for the data that puts the [`ArchiveFraming::gaps`] where they belong.
    pub(crate) fn gapped<W: std::io::Write>(&self, inner: W) -> Gapped<'_, W> {
        Gapped {
            inner,
            gaps: &self.gaps,
            at: 0,
        }
    }
}

/// Writes the data's bytes through to `inner`, with each [`Gap`] written before the data
/// byte it precedes.
pub(crate) struct Gapped<'a, W> {
    inner: W,
    gaps: &'a [Gap],
    /// Data bytes written so far.
    at: u64,
}

impl<W: std::io::Write> std::io::Write for Gapped<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some((gap, rest)) = self.gaps.split_first() {
            if gap.at == self.at && !buf.is_empty() {
                self.inner.write_all(&gap.bytes)?;
                self.gaps = rest;
            }
        }
        let room = match self.gaps.first() {
            Some(gap) => usize::try_from(gap.at - self.at).unwrap_or(usize::MAX),
            None => usize::MAX,
        };
        let n = self.inner.write(&buf[..buf.len().min(room)])?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::archive::{ArchiveFile, ArchiveKind};
    use object::{
        Architecture, BinaryFormat, Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind,
    };

    const LINK_NAME: &str = "webnn_weights_data_0123456789abcdef";

    fn target(triple: &str) -> Target {
        let parts: Vec<&str> = triple.split('-').collect();
        let (os, env) = match parts[2] {
            "darwin" => ("macos", ""),
            "windows" => ("windows", parts[3]),
            "linux" => ("linux", parts[3]),
            other => (other, ""),
        };
        // Cargo's names for the architecture: `i686-…` is `x86`, `riscv64gc-…` is `riscv64`.
        let arch = match parts[0] {
            "i686" => "x86",
            "riscv64gc" => "riscv64",
            arch => arch,
        };
        crate::target::tests::target(triple, os, arch, env)
    }

    /// The supported targets: triple, archive kind, object format, architecture, section.
    const TABLE: [(&str, ArchiveKind, BinaryFormat, Architecture, &str); 7] = [
        (
            "x86_64-unknown-linux-gnu",
            ArchiveKind::Gnu,
            BinaryFormat::Elf,
            Architecture::X86_64,
            ".lrodata.webnn_weights",
        ),
        (
            "aarch64-unknown-linux-gnu",
            ArchiveKind::Gnu,
            BinaryFormat::Elf,
            Architecture::Aarch64,
            ".rodata.webnn_weights",
        ),
        (
            "x86_64-apple-darwin",
            ArchiveKind::Bsd,
            BinaryFormat::MachO,
            Architecture::X86_64,
            "__weights",
        ),
        (
            "aarch64-apple-darwin",
            ArchiveKind::Bsd,
            BinaryFormat::MachO,
            Architecture::Aarch64,
            "__weights",
        ),
        (
            "x86_64-pc-windows-gnu",
            ArchiveKind::Gnu,
            BinaryFormat::Coff,
            Architecture::X86_64,
            ".webnn",
        ),
        (
            "x86_64-pc-windows-msvc",
            ArchiveKind::Coff,
            BinaryFormat::Coff,
            Architecture::X86_64,
            ".webnn",
        ),
        (
            "aarch64-pc-windows-msvc",
            ArchiveKind::Coff,
            BinaryFormat::Coff,
            Architecture::Aarch64,
            ".webnn",
        ),
    ];

    fn library(t: ObjectTarget, data: &[u8]) -> Vec<u8> {
        let layout = t.archive_framing(LINK_NAME, data.len() as u64).unwrap();
        let mut out = layout.prefix;
        out.extend_from_slice(data);
        out.extend_from_slice(&layout.suffix);
        out
    }

    #[test]
    fn every_format_parses_back_with_an_aligned_global_symbol() {
        for (triple, archive_kind, format, arch, section_name) in TABLE {
            let t = ObjectTarget::for_target(&target(triple)).expect(triple);
            let symbol = t.object_symbol(LINK_NAME);
            for len in [0usize, 64, 128, 4096 + 64] {
                let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                let bytes = library(t, &data);
                let ar = ArchiveFile::parse(&*bytes).unwrap();
                assert_eq!(ar.kind(), archive_kind, "{triple}");
                let symbols: Vec<_> = ar.symbols().unwrap().unwrap().map(|s| s.unwrap()).collect();
                assert_eq!(symbols.len(), 1, "{triple}");
                assert_eq!(symbols[0].name(), symbol.as_bytes(), "{triple}");
                let members: Vec<_> = ar.members().map(|m| m.unwrap()).collect();
                assert_eq!(members.len(), 1, "{triple}");
                assert_eq!(members[0].name(), b"webnn_weights.o", "{triple}");
                assert_eq!(members[0].date(), Some(0));
                assert_eq!(members[0].uid(), Some(0));
                assert_eq!(members[0].gid(), Some(0));
                // The index points at the member.
                let member = ar.member(symbols[0].offset()).unwrap();
                let object_bytes = member.data(&*bytes).unwrap();
                assert_eq!(object_bytes, members[0].data(&*bytes).unwrap());
                // The object starts 64-byte aligned in the archive on the Darwin flavour.
                if archive_kind == ArchiveKind::Bsd {
                    let at = object_bytes.as_ptr() as usize - bytes.as_ptr() as usize;
                    assert_eq!(at % 64, 0, "{triple}");
                }
                // The reader wants the headers aligned in memory: copy the member out.
                let object_bytes = object_bytes.to_vec();
                let obj = object::File::parse(&*object_bytes).unwrap();
                assert_eq!(obj.format(), format, "{triple}");
                assert_eq!(obj.architecture(), arch, "{triple}");
                assert!(obj.is_little_endian());
                // The reader calls every COFF object 32-bit; the machine says 64.
                assert_eq!(obj.is_64(), format != BinaryFormat::Coff, "{triple}");
                let section = obj.section_by_name(section_name).expect(triple);
                let align = if format == BinaryFormat::Elf {
                    4096
                } else {
                    64
                };
                assert_eq!(section.align(), align, "{triple}");
                // Mach-O and COFF: END_PAD zeros after the end symbol.
                let pad = if format == BinaryFormat::Elf {
                    0
                } else {
                    END_PAD
                };
                assert_eq!(section.size(), len as u64 + pad, "{triple}");
                let (bytes_in, padding) = section.data().unwrap().split_at(len);
                assert_eq!(bytes_in, &data[..], "{triple}");
                assert!(padding.iter().all(|&b| b == 0), "{triple}");
                // Mach-O: its own segment, which no reader names a kind of data.
                if format == BinaryFormat::MachO {
                    assert_eq!(section.segment_name().unwrap(), Some("__WEBNN_WEIGHTS"));
                } else {
                    assert_eq!(section.kind(), SectionKind::ReadOnlyData, "{triple}");
                }
                let defined: Vec<_> = obj.symbols().filter(|s| s.is_definition()).collect();
                // Every format defines the symbol past the data too.
                let end = t.object_symbol(&t.end_link_name(LINK_NAME));
                assert_eq!(defined.len(), 2, "{triple}");
                let sym = &defined[0];
                assert_eq!(sym.name_bytes().unwrap(), symbol.as_bytes(), "{triple}");
                let end_sym = &defined[1];
                assert_eq!(end_sym.name_bytes().unwrap(), end.as_bytes(), "{triple}");
                assert_eq!(end, format!("{symbol}_end"), "{triple}");
                assert_eq!(end_sym.section_index(), Some(section.index()), "{triple}");
                assert_eq!(
                    end_sym.address(),
                    section.address() + len as u64,
                    "{triple}"
                );
                assert!(end_sym.is_global() && !end_sym.is_undefined(), "{triple}");
                assert!(sym.is_global() && !sym.is_undefined(), "{triple}");
                // (The reader infers a Mach-O symbol's kind from its section's names.)
                if format != BinaryFormat::MachO {
                    assert_eq!(sym.kind(), SymbolKind::Data, "{triple}");
                }
                assert_eq!(sym.address(), section.address(), "{triple}");
                assert_eq!(sym.section_index(), Some(section.index()), "{triple}");
                // The data's file offset is 64-byte aligned inside the object; ELF data
                // starts half a page into a page of the library file.
                let (offset, _) = section.file_range().unwrap_or((0, 0));
                assert_eq!(offset % 64, 0, "{triple}");
                if format == BinaryFormat::Elf {
                    let at = members[0].data(&*bytes).unwrap().as_ptr() as u64
                        - bytes.as_ptr() as u64
                        + offset;
                    assert_eq!(at % 4096 / 64, 2048 / 64, "{triple}: {at}");
                }
                if format == BinaryFormat::Elf {
                    assert_eq!(sym.size(), 0, "{triple}: zero-sized");
                }
            }
        }
    }

    #[test]
    fn symbol_spelling_and_library_names() {
        let mac = ObjectTarget::for_target(&target("aarch64-apple-darwin")).unwrap();
        assert_eq!(mac.object_symbol("s"), "_s");
        assert_eq!(mac.library_file("w"), "libw.a");
        let msvc = ObjectTarget::for_target(&target("aarch64-pc-windows-msvc")).unwrap();
        assert_eq!(msvc.object_symbol("s"), "s");
        assert_eq!(msvc.library_file("w"), "w.lib");
        let gnu = ObjectTarget::for_target(&target("x86_64-pc-windows-gnu")).unwrap();
        assert_eq!(gnu.object_symbol("s"), "s");
        assert_eq!(gnu.library_file("w"), "libw.a");
        let linux = ObjectTarget::for_target(&target("aarch64-unknown-linux-gnu")).unwrap();
        assert_eq!(linux.object_symbol("s"), "s");
    }

    #[test]
    fn targets_without_a_writer_keep_the_portable_path() {
        for triple in [
            "aarch64-pc-windows-gnullvm",
            "i686-pc-windows-msvc",
            "aarch64-apple-ios",
            "riscv64gc-unknown-linux-gnu",
            "wasm32-unknown-unknown",
        ] {
            let t = target(triple);
            assert_eq!(ObjectTarget::for_target(&t), None, "{triple}");
        }
        let big = Target::from_vars(|n| {
            Some(
                match n {
                    "CARGO_CFG_TARGET_OS" => "linux",
                    "CARGO_CFG_TARGET_ARCH" => "aarch64",
                    "CARGO_CFG_TARGET_ENDIAN" => "big",
                    "CARGO_CFG_TARGET_POINTER_WIDTH" => "64",
                    _ => return None,
                }
                .into(),
            )
        });
        assert_eq!(ObjectTarget::for_target(&big), None);
    }

    #[test]
    fn sizes_past_a_format_limit_are_refused_before_writing() {
        for (triple, ..) in TABLE {
            let t = ObjectTarget::for_target(&target(triple)).unwrap();
            let max = t.data_limit();
            assert_eq!(max.limit % ALIGN, 0);
            // The largest accepted size lays out; one step more is refused.
            let layout = t.archive_framing(LINK_NAME, max.limit).unwrap();
            assert!(!layout.prefix.is_empty());
            assert_eq!(
                t.archive_framing(LINK_NAME, max.limit + ALIGN).unwrap_err(),
                max
            );
            // 1 GiB fits everywhere; 2 GiB where the code's reach is ±4 GiB or unlimited.
            assert!(t.archive_framing(LINK_NAME, 1 << 30).is_ok(), "{triple}");
            let two = t.archive_framing(LINK_NAME, 1 << 31).is_ok();
            let expected = match (t.kind, t.arch) {
                (Kind::Elf, _) => ELF_MAX,
                (Kind::MachO, _) => (4 << 30) - PROGRAM_HEADROOM,
                _ => (2 << 30) - PROGRAM_HEADROOM,
            };
            assert_eq!(max.limit, expected, "{triple}");
            if t.kind == Kind::Elf {
                // In members whose every one fits the header's ten digits.
                assert_eq!(layout.gaps.len(), 1, "{triple}");
                let framing = t.object(LINK_NAME, MEMBER_DATA_MAX, 0);
                let member = (framing.head.len() + framing.tail.len()) as u64 + MEMBER_DATA_MAX;
                assert!(member <= AR_MEMBER_MAX, "{member}");
            }
            assert_eq!(two, max.limit >= 1 << 31, "{triple}");
        }
    }

    /// ELF data cut over three members (with members of at most two pieces): a GNU archive
    /// with a 64-bit index listing each member's symbols in order, each member an object of
    /// whole pieces whose last one names the next member's first symbol, the data whole
    /// across them, the end symbol in the last.
    #[test]
    fn elf_data_over_several_members() {
        use object::read::elf::ElfFile64;
        use object::{ObjectSymbol, RelocationTarget, SymbolSection};
        use std::io::Write;
        let piece = elf::PIECE as usize;
        for triple in ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"] {
            let t = ObjectTarget::for_target(&target(triple)).unwrap();
            let len = 4 * piece + 4160;
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let layout = t.elf_members_of(LINK_NAME, len as u64, 2 * elf::PIECE);
            assert_eq!(layout.gaps.len(), 2);
            let mut bytes = layout.prefix.clone();
            {
                let mut w = layout.gapped(&mut bytes);
                // In uneven writes, across the gaps.
                for chunk in data.chunks(piece / 3 + 1) {
                    w.write_all(chunk).unwrap();
                }
            }
            bytes.extend_from_slice(&layout.suffix);
            assert_eq!(bytes.len() as u64, layout.framing_len() + len as u64);
            let ar = ArchiveFile::parse(&*bytes).unwrap();
            assert_eq!(ar.kind(), ArchiveKind::Gnu64);
            let symbols: Vec<_> = ar.symbols().unwrap().unwrap().map(|s| s.unwrap()).collect();
            let names: Vec<&[u8]> = symbols.iter().map(|s| s.name()).collect();
            let part = |k: usize| format!("{LINK_NAME}_part{k}");
            let end = format!("{LINK_NAME}_end");
            let expected = [LINK_NAME.to_string(), part(1), part(2), end.clone()];
            assert_eq!(
                names,
                expected.iter().map(|s| s.as_bytes()).collect::<Vec<_>>()
            );
            let members: Vec<_> = ar.members().map(|m| m.unwrap()).collect();
            assert_eq!(members.len(), 3);
            let mut joined = Vec::new();
            for (k, member) in members.iter().enumerate() {
                // The index points at the member that defines each symbol.
                let at = member.data(&*bytes).unwrap().as_ptr() as usize - bytes.as_ptr() as usize;
                let defining: Vec<_> = symbols
                    .iter()
                    .filter(|s| {
                        ar.member(s.offset())
                            .unwrap()
                            .data(&*bytes)
                            .unwrap()
                            .as_ptr() as usize
                            - bytes.as_ptr() as usize
                            == at
                    })
                    .map(|s| s.name().to_vec())
                    .collect();
                let object_bytes = member.data(&*bytes).unwrap().to_vec();
                let obj = ElfFile64::<object::Endianness>::parse(&*object_bytes).unwrap();
                let (name, _) = elf::section(t.arch, len as u64);
                let pieces: Vec<_> = obj.sections().filter(|s| s.name() == Ok(name)).collect();
                assert_eq!(pieces.len(), if k < 2 { 2 } else { 1 }, "{triple} {k}");
                for p in &pieces {
                    joined.extend_from_slice(p.data().unwrap());
                }
                // The data starts half a page into a page of the file, as in one member.
                let (offset, _) = pieces[0].file_range().unwrap();
                assert_eq!((at as u64 + offset) % 4096 / 64, 2048 / 64, "{triple} {k}");
                let first = obj
                    .symbol_by_name(std::str::from_utf8(&defining[0]).unwrap())
                    .unwrap();
                assert!(first.is_global() && first.is_definition());
                assert_eq!(first.section(), SymbolSection::Section(pieces[0].index()));
                assert_eq!(first.address(), 0);
                assert_eq!(first.size(), 0);
                let last = pieces.last().unwrap();
                let relocations: Vec<_> = last.relocations().collect();
                if k < 2 {
                    // The chain to the next member: an undefined global, NONE.
                    assert_eq!(relocations.len(), 1, "{triple} {k}");
                    let RelocationTarget::Symbol(target) = relocations[0].1.target() else {
                        panic!("relocation without a symbol")
                    };
                    let target = obj.symbol_by_index(target).unwrap();
                    assert!(target.is_undefined() && target.is_global());
                    assert_eq!(target.name().unwrap(), part(k + 1));
                    assert_eq!(relocations[0].1.size(), 0);
                    assert_eq!(defining.len(), 1);
                } else {
                    assert!(relocations.is_empty());
                    let end_sym = obj.symbol_by_name(&end).unwrap();
                    assert_eq!(end_sym.section(), SymbolSection::Section(last.index()));
                    assert_eq!(end_sym.address(), 4160);
                    assert_eq!(defining.len(), 2);
                }
            }
            assert!(joined == data, "{triple}: the data across the members");
        }
    }

    #[test]
    fn layouts_are_deterministic() {
        for (triple, ..) in TABLE {
            let t = ObjectTarget::for_target(&target(triple)).unwrap();
            assert_eq!(library(t, &[1; 64]), library(t, &[1; 64]));
        }
    }

    /// SHA-256 of everything an archive holds besides the data (prefix, each gap with its
    /// offset, suffix), each part preceded by its length.
    fn framing_digest(digest: &mut hmac_sha256::Hash, framing: &ArchiveFraming) {
        let mut part = |bytes: &[u8]| {
            digest.update((bytes.len() as u64).to_le_bytes());
            digest.update(bytes);
        };
        part(&framing.prefix);
        for gap in &framing.gaps {
            part(&gap.at.to_le_bytes());
            part(&gap.bytes);
        }
        part(&framing.suffix);
    }

    /// The writers' output, byte for byte, for fixed inputs: every target at sizes of one
    /// piece, several pieces, 2 GiB and the largest accepted; ELF objects at several
    /// offsets into their file; ELF data over several members. A change meant to keep the
    /// output (a refactoring) must keep these digests; a deliberate change of format
    /// updates them (the failure lists every case's digest as found).
    #[test]
    fn framing_bytes_are_pinned() {
        let piece = elf::PIECE;
        let mut found: Vec<(String, String)> = Vec::new();
        for (triple, ..) in TABLE {
            let t = ObjectTarget::for_target(&target(triple)).unwrap();
            let mut digest = hmac_sha256::Hash::new();
            let limit = t.data_limit().limit;
            // (On AArch64 ELF, 2 GiB is in the writable section before `.bss`.)
            for len in [
                0,
                64,
                4096 + 64,
                2 * piece + 4160,
                limit.min(1 << 31),
                limit,
            ] {
                framing_digest(&mut digest, &t.archive_framing(LINK_NAME, len).unwrap());
            }
            found.push((
                triple.to_string(),
                webnn_weights_artifacts::hex(&digest.finalize()),
            ));
        }
        for triple in ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"] {
            let t = ObjectTarget::for_target(&target(triple)).unwrap();
            let mut digest = hmac_sha256::Hash::new();
            for object_at in [0, 172, 4095] {
                for len in [100, 3 * piece] {
                    let framing = elf::object(t.arch, "s", "s_end", len, object_at);
                    digest.update(framing.head);
                    digest.update(framing.tail);
                }
            }
            let members = t.elf_members_of(LINK_NAME, 4 * piece + 4160, 2 * piece);
            framing_digest(&mut digest, &members);
            found.push((
                format!("{triple} objects"),
                webnn_weights_artifacts::hex(&digest.finalize()),
            ));
        }
        let expected: [(&str, &str); 9] = [
            (
                "x86_64-unknown-linux-gnu",
                "4f7083b81f704bce58a3b63db715e38ec9890c81881bf442746bbad2a54a461d",
            ),
            (
                "aarch64-unknown-linux-gnu",
                "67c52dfa64b16027b3eb5af03abdbd3e93e880f62d6df6f881e664392794686c",
            ),
            (
                "x86_64-apple-darwin",
                "7f6866c6db54280da40e1e6058bac3534d004660e1c48783cb9264c87e3ce354",
            ),
            (
                "aarch64-apple-darwin",
                "1607a4fa4bcebbfb871b12a364605d082560cb844c84ddbdd23402a2a07c76fb",
            ),
            (
                "x86_64-pc-windows-gnu",
                "e2a43878fd5fcbcc7c884a83a4678539f1da433fccfc7a84361d1ff0eafcc34a",
            ),
            (
                "x86_64-pc-windows-msvc",
                "ddc28a7d21caddcfa2b4ac7ca4602b1716975ae94a65aed8f24107b0d37a9b42",
            ),
            (
                "aarch64-pc-windows-msvc",
                "791596f0d836e17e41dc805de3547cdd3b56068d1b431d218b31676ad14ada4d",
            ),
            (
                "x86_64-unknown-linux-gnu objects",
                "c63e3f098873e9b106abf88dc2412b522ded241c71d23675b6a21ec2ff8ade3c",
            ),
            (
                "aarch64-unknown-linux-gnu objects",
                "8191bbffae9cc61c5872a7c5822cb5926fc30fd600fbc032eb651501335c4934",
            ),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(case, hex)| (case.to_string(), hex.to_string()))
            .collect();
        let listed: Vec<String> = found
            .iter()
            .map(|(case, hex)| format!("({case:?}, {hex:?}),"))
            .collect();
        assert!(
            found == expected,
            "the writers' bytes changed; found:\n{}",
            listed.join("\n")
        );
    }
}
