//! COFF relocatable objects (x86-64, AArch64), for both Windows environments.
//!
//! The data is section `.webnn` (initialized, read-only, `IMAGE_SCN_ALIGN_64BYTES`): the
//! external `symbol` at its start, the external `end_symbol` just past the data, then
//! [`END_PAD`] zero bytes; the symbol and string tables follow. Linkers keep an unknown section name as its own output
//! section instead of merging it into `.rdata`. COFF's section size (`SizeOfRawData`) and
//! file offsets (`PointerToSymbolTable`) are 32-bit, so the data must end below 4 GiB; a PE
//! image's size is 32-bit too.

use super::{Arch, Framing, ALIGN, END_PAD};
use object::endian::{LittleEndian as LE, U16Bytes, U32Bytes, U16, U32};
use object::pe;
use object::pod::bytes_of;

const FILE_HEADER: usize = std::mem::size_of::<pe::ImageFileHeader>();
const SECTION_HEADER: usize = std::mem::size_of::<pe::ImageSectionHeader>();
/// Where the data starts in the object (headers padded to the alignment).
const DATA_OFF: u64 = (FILE_HEADER + SECTION_HEADER).next_multiple_of(ALIGN as usize) as u64;

/// The largest data length: `PointerToSymbolTable` (the section's end) must fit 32 bits.
pub(super) const MAX_DATA_LEN: u64 = (u32::MAX as u64 - DATA_OFF - END_PAD) / ALIGN * ALIGN;

pub(super) fn machine(arch: Arch) -> u16 {
    match arch {
        Arch::X86_64 => pe::IMAGE_FILE_MACHINE_AMD64,
        Arch::Aarch64 => pe::IMAGE_FILE_MACHINE_ARM64,
    }
}

/// The section's characteristics.
pub(super) const CHARACTERISTICS: u32 =
    pe::IMAGE_SCN_CNT_INITIALIZED_DATA | pe::IMAGE_SCN_MEM_READ | pe::IMAGE_SCN_ALIGN_64BYTES;

/// An object whose section 1 holds `data_len` bytes (at most [`MAX_DATA_LEN`]) between the
/// external `symbol` and `end_symbol`, then [`END_PAD`] zeros.
pub(super) fn object(arch: Arch, symbol: &str, end_symbol: &str, data_len: u64) -> Framing {
    debug_assert!(data_len <= MAX_DATA_LEN);
    let section_len = data_len + END_PAD;
    let file_header = pe::ImageFileHeader {
        machine: U16::new(LE, machine(arch)),
        number_of_sections: U16::new(LE, 1),
        time_date_stamp: U32::new(LE, 0),
        // The section's end (below 4 GiB: `MAX_DATA_LEN`).
        pointer_to_symbol_table: U32::new(LE, (DATA_OFF + section_len) as u32),
        number_of_symbols: U32::new(LE, 2),
        size_of_optional_header: U16::new(LE, 0),
        characteristics: U16::new(LE, 0),
    };
    let section = pe::ImageSectionHeader {
        name: *b".webnn\0\0",
        // 0 in objects.
        virtual_size: U32::new(LE, 0),
        virtual_address: U32::new(LE, 0),
        size_of_raw_data: U32::new(LE, section_len as u32),
        pointer_to_raw_data: U32::new(LE, DATA_OFF as u32),
        pointer_to_relocations: U32::new(LE, 0),
        pointer_to_linenumbers: U32::new(LE, 0),
        number_of_relocations: U16::new(LE, 0),
        number_of_linenumbers: U16::new(LE, 0),
        characteristics: U32::new(LE, CHARACTERISTICS),
    };
    let mut head = Vec::with_capacity(DATA_OFF as usize);
    head.extend_from_slice(bytes_of(&file_header));
    head.extend_from_slice(bytes_of(&section));
    head.resize(DATA_OFF as usize, 0);

    // The symbols (a name of up to 8 bytes inline, else an offset into the string table),
    // then the string table, whose size field counts itself.
    let mut strings = Vec::new();
    let mut entry = |symbol: &str, value: u64| {
        let mut name = [0u8; 8];
        if symbol.len() > 8 {
            let at = 4 + strings.len() as u32;
            name[4..].copy_from_slice(&at.to_le_bytes());
            strings.extend_from_slice(symbol.as_bytes());
            strings.push(0);
        } else {
            name[..symbol.len()].copy_from_slice(symbol.as_bytes());
        }
        pe::ImageSymbol {
            name,
            value: U32Bytes::new(LE, value as u32),
            section_number: U16Bytes::new(LE, 1),
            typ: U16Bytes::new(LE, pe::IMAGE_SYM_TYPE_NULL),
            storage_class: pe::IMAGE_SYM_CLASS_EXTERNAL,
            number_of_aux_symbols: 0,
        }
    };
    // The section's start, and just past the data (inside the section: `END_PAD`).
    let symbols = [entry(symbol, 0), entry(end_symbol, data_len)];
    let mut tail = Vec::with_capacity(END_PAD as usize + 2 * size_of::<pe::ImageSymbol>());
    tail.resize(END_PAD as usize, 0);
    for symbol in &symbols {
        tail.extend_from_slice(bytes_of(symbol));
    }
    tail.extend_from_slice(&(4 + strings.len() as u32).to_le_bytes());
    tail.extend_from_slice(&strings);
    Framing { head, tail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::coff::CoffFile;
    use object::{Object, ObjectSection, ObjectSymbol};

    #[test]
    fn header_and_section_fields() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            for symbol in ["short", "a_symbol_longer_than_eight"] {
                let data = [3u8; 64];
                let end = format!("{symbol}_end");
                let framing = object(arch, symbol, &end, data.len() as u64);
                let mut bytes = framing.head;
                bytes.extend_from_slice(&data);
                bytes.extend_from_slice(&framing.tail);
                let obj = CoffFile::<&[u8]>::parse(&*bytes).unwrap();
                assert_eq!(
                    obj.coff_header().machine.get(object::LittleEndian),
                    machine(arch)
                );
                let section = obj.section_by_name(".webnn").unwrap();
                let header = section.coff_section();
                assert_eq!(
                    header.characteristics.get(object::LittleEndian),
                    CHARACTERISTICS
                );
                assert_eq!(section.size(), 64 + END_PAD);
                assert_eq!(obj.symbol_by_name(symbol).unwrap().address(), 0);
                let end = obj.symbol_by_name(&end).unwrap();
                assert_eq!(end.address(), 64);
                assert_eq!(end.section_index(), Some(section.index()));
                assert!(end.is_global());
            }
        }
    }

    #[test]
    fn the_limit_keeps_offsets_in_32_bits() {
        assert_eq!(MAX_DATA_LEN % ALIGN, 0);
        assert!(DATA_OFF + MAX_DATA_LEN + END_PAD <= u64::from(u32::MAX));
        assert!(DATA_OFF + MAX_DATA_LEN + ALIGN + END_PAD > u64::from(u32::MAX));
    }
}
