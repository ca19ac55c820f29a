//! COFF relocatable objects (x86-64, AArch64), for both Windows environments.
//!
//! The data is section `.webnn` (initialized, read-only, `IMAGE_SCN_ALIGN_64BYTES`), followed
//! by the symbol and string tables. Linkers keep an unknown section name as its own output
//! section instead of merging it into `.rdata`. COFF's section size (`SizeOfRawData`) and
//! file offsets (`PointerToSymbolTable`) are 32-bit, so the data must end below 4 GiB; a PE
//! image's size is 32-bit too.

use super::{Arch, Framing, ALIGN};
use object::pe;

const FILE_HEADER: usize = 20;
const SECTION_HEADER: usize = 40;
const SYMBOL: usize = 18;
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
    let symtab_off = (DATA_OFF + data_len) as u32;
    let mut h = Vec::with_capacity(DATA_OFF as usize);
    // IMAGE_FILE_HEADER
    h.extend_from_slice(&machine(arch).to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // NumberOfSections
    h.extend_from_slice(&0u32.to_le_bytes()); // TimeDateStamp
    h.extend_from_slice(&symtab_off.to_le_bytes()); // PointerToSymbolTable
    h.extend_from_slice(&1u32.to_le_bytes()); // NumberOfSymbols
    h.extend_from_slice(&0u16.to_le_bytes()); // SizeOfOptionalHeader
    h.extend_from_slice(&0u16.to_le_bytes()); // Characteristics
                                              // IMAGE_SECTION_HEADER
    h.extend_from_slice(b".webnn\0\0");
    h.extend_from_slice(&0u32.to_le_bytes()); // VirtualSize: 0 in objects
    h.extend_from_slice(&0u32.to_le_bytes()); // VirtualAddress
    h.extend_from_slice(&(data_len as u32).to_le_bytes()); // SizeOfRawData
    let raw = if data_len == 0 { 0 } else { DATA_OFF as u32 };
    h.extend_from_slice(&raw.to_le_bytes()); // PointerToRawData
    h.extend_from_slice(&0u32.to_le_bytes()); // PointerToRelocations
    h.extend_from_slice(&0u32.to_le_bytes()); // PointerToLinenumbers
    h.extend_from_slice(&0u16.to_le_bytes()); // NumberOfRelocations
    h.extend_from_slice(&0u16.to_le_bytes()); // NumberOfLinenumbers
    h.extend_from_slice(&CHARACTERISTICS.to_le_bytes());
    h.resize(DATA_OFF as usize, 0);

    // The symbol, then the string table (its size field counts itself).
    let mut t = Vec::with_capacity(SYMBOL + 4 + symbol.len() + 1);
    if symbol.len() <= 8 {
        let mut short = [0u8; 8];
        short[..symbol.len()].copy_from_slice(symbol.as_bytes());
        t.extend_from_slice(&short);
    } else {
        t.extend_from_slice(&0u32.to_le_bytes());
        t.extend_from_slice(&4u32.to_le_bytes()); // offset in the string table
    }
    t.extend_from_slice(&0u32.to_le_bytes()); // Value: the section's start
    t.extend_from_slice(&1i16.to_le_bytes()); // SectionNumber
    t.extend_from_slice(&pe::IMAGE_SYM_TYPE_NULL.to_le_bytes());
    t.push(pe::IMAGE_SYM_CLASS_EXTERNAL);
    t.push(0); // NumberOfAuxSymbols
    let strings: &[u8] = if symbol.len() <= 8 {
        b""
    } else {
        symbol.as_bytes()
    };
    let table_len = 4 + strings.len() + usize::from(!strings.is_empty());
    t.extend_from_slice(&(table_len as u32).to_le_bytes());
    if !strings.is_empty() {
        t.extend_from_slice(strings);
        t.push(0);
    }
    Framing { head: h, tail: t }
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
