//! The comparison of the SafeTensors differential test: one archive's bytes read by the
//! runtime (`Catalog::read_safetensors`) and by the pinned `safetensors` crate
//! (`SafeTensors::read_metadata` and `SafeTensors::deserialize`).
//!
//! Shared, as a file, by `weights-runtime/tests/safetensors_differential.rs` and the fuzz
//! target `fuzz/fuzz_targets/safetensors_differential.rs` (both include it with `#[path]`), so
//! the generated archives and the fuzzer's are judged by the same rules. It needs
//! `webnn-weights-runtime` (feature `load`), `safetensors`, `serde` and `serde_json`.
//!
//! The readers must agree on whether the archive is valid, and for a valid one on every
//! tensor's name, storage type, shape and byte range in the file, and on the `__metadata__`
//! map (absent and `null` read as empty). Where the runtime differs on purpose, the
//! difference is one of the named exceptions below, each with the rule behind it; any other
//! disagreement is an error naming both verdicts.

use std::collections::{BTreeMap, BTreeSet};
use webnn_weights_runtime::formats::{Catalog, FormatError};

/// The `safetensors` crate's limit on the header length (its private `MAX_HEADER_SIZE`),
/// which the runtime applies too.
const MAX_HEADER: u64 = 100_000_000;

/// How the two readers judged one archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Both read it, with the same `tensors` tensors and `metadata` metadata entries.
    BothAccept {
        /// The number of tensors.
        tensors: usize,
        /// The number of `__metadata__` entries.
        metadata: usize,
    },
    /// Both refused it.
    BothReject,
    /// One of the named exceptions applied (the runtime refused it; the crate was compared
    /// as far as the exception allows).
    Exception(Exception),
}

/// The documented differences between the two readers. Each one is a refusal by the
/// runtime; there is no archive the runtime reads and the crate does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exception {
    /// An object of the header names a key twice (after unescaping: `"a"` and `"\u0061"`
    /// are one key). The runtime refuses it, by its one rule for repeated keys in JSON
    /// (`json_keys.rs`; docs/runtime.md, "a key given twice is refused, not silently
    /// overwritten"), where serde_json in the crate keeps the last value of a repeated tensor
    /// name or metadata key without a word. When the crate accepts such an archive, the
    /// runtime's message must say which key is "given twice".
    RepeatedKey,
    /// The header's entries are valid but end so close to 2^64 that 8 + header + data does
    /// not fit in 64 bits. No file is that long, so the runtime refuses it (it compares
    /// sizes in 128 bits); `safetensors` 0.8.0 adds them unchecked in `read_metadata`
    /// (`buffer_end + N_LEN + n`), which panics with overflow checks on (tests, cargo-fuzz)
    /// and wraps to a refusal without them. The crate is not called on such an archive.
    DataEndPast64Bits,
}

/// Judges `archive` (its bytes) against `ours`, the runtime's reading of the same bytes
/// from a file. `Err` describes a disagreement.
pub fn compare(archive: &[u8], ours: &Result<Catalog, FormatError>) -> Result<Verdict, String> {
    if let Ok(catalog) = ours {
        check_catalog_shape(archive, catalog)?;
    }
    if let Err(e) = ours {
        if !matches!(e, FormatError::SafeTensorsHeader { .. }) {
            return Err(format!(
                "the runtime failed other than by refusing the archive: {e:?}"
            ));
        }
    }
    let header = framed_header(archive);
    if header.is_some_and(data_end_past_64_bits) {
        return match ours {
            Err(_) => Ok(Verdict::Exception(Exception::DataEndPast64Bits)),
            Ok(_) => {
                Err("the runtime read an archive whose data would end past 2^64 bytes".to_string())
            }
        };
    }
    let theirs = safetensors::SafeTensors::read_metadata(archive);
    let views = safetensors::SafeTensors::deserialize(archive);
    if theirs.is_ok() != views.is_ok() {
        return Err(format!(
            "the crate's read_metadata ({}) and deserialize ({}) disagree",
            verdict(&theirs),
            verdict(&views)
        ));
    }
    if header.is_some_and(repeats_a_key) {
        return match (ours, &theirs) {
            (Ok(_), _) => Err("the runtime read a header that repeats a key".to_string()),
            (Err(e), Ok(_)) if !e.to_string().contains("given twice") => Err(format!(
                "the crate read a header that repeats a key, and the runtime refused it for \
                 another reason than the repetition: {e}"
            )),
            (Err(_), _) => Ok(Verdict::Exception(Exception::RepeatedKey)),
        };
    }
    let (ours, (header_len, metadata), views) = match (ours, theirs, views) {
        (Err(_), Err(_), _) => return Ok(Verdict::BothReject),
        (Ok(_), Err(e), _) => {
            return Err(format!(
                "the runtime read the archive, the crate refused it: {e:?}"
            ))
        }
        (Err(e), Ok(_), _) => {
            return Err(format!(
                "the crate read the archive, the runtime refused it: {e}"
            ))
        }
        (Ok(ours), Ok(theirs), Ok(views)) => (ours, theirs, views),
        (Ok(_), Ok(_), Err(e)) => {
            return Err(format!(
                "the crate's read_metadata accepted the archive, its deserialize refused it: {e:?}"
            ))
        }
    };
    // The tensors: the same names, each with the same type, shape and bytes.
    if views.len() != ours.tensors().len() {
        return Err(format!(
            "the crate reads {} tensors ({:?}), the runtime {} ({:?})",
            views.len(),
            views.names(),
            ours.tensors().len(),
            ours.tensors().iter().map(|t| t.name()).collect::<Vec<_>>()
        ));
    }
    let data_start = 8 + header_len;
    for t in ours.tensors() {
        let name = t.name();
        let view = views
            .tensor(name)
            .map_err(|e| format!("the crate has no tensor `{name}` ({e:?})"))?;
        let info = metadata
            .info(name)
            .ok_or_else(|| format!("the crate's metadata has no tensor `{name}`"))?;
        let dtype = view.dtype().to_string();
        if t.data_type().as_deref() != Some(dtype.as_str()) {
            return Err(format!(
                "`{name}`: the crate reads dtype {dtype}, the runtime {:?}",
                t.data_type()
            ));
        }
        let shape: Vec<u64> = view.shape().iter().map(|&d| d as u64).collect();
        if t.shape() != Some(shape.as_slice()) {
            return Err(format!(
                "`{name}`: the crate reads shape {shape:?}, the runtime {:?}",
                t.shape()
            ));
        }
        // The view's bytes, located in the archive by address: what the crate would hand out.
        let at = view.data().as_ptr() as usize - archive.as_ptr() as usize;
        let theirs_range = (at as u64, view.data().len() as u64);
        let from_offsets = (
            (data_start + info.data_offsets.0) as u64,
            (info.data_offsets.1 - info.data_offsets.0) as u64,
        );
        if theirs_range != from_offsets || theirs_range != (t.offset(), t.length()) {
            return Err(format!(
                "`{name}`: the crate's bytes are (offset, length) {theirs_range:?} \
                 (data_offsets give {from_offsets:?}), the runtime's {:?}",
                (t.offset(), t.length())
            ));
        }
    }
    // The metadata: absent and `null` are both no entries.
    let theirs_metadata: BTreeMap<String, String> = metadata
        .metadata()
        .iter()
        .flat_map(|m| m.iter())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if &theirs_metadata != ours.metadata() {
        return Err(format!(
            "the crate reads __metadata__ {theirs_metadata:?}, the runtime {:?}",
            ours.metadata()
        ));
    }
    Ok(Verdict::BothAccept {
        tensors: ours.tensors().len(),
        metadata: theirs_metadata.len(),
    })
}

/// What the runtime promises of any catalog it reads from an archive, whatever the crate
/// says: one file (the archive, its size), unique names, tensors in file order, each range
/// inside the file's data section.
fn check_catalog_shape(archive: &[u8], catalog: &Catalog) -> Result<(), String> {
    let len = archive.len() as u64;
    if catalog.files().len() != 1 || catalog.files()[0].len() != len {
        return Err(format!(
            "the runtime's catalog has files {:?}, expected one of {len} bytes",
            catalog.files()
        ));
    }
    let names: BTreeSet<&str> = catalog.tensors().iter().map(|t| t.name()).collect();
    if names.len() != catalog.tensors().len() {
        return Err("the runtime's catalog repeats a tensor name".to_string());
    }
    let mut at = 0;
    for t in catalog.tensors() {
        if t.file() != 0 || t.offset() < at || !t.fits(len) {
            return Err(format!(
                "the runtime's tensor `{}` at ({}, {}) is out of order or outside the file",
                t.name(),
                t.offset(),
                t.length()
            ));
        }
        at = t.offset();
    }
    Ok(())
}

/// The header bytes as the crate frames them: after the 8-byte little-endian length, within
/// the limit and the archive. `None` when the framing itself is broken.
fn framed_header(archive: &[u8]) -> Option<&[u8]> {
    let n = u64::from_le_bytes(archive.get(..8)?.try_into().ok()?);
    if n > MAX_HEADER {
        return None;
    }
    archive.get(8..8 + n as usize)
}

/// [`Exception::DataEndPast64Bits`]: the crate's own parse of the header is valid and its
/// data length plus 8 + the header's length overflows 64 bits.
fn data_end_past_64_bits(header: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(header) else {
        return false;
    };
    serde_json::from_str::<safetensors::tensor::Metadata>(text)
        .is_ok_and(|m| m.data_len().checked_add(8 + header.len()).is_none())
}

/// [`Exception::RepeatedKey`]: the header is JSON in which some object, at any depth, names
/// a key twice (compared after unescaping). A walk of our own, not the runtime's.
fn repeats_a_key(header: &[u8]) -> bool {
    serde_json::from_slice::<Repeats>(header).is_ok_and(|r| r.0)
}

/// Whether a JSON value repeats a key in any of its objects.
struct Repeats(bool);

impl<'de> serde::Deserialize<'de> for Repeats {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RepeatsVisitor)
    }
}

struct RepeatsVisitor;

impl<'de> serde::de::Visitor<'de> for RepeatsVisitor {
    type Value = Repeats;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_str<E>(self, _: &str) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_unit<E>(self) -> Result<Repeats, E> {
        Ok(Repeats(false))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Repeats, A::Error> {
        let mut any = false;
        while let Some(Repeats(r)) = seq.next_element()? {
            any |= r;
        }
        Ok(Repeats(any))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Repeats, A::Error> {
        let mut keys = BTreeSet::new();
        let mut any = false;
        while let Some(key) = map.next_key::<String>()? {
            any |= !keys.insert(key);
            let Repeats(r) = map.next_value()?;
            any |= r;
        }
        Ok(Repeats(any))
    }
}

/// "accepted" or the error, for messages.
fn verdict<T, E: std::fmt::Debug>(r: &Result<T, E>) -> String {
    match r {
        Ok(_) => "accepted".to_string(),
        Err(e) => format!("{e:?}"),
    }
}
