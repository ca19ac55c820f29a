//! Data types: [`DataType`] is defined once, in `webnn-weights-artifacts` (the contract the
//! build helper, the macro and this crate share), and re-exported here; this module adds
//! the unpacking of the 4-bit types (behind `unpack_int4`/`unpack_uint4` of `ConstDecl` and
//! `EmbeddedConstant`). (The SafeTensors storage of each type is the archive
//! reader's: `formats::safetensors::storage_type`.)

pub use webnn_weights_artifacts::DataType;

/// The `count` elements of a packed `int4` tensor, sign-extended (`0x8` is -8, `0xF` is -1):
/// two elements per byte, the first in the low nibble, as the format stores them. `None`
/// when `packed` is not exactly `ceil(count / 2)` bytes. The high nibble of the last byte of
/// an odd count is padding: it is not returned, whatever it holds.
///
/// One home for the rule: [`EmbeddedConstant::unpack_int4`](crate::EmbeddedConstant::unpack_int4)
/// and [`ConstDecl::unpack_int4`](crate::ConstDecl::unpack_int4) call it.
pub(crate) fn unpack_int4(packed: &[u8], count: usize) -> Option<Vec<i8>> {
    // Sign-extend bit 3: the nibble moved to the top, then shifted back arithmetically.
    Some(
        nibbles(packed, count)?
            .map(|n| ((n << 4) as i8) >> 4)
            .collect(),
    )
}

/// The `count` elements of a packed `uint4` tensor, each 0..=15: two elements per byte, the
/// first in the low nibble. `None` when `packed` is not exactly `ceil(count / 2)` bytes; the
/// padding nibble of an odd count is not returned.
///
/// One home for the rule: [`EmbeddedConstant::unpack_uint4`](crate::EmbeddedConstant::unpack_uint4)
/// and [`ConstDecl::unpack_uint4`](crate::ConstDecl::unpack_uint4) call it.
pub(crate) fn unpack_uint4(packed: &[u8], count: usize) -> Option<Vec<u8>> {
    Some(nibbles(packed, count)?.collect())
}

/// The `count` nibbles of `packed` in element order (low nibble first), or `None` when
/// `packed` is not exactly the `ceil(count / 2)` bytes they take.
fn nibbles(packed: &[u8], count: usize) -> Option<impl Iterator<Item = u8> + '_> {
    (packed.len() == count.div_ceil(2)).then(|| {
        packed
            .iter()
            .flat_map(|&byte| [byte & 0x0f, byte >> 4])
            .take(count)
    })
}

/// The element count of a constant of `data_type` and `shape` when the type is `want` (one
/// of the 4-bit types) and the count fits `usize`: what the typed `unpack_*` methods check
/// before unpacking.
pub(crate) fn count_if(data_type: DataType, want: DataType, shape: &[u32]) -> Option<usize> {
    if data_type != want {
        return None;
    }
    usize::try_from(DataType::element_count(shape)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_low_first_signed_or_not() {
        // Elements 1, -1, 7: bytes 0xF1 (low nibble 1, high nibble -1), 0x07 (7, then padding).
        assert_eq!(unpack_int4(&[0xF1, 0x07], 3), Some(vec![1, -1, 7]));
        assert_eq!(unpack_int4(&[0x98], 2), Some(vec![-8, -7]));
        assert_eq!(unpack_int4(&[0xF1], 3), None, "3 elements need 2 bytes");
        assert_eq!(unpack_uint4(&[0xF1, 0x07], 3), Some(vec![1, 15, 7]));
        assert_eq!(
            unpack_uint4(&[0xF1, 0x07], 5),
            None,
            "5 elements need 3 bytes"
        );
    }

    #[test]
    fn every_nibble_unpacks() {
        let bytes: Vec<u8> = (0..=255).collect();
        let signed = unpack_int4(&bytes, 512).unwrap();
        let unsigned = unpack_uint4(&bytes, 512).unwrap();
        let sign = |n: u8| if n >= 8 { n as i8 - 16 } else { n as i8 };
        for (i, byte) in bytes.iter().enumerate() {
            let (low, high) = (byte & 0xf, byte >> 4);
            assert_eq!([unsigned[2 * i], unsigned[2 * i + 1]], [low, high]);
            assert_eq!([signed[2 * i], signed[2 * i + 1]], [sign(low), sign(high)]);
        }
        assert_eq!(unpack_int4(&[0x87], 2), Some(vec![7, -8]));
    }

    #[test]
    fn exactly_count_elements_the_padding_nibble_ignored() {
        // An odd count: the high nibble of the last byte is padding, not an element.
        assert_eq!(unpack_int4(&[0x97], 1), Some(vec![7]));
        assert_eq!(unpack_uint4(&[0x21, 0xF3], 3), Some(vec![1, 2, 3]));
        assert_eq!(unpack_int4(&[], 0), Some(vec![]));
        // Not the packed size of the count: too long or too short.
        assert_eq!(unpack_int4(&[1, 2], 2), None);
        assert_eq!(unpack_uint4(&[1, 2], 2), None);
        assert_eq!(unpack_uint4(&[1], 3), None);
    }

    #[test]
    fn only_the_asked_4bit_type_unpacks() {
        assert_eq!(count_if(DataType::Int4, DataType::Int4, &[2, 3]), Some(6));
        assert_eq!(count_if(DataType::Int4, DataType::Int4, &[]), Some(1));
        assert_eq!(count_if(DataType::Uint4, DataType::Int4, &[2]), None);
        assert_eq!(count_if(DataType::Uint8, DataType::Uint4, &[2]), None);
    }
}
