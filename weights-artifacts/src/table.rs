//! The constant table: every embedded constant's name, reference, data type, shape and
//! place in the data, as one compact binary file ([`TABLE_FILE`]).
//!
//! The build helper writes it with [`ConstantTable::encode`]; a static library links it
//! after the data, or `include_webnn_graph!` checks it with [`ConstantTable::parse`] and
//! embeds it with one `include_bytes!`, so the macro's output has the same size for 2 or
//! 20,000 constants; `EmbeddedGraph` parses the embedded bytes (the same checks again, never
//! a panic) once, on first use.
//!
//! ## Format, version [`TABLE_VERSION`]
//!
//! All integers little-endian. A 32-byte header, then `count` entries of 48 bytes, then the
//! dimensions (`u32` each), then the strings (UTF-8, not terminated), then the digests
//! (32 bytes each, one per entry that has one, in entry order); nothing after.
//!
//! | at | size | field |
//! |---|---|---|
//! | 0 | 8 | magic [`TABLE_MAGIC`] (`WNNCTAB` and a zero byte) |
//! | 8 | 4 | version ([`TABLE_VERSION`]) |
//! | 12 | 4 | `count`: number of entries |
//! | 16 | 4 | `dims`: number of `u32` dimensions in the dimension area |
//! | 20 | 4 | `strings`: bytes in the string area |
//! | 24 | 8 | `data_len`: length of the data the offsets refer to |
//!
//! Entry `i` at `32 + 48 i`:
//!
//! | at | size | field |
//! |---|---|---|
//! | 0 | 4 + 4 | name: start and length in the string area |
//! | 8 | 4 + 4 | reference: start and length in the string area |
//! | 16 | 4 + 4 | shape: first dimension's index in the dimension area, rank |
//! | 24 | 1 | data type ([`DataType::code`]) |
//! | 25 | 1 | flags: bit 0 set when the entry has a digest (the other bits zero) |
//! | 26 | 2 | zero |
//! | 28 | 4 | the digest's index in the digest area (zero without a digest) |
//! | 32 | 8 | offset in the data (a multiple of [`DATA_ALIGN`]) |
//! | 40 | 8 | length in bytes (the declared type and shape's byte length) |
//!
//! Entries are sorted by name (strictly: names are unique), so a name is found by binary
//! search. The dimension area starts at a multiple of 16 bytes, so a table loaded at an
//! address aligned to 4 can view it as `&[u32]` on little-endian targets. Two entries may
//! name the same range (constants sharing stored bytes).

use crate::dtype::DataType;
use crate::layout::DATA_ALIGN;

/// The constant table's file name in the artifact folder.
pub const TABLE_FILE: &str = "constants.bin";

/// The first 8 bytes of every constant table.
pub const TABLE_MAGIC: [u8; 8] = *b"WNNCTAB\0";

/// The version of the table format: the writer puts it in, the reader accepts only it.
pub const TABLE_VERSION: u32 = 2;

/// The flag of an entry with a digest.
const HAS_DIGEST: u8 = 1;
/// The size of one digest (SHA-256).
const DIGEST: usize = 32;

const HEADER: usize = 32;
const ENTRY: usize = 48;

/// One constant, as given to [`ConstantTable::encode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRow<'a> {
    /// Name in the graph.
    pub name: &'a str,
    /// The `@weights` reference.
    pub reference: &'a str,
    /// Declared data type.
    pub data_type: DataType,
    /// Declared shape.
    pub shape: &'a [u32],
    /// Start within the data (a multiple of [`DATA_ALIGN`]).
    pub offset: u64,
    /// Byte length.
    pub length: u64,
    /// The SHA-256 of the bytes, when a weights lock pinned and the build verified it.
    pub sha256: Option<[u8; 32]>,
}

/// A checked constant table, read in place from its bytes.
///
/// ```
/// use webnn_weights_artifacts::{ConstantTable, DataType, TableRow};
/// let rows = [
///     TableRow { name: "a", reference: "A", data_type: DataType::Float32, shape: &[2],
///                offset: 0, length: 8, sha256: None },
///     TableRow { name: "b", reference: "B", data_type: DataType::Int4, shape: &[3, 1],
///                offset: 64, length: 2, sha256: Some([7; 32]) },
/// ];
/// let bytes = ConstantTable::encode(&rows, 128).unwrap();
/// let table = ConstantTable::parse(&bytes).unwrap();
/// assert_eq!((table.len(), table.data_len()), (2, 128));
/// let b = table.get(1).unwrap();
/// assert_eq!((b.name(), b.reference(), b.data_type()), ("b", "B", DataType::Int4));
/// assert_eq!(b.shape().collect::<Vec<u32>>(), [3, 1]);
/// assert_eq!((b.offset(), b.length()), (64, 2));
/// assert_eq!((table.get(0).unwrap().sha256(), b.sha256()), (None, Some([7; 32])));
/// assert_eq!(table.find("a").map(|e| e.offset()), Some(0));
/// assert!(table.find("c").is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ConstantTable<'a> {
    entries: &'a [u8],
    dims: &'a [u8],
    strings: &'a [u8],
    digests: &'a [u8],
    dims_at: usize,
    count: usize,
    data_len: u64,
}

/// One entry of a [`ConstantTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableEntry<'a> {
    name: &'a str,
    reference: &'a str,
    data_type: DataType,
    shape_le: &'a [u8],
    shape_at: usize,
    offset: u64,
    length: u64,
    sha256: Option<&'a [u8; 32]>,
}

impl<'a> TableEntry<'a> {
    /// Name in the graph.
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// The `@weights` reference.
    pub fn reference(&self) -> &'a str {
        self.reference
    }
    /// Declared data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }
    /// Declared shape, one dimension at a time.
    pub fn shape(&self) -> impl ExactSizeIterator<Item = u32> + Clone + 'a {
        self.shape_le
            .chunks_exact(4)
            .map(|d| u32::from_le_bytes([d[0], d[1], d[2], d[3]]))
    }
    /// The shape's bytes in the table (`rank * 4` little-endian bytes).
    pub fn shape_bytes(&self) -> &'a [u8] {
        self.shape_le
    }
    /// Where [`TableEntry::shape_bytes`] start, counted from the table's first byte (a
    /// multiple of 4): with the table loaded at a 4-aligned address, they are a `&[u32]` on
    /// little-endian targets.
    pub fn shape_position(&self) -> usize {
        self.shape_at
    }
    /// Start within the data (a multiple of [`DATA_ALIGN`]).
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// Byte length.
    pub fn length(&self) -> u64 {
        self.length
    }
    /// The SHA-256 of the bytes, verified against a weights lock at build time.
    pub fn sha256(&self) -> Option<[u8; 32]> {
        self.sha256.copied()
    }
}

/// Why a constant table was not accepted. The texts follow the file's name, as in
/// `format!("{path} {err}")`.
///
/// ```
/// use webnn_weights_artifacts::{ConstantTable, TableError};
/// assert_eq!(ConstantTable::parse(b"not a table").unwrap_err(), TableError::NotATable);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableError {
    /// Shorter than a header, or the magic is wrong.
    NotATable,
    /// Another version of the table format.
    Version {
        /// The version found.
        found: u32,
    },
    /// The file's size does not match what its header announces.
    Size {
        /// Size from the header (`None`: it overflows).
        expected: String,
        /// Actual size.
        found: usize,
    },
    /// An entry is damaged (the text says how).
    Entry {
        /// The entry's position.
        index: usize,
        /// What is wrong.
        problem: String,
    },
    /// The header's data length differs from the data's (checked by
    /// [`ConstantTable::check_data_len`]).
    DataLength {
        /// From the table.
        table: u64,
        /// From the data.
        data: u64,
    },
    /// The table cannot be written: an area exceeds the format's 32-bit sizes, or a row is
    /// invalid (the text says how).
    Encode(String),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::NotATable => f.write_str("is not a webnn-weights constant table"),
            TableError::Version { found } => write!(
                f,
                "has table version {found}, expected {TABLE_VERSION} \
                 (webnn-weights-build and webnn-weights-runtime versions differ?)"
            ),
            TableError::Size { expected, found } => {
                write!(f, "has {found} bytes, its header announces {expected}")
            }
            TableError::Entry { index, problem } => write!(f, "entry {index}: {problem}"),
            TableError::DataLength { table, data } => {
                write!(f, "describes {table} data bytes, the data has {data}")
            }
            TableError::Encode(text) => write!(f, "cannot be written: {text}"),
        }
    }
}

impl std::error::Error for TableError {}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The checks every entry passes, on the writing and on the reading side.
fn check_row(
    data_type: DataType,
    shape: impl Iterator<Item = u32> + Clone,
    offset: u64,
    length: u64,
    data_len: u64,
) -> Result<(), String> {
    let shape = shape.into_iter();
    // No allocation on the good path: this runs for every entry on first use.
    let elements = shape
        .clone()
        .try_fold(1u64, |acc, dim| acc.checked_mul(u64::from(dim)));
    let expected = elements.and_then(|n| data_type.byte_length_for_elements(n));
    if expected != Some(length) {
        let shape: Vec<u32> = shape.collect();
        return Err(format!(
            "{length} bytes for a {data_type} tensor of shape {shape:?}, expected {}",
            expected.map_or("a size that fits 64 bits".to_string(), |e| e.to_string())
        ));
    }
    if offset % DATA_ALIGN != 0 || offset.checked_add(length).is_none_or(|end| end > data_len) {
        return Err(format!(
            "bytes {offset}..+{length} are not a {DATA_ALIGN}-byte aligned range of the \
             {data_len} data bytes"
        ));
    }
    Ok(())
}

impl<'a> ConstantTable<'a> {
    /// The bytes of a table of `rows` (sorted by name, names unique) over `data_len` data
    /// bytes. Checks each row as [`ConstantTable::parse`] will.
    pub fn encode(rows: &[TableRow<'_>], data_len: u64) -> Result<Vec<u8>, TableError> {
        let too_big = |what: &str| TableError::Encode(format!("the {what} exceed 2^32"));
        let count = u32::try_from(rows.len()).map_err(|_| too_big("entries"))?;
        let mut dims: Vec<u8> = Vec::new();
        let mut strings: Vec<u8> = Vec::new();
        let mut entries = Vec::with_capacity(rows.len() * ENTRY);
        let mut digests: Vec<u8> = Vec::new();
        let mut previous: Option<&str> = None;
        for (index, row) in rows.iter().enumerate() {
            let problem = |problem: String| TableError::Encode(format!("row {index}: {problem}"));
            if previous.is_some_and(|p| p >= row.name) {
                return Err(problem(format!(
                    "`{}` is not after `{}` (rows must be sorted by name, names unique)",
                    row.name,
                    previous.unwrap_or_default()
                )));
            }
            previous = Some(row.name);
            check_row(
                row.data_type,
                row.shape.iter().copied(),
                row.offset,
                row.length,
                data_len,
            )
            .map_err(|p| problem(format!("constant `{}`: {p}", row.name)))?;
            let mut string = |text: &str| -> Result<[u8; 8], TableError> {
                let start = u32::try_from(strings.len()).map_err(|_| too_big("strings"))?;
                let len = u32::try_from(text.len()).map_err(|_| too_big("strings"))?;
                strings.extend_from_slice(text.as_bytes());
                u32::try_from(strings.len()).map_err(|_| too_big("strings"))?;
                let mut out = [0; 8];
                out[..4].copy_from_slice(&start.to_le_bytes());
                out[4..].copy_from_slice(&len.to_le_bytes());
                Ok(out)
            };
            entries.extend_from_slice(&string(row.name)?);
            entries.extend_from_slice(&string(row.reference)?);
            let first = u32::try_from(dims.len() / 4).map_err(|_| too_big("dimensions"))?;
            let rank = u32::try_from(row.shape.len()).map_err(|_| too_big("dimensions"))?;
            for dim in row.shape {
                dims.extend_from_slice(&dim.to_le_bytes());
            }
            entries.extend_from_slice(&first.to_le_bytes());
            entries.extend_from_slice(&rank.to_le_bytes());
            entries.push(row.data_type.code());
            match &row.sha256 {
                Some(digest) => {
                    let index =
                        u32::try_from(digests.len() / DIGEST).map_err(|_| too_big("digests"))?;
                    digests.extend_from_slice(digest);
                    entries.extend_from_slice(&[HAS_DIGEST, 0, 0]);
                    entries.extend_from_slice(&index.to_le_bytes());
                }
                None => entries.extend_from_slice(&[0; 7]),
            }
            entries.extend_from_slice(&row.offset.to_le_bytes());
            entries.extend_from_slice(&row.length.to_le_bytes());
        }
        let dim_count = u32::try_from(dims.len() / 4).map_err(|_| too_big("dimensions"))?;
        let string_len = u32::try_from(strings.len()).map_err(|_| too_big("strings"))?;
        let mut out = Vec::with_capacity(HEADER + entries.len() + dims.len() + strings.len());
        out.extend_from_slice(&TABLE_MAGIC);
        out.extend_from_slice(&TABLE_VERSION.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&dim_count.to_le_bytes());
        out.extend_from_slice(&string_len.to_le_bytes());
        out.extend_from_slice(&data_len.to_le_bytes());
        out.extend_from_slice(&entries);
        out.extend_from_slice(&dims);
        out.extend_from_slice(&strings);
        out.extend_from_slice(&digests);
        Ok(out)
    }

    /// Reads and checks a table: magic, version, sizes, and every entry (strings inside the
    /// string area and UTF-8, shape inside the dimension area, a known data type, a length
    /// that matches type and shape, an aligned range inside the data, names strictly
    /// sorted). After this, every accessor is infallible.
    pub fn parse(bytes: &'a [u8]) -> Result<ConstantTable<'a>, TableError> {
        if bytes.len() < HEADER || bytes[..8] != TABLE_MAGIC {
            return Err(TableError::NotATable);
        }
        let version = u32_at(bytes, 8);
        if version != TABLE_VERSION {
            return Err(TableError::Version { found: version });
        }
        let count = u32_at(bytes, 12) as usize;
        let dim_count = u32_at(bytes, 16) as usize;
        let string_len = u32_at(bytes, 20) as usize;
        let data_len = u64_at(bytes, 24);
        let dims_at = count.checked_mul(ENTRY).and_then(|e| e.checked_add(HEADER));
        let strings_at = dims_at.and_then(|d| d.checked_add(dim_count.checked_mul(4)?));
        let digests_at = strings_at.and_then(|s| s.checked_add(string_len));
        let (Some(dims_at), Some(strings_at), Some(digests_at)) = (dims_at, strings_at, digests_at)
        else {
            return Err(TableError::Size {
                expected: "more than this target can address".into(),
                found: bytes.len(),
            });
        };
        if digests_at > bytes.len() {
            return Err(TableError::Size {
                expected: format!("at least {digests_at}"),
                found: bytes.len(),
            });
        }
        // The digests: one per entry flagged as having one (every entry lies within `bytes`).
        let digest_count = (0..count)
            .filter(|i| bytes.get(HEADER + i * ENTRY + 25) == Some(&HAS_DIGEST))
            .count();
        let total = digest_count
            .checked_mul(DIGEST)
            .and_then(|d| d.checked_add(digests_at));
        if total != Some(bytes.len()) {
            return Err(TableError::Size {
                expected: total.map_or("more than this target can address".into(), |t| {
                    t.to_string()
                }),
                found: bytes.len(),
            });
        }
        let table = ConstantTable {
            entries: &bytes[HEADER..dims_at],
            dims: &bytes[dims_at..strings_at],
            strings: &bytes[strings_at..digests_at],
            digests: &bytes[digests_at..],
            dims_at,
            count,
            data_len,
        };
        let mut previous: Option<&str> = None;
        for index in 0..count {
            let problem = |problem: String| TableError::Entry { index, problem };
            let entry = table.decode(index).map_err(problem)?;
            if previous.is_some_and(|p| p >= entry.name) {
                return Err(problem(format!(
                    "`{}` is not after `{}`: names are not sorted or not unique",
                    entry.name,
                    previous.unwrap_or_default()
                )));
            }
            previous = Some(entry.name);
            check_row(
                entry.data_type,
                entry.shape(),
                entry.offset,
                entry.length,
                data_len,
            )
            .map_err(|p| problem(format!("constant `{}`: {p}", entry.name)))?;
        }
        Ok(table)
    }

    fn decode(&self, index: usize) -> Result<TableEntry<'a>, String> {
        let at = index * ENTRY;
        let e = self
            .entries
            .get(at..at + ENTRY)
            .ok_or_else(|| format!("there are only {} entries", self.count))?;
        let string = |field: usize, what: &str| -> Result<&'a str, String> {
            let (start, len) = (u32_at(e, field) as usize, u32_at(e, field + 4) as usize);
            let bytes = start
                .checked_add(len)
                .and_then(|end| self.strings.get(start..end))
                .ok_or_else(|| {
                    format!(
                        "its {what} ({start}..+{len}) lies outside the {} string bytes",
                        self.strings.len()
                    )
                })?;
            std::str::from_utf8(bytes).map_err(|_| format!("its {what} is not UTF-8"))
        };
        let name = string(0, "name")?;
        let reference = string(8, "reference")?;
        let (first, rank) = (u32_at(e, 16) as usize, u32_at(e, 20) as usize);
        let shape_le = first
            .checked_add(rank)
            .and_then(|end| self.dims.get(first * 4..end.checked_mul(4)?))
            .ok_or_else(|| {
                format!(
                    "constant `{name}`: its shape ({first}..+{rank}) lies outside the {} \
                     dimensions",
                    self.dims.len() / 4
                )
            })?;
        let data_type = DataType::from_code(e[24])
            .ok_or_else(|| format!("constant `{name}`: unknown data type number {}", e[24]))?;
        let digest_index = u32_at(e, 28) as usize;
        let sha256 = match e[25] {
            0 if digest_index == 0 => None,
            HAS_DIGEST => Some(
                digest_index
                    .checked_mul(DIGEST)
                    .and_then(|at| self.digests.get(at..at + DIGEST))
                    .and_then(|d| <&[u8; 32]>::try_from(d).ok())
                    .ok_or_else(|| {
                        format!(
                            "constant `{name}`: digest {digest_index} lies outside the {} digests",
                            self.digests.len() / DIGEST
                        )
                    })?,
            ),
            0 => {
                return Err(format!(
                    "constant `{name}`: a digest index without a digest"
                ))
            }
            _ => return Err(format!("constant `{name}`: unknown flags {:#x}", e[25])),
        };
        if e[26..28] != [0; 2] {
            return Err(format!("constant `{name}`: reserved bytes are not zero"));
        }
        Ok(TableEntry {
            name,
            reference,
            data_type,
            shape_le,
            shape_at: self.dims_at + first * 4,
            offset: u64_at(e, 32),
            length: u64_at(e, 40),
            sha256,
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The length of the data the entries' offsets refer to.
    pub fn data_len(&self) -> u64 {
        self.data_len
    }

    /// Fails unless the table was laid out over `data_len` bytes of data.
    ///
    /// ```
    /// use webnn_weights_artifacts::ConstantTable;
    /// let bytes = ConstantTable::encode(&[], 0).unwrap();
    /// let table = ConstantTable::parse(&bytes).unwrap();
    /// assert!(table.check_data_len(0).is_ok());
    /// assert!(table.check_data_len(64).is_err());
    /// ```
    pub fn check_data_len(&self, data_len: u64) -> Result<(), TableError> {
        if self.data_len == data_len {
            Ok(())
        } else {
            Err(TableError::DataLength {
                table: self.data_len,
                data: data_len,
            })
        }
    }

    /// The entry at `index` (entries are sorted by name).
    pub fn get(&self, index: usize) -> Option<TableEntry<'a>> {
        // `parse` checked every entry.
        self.decode(index).ok()
    }

    /// Every entry, sorted by name.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TableEntry<'a>> + '_ {
        // `parse` checked every entry, so none is skipped; `get` keeps a damaged one from
        // ever becoming a panic.
        (0..self.count).map(|i| {
            self.get(i).unwrap_or(TableEntry {
                name: "",
                reference: "",
                data_type: DataType::Uint8,
                shape_le: &[],
                shape_at: 0,
                offset: 0,
                length: 0,
                sha256: None,
            })
        })
    }

    /// The entry called `name`, by binary search.
    pub fn find(&self, name: &str) -> Option<TableEntry<'a>> {
        let (mut low, mut high) = (0, self.count);
        while low < high {
            let mid = low + (high - low) / 2;
            let entry = self.get(mid)?;
            match entry.name.cmp(name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(entry),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<TableRow<'static>> {
        vec![
            TableRow {
                name: "a",
                reference: "layer.0.weight",
                data_type: DataType::Float32,
                shape: &[2, 3],
                offset: 0,
                length: 24,
                sha256: None,
            },
            TableRow {
                name: "b",
                reference: "b",
                data_type: DataType::Uint4,
                shape: &[5],
                offset: 64,
                length: 3,
                sha256: None,
            },
            TableRow {
                name: "c",
                reference: "scalar",
                data_type: DataType::Int64,
                shape: &[],
                offset: 128,
                length: 8,
                sha256: None,
            },
        ]
    }

    fn encoded() -> Vec<u8> {
        ConstantTable::encode(&rows(), 192).unwrap()
    }

    #[test]
    fn round_trip_and_layout_of_the_bytes() {
        let bytes = encoded();
        // header + 3 entries + 3 dims + strings
        let strings = "alayer.0.weightbbcscalar".len();
        assert_eq!(bytes.len(), 32 + 3 * 48 + 3 * 4 + strings);
        assert_eq!(&bytes[..8], b"WNNCTAB\0");
        let table = ConstantTable::parse(&bytes).unwrap();
        assert_eq!(table.len(), 3);
        let back: Vec<(String, String, DataType, Vec<u32>, u64, u64)> = table
            .iter()
            .map(|e| {
                (
                    e.name().into(),
                    e.reference().into(),
                    e.data_type(),
                    e.shape().collect(),
                    e.offset(),
                    e.length(),
                )
            })
            .collect();
        let expected: Vec<_> = rows()
            .iter()
            .map(|r| {
                (
                    r.name.to_string(),
                    r.reference.to_string(),
                    r.data_type,
                    r.shape.to_vec(),
                    r.offset,
                    r.length,
                )
            })
            .collect();
        assert_eq!(back, expected);
        let a = table.get(0).unwrap();
        assert_eq!(a.shape_position() % 4, 0);
        assert_eq!(
            &bytes[a.shape_position()..a.shape_position() + 8],
            a.shape_bytes()
        );
        for r in rows() {
            assert_eq!(table.find(r.name).unwrap().reference(), r.reference);
        }
        assert!(table.find("").is_none() && table.find("d").is_none());
        assert!(table.get(3).is_none());
    }

    #[test]
    fn digests_follow_the_strings_one_per_flagged_entry() {
        let mut rows = rows();
        rows[0].sha256 = Some([0xA0; 32]);
        rows[2].sha256 = Some([0xC0; 32]);
        let bytes = ConstantTable::encode(&rows, 192).unwrap();
        let plain = encoded();
        assert_eq!(bytes.len(), plain.len() + 2 * 32);
        assert_eq!(bytes[plain.len()..plain.len() + 32], [0xA0; 32]);
        let table = ConstantTable::parse(&bytes).unwrap();
        let digests: Vec<_> = table.iter().map(|e| e.sha256()).collect();
        assert_eq!(digests, [Some([0xA0; 32]), None, Some([0xC0; 32])]);
        // A digest area that does not match the flags, and unknown flags, are damage.
        for (at, value, expected) in [(32 + 48 + 25, 1u8, "has"), (32 + 26, 1, "reserved bytes")] {
            let mut damaged = bytes.clone();
            damaged[at] = value;
            let err = ConstantTable::parse(&damaged).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
        let mut short = bytes.clone();
        short.truncate(bytes.len() - 32);
        assert!(ConstantTable::parse(&short).is_err());
        // An index past the area.
        let mut far = bytes.clone();
        far[32 + 28] = 9;
        let err = ConstantTable::parse(&far).unwrap_err().to_string();
        assert!(err.contains("lies outside the 2 digests"), "{err}");
    }

    #[test]
    fn writer_refuses_what_the_reader_would() {
        let mut unsorted = rows();
        unsorted.swap(0, 1);
        assert!(ConstantTable::encode(&unsorted, 192).is_err());
        let mut wrong = rows();
        wrong[0].length = 25;
        let err = ConstantTable::encode(&wrong, 192).unwrap_err().to_string();
        assert!(err.contains("constant `a`: 25 bytes"), "{err}");
        assert!(ConstantTable::encode(&rows(), 130).is_err());
        let mut misaligned = rows();
        misaligned[1].offset = 32;
        assert!(ConstantTable::encode(&misaligned, 192).is_err());
    }

    /// Every way to damage a table is an error, never a panic.
    #[test]
    fn damage_is_an_error() {
        let good = encoded();
        let parse = |bytes: &[u8]| ConstantTable::parse(bytes).map(|t| t.len());
        assert_eq!(parse(&good[..31]), Err(TableError::NotATable));
        let mut b = good.clone();
        b[8] = 1;
        assert_eq!(parse(&b), Err(TableError::Version { found: 1 }));
        assert!(matches!(
            parse(&good[..good.len() - 1]),
            Err(TableError::Size { .. })
        ));
        let mut b = good.clone();
        b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse(&b), Err(TableError::Size { .. })));
        // Entry 1 (`b`): offset moved out of the data.
        let mut b = good.clone();
        b[32 + 48 + 32..32 + 48 + 40].copy_from_slice(&1024u64.to_le_bytes());
        let err = parse(&b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "entry 1: constant `b`: bytes 1024..+3 are not a 64-byte aligned range of the \
             192 data bytes"
        );
        // Unknown data type, reserved byte, name outside the strings, rank too big.
        for (at, value) in [(24, 10u8), (26, 1), (28, 1), (4, 200), (20, 9)] {
            let mut b = good.clone();
            b[32 + 48 + at] = value;
            assert!(
                matches!(parse(&b), Err(TableError::Entry { index: 1, .. })),
                "byte {at}"
            );
        }
        // Names out of order.
        let mut b = good.clone();
        let name_b = 32 + 48;
        let name_a = b[32..40].to_vec();
        b[name_b..name_b + 8].copy_from_slice(&name_a);
        assert!(parse(&b).unwrap_err().to_string().contains("not sorted"));
        // Every single-byte change and every truncation: a result, never a panic.
        for at in 0..good.len() {
            let mut b = good.clone();
            b[at] ^= 0xa5;
            let _ = parse(&b);
            let _ = parse(&good[..at]);
        }
        let table = ConstantTable::parse(&good).unwrap();
        assert!(table.check_data_len(192).is_ok());
        assert_eq!(
            table.check_data_len(128).unwrap_err().to_string(),
            "describes 192 data bytes, the data has 128"
        );
    }
}
