//! The JSON header of a SafeTensors archive: the storage types, the tensor entries and
//! `__metadata__`.
//!
//! Checked as the `safetensors` crate checks a header (its `Metadata`): entries sorted by
//! `data_offsets` run contiguously from offset 0, each exactly as long as its type and shape
//! take, and sub-byte types fill whole bytes; unknown fields of an entry are ignored. Stricter
//! in one way: a key given twice (a tensor name, `__metadata__`, or a metadata key) is an
//! error, where a JSON map would keep the last one without a word (the crate's one rule for
//! repeated keys, `json_keys`). Offsets and dimensions are 64-bit on every target.
//!
//! Every broken entry is reported at once, not only the first.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// Defines [`Dtype`] from one table: each SafeTensors storage type, as the header spells it,
/// and the bits one element takes.
macro_rules! dtypes {
    ($($name:ident $bits:literal,)*) => {
        /// A SafeTensors storage type, spelled as in the header (`F32`, `BF16`, …).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        pub(crate) enum Dtype {
            $(
                #[doc = concat!("`", stringify!($name), "`: ", stringify!($bits), " bits.")]
                $name,
            )*
        }

        impl Dtype {
            /// Every storage type, in the order of the `safetensors` crate.
            #[cfg(test)]
            pub(crate) const ALL: &'static [Dtype] = &[$(Dtype::$name,)*];

            /// The type as the header spells it.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Dtype::$name => stringify!($name),)*
                }
            }

            /// The bits one element takes.
            pub(crate) fn bits(self) -> u64 {
                match self {
                    $(Dtype::$name => $bits,)*
                }
            }
        }
    };
}

dtypes! {
    BOOL 8,
    F4 4,
    F6_E2M3 6,
    F6_E3M2 6,
    U8 8,
    I8 8,
    F8_E5M2 8,
    F8_E4M3 8,
    F8_E8M0 8,
    F8_E4M3FNUZ 8,
    F8_E5M2FNUZ 8,
    I16 16,
    U16 16,
    F16 16,
    BF16 16,
    I32 32,
    U32 32,
    F32 32,
    C64 64,
    F64 64,
    I64 64,
    U64 64,
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One tensor entry of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The tensor's name (its key in the header).
    pub(crate) name: String,
    /// Its storage type.
    pub(crate) dtype: Dtype,
    /// Its shape.
    pub(crate) shape: Vec<u64>,
    /// Its first byte, counted from the start of the data section.
    pub(crate) start: u64,
    /// Its exclusive end, counted from the start of the data section.
    pub(crate) end: u64,
}

/// A checked header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// The tensor entries by offset (entries of equal offsets, which only empty tensors can
    /// share, in the order the header lists them).
    pub(crate) tensors: Vec<Entry>,
    /// `__metadata__` (empty when absent or `null`).
    pub(crate) metadata: BTreeMap<String, String>,
}

impl Header {
    /// The length of the data section the entries describe: the end of the last one.
    pub(crate) fn data_len(&self) -> u64 {
        self.tensors.last().map_or(0, |t| t.end)
    }
}

/// Why a header was refused: what a valid one has and what this one has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub(crate) expected: String,
    pub(crate) found: String,
}

/// Parses and checks the JSON header `bytes`.
pub(crate) fn parse(bytes: &[u8]) -> Result<Header, Invalid> {
    let syntax = |e: serde_json::Error| Invalid {
        expected: "a JSON header: an object of tensor entries ({\"dtype\", \"shape\", \
                   \"data_offsets\"}) and an optional \"__metadata__\" object of strings"
            .to_string(),
        found: e.to_string(),
    };
    let raw: RawHeader = serde_json::from_slice(bytes).map_err(syntax)?;
    crate::json_keys::check_unique_keys(bytes, given_twice).map_err(syntax)?;
    let mut tensors = raw.tensors;
    // Stable: entries of equal offsets keep the header's order.
    tensors.sort_by_key(|t| (t.start, t.end));
    let mut problems = Vec::new();
    let mut at = 0u64;
    for t in &tensors {
        if let Some(problem) = check(t, at) {
            problems.push(problem);
        }
        at = t.end.max(t.start);
    }
    if !problems.is_empty() {
        return Err(Invalid {
            expected: "a JSON header whose tensor entries, in offset order, run contiguously \
                       from data offset 0, each exactly as long as its dtype and shape take"
                .to_string(),
            found: problems.join("; "),
        });
    }
    Ok(Header {
        tensors,
        metadata: raw.metadata,
    })
}

/// What is wrong with entry `t`, which should start at data offset `at`.
fn check(t: &Entry, at: u64) -> Option<String> {
    let Entry {
        name, dtype, shape, ..
    } = t;
    let (start, end) = (t.start, t.end);
    if end < start {
        return Some(format!(
            "`{name}` has data_offsets [{start}, {end}], which end before they start"
        ));
    }
    if start > at {
        return Some(format!(
            "`{name}` starts at data offset {start}, leaving a gap after the bytes before it, which end at {at}"
        ));
    }
    if start < at {
        return Some(format!(
            "`{name}` starts at data offset {start}, inside the bytes before it, which end at {at}"
        ));
    }
    let bits = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .and_then(|n| n.checked_mul(dtype.bits()));
    let Some(bits) = bits else {
        return Some(format!(
            "`{name}` has a shape {shape:?} of {dtype} whose size overflows 64 bits"
        ));
    };
    if bits % 8 != 0 {
        return Some(format!(
            "`{name}` has a shape {shape:?} of {dtype} that takes {bits} bits, not a whole number of bytes"
        ));
    }
    let held = end - start;
    if held != bits / 8 {
        return Some(format!(
            "`{name}` has data_offsets [{start}, {end}] holding {held} bytes, but its shape {shape:?} of {dtype} takes {}",
            bits / 8
        ));
    }
    None
}

/// What a repeated key is, by where it is: a tensor name or `__metadata__` at the top, a
/// metadata key inside `__metadata__`, or a key inside a tensor's entry (one of its own fields
/// repeats as serde's `duplicate field` before this is asked; an ignored one arrives here).
fn given_twice(path: &[std::borrow::Cow<'_, str>], key: &str) -> String {
    match path {
        [] if key == METADATA_KEY => format!("\"{METADATA_KEY}\" is given twice"),
        [] => format!("tensor `{key}` is given twice"),
        [top] if top == METADATA_KEY => format!("{METADATA_KEY} key `{key}` is given twice"),
        [tensor, ..] => format!("key `{key}` is given twice in the entry of tensor `{tensor}`"),
    }
}

/// The header as written: entries in the header's order.
struct RawHeader {
    tensors: Vec<Entry>,
    metadata: BTreeMap<String, String>,
}

/// A tensor entry's value as written (other fields are ignored, as `safetensors` does).
#[derive(Deserialize)]
struct Info {
    dtype: Dtype,
    shape: Vec<u64>,
    data_offsets: (u64, u64),
}

const METADATA_KEY: &str = "__metadata__";

impl<'de> Deserialize<'de> for RawHeader {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct HeaderVisitor;
        impl<'de> Visitor<'de> for HeaderVisitor {
            type Value = RawHeader;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawHeader, A::Error> {
                let mut tensors: Vec<Entry> = Vec::new();
                let mut metadata: Option<Strings> = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == METADATA_KEY {
                        metadata = map.next_value()?;
                        continue;
                    }
                    let info: Info = map
                        .next_value()
                        .map_err(|e| de::Error::custom(format_args!("tensor `{key}`: {e}")))?;
                    tensors.push(Entry {
                        name: key,
                        dtype: info.dtype,
                        shape: info.shape,
                        start: info.data_offsets.0,
                        end: info.data_offsets.1,
                    });
                }
                Ok(RawHeader {
                    tensors,
                    metadata: metadata.map(|s| s.0).unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_map(HeaderVisitor)
    }
}

/// `__metadata__`: strings by key, each value's error naming its key.
struct Strings(BTreeMap<String, String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StringsVisitor;
        impl<'de> Visitor<'de> for StringsVisitor {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strings, A::Error> {
                let mut strings = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: String = map.next_value().map_err(|e| {
                        de::Error::custom(format_args!("{METADATA_KEY} key `{key}`: {e}"))
                    })?;
                    strings.insert(key, value);
                }
                Ok(Strings(strings))
            }
        }
        deserializer.deserialize_map(StringsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, dtype: Dtype, shape: &[u64], start: u64, end: u64) -> Entry {
        Entry {
            name: name.to_string(),
            dtype,
            shape: shape.to_vec(),
            start,
            end,
        }
    }

    /// Every variant of the pinned `safetensors::Dtype`, in declaration order. The enum is
    /// `#[non_exhaustive]`, so no match outside its crate can be exhaustive; its derived
    /// `Deserialize` lists every variant when it meets a name it does not know ("unknown
    /// variant `…`, expected one of `BOOL`, `F4`, …").
    fn their_dtypes() -> Vec<String> {
        let err = serde_json::from_str::<safetensors::Dtype>("\"NOT_A_DTYPE\"").unwrap_err();
        let message = err.to_string();
        let (_, list) = message
            .split_once("expected one of ")
            .unwrap_or_else(|| panic!("serde's message lists no variants: {message}"));
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    /// A new `safetensors` release may add storage types; the reference is pinned
    /// (`=0.8.0` in weights-runtime/Cargo.toml and fuzz/Cargo.toml), and on an upgrade this
    /// test says what to change.
    #[test]
    fn the_pinned_safetensors_has_exactly_our_dtypes() {
        let theirs = their_dtypes();
        // The listing itself works: every listed name parses back, and the list is not empty.
        assert!(theirs.iter().any(|d| d == "F32"), "{theirs:?}");
        for name in &theirs {
            let parsed: safetensors::Dtype = serde_json::from_str(&format!("\"{name}\""))
                .unwrap_or_else(|e| panic!("`{name}` from serde's list does not parse: {e}"));
            assert_eq!(&parsed.to_string(), name);
        }
        let ours: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
        assert_eq!(
            theirs, ours,
            "the storage types of the pinned `safetensors` crate (left) differ from this \
             reader's table (right, `dtypes!` in weights-runtime/src/sidecar/formats/safetensors/header.rs): \
             add each new type to `dtypes!` with its bits, in the crate's order (their `Dtype::bitsize`), \
             decide whether the resolver accepts it for any logical type (`Dtype::of` in \
             formats/safetensors.rs; the format's table says which), and only then move the \
             exact version `=0.X.Y` in weights-runtime/Cargo.toml and fuzz/Cargo.toml"
        );
    }

    #[test]
    fn names_and_bits_follow_the_safetensors_crate() {
        assert_eq!(Dtype::ALL.len(), their_dtypes().len());
        for &dtype in Dtype::ALL {
            let json = format!("\"{dtype}\"");
            let theirs: safetensors::Dtype = serde_json::from_str(&json).unwrap();
            assert_eq!(theirs.to_string(), dtype.name());
            assert_eq!(theirs.bitsize() as u64, dtype.bits(), "{dtype}");
            assert_eq!(serde_json::from_str::<Dtype>(&json).unwrap(), dtype);
        }
        assert!(serde_json::from_str::<Dtype>("\"f32\"").is_err());
    }

    #[test]
    fn entries_come_out_by_offset_with_metadata() {
        let header = parse(
            br#"{"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},
                 "__metadata__":{"format":"pt"},
                 "a":{"dtype":"I8","shape":[4],"data_offsets":[0,4],"extra":1},
                 "e":{"dtype":"F4","shape":[0],"data_offsets":[12,12]},
                 "d":{"dtype":"F4","shape":[2,0],"data_offsets":[12,12]}}"#,
        )
        .unwrap();
        let names: Vec<&str> = header.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "e", "d"]);
        assert_eq!(header.tensors[1], entry("b", Dtype::F32, &[2], 4, 12));
        assert_eq!(header.metadata["format"], "pt");
        assert_eq!(header.data_len(), 12);
        let empty = parse(br#"{"__metadata__":null}"#).unwrap();
        assert!(empty.tensors.is_empty() && empty.metadata.is_empty());
        assert_eq!(empty.data_len(), 0);
    }

    #[test]
    fn every_broken_entry_is_named_at_once() {
        let err = parse(
            br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]},
                 "b":{"dtype":"U8","shape":[3],"data_offsets":[10,13]},
                 "c":{"dtype":"F4","shape":[3],"data_offsets":[13,15]},
                 "d":{"dtype":"U8","shape":[1],"data_offsets":[20,16]}}"#,
        )
        .unwrap_err();
        assert!(
            err.found.contains(
                "`a` has data_offsets [0, 4] holding 4 bytes, but its shape [2] of F32 takes 8"
            ),
            "{}",
            err.found
        );
        assert!(
            err.found
                .contains("`b` starts at data offset 10, leaving a gap"),
            "{}",
            err.found
        );
        assert!(
            err.found
                .contains("`c` has a shape [3] of F4 that takes 12 bits"),
            "{}",
            err.found
        );
        assert!(
            err.found
                .contains("`d` has data_offsets [20, 16], which end before they start"),
            "{}",
            err.found
        );
        let overlap = parse(
            br#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},
                 "b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}"#,
        )
        .unwrap_err();
        assert!(
            overlap.found.contains(
                "`b` starts at data offset 2, inside the bytes before it, which end at 4"
            ),
            "{}",
            overlap.found
        );
        let huge =
            parse(br#"{"a":{"dtype":"U64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#)
                .unwrap_err();
        assert!(huge.found.contains("overflows 64 bits"), "{}", huge.found);
    }

    #[test]
    fn repeated_keys_are_refused() {
        for (json, says) in [
            (
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#,
                "tensor `a` is given twice",
            ),
            (
                r#"{"__metadata__":{},"__metadata__":{}}"#,
                "\"__metadata__\" is given twice",
            ),
            (
                r#"{"__metadata__":{"k":"1","k":"2"}}"#,
                "__metadata__ key `k` is given twice",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":{"y":1,"y":2}}}"#,
                "key `y` is given twice in the entry of tensor `a`",
            ),
        ] {
            let err = parse(json.as_bytes()).unwrap_err();
            assert!(err.found.contains(says), "{json}: {}", err.found);
        }
    }

    #[test]
    fn malformed_headers_say_where() {
        for (json, says) in [
            ("[]", "expected a JSON object"),
            (
                r#"{"a":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#,
                "tensor `a`: unknown variant `F33`",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
                "tensor `a`",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}"#,
                "tensor `a`",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[1]}}"#,
                "missing field `data_offsets`",
            ),
            (r#"{"__metadata__":{"k":1}}"#, "__metadata__ key `k`"),
            (r#"{"__metadata__":[]}"#, "an object of strings"),
            ("{", "EOF"),
        ] {
            let err = parse(json.as_bytes()).unwrap_err();
            assert!(err.found.contains(says), "{json}: {}", err.found);
            assert!(
                err.expected.contains("an object of tensor entries"),
                "{json}"
            );
        }
    }

    /// Headers built from small random entries, laid out one after the other with an
    /// occasional gap, overlap or wrong length, and listed in a shuffled order: this reader
    /// and the `safetensors` crate agree on which are valid, and on the entries of the valid
    /// ones.
    #[test]
    fn agrees_with_the_safetensors_crate() {
        use proptest::prelude::*;
        let skew = prop_oneof![8 => Just(0i64), 1 => -2i64..=2];
        let entry = (
            0usize..22,
            proptest::collection::vec(0u64..4, 0..3),
            skew.clone(),
            skew,
        );
        let header = (proptest::collection::vec(entry, 0..5), any::<u64>());
        let valid = std::cell::Cell::new(0usize);
        proptest!(ProptestConfig::with_cases(3000), |((entries, order) in header)| {
            let mut at = 0i64;
            let mut fields: Vec<String> = entries
                .iter()
                .enumerate()
                .map(|(n, (d, shape, start_skew, len_skew))| {
                    let dtype = Dtype::ALL[*d];
                    let bits = shape.iter().product::<u64>() * dtype.bits();
                    let start = (at + start_skew).max(0);
                    let end = (start + (bits / 8) as i64 + len_skew).max(0);
                    at = end;
                    format!(
                        "\"t{n}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{start},{end}]}}"
                    )
                })
                .collect();
            // A shuffle from the drawn number: headers need not list entries by offset.
            for i in (1..fields.len()).rev() {
                fields.swap(i, (order % (i as u64 + 1)) as usize);
            }
            let json = format!("{{{}}}", fields.join(","));
            let ours = parse(json.as_bytes());
            let theirs = serde_json::from_str::<safetensors::tensor::Metadata>(&json);
            prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{}: {:?}", json, ours);
            if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                valid.set(valid.get() + usize::from(!ours.tensors.is_empty()));
                prop_assert_eq!(ours.data_len(), theirs.data_len() as u64);
                prop_assert_eq!(ours.tensors.len(), entries.len());
                for t in &ours.tensors {
                    let info = theirs.info(&t.name).unwrap();
                    prop_assert_eq!(info.dtype.to_string(), t.dtype.name());
                    prop_assert_eq!((info.data_offsets.0 as u64, info.data_offsets.1 as u64), (t.start, t.end));
                    let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
                    prop_assert_eq!(&shape, &t.shape);
                }
            }
        });
        // The generator reaches both verdicts often, so the comparison means something.
        assert!(
            valid.get() > 300,
            "{} valid headers with tensors",
            valid.get()
        );
    }
}
