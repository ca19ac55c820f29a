//! The one rule for repeated keys in JSON: an object that names a key twice is an error.
//!
//! serde_json keeps the last of repeated keys silently and other parsers keep the first, so a
//! document that repeats a key means different things to different readers. Graph files
//! ([`parse_graph_json`](crate::parse_graph_json)), weight manifests
//! ([`Manifest::parse`](crate::manifest::Manifest::parse)), sharded indexes and SafeTensors
//! archive headers all go through
//! [`check_unique_keys`] after their typed parse (so syntax errors keep serde_json's
//! messages); each names the key and where it is in its own words.
//!
//! The typed reading of a constant's `init` (`graph/model/const_init_de.rs`) also rejects a
//! repeated `kind` or variant field, but as serde's derive does for every struct field
//! (`duplicate field`), which graph files meet before this walk.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// Fails on the first object of `json` (a well-formed document) that repeats a key.
///
/// The error's message is `message(path, key)`, where `path` holds the keys from the top
/// object down to the object that repeats `key` (array elements add nothing), followed by
/// serde_json's line and column of the repetition. serde_json limits nesting to 128 levels,
/// so the walk's recursion is bounded.
pub(crate) fn check_unique_keys(
    json: &[u8],
    message: impl Fn(&[Cow<'_, str>], &str) -> String,
) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let mut path = Vec::new();
    Walk {
        path: &mut path,
        message: &message,
    }
    .deserialize(&mut deserializer)
}

/// The message of graph files and sharded indexes, wherever the object is.
pub(crate) fn duplicate_key(_path: &[Cow<'_, str>], key: &str) -> String {
    format!("duplicate key {key:?}")
}

/// Walks one JSON value, keeping the keys above it in `path`.
struct Walk<'p, 'de, F> {
    path: &'p mut Vec<Cow<'de, str>>,
    message: &'p F,
}

impl<'de, F: Fn(&[Cow<'_, str>], &str) -> String> DeserializeSeed<'de> for Walk<'_, 'de, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, F: Fn(&[Cow<'_, str>], &str) -> String> Visitor<'de> for Walk<'_, 'de, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Walk {
                path: &mut *self.path,
                message: self.message,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = ObjectKeys::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if !seen.first_time(key.clone()) {
                return Err(A::Error::custom((self.message)(self.path, &key)));
            }
            self.path.push(key);
            map.next_value_seed(Walk {
                path: &mut *self.path,
                message: self.message,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

/// The keys of one object seen so far.
#[derive(Default)]
struct ObjectKeys<'de> {
    /// Most objects have a handful of keys: a linear scan beats hashing them.
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> ObjectKeys<'de> {
    /// Records `key`; false if this object named it before.
    fn first_time(&mut self, key: Cow<'de, str>) -> bool {
        if self.many.is_empty() && self.few.len() < 16 {
            let found = self.few.contains(&key);
            if !found {
                self.few.push(key);
            }
            !found
        } else {
            self.many.extend(self.few.drain(..));
            self.many.insert(key)
        }
    }
}

/// An object key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<(), String> {
        check_unique_keys(json.as_bytes(), |path, key| {
            format!("{key} under [{}]", path.join("/"))
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn names_the_key_and_the_keys_above_it() {
        assert_eq!(check(r#"{"a":[{"b":1},{"b":2}],"c":{"d":{}}}"#), Ok(()));
        assert_eq!(
            check(r#"{"a":1,"a":2}"#),
            Err("a under [] at line 1 column 10".into())
        );
        assert_eq!(
            check("{\"a\":[{\"b\":{\"c\":1,\n\"c\":2}}]}"),
            Err("c under [a/b] at line 2 column 3".into())
        );
        // Escaped keys are compared by their value.
        assert!(check(r#"{"\u0061":1,"a":2}"#).is_err());
        // Past 16 keys the set is hashed; the rule is the same.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        assert_eq!(check(&format!("{{{}}}", many.join(","))), Ok(()));
        let repeated = format!("{{{},\"k3\":0}}", many.join(","));
        assert!(check(&repeated).unwrap_err().starts_with("k3 under []"));
        assert_eq!(duplicate_key(&[], "k"), "duplicate key \"k\"");
    }
}
