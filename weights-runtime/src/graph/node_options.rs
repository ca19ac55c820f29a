//! [`NodeOptions`]: a node's named options, a small sorted list.
//!
//! A node has a handful of options; a `BTreeMap` (what `serde_json::Map` is) spends a
//! ~630-byte leaf on each. Here the options are one shared slice sorted by name, and the
//! names are shared `Arc<str>`s, so that a reader can give every node the same name
//! without a new allocation (the `.webnn` parser interns them), and nodes with the same
//! options one copy of them.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// One option: its (shared) name and its value.
type Entry = (Arc<str>, Value);

/// A node's named options: option name -> JSON value, kept sorted by name (byte order),
/// names unique.
///
/// It reads and writes as a JSON object with sorted keys, exactly as a
/// `serde_json::Map<String, Value>` did before, and offers the same everyday methods
/// (`get`, `insert`, `remove`, `iter`, `len`, indexing by name). Lookups are binary
/// searches; an insertion moves the entries after it, which is what a node's handful of
/// options wants (building many options at once: collect them, which sorts once).
///
/// A clone is cheap: clones share their options (reference-counted) until one of them is
/// changed, which then gets a copy of its own. The `.webnn` parser gives the calls of an
/// operation whose options are written the same one shared copy.
///
/// ```
/// use serde_json::json;
/// use webnn_weights_runtime::NodeOptions;
/// let mut options = NodeOptions::new();
/// options.insert("axis".to_string(), json!(1));
/// options.insert("alpha".to_string(), json!(0.5));
/// assert_eq!(options["axis"], 1);
/// assert_eq!(options.keys().collect::<Vec<_>>(), ["alpha", "axis"]);
/// assert_eq!(serde_json::to_string(&options).unwrap(), r#"{"alpha":0.5,"axis":1}"#);
///
/// let read: NodeOptions = serde_json::from_str(r#"{"b": [1, 2], "a": null}"#).unwrap();
/// assert_eq!(read.get("b"), Some(&json!([1, 2])));
/// assert_eq!(read.iter().next(), Some(("a", &json!(null))));
/// ```
#[derive(Clone, Default)]
pub struct NodeOptions {
    /// Sorted by name, names unique; `None` when there are none (never an empty slice).
    entries: Option<Arc<[Entry]>>,
}

/// Equal when they hold the same names with equal values.
impl PartialEq for NodeOptions {
    fn eq(&self, other: &NodeOptions) -> bool {
        self.entries() == other.entries()
    }
}

impl NodeOptions {
    /// No options.
    pub const fn new() -> NodeOptions {
        NodeOptions { entries: None }
    }

    /// No options. `capacity` is not used: options are allocated at their exact size
    /// whenever they change (kept so that code written for a growable map builds).
    pub fn with_capacity(capacity: usize) -> NodeOptions {
        let _ = capacity;
        NodeOptions::new()
    }

    /// Options from entries already sorted by name, names unique (checked in debug builds).
    pub(crate) fn from_sorted(entries: Arc<[Entry]>) -> NodeOptions {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        NodeOptions {
            entries: (!entries.is_empty()).then_some(entries),
        }
    }

    /// Options from a vector already sorted by name, names unique.
    fn from_sorted_vec(entries: Vec<Entry>) -> NodeOptions {
        if entries.is_empty() {
            NodeOptions::new()
        } else {
            NodeOptions::from_sorted(Arc::from(entries))
        }
    }

    /// The entries, sorted by name.
    fn entries(&self) -> &[Entry] {
        self.entries.as_deref().unwrap_or(&[])
    }

    /// The entries, to change values in place: copied first when they are shared.
    fn entries_mut(&mut self) -> &mut [Entry] {
        match &mut self.entries {
            Some(entries) => Arc::make_mut(entries),
            None => &mut [],
        }
    }

    /// The entries as a vector, to add or remove some: moved out when they are not shared
    /// (the values are taken, not cloned), copied when they are.
    fn take_vec(&mut self) -> Vec<Entry> {
        match self.entries.take() {
            None => Vec::new(),
            Some(mut entries) => match Arc::get_mut(&mut entries) {
                Some(unique) => unique
                    .iter_mut()
                    .map(|(k, v)| (Arc::clone(k), std::mem::take(v)))
                    .collect(),
                None => entries.to_vec(),
            },
        }
    }

    /// Options from entries in any order; of entries with the same name the last wins
    /// (as when inserting them one by one).
    fn from_unsorted(mut entries: Vec<Entry>) -> NodeOptions {
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: equal names stay in their order, and the last of them is kept.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
            for entry in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == entry.0 => *last = entry,
                    _ => kept.push(entry),
                }
            }
            entries = kept;
        }
        NodeOptions::from_sorted_vec(entries)
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.entries().binary_search_by(|(k, _)| (**k).cmp(name))
    }

    /// The number of options.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are no options.
    pub fn is_empty(&self) -> bool {
        self.entries.is_none()
    }

    /// The value of option `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.position(name).ok().map(|i| &self.entries()[i].1)
    }

    /// The value of option `name`, to change it.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self.position(name) {
            Ok(i) => Some(&mut self.entries_mut()[i].1),
            Err(_) => None,
        }
    }

    /// Whether option `name` is present.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Sets option `name`; returns its previous value.
    pub fn insert(&mut self, name: String, value: Value) -> Option<Value> {
        match self.position(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.entries_mut()[i].1, value)),
            Err(i) => {
                let mut entries = self.take_vec();
                entries.insert(i, (Arc::from(name), value));
                *self = NodeOptions::from_sorted_vec(entries);
                None
            }
        }
    }

    /// Removes option `name`; returns its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        match self.position(name) {
            Ok(i) => {
                let mut entries = self.take_vec();
                let (_, value) = entries.remove(i);
                *self = NodeOptions::from_sorted_vec(entries);
                Some(value)
            }
            Err(_) => None,
        }
    }

    /// Removes every option.
    pub fn clear(&mut self) {
        self.entries = None;
    }

    /// The options as `(name, value)`, sorted by name.
    pub fn iter(&self) -> NodeOptionsIter<'_> {
        NodeOptionsIter {
            inner: self.entries().iter(),
        }
    }

    /// The options as `(name, value)` with changeable values, sorted by name.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&str, &mut Value)> {
        self.entries_mut().iter_mut().map(|(k, v)| (&**k, v))
    }

    /// The option names, sorted.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries().iter().map(|(k, _)| &**k)
    }

    /// The option values, in the order of their names.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.entries().iter().map(|(_, v)| v)
    }

    /// Whether `self` and `other` share one copy of their options (both empty counts):
    /// clones do until one of them is changed. For the tests, which check that parsing
    /// shares repeated option texts and that a change never shows in another clone.
    #[cfg(test)]
    pub(crate) fn shares_with(&self, other: &NodeOptions) -> bool {
        match (&self.entries, &other.entries) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// The options as `(name, value)`, sorted by name: see [`NodeOptions::iter`].
#[derive(Clone, Debug)]
pub struct NodeOptionsIter<'a> {
    inner: std::slice::Iter<'a, (Arc<str>, Value)>,
}

impl<'a> Iterator for NodeOptionsIter<'a> {
    type Item = (&'a str, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, v)| (&**k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for NodeOptionsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(k, v)| (&**k, v))
    }
}

impl ExactSizeIterator for NodeOptionsIter<'_> {}

impl<'a> IntoIterator for &'a NodeOptions {
    type Item = (&'a str, &'a Value);
    type IntoIter = NodeOptionsIter<'a>;

    fn into_iter(self) -> NodeOptionsIter<'a> {
        self.iter()
    }
}

impl IntoIterator for NodeOptions {
    type Item = (String, Value);
    type IntoIter = std::iter::Map<
        std::vec::IntoIter<(Arc<str>, Value)>,
        fn((Arc<str>, Value)) -> (String, Value),
    >;

    /// The options as owned `(name, value)`, sorted by name.
    fn into_iter(mut self) -> Self::IntoIter {
        self.take_vec().into_iter().map(|(k, v)| (k.to_string(), v))
    }
}

impl FromIterator<(String, Value)> for NodeOptions {
    /// Of entries with the same name, the last wins.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> NodeOptions {
        NodeOptions::from_unsorted(iter.into_iter().map(|(k, v)| (Arc::from(k), v)).collect())
    }
}

impl Extend<(String, Value)> for NodeOptions {
    /// Inserts every entry (of entries with the same name, the last wins).
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        let mut entries = self.take_vec();
        entries.extend(iter.into_iter().map(|(k, v)| (Arc::from(k), v)));
        *self = NodeOptions::from_unsorted(entries);
    }
}

impl From<Map<String, Value>> for NodeOptions {
    fn from(map: Map<String, Value>) -> NodeOptions {
        map.into_iter().collect()
    }
}

impl From<NodeOptions> for Map<String, Value> {
    fn from(options: NodeOptions) -> Map<String, Value> {
        options.into_iter().collect()
    }
}

impl From<NodeOptions> for Value {
    /// A JSON object.
    fn from(options: NodeOptions) -> Value {
        Value::Object(options.into())
    }
}

impl std::ops::Index<&str> for NodeOptions {
    type Output = Value;

    /// The value of option `name`.
    ///
    /// # Panics
    /// When there is no such option (as `serde_json::Map` does); use
    /// [`NodeOptions::get`] to find out.
    fn index(&self, name: &str) -> &Value {
        match self.get(name) {
            Some(value) => value,
            None => panic!("no option named {name:?}"),
        }
    }
}

impl fmt::Debug for NodeOptions {
    /// As a map, like `serde_json::Map`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for NodeOptions {
    /// A JSON object with sorted keys.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self.entries() {
            map.serialize_entry(&**k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for NodeOptions {
    /// A JSON object; of repeated keys the last wins, as with `serde_json::Map`
    /// (`parse_graph_json` rejects repeated keys in a pass of its own).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NodeOptions, D::Error> {
        struct OptionsVisitor;

        impl<'de> Visitor<'de> for OptionsVisitor {
            type Value = NodeOptions;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of node options")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeOptions, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(key) = map.next_key::<KeyStr<'de>>()? {
                    let value: Value = map.next_value()?;
                    entries.push((key.into_arc(), value));
                }
                Ok(NodeOptions::from_unsorted(entries))
            }
        }

        deserializer.deserialize_map(OptionsVisitor)
    }
}

/// An object key, borrowed from the input when it can be (no escapes), so that it is
/// copied once, into its `Arc<str>`.
enum KeyStr<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyStr<'_> {
    fn into_arc(self) -> Arc<str> {
        match self {
            KeyStr::Borrowed(s) => Arc::from(s),
            KeyStr::Owned(s) => Arc::from(s),
        }
    }
}

impl<'de> Deserialize<'de> for KeyStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyStr<'de>, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = KeyStr<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an option name")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<KeyStr<'de>, E> {
                Ok(KeyStr::Borrowed(v))
            }

            fn visit_str<E>(self, v: &str) -> Result<KeyStr<'de>, E> {
                Ok(KeyStr::Owned(v.to_string()))
            }

            fn visit_string<E>(self, v: String) -> Result<KeyStr<'de>, E> {
                Ok(KeyStr::Owned(v))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(options: &NodeOptions) -> Vec<&str> {
        options.keys().collect()
    }

    #[test]
    fn insert_keeps_names_sorted_and_unique() {
        let mut o = NodeOptions::new();
        assert_eq!(o.insert("b".into(), json!(1)), None);
        assert_eq!(o.insert("a".into(), json!(2)), None);
        assert_eq!(o.insert("c".into(), json!(3)), None);
        assert_eq!(o.insert("b".into(), json!(4)), Some(json!(1)));
        assert_eq!(names(&o), ["a", "b", "c"]);
        assert_eq!(o["b"], 4);
        assert_eq!(o.remove("a"), Some(json!(2)));
        assert_eq!(o.remove("a"), None);
        assert!(!o.contains_key("a") && o.contains_key("c"));
        *o.get_mut("c").unwrap() = json!("x");
        assert_eq!(o.get("c"), Some(&json!("x")));
        assert_eq!(o.len(), 2);
        o.clear();
        assert!(o.is_empty());
    }

    #[test]
    fn clones_share_until_one_changes_and_a_change_never_shows_in_another() {
        let original: NodeOptions = [("axes", json!([0, 1])), ("alpha", json!(0.5))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        type Change = fn(&mut NodeOptions);
        let changes: [(&str, Change); 7] = [
            ("get_mut", |o| *o.get_mut("alpha").unwrap() = json!(2)),
            ("insert new", |o| {
                assert_eq!(o.insert("b".into(), json!(1)), None)
            }),
            ("insert old", |o| {
                assert!(o.insert("axes".into(), json!(1)).is_some())
            }),
            ("remove", |o| {
                assert_eq!(o.remove("alpha"), Some(json!(0.5)))
            }),
            ("clear", |o| o.clear()),
            ("iter_mut", |o| {
                o.iter_mut().for_each(|(_, v)| *v = json!(null))
            }),
            ("extend", |o| o.extend([("alpha".to_string(), json!(7))])),
        ];
        for (what, change) in changes {
            let mut copy = original.clone();
            let other = original.clone();
            assert!(copy.shares_with(&original) && other.shares_with(&original));
            change(&mut copy);
            assert!(!copy.shares_with(&original), "{what}");
            assert_ne!(copy, original, "{what}");
            assert_eq!(other, original, "{what}: another clone changed");
            assert_eq!(names(&original), ["alpha", "axes"], "{what}");
            assert_eq!(original["axes"], json!([0, 1]), "{what}");
        }
        // Consuming a shared copy leaves the others whole; consuming the last moves out.
        let copy = original.clone();
        let owned: Vec<(String, Value)> = copy.into_iter().collect();
        assert_eq!(owned[0], ("alpha".to_string(), json!(0.5)));
        assert_eq!(original["alpha"], 0.5);
        let mut last = original.clone();
        drop(original);
        assert_eq!(last.remove("axes"), Some(json!([0, 1])));
        assert_eq!(last.remove("alpha"), Some(json!(0.5)));
        assert!(
            last.is_empty() && last == NodeOptions::new() && last.shares_with(&NodeOptions::new())
        );
    }

    #[test]
    fn collecting_sorts_and_the_last_of_a_name_wins() {
        let o: NodeOptions = [("z", 1), ("a", 2), ("z", 3), ("m", 4), ("a", 5)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        assert_eq!(
            o.iter().map(|(k, v)| (k, v.clone())).collect::<Vec<_>>(),
            [("a", json!(5)), ("m", json!(4)), ("z", json!(3))]
        );
        let mut e = o.clone();
        e.extend([("b".to_string(), json!(0)), ("z".to_string(), json!(9))]);
        assert_eq!(names(&e), ["a", "b", "m", "z"]);
        assert_eq!(e["z"], 9);
    }

    #[test]
    fn json_is_that_of_a_sorted_map() {
        // Byte order, as BTreeMap<String, _> sorts: uppercase before lowercase, "a" < "a.b".
        let map: Map<String, Value> = serde_json::from_str(
            r#"{"b": {"y": 1, "x": [true]}, "a.b": null, "B": "s", "a": 1.5}"#,
        )
        .unwrap();
        let options: NodeOptions = serde_json::from_str(
            r#"{"b": {"y": 1, "x": [true]}, "a.b": null, "B": "s", "a": 1.5}"#,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&options).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert_eq!(
            serde_json::to_string_pretty(&options).unwrap(),
            serde_json::to_string_pretty(&map).unwrap()
        );
        assert_eq!(NodeOptions::from(map.clone()), options);
        assert_eq!(Map::from(options.clone()), map);
        assert_eq!(Value::from(options), Value::Object(map));
    }

    #[test]
    fn json_repeated_keys_keep_the_last_like_a_map() {
        let text = r#"{"a": 1, "b": 2, "a": 3}"#;
        let options: NodeOptions = serde_json::from_str(text).unwrap();
        let map: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(options, NodeOptions::from(map));
        assert_eq!(options["a"], 3);
    }

    #[test]
    fn json_errors_say_what_was_expected() {
        let e = serde_json::from_str::<NodeOptions>("[1]").unwrap_err();
        assert!(
            e.to_string().contains("expected an object of node options"),
            "{e}"
        );
        let e = serde_json::from_str::<NodeOptions>(r#"{"a": }"#).unwrap_err();
        assert!(e.to_string().contains("line 1 column 7"), "{e}");
        // Escaped keys are read too.
        let o: NodeOptions = serde_json::from_str(r#"{"a\"b": 1}"#).unwrap();
        assert_eq!(o["a\"b"], 1);
    }

    #[test]
    fn debug_shows_a_map() {
        let o: NodeOptions = [("k".to_string(), json!(1))].into_iter().collect();
        assert_eq!(format!("{o:?}"), r#"{"k": Number(1)}"#);
    }

    #[test]
    #[should_panic(expected = "no option named \"missing\"")]
    fn indexing_a_missing_name_panics_like_a_map() {
        let _ = &NodeOptions::new()["missing"];
    }
}
