//! COFF relocatable objects (x86-64, AArch64), for both Windows environments.
//!
//! The data is section `.webnn` (initialized, read-only, `IMAGE_SCN_ALIGN_64BYTES`), followed
//! by the symbol and string tables. Linkers keep an unknown section name as its own output
//! section instead of merging it into `.rdata`. COFF's section size (`SizeOfRawData`) and
//! file offsets (`PointerToSymbolTable`) are 32-bit, so the data must end below 4 GiB; a PE
//! image's size is 32-bit too.

use super::{Arch, Framing, ALIGN};
use object::endian::{LittleEndian as LE, U16Bytes, U32Bytes, U16, U32};
use object::pe;
use object::pod::bytes_of;

const FILE_HEADER: usize = std::mem::size_of::<pe::ImageFileHeader>();
const SECTION_HEADER: usize = std::mem::size_of::<pe::ImageSectionHeader>();
const SYMBOL: usize = std::mem::size_of::<pe::ImageSymbol>();
/// Where the data starts in the object (headers padded to the alignment).
const DATA_OFF: u64 = (FILE_HEADER + SECTION_HEADER).next_multiple_of(ALIGN as usize) as u64;

/// The largest data length: `PointerToSymbolTable` (the data's end) must fit 32 bits.
pub(super) const MAX_DATA_LEN: u64 = (u32::MAX as u64 - DATA_OFF) / ALIGN * ALIGN;

pub(super) fn machine(arch: Arch) -> u16 {
    match arch {
        Arch::X86_64 => pe::IMAGE_FILE_MACHINE_AMD64,
        Arch::Aarch64 => pe::IMAGE_FILE_MACHINE_ARM64,
    }
}

/// The section's characteristics.
pub(super) const CHARACTERISTICS: u32 =
    pe::IMAGE_SCN_CNT_INITIALIZED_DATA | pe::IMAGE_SCN_MEM_READ | pe::IMAGE_SCN_ALIGN_64BYTES;

/// An object whose section 1 holds `data_len` bytes (at most [`MAX_DATA_LEN`]), defined by
/// the external `symbol`.
pub(super) fn object(arch: Arch, symbol: &str, data_len: u64) -> Framing {
    debug_assert!(data_len <= MAX_DATA_LEN);
    let file_header = pe::ImageFileHeader {
        machine: U16::new(LE, machine(arch)),
        number_of_sections: U16::new(LE, 1),
        time_date_stamp: U32::new(LE, 0),
        // The data's end (below 4 GiB: `MAX_DATA_LEN`).
        pointer_to_symbol_table: U32::new(LE, (DATA_OFF + data_len) as u32),
        number_of_symbols: U32::new(LE, 1),
        size_of_optional_header: U16::new(LE, 0),
        characteristics: U16::new(LE, 0),
    };
    let section = pe::ImageSectionHeader {
        name: *b".webnn\0\0",
        // 0 in objects.
        virtual_size: U32::new(LE, 0),
        virtual_address: U32::new(LE, 0),
        size_of_raw_data: U32::new(LE, data_len as u32),
        pointer_to_raw_data: U32::new(LE, if data_len == 0 { 0 } else { DATA_OFF as u32 }),
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

    // The symbol (a name of up to 8 bytes inline, else an offset into the string table), then
    // the string table, whose size field counts itself.
    let long = symbol.len() > 8;
    let mut name = [0u8; 8];
    if long {
        name[4..].copy_from_slice(&4u32.to_le_bytes());
    } else {
        name[..symbol.len()].copy_from_slice(symbol.as_bytes());
    }
    let entry = pe::ImageSymbol {
        name,
        // The section's start.
        value: U32Bytes::new(LE, 0),
        section_number: U16Bytes::new(LE, 1),
        typ: U16Bytes::new(LE, pe::IMAGE_SYM_TYPE_NULL),
        storage_class: pe::IMAGE_SYM_CLASS_EXTERNAL,
        number_of_aux_symbols: 0,
    };
    let strings: &[u8] = if long { symbol.as_bytes() } else { b"" };
    let table_len = 4 + strings.len() + usize::from(long);
    let mut tail = Vec::with_capacity(SYMBOL + table_len);
    tail.extend_from_slice(bytes_of(&entry));
    tail.extend_from_slice(&(table_len as u32).to_le_bytes());
    if long {
        tail.extend_from_slice(strings);
        tail.push(0);
    }
    Framing { head, tail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::coff::CoffFile;
    use object::{Object, ObjectSymbol};

    #[test]
    fn header_and_section_fields() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            for symbol in ["short", "a_symbol_longer_than_eight"] {
                let data = [3u8; 64];
                let framing = object(arch, symbol, data.len() as u64);
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
                assert_eq!(obj.symbol_by_name(symbol).unwrap().address(), 0);
            }
        }
    }

    #[test]
    fn the_limit_keeps_offsets_in_32_bits() {
        assert_eq!(MAX_DATA_LEN % ALIGN, 0);
        assert!(DATA_OFF + MAX_DATA_LEN <= u64::from(u32::MAX));
        assert!(DATA_OFF + MAX_DATA_LEN + ALIGN > u64::from(u32::MAX));
    }
}
