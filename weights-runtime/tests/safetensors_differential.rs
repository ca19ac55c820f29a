//! The SafeTensors differential test: whole archives, as bytes in a file, read by the
//! runtime (`Catalog::read_safetensors`) and by the pinned `safetensors` crate
//! (`SafeTensors::read_metadata`, `SafeTensors::deserialize`), compared by
//! `support/safetensors_compare.rs` (shared with the fuzz target `safetensors_differential`):
//! the same verdict, and for valid archives the same tensors (name, dtype, shape, byte range)
//! and the same `__metadata__`, except for the named, documented exceptions there.
//!
//! The archives are generated whole: random entries of every storage type the crate has and
//! of unknown ones, shapes with zero and huge dimensions, metadata (strings and other JSON),
//! names with escapes and non-ASCII, whitespace between tokens and trailing spaces in the
//! header; then broken on purpose: offsets with gaps, overlaps, wrong lengths, ends before
//! starts, numbers the format does not take (`1e2`, `-0`, `4.0`, 2^64), repeated keys,
//! invalid UTF-8, a wrong or hostile length prefix, truncation and trailing bytes.
//!
//! 64-bit targets only: on a 32-bit one the crate reads offsets and dimensions as `usize`
//! and refuses what does not fit, where the runtime reads them as 64-bit numbers everywhere
//! (header.rs), a difference this comparison does not model.
#![cfg(target_pointer_width = "64")]

mod common;
#[path = "support/safetensors_compare.rs"]
mod compare;

use common::proptest_config as config;
use compare::{compare, Exception, Verdict};
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use webnn_weights_runtime::formats::Catalog;

/// Every storage type of the pinned crate with its bits, in its order (its `Dtype` is
/// `#[non_exhaustive]`; serde's derive lists the variants when it meets an unknown name).
fn their_dtypes() -> Vec<(String, u64)> {
    let err = serde_json::from_str::<safetensors::Dtype>("\"NOT_A_DTYPE\"").unwrap_err();
    let message = err.to_string();
    let (_, list) = message
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde's message lists no variants: {message}"));
    let dtypes: Vec<(String, u64)> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|name| {
            let dtype: safetensors::Dtype = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            (name.to_string(), dtype.bitsize() as u64)
        })
        .collect();
    assert!(dtypes.len() >= 20, "{dtypes:?}");
    dtypes
}

/// Storage types no reader knows (or spelled as none spells them).
const UNKNOWN_DTYPES: &[&str] = &[
    "F33",
    "f32",
    "Q4_0",
    "",
    "F32 ",
    "INT8",
    "\\u0046\\u0033\\u0032",
];

/// Tensor names: escapes, non-ASCII, JSON specials, near-misses of `__metadata__`.
const NAMES: &[&str] = &[
    "a",
    "b.weight",
    "layer.0.attn::q",
    "名前",
    "ü",
    "emoji 🙂",
    "quote\"",
    "back\\slash",
    "tab\tnewline\n",
    "nul\u{0}",
    "",
    "__metadata__ ",
    "__Metadata__",
    "slash/x",
    " spaced ",
];

/// Metadata keys and values.
const META: &[&str] = &[
    "format",
    "pt",
    "rustnn.webnn.packed4",
    "1",
    "",
    "ünï\u{7f}",
    "line\nbreak",
    "\u{1F600}",
    "\"quoted\"",
    "__metadata__",
];

/// Metadata values that are not strings.
const NOT_STRINGS: &[&str] = &[
    "1",
    "null",
    "true",
    "{}",
    "[\"a\"]",
    "{\"__metadata__\":{}}",
    "1.5",
];

/// Huge dimensions: alone they overflow any product; next to a zero they hold nothing.
const BIG_DIMS: &[u64] = &[
    1 << 32,
    1 << 40,
    1 << 61,
    1 << 62,
    1 << 63,
    u64::MAX,
    u64::MAX - 1,
];

/// Numbers as the format does not write them, put in place of one offset or dimension.
const ODD_NUMBERS: &[&str] = &[
    "1e2",
    "-0",
    "4.0",
    "-1",
    "18446744073709551616",
    "01",
    "0x10",
    "+1",
    "1E0",
];

/// Whitespace between tokens.
const SPACES: &[&str] = &["", " ", "\n  ", "\t", "\r\n", "   "];

/// A JSON string literal of `s`: plain (escaping only what JSON requires) or every character
/// as `\uXXXX` (surrogate pairs beyond the BMP).
fn json_string(s: &str, escape_all: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            _ if escape_all => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One generated tensor entry.
#[derive(Debug, Clone)]
struct EntrySpec {
    /// Index into `NAMES` (only the first entry's counts: the others take the next names).
    name: usize,
    /// Index into the crate's storage types; `>= len` picks an unknown one.
    dtype: usize,
    shape: Vec<u64>,
    /// Added to the start the layout gives (0 most of the time).
    start_skew: i64,
    /// Added to the length the type and shape take.
    len_skew: i64,
    /// 0: plain; 1: an unknown field; 2: a nested `__metadata__`; 3: the dtype in serde's
    /// map form `{"F32":null}`; 4: offsets written end first.
    form: u8,
    escape_name: bool,
}

/// How the archive's bytes are broken after rendering.
#[derive(Debug, Clone)]
enum Framing {
    Intact,
    /// The length prefix off by this many bytes.
    PrefixDelta(i64),
    /// The length prefix replaced.
    PrefixValue(u64),
    /// Only this share (per mille) of the archive kept.
    Truncate(u16),
    /// Bytes after the data.
    Append(Vec<u8>),
    /// One byte of the header replaced by a byte invalid in UTF-8.
    InvalidUtf8(u16, u8),
    /// One byte anywhere flipped.
    Flip(u16, u8),
    /// NUL bytes padding the header instead of spaces.
    NulPadding(u8),
    /// Fewer than 8 bytes.
    Short(u8),
}

/// Everything one archive is made from.
#[derive(Debug, Clone)]
struct ArchiveSpec {
    entries: Vec<EntrySpec>,
    /// Shuffles the entries, and places `__metadata__` among them.
    order: u64,
    /// 0: none; 1: `null`; 2: an object of `meta`.
    metadata: u8,
    /// (key, value) indexes into `META` (only the first key counts: the others take the next
    /// ones); a value `>= META.len()` picks a non-string.
    meta: Vec<(usize, usize)>,
    space: usize,
    /// Trailing spaces in the header; 8 aligns the data section to 8 as the crate's writer
    /// does.
    padding: u8,
    /// A key repeated: 0 none; 1 a tensor name (escaped the other way); 2 a metadata key;
    /// 3 `__metadata__` itself.
    repeat: u8,
    /// One number written oddly: (which number, index into `ODD_NUMBERS`).
    odd_number: Option<(u16, usize)>,
    framing: Framing,
}

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    let dim = prop_oneof![
        16 => 0u64..5,
        2 => Just(0u64),
        1 => proptest::sample::select(BIG_DIMS),
    ];
    let skew = prop_oneof![
        40 => Just(0i64),
        1 => -3i64..=3,
        1 => proptest::sample::select(&[i64::MIN / 2, 1 << 40, -(1 << 40)][..]),
    ];
    (
        0..NAMES.len(),
        prop_oneof![10 => 0usize..64, 1 => 64usize..64 + UNKNOWN_DTYPES.len()],
        proptest::collection::vec(dim, 0..4),
        skew.clone(),
        skew,
        prop_oneof![12 => Just(0u8), 1 => 1u8..=4],
        any::<bool>(),
    )
        .prop_map(
            |(name, dtype, shape, start_skew, len_skew, form, escape_name)| EntrySpec {
                name,
                dtype,
                shape,
                start_skew,
                len_skew,
                form,
                escape_name,
            },
        )
}

fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![
        24 => Just(Framing::Intact),
        1 => prop_oneof![-9i64..=-1, 1i64..=9].prop_map(Framing::PrefixDelta),
        1 => proptest::sample::select(&[0u64, 1, 100_000_000, 100_000_001, 1 << 63, u64::MAX][..])
            .prop_map(Framing::PrefixValue),
        1 => (0u16..1000).prop_map(Framing::Truncate),
        1 => proptest::collection::vec(prop_oneof![Just(b' '), Just(0u8), any::<u8>()], 1..5)
            .prop_map(Framing::Append),
        1 => (any::<u16>(), prop_oneof![Just(0xFFu8), Just(0xC0), Just(0x80), Just(0xED)])
            .prop_map(|(at, b)| Framing::InvalidUtf8(at, b)),
        1 => (any::<u16>(), 1u8..=255).prop_map(|(at, x)| Framing::Flip(at, x)),
        1 => (1u8..9).prop_map(Framing::NulPadding),
        1 => (0u8..8).prop_map(Framing::Short),
    ]
}

fn archive_spec() -> impl Strategy<Value = ArchiveSpec> {
    (
        proptest::collection::vec(entry_spec(), 0..6),
        any::<u64>(),
        prop_oneof![1 => Just(0u8), 1 => Just(1u8), 3 => Just(2u8)],
        proptest::collection::vec(
            (
                0..META.len(),
                prop_oneof![12 => 0..META.len(), 1 => META.len()..META.len() + NOT_STRINGS.len()],
            ),
            0..4,
        ),
        0..SPACES.len(),
        prop_oneof![2 => Just(0u8), 2 => Just(8u8), 1 => 1u8..16],
        prop_oneof![30 => Just(0u8), 1 => 1u8..=3],
        prop_oneof![14 => Just(None), 1 => (any::<u16>(), 0..ODD_NUMBERS.len()).prop_map(Some)],
        framing(),
    )
        .prop_map(
            |(entries, order, metadata, meta, space, padding, repeat, odd_number, framing)| {
                ArchiveSpec {
                    entries,
                    order,
                    metadata,
                    meta,
                    space,
                    padding,
                    repeat,
                    odd_number,
                    framing,
                }
            },
        )
}

/// The bytes of the archive `spec` describes, with storage types from `dtypes`.
fn render(spec: &ArchiveSpec, dtypes: &[(String, u64)]) -> Vec<u8> {
    let sp = SPACES[spec.space];
    // Numbers in order of writing; one of them may be written oddly.
    let mut numbers = 0u16;
    let mut number = |n: i128| -> String {
        numbers = numbers.wrapping_add(1);
        match spec.odd_number {
            Some((which, odd)) if which % 16 == numbers % 16 => ODD_NUMBERS[odd].to_string(),
            _ => n.to_string(),
        }
    };
    let mut fields: Vec<String> = Vec::new();
    let mut first_name = None;
    let mut at: i128 = 0;
    for (n, e) in spec.entries.iter().enumerate() {
        // Distinct names: consecutive from the first entry's pick.
        let name = NAMES[(spec.entries[0].name + n) % NAMES.len()];
        first_name.get_or_insert((name, e.escape_name));
        let (dtype, bits) = if e.dtype < 64 {
            dtypes[e.dtype % dtypes.len()].clone()
        } else {
            (UNKNOWN_DTYPES[e.dtype - 64].to_string(), 8)
        };
        let elements = e
            .shape
            .iter()
            .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)));
        let bytes = elements.map_or(0, |n| n.saturating_mul(u128::from(bits)) / 8) as i128;
        let start = (at + i128::from(e.start_skew)).max(0);
        let end = (start + bytes + i128::from(e.len_skew)).max(0);
        at = end;
        let dtype_json = if e.form == 3 {
            format!("{{{sp}\"{dtype}\":{sp}null}}")
        } else {
            format!("\"{dtype}\"")
        };
        let shape: Vec<String> = e.shape.iter().map(|&d| number(i128::from(d))).collect();
        let offsets = if e.form == 4 {
            format!("[{},{sp}{}]", number(end), number(start))
        } else {
            format!("[{},{sp}{}]", number(start), number(end))
        };
        let extra = match e.form {
            1 => format!(",{sp}\"extra\":{sp}[1,{sp}{{\"x\":null}}]"),
            2 => format!(",{sp}\"__metadata__\":{sp}{{\"k\":\"v\"}}"),
            _ => String::new(),
        };
        fields.push(format!(
            "{}:{sp}{{{sp}\"dtype\":{sp}{dtype_json},{sp}\"shape\":{sp}[{}],{sp}\"data_offsets\":{sp}{offsets}{extra}{sp}}}",
            json_string(name, e.escape_name),
            shape.join(&format!(",{sp}")),
        ));
    }
    let data_len = at;
    // Shuffled: headers need not list entries by offset.
    let mut order = spec.order;
    for i in (1..fields.len()).rev() {
        fields.swap(i, (order % (i as u64 + 1)) as usize);
        order /= i as u64 + 1;
    }
    if spec.repeat == 1 {
        if let Some((name, escaped)) = first_name {
            fields.push(format!(
                "{}:{sp}{{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}",
                json_string(name, !escaped)
            ));
        }
    }
    let metadata = match spec.metadata {
        0 => None,
        1 => Some("null".to_string()),
        _ => {
            let mut pairs: Vec<String> = spec
                .meta
                .iter()
                .enumerate()
                .map(|(n, &(_, v))| {
                    // Distinct keys: consecutive from the first pair's pick.
                    let key = json_string(META[(spec.meta[0].0 + n) % META.len()], n % 2 == 1);
                    let value = match META.get(v) {
                        Some(s) => json_string(s, false),
                        None => NOT_STRINGS[v - META.len()].to_string(),
                    };
                    format!("{key}:{sp}{value}")
                })
                .collect();
            if spec.repeat == 2 {
                let key = META[spec.meta.first().map_or(0, |m| m.0) % META.len()];
                pairs.push(format!("{}:{sp}\"again\"", json_string(key, true)));
                if spec.meta.is_empty() {
                    pairs.push(format!("{}:{sp}\"again\"", json_string(key, false)));
                }
            }
            Some(format!("{{{sp}{}{sp}}}", pairs.join(&format!(",{sp}"))))
        }
    };
    if let Some(m) = metadata {
        let at = (spec.order % (fields.len() as u64 + 1)) as usize;
        fields.insert(at, format!("\"__metadata__\":{sp}{m}"));
        if spec.repeat == 3 {
            fields.push(format!("\"\\u005f_metadata__\":{sp}{m}"));
        }
    }
    let mut header = format!("{sp}{{{sp}{}{sp}}}", fields.join(&format!(",{sp}"))).into_bytes();
    match spec.padding {
        0 => {}
        8 => header.resize(header.len().next_multiple_of(8), b' '),
        n => header.extend(std::iter::repeat_n(b' ', usize::from(n))),
    }
    if let Framing::NulPadding(n) = spec.framing {
        header.extend(std::iter::repeat_n(0u8, usize::from(n)));
    }
    if let Framing::InvalidUtf8(at, b) = spec.framing {
        if !header.is_empty() {
            let i = usize::from(at) % header.len();
            header[i] = b;
        }
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    // The data section: as long as the entries claim when that is small; a claim too large
    // to write gets a few bytes (a truncated archive).
    let data = if (0..=1 << 16).contains(&data_len) {
        data_len as usize
    } else {
        (spec.order % 17) as usize
    };
    bytes.extend((0..data).map(|i| (i * 31 + 7) as u8));
    match &spec.framing {
        Framing::PrefixDelta(d) => {
            let n = (header.len() as i64 + d).max(0) as u64;
            bytes[..8].copy_from_slice(&n.to_le_bytes());
        }
        Framing::PrefixValue(v) => bytes[..8].copy_from_slice(&v.to_le_bytes()),
        Framing::Truncate(per_mille) => {
            bytes.truncate(bytes.len() * usize::from(*per_mille) / 1000);
        }
        Framing::Append(extra) => bytes.extend_from_slice(extra),
        Framing::Flip(at, x) => {
            let i = usize::from(*at) % bytes.len();
            bytes[i] ^= x;
        }
        Framing::Short(n) => bytes.truncate(usize::from(*n)),
        Framing::Intact | Framing::InvalidUtf8(..) | Framing::NulPadding(_) => {}
    }
    bytes
}

/// Both readers on `bytes`: written to `path`, read back by the runtime, compared.
fn judge(bytes: &[u8], path: &Path) -> Result<Verdict, String> {
    std::fs::write(path, bytes).unwrap();
    let ours = Catalog::read_safetensors(path);
    compare(bytes, &ours).map_err(|e| format!("{e}\narchive: {:?}", String::from_utf8_lossy(bytes)))
}

/// What the generated archives came to.
#[derive(Debug, Default)]
struct Tally {
    accepted: usize,
    accepted_with_tensors: usize,
    accepted_with_metadata: usize,
    rejected: usize,
    exceptions: BTreeMap<Exception, usize>,
}

#[test]
fn whole_archives_agree_with_the_safetensors_crate() {
    let dtypes = their_dtypes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    let tally = RefCell::new(Tally::default());
    let config = config(4000);
    let cases = config.cases as usize;
    proptest!(config, |(spec in archive_spec())| {
        let bytes = render(&spec, &dtypes);
        let verdict = judge(&bytes, &path);
        prop_assert!(verdict.is_ok(), "{}\n{:?}", verdict.unwrap_err(), spec);
        let mut tally = tally.borrow_mut();
        match verdict.unwrap() {
            Verdict::BothAccept { tensors, metadata } => {
                tally.accepted += 1;
                tally.accepted_with_tensors += usize::from(tensors > 0);
                tally.accepted_with_metadata += usize::from(metadata > 0);
            }
            Verdict::BothReject => tally.rejected += 1,
            Verdict::Exception(e) => *tally.exceptions.entry(e).or_default() += 1,
        }
    });
    // The generator reaches every outcome often enough for the comparison to mean something.
    let tally = tally.into_inner();
    eprintln!("{cases} cases: {tally:?}");
    // Shares well below what the generator gives (of 4000 cases about 24% valid with
    // tensors, 15% valid with metadata, 62% refused by both, 2% repeating a key). The
    // other exception, data ending past 2^64, is too rare to draw: `named_cases_get_their_verdicts`
    // and a fuzz seed build it.
    assert!(
        tally.accepted_with_tensors > cases / 8
            && tally.accepted_with_metadata > cases / 16
            && tally.rejected > cases / 3
            && tally.exceptions.get(&Exception::RepeatedKey) > Some(&(cases / 200)),
        "{cases} cases: {tally:?}"
    );
}

/// An archive of `header` (a JSON text, as written) and `data` bytes of data.
fn archive(header: &str, data: usize) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(7u8, data));
    bytes
}

/// Entries that are each valid and contiguous but end at 2^64 - 1: eight U8 tensors of
/// 2^61 - 1 bytes (the most whose bits still fit in 64), then one of 7 bytes.
fn data_ending_at_2_64() -> String {
    let mut fields = Vec::new();
    let step = (1u64 << 61) - 1;
    for i in 0..8u64 {
        fields.push(format!(
            "\"u{i}\":{{\"dtype\":\"U8\",\"shape\":[{step}],\"data_offsets\":[{},{}]}}",
            i * step,
            (i + 1) * step
        ));
    }
    fields.push(format!(
        "\"last\":{{\"dtype\":\"U8\",\"shape\":[7],\"data_offsets\":[{},{}]}}",
        8 * step,
        u64::MAX
    ));
    format!("{{{}}}", fields.join(","))
}

/// The cases the issue named, one by one, with the verdict each must get.
#[test]
fn named_cases_get_their_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    let accept = |tensors, metadata| Verdict::BothAccept { tensors, metadata };
    let entry = r#""a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#;
    let with_prefix = |n: u64, rest: &[u8]| {
        let mut b = n.to_le_bytes().to_vec();
        b.extend_from_slice(rest);
        b
    };
    let cases: Vec<(&str, Vec<u8>, Verdict)> = vec![
        ("empty header", archive("{}", 0), accept(0, 0)),
        (
            "one tensor",
            archive(&format!("{{{entry}}}"), 8),
            accept(1, 0),
        ),
        (
            "trailing spaces",
            archive(&format!("{{{entry}}}       "), 8),
            accept(1, 0),
        ),
        (
            "leading whitespace, newlines",
            archive(&format!("\n\t {{ {entry} }}\r\n"), 8),
            accept(1, 0),
        ),
        (
            "NUL padding",
            archive(&format!("{{{entry}}}\0\0"), 8),
            Verdict::BothReject,
        ),
        (
            "trailing data byte",
            archive(&format!("{{{entry}}}"), 9),
            Verdict::BothReject,
        ),
        (
            "data one byte short",
            archive(&format!("{{{entry}}}"), 7),
            Verdict::BothReject,
        ),
        ("no bytes", Vec::new(), Verdict::BothReject),
        ("7 bytes", vec![0; 7], Verdict::BothReject),
        ("header length 0", with_prefix(0, b""), Verdict::BothReject),
        (
            "header length past the file",
            with_prefix(3, b"{}"),
            Verdict::BothReject,
        ),
        (
            "header length past the limit",
            with_prefix(100_000_001, b"{}"),
            Verdict::BothReject,
        ),
        (
            "header length 2^64-1",
            with_prefix(u64::MAX, b"{}"),
            Verdict::BothReject,
        ),
        (
            "invalid UTF-8 in a name",
            with_prefix(7, b"{\"\xff\":1}"),
            Verdict::BothReject,
        ),
        ("not an object", archive("[]", 0), Verdict::BothReject),
        (
            "escaped names",
            archive(
                r#"{"\u00fc\ud83d\ude00\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
                1,
            ),
            accept(1, 0),
        ),
        (
            "lone surrogate in an ignored field",
            archive(
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":"\ud800"}}"#,
                0,
            ),
            Verdict::BothReject,
        ),
        (
            "repeated tensor",
            archive(
                &format!(
                    r#"{{{entry},"\u0061":{{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}}}"#
                ),
                8,
            ),
            Verdict::Exception(Exception::RepeatedKey),
        ),
        (
            "repeated metadata key",
            archive(r#"{"__metadata__":{"k":"1","k":"2"}}"#, 0),
            Verdict::Exception(Exception::RepeatedKey),
        ),
        (
            "repeated __metadata__",
            archive(r#"{"__metadata__":{},"__metadata__":{}}"#, 0),
            Verdict::Exception(Exception::RepeatedKey),
        ),
        (
            "metadata",
            archive(r#"{"__metadata__":{"format":"pt","":"\u00e9"}}"#, 0),
            accept(0, 2),
        ),
        (
            "metadata null",
            archive(r#"{"__metadata__":null}"#, 0),
            accept(0, 0),
        ),
        (
            "metadata number",
            archive(r#"{"__metadata__":{"k":1}}"#, 0),
            Verdict::BothReject,
        ),
        (
            "metadata nested",
            archive(r#"{"__metadata__":{"k":{"k":"v"}}}"#, 0),
            Verdict::BothReject,
        ),
        (
            "metadata a string",
            archive(r#"{"__metadata__":"pt"}"#, 0),
            Verdict::BothReject,
        ),
        (
            "__metadata__ inside an entry",
            archive(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"__metadata__":{"k":1}}}"#,
                1,
            ),
            accept(1, 0),
        ),
        (
            "unknown dtype",
            archive(
                r#"{"a":{"dtype":"F33","shape":[],"data_offsets":[0,4]}}"#,
                4,
            ),
            Verdict::BothReject,
        ),
        (
            "lower-case dtype",
            archive(
                r#"{"a":{"dtype":"f32","shape":[],"data_offsets":[0,4]}}"#,
                4,
            ),
            Verdict::BothReject,
        ),
        (
            "dtype in serde's map form",
            archive(
                r#"{"a":{"dtype":{"F32":null},"shape":[],"data_offsets":[0,4]}}"#,
                4,
            ),
            accept(1, 0),
        ),
        (
            "shape 1e2",
            archive(
                r#"{"a":{"dtype":"U8","shape":[1e2],"data_offsets":[0,100]}}"#,
                100,
            ),
            Verdict::BothReject,
        ),
        (
            "shape -0",
            archive(
                r#"{"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,0]}}"#,
                0,
            ),
            Verdict::BothReject,
        ),
        (
            "offset 4.0",
            archive(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4.0]}}"#,
                4,
            ),
            Verdict::BothReject,
        ),
        (
            "offset 2^64",
            archive(
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551616,0]}}"#,
                0,
            ),
            Verdict::BothReject,
        ),
        (
            "big dims beside a zero",
            archive(
                r#"{"a":{"dtype":"F64","shape":[18446744073709551615,0,4294967296],"data_offsets":[0,0]}}"#,
                0,
            ),
            accept(1, 0),
        ),
        (
            "product overflows",
            archive(
                r#"{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#,
                0,
            ),
            Verdict::BothReject,
        ),
        (
            "bits overflow",
            archive(
                r#"{"a":{"dtype":"U64","shape":[2305843009213693952],"data_offsets":[0,0]}}"#,
                0,
            ),
            Verdict::BothReject,
        ),
        (
            "4-bit odd count",
            archive(
                r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
                2,
            ),
            Verdict::BothReject,
        ),
        (
            "gap",
            archive(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                2,
            ),
            Verdict::BothReject,
        ),
        (
            "overlap",
            archive(
                r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                2,
            ),
            Verdict::BothReject,
        ),
        (
            "out of order in the header",
            archive(
                r#"{"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
                3,
            ),
            accept(2, 0),
        ),
        (
            "end before start",
            archive(
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}}"#,
                1,
            ),
            Verdict::BothReject,
        ),
        (
            "offsets past the data",
            archive(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
                2,
            ),
            Verdict::BothReject,
        ),
        (
            "entry as an array",
            archive(r#"{"a":["U8",[2],[0,2]]}"#, 2),
            accept(1, 0),
        ),
        (
            "data ending at 2^64 - 1",
            archive(&data_ending_at_2_64(), 0),
            Verdict::Exception(Exception::DataEndPast64Bits),
        ),
    ];
    let mut wrong = Vec::new();
    for (what, bytes, expected) in cases {
        match judge(&bytes, &path) {
            Ok(v) if v == expected => {}
            other => wrong.push(format!("{what}: expected {expected:?}, found {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The names the runtime reads are the decoded ones, as the crate's.
#[test]
fn escaped_names_are_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    std::fs::write(
        &path,
        archive(
            r#"{"\u00fc\ud83d\ude00\n\"\\":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
            1,
        ),
    )
    .unwrap();
    let catalog = Catalog::read_safetensors(&path).unwrap();
    assert_eq!(catalog.tensors()[0].name(), "ü😀\n\"\\");
}

/// [`Exception::DataEndPast64Bits`] is needed while the pinned crate adds without a check:
/// with overflow checks on (debug builds), its `read_metadata` panics on such an archive.
/// When this fails after an upgrade, the crate checks the sum now: drop the exception from
/// `support/safetensors_compare.rs` and let the comparison call the crate.
#[cfg(debug_assertions)]
#[test]
fn the_crate_still_overflows_on_data_ending_near_2_64() {
    let bytes = archive(&data_ending_at_2_64(), 0);
    let result =
        std::panic::catch_unwind(|| safetensors::SafeTensors::read_metadata(&bytes).map(|_| ()));
    assert!(result.is_err(), "the crate returned {result:?}");
}
