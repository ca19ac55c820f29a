//! [`Name`]: the name of an operand or an operation in a [`Node`](crate::Node).
//!
//! **Why not `smol_str`**, the crate made for this (checked with `bash
//! bench/name-vs-smol-str.sh`, docs/benchmarks.md): its maintained releases (0.3.4 and later)
//! need Rust 1.89, above the 1.85 every crate of this workspace builds with, and this type is
//! in the runtime, which every application compiles. Side by side with smol_str 0.3.7 on
//! 200,000 names (a third each short, medium and long), 2026-12-04 22:45 UTC, load average
//! 0.5, best of 7 rounds with the types taking turns: making a name from a `&str` takes 0.56x
//! its time and from a `String` 0.59x (what the parsers do once per name), cloning 1.47x (13
//! against 9 ns: its long names share an `Arc`), a `HashMap` lookup by `&str` 0.94x and
//! building a `BTreeMap` 1.00x. It would be slower where names are made and need a newer
//! compiler.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The name of an operand or an operation: an immutable string that keeps names of up to
/// 22 bytes (`n12345`, `matmul`, `encoder.layers.3.attn`) inline, without a heap
/// allocation; longer names live on the heap as a boxed `str`.
///
/// It reads as a `&str` wherever one is wanted (`Deref<Target = str>`, `AsRef<str>`,
/// `Borrow<str>`, so a `HashMap<Name, _>` or `BTreeMap<Name, _>` is looked up with a
/// `&str`), compares and hashes as its text, and is a plain JSON string in GraphJson.
///
/// ```
/// use std::collections::HashMap;
/// use webnn_weights_runtime::Name;
///
/// let name = Name::from("encoder.layers.3.attn");
/// assert_eq!(name, "encoder.layers.3.attn");
/// assert_eq!(name.len(), 21); // `str` methods through `Deref`
/// assert!(name.starts_with("encoder."));
/// assert_eq!(name.to_string(), "encoder.layers.3.attn");
///
/// let mut producers: HashMap<Name, usize> = HashMap::new();
/// producers.insert(Name::from(String::from("y")), 0);
/// assert_eq!(producers.get("y"), Some(&0)); // looked up by `&str`
///
/// assert_eq!(serde_json::to_string(&name).unwrap(), r#""encoder.layers.3.attn""#);
/// let read: Name = serde_json::from_str(r#""n12""#).unwrap();
/// assert_eq!(read, "n12");
/// ```
#[derive(Clone)]
pub struct Name(Repr);

/// The longest name kept inline: the 24 bytes of a `Name` (a `String`'s size on 64-bit
/// targets), less the tag and the length.
const INLINE: usize = 22;

#[derive(Clone)]
enum Repr {
    /// The first `len` bytes of `bytes`, copied from a `str` (so UTF-8).
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Heap(Box<str>),
}

/// The text of an inline name.
///
/// Validating the bytes again on every read made `parse_webnn` of the 100k-node bench graph
/// 60% slower (48 against 30 ms), hence the unchecked conversion.
#[inline]
#[allow(unsafe_code)]
fn inline_str(bytes: &[u8; INLINE], len: u8) -> &str {
    let bytes = &bytes[..usize::from(len)];
    // SAFETY: `Repr::Inline` is private to this module and made only by `Name::new` (length
    // 0) and `Name::inline`, which copies all `len` bytes of a `str` (so `len <= INLINE`,
    // and the slice above is exactly that UTF-8 text); nothing changes them afterwards.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

impl Default for Name {
    #[inline]
    fn default() -> Name {
        Name::new()
    }
}

impl Name {
    /// An empty name (no allocation).
    #[inline]
    pub const fn new() -> Name {
        Name(Repr::Inline {
            len: 0,
            bytes: [0; INLINE],
        })
    }

    /// The name as a string slice.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => inline_str(bytes, *len),
            Repr::Heap(text) => text,
        }
    }

    /// A name kept inline, when `text` is short enough.
    #[inline]
    fn inline(text: &str) -> Option<Name> {
        let len = text.len();
        (len <= INLINE).then(|| {
            let mut bytes = [0; INLINE];
            bytes[..len].copy_from_slice(text.as_bytes());
            Name(Repr::Inline {
                len: len as u8,
                bytes,
            })
        })
    }
}

impl Deref for Name {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    #[inline]
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Name {
    #[inline]
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Name {
    #[inline]
    fn from(text: &str) -> Name {
        Name::inline(text).unwrap_or_else(|| Name(Repr::Heap(Box::from(text))))
    }
}

impl From<&String> for Name {
    #[inline]
    fn from(text: &String) -> Name {
        Name::from(text.as_str())
    }
}

impl From<String> for Name {
    /// A short name moves inline; a long one keeps the string's buffer (shrunk to fit).
    #[inline]
    fn from(text: String) -> Name {
        Name::inline(&text).unwrap_or_else(|| Name(Repr::Heap(text.into_boxed_str())))
    }
}

impl From<&Name> for Name {
    #[inline]
    fn from(name: &Name) -> Name {
        name.clone()
    }
}

impl From<Name> for String {
    #[inline]
    fn from(name: Name) -> String {
        match name.0 {
            Repr::Heap(text) => text.into_string(),
            Repr::Inline { .. } => name.as_str().to_string(),
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Name {
    /// As a `&str`: `"n1"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    #[inline]
    fn partial_cmp(&self, other: &Name) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    /// Byte order of the text, as `str`'s.
    #[inline]
    fn cmp(&self, other: &Name) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Name {
    /// As the `str` (required by `Borrow<str>`).
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

macro_rules! eq_with_text {
    ($($text:ty),*) => {$(
        impl PartialEq<$text> for Name {
            #[inline]
            fn eq(&self, other: &$text) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }

        impl PartialEq<Name> for $text {
            #[inline]
            fn eq(&self, other: &Name) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

eq_with_text!(str, &str, String);

impl Serialize for Name {
    /// A JSON string.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Name {
    /// From a JSON string.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Name, D::Error> {
        struct Visitor;

        impl serde::de::Visitor<'_> for Visitor {
            type Value = Name;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Name, E> {
                Ok(Name::from(text))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Name, E> {
                Ok(Name::from(text))
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashSet};

    #[test]
    fn short_and_long_names_read_the_same() {
        let long = "model.encoder.layers.123.self_attention.query.weight";
        let edge = "a".repeat(INLINE);
        let past = "b".repeat(INLINE + 1);
        for text in [
            "",
            "x",
            "n12345",
            "encoder.layers.3.attn",
            "é名",
            &edge,
            &past,
            long,
        ] {
            let name = Name::from(text);
            assert_eq!(name, text);
            assert_eq!(Name::from(text.to_string()), name);
            assert_eq!(String::from(name.clone()), text);
            assert_eq!(format!("{name}|{name:?}"), format!("{text}|{text:?}"));
            let json = serde_json::to_string(&name).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<Name>(&json).unwrap(), name);
        }
    }

    #[test]
    fn short_names_are_inline_and_24_bytes_wide() {
        // On every target: the inline bytes, their length and the tag (a boxed `str` fits).
        assert_eq!(std::mem::size_of::<Name>(), INLINE + 2);
        if cfg!(target_pointer_width = "64") {
            assert_eq!(std::mem::size_of::<Name>(), std::mem::size_of::<String>());
        }
        let inline = |name: &Name| matches!(name.0, Repr::Inline { .. });
        assert!(inline(&Name::new()) && inline(&Name::default()));
        assert!(inline(&Name::from("a".repeat(INLINE))));
        assert!(!inline(&Name::from("a".repeat(INLINE + 1).as_str())));
    }

    #[test]
    fn names_order_and_hash_as_their_text() {
        let mut names: Vec<Name> = ["b", "a.b", "a", "B"].into_iter().map(Name::from).collect();
        names.sort();
        assert_eq!(names, ["B", "a", "a.b", "b"]);
        let set: HashSet<Name> = names.iter().cloned().collect();
        assert!(set.contains("a.b"));
        let map: BTreeMap<Name, u8> = [(Name::from("k"), 1)].into_iter().collect();
        assert_eq!(map.get("k"), Some(&1));
    }

    #[test]
    fn a_name_is_a_json_string_only() {
        let e = serde_json::from_str::<Name>("12").unwrap_err();
        assert!(e.to_string().contains("expected a string"), "{e}");
        // Escapes go through `visit_string` or `visit_str` alike.
        assert_eq!(serde_json::from_str::<Name>(r#""a\"b""#).unwrap(), "a\"b");
    }
}
