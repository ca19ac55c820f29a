//! The GraphJson data model, compatible key for key with `webnn-graph` 0.4.0.
//!
//! Maps are `BTreeMap`s so that written JSON has sorted keys, as the format requires;
//! unknown keys are ignored when reading.

use crate::graph::dtype::DataType;
use crate::graph::name::Name;
use crate::graph::node_options::NodeOptions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The value of the top-level `format` key that writers emit.
pub(crate) const GRAPH_JSON_FORMAT: &str = "webnn-graph-json";

/// A whole graph: inputs, constants, nodes and outputs.
///
/// ```
/// use webnn_weights_runtime::GraphJson;
/// let graph: GraphJson = serde_json::from_str(
///     r#"{"format":"webnn-graph-json","version":2,"inputs":{},"nodes":[],"outputs":{}}"#,
/// ).unwrap();
/// assert_eq!(graph.version, 2);
/// assert!(graph.consts.is_empty());
/// assert_eq!(serde_json::to_string(&graph).unwrap(),
///     r#"{"format":"webnn-graph-json","version":2,"quantized":false,"inputs":{},"consts":{},"nodes":[],"outputs":{}}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphJson {
    /// Conventionally `"webnn-graph-json"`, what [`GraphJson::new`] sets.
    pub format: String,
    /// Format version, 1 or 2.
    pub version: u32,
    /// Optional graph name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the graph is marked `@quantized`.
    #[serde(default)]
    pub quantized: bool,
    /// Graph inputs by name.
    #[serde(deserialize_with = "sorted_map::deserialize")]
    pub inputs: BTreeMap<String, OperandDesc>,
    /// Constants by name.
    #[serde(default, deserialize_with = "sorted_map::deserialize")]
    pub consts: BTreeMap<String, ConstDecl>,
    /// Operations, in order.
    pub nodes: Vec<Node>,
    /// Output binding -> operand name.
    #[serde(deserialize_with = "sorted_map::deserialize")]
    pub outputs: BTreeMap<String, String>,
}

impl GraphJson {
    /// An empty graph of format version 2 with the given name.
    ///
    /// ```
    /// let g = webnn_weights_runtime::GraphJson::new(Some("demo".into()));
    /// assert_eq!(g.format, "webnn-graph-json");
    /// ```
    pub fn new(name: Option<String>) -> GraphJson {
        GraphJson {
            format: GRAPH_JSON_FORMAT.to_string(),
            version: 2,
            name,
            quantized: false,
            inputs: BTreeMap::new(),
            consts: BTreeMap::new(),
            nodes: Vec::new(),
            outputs: BTreeMap::new(),
        }
    }

    /// Whether any constant takes its bytes from a sidecar (`@weights`).
    pub fn has_external_weights(&self) -> bool {
        self.consts
            .values()
            .any(|c| matches!(c.init, ConstInit::Weights { .. }))
    }
}

/// Type and shape of a graph input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperandDesc {
    /// Element type.
    #[serde(rename = "dataType")]
    pub data_type: DataType,
    /// Dimensions; inputs may have bounded dynamic dimensions.
    pub shape: Vec<Dimension>,
}

/// One dimension of an input shape.
///
/// ```
/// use webnn_weights_runtime::Dimension;
/// let dims: Vec<Dimension> = serde_json::from_str(r#"[{"name":"batch","maxSize":8},4]"#).unwrap();
/// assert_eq!(dims[1], Dimension::Static(4));
/// assert_eq!(dims[0], Dimension::Dynamic { name: "batch".into(), max_size: 8 });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum Dimension {
    /// A fixed size.
    Static(u32),
    /// A named dynamic dimension with an upper bound (`dyn("name", max)` in text).
    Dynamic {
        /// The dimension's name.
        name: String,
        /// Its largest allowed size.
        #[serde(rename = "maxSize")]
        max_size: u32,
    },
}

/// Reads a dimension with a message that says what a dimension may be (serde's untagged
/// enums only say that "data did not match any variant").
impl<'de> Deserialize<'de> for Dimension {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        const EXPECTED: &str =
            "a dimension: an unsigned integer that fits u32, or {\"name\": string, \"maxSize\": u32}";

        fn static_size<E: serde::de::Error>(value: u64) -> Result<Dimension, E> {
            u32::try_from(value).map(Dimension::Static).map_err(|_| {
                E::custom(format_args!(
                    "dimension {value} does not fit u32 (at most {})",
                    u32::MAX
                ))
            })
        }

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Dimension;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }

            fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Dimension, E> {
                static_size(value)
            }

            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Dimension, E> {
                match u64::try_from(value) {
                    Ok(value) => static_size(value),
                    Err(_) => Err(E::custom(format_args!(
                        "dimension {value} is negative; expected {EXPECTED}"
                    ))),
                }
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Dimension, A::Error> {
                #[derive(Deserialize)]
                struct Dynamic {
                    name: String,
                    #[serde(rename = "maxSize")]
                    max_size: u32,
                }
                let Dynamic { name, max_size } =
                    Dynamic::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Dimension::Dynamic { name, max_size })
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

/// A constant: type, static shape and where its bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConstDecl {
    /// Logical element type (authoritative over any sidecar).
    #[serde(rename = "dataType")]
    pub data_type: DataType,
    /// Static shape; `[]` is rank 0 (one element).
    pub shape: Vec<u32>,
    /// The initializer.
    pub init: ConstInit,
}

impl ConstDecl {
    /// The number of bytes this declaration requires (packed rule for 4-bit types),
    /// or `None` when it does not fit `u64`.
    pub fn byte_length(&self) -> Option<u64> {
        self.data_type.byte_length(&self.shape)
    }

    /// The elements of a resolved (`InlineBytes`) `int4` constant, unpacked and
    /// sign-extended; `None` for other types, other initializers or a length that is not
    /// the declared one (two per byte, the first in the low nibble).
    ///
    /// ```
    /// use webnn_weights_runtime::load_graph;
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/packed4/quant.webnn");
    /// let graph = load_graph(path)?; // w_q: i4[8, 3] @weights("w_q"), w_u: u4[5]
    /// let w_q = graph.consts["w_q"].unpack_int4().unwrap();
    /// assert_eq!(w_q.len(), 24);
    /// assert_eq!(w_q[..8], [1, 2, 6, 4, -5, 6, 0, -7]);
    /// assert_eq!(graph.consts["w_u"].unpack_int4(), None); // uint4: unpack_uint4
    /// # Ok::<(), webnn_weights_runtime::Error>(())
    /// ```
    pub fn unpack_int4(&self) -> Option<Vec<i8>> {
        let count = crate::graph::dtype::count_if(self.data_type, DataType::Int4, &self.shape)?;
        crate::graph::dtype::unpack_int4(self.inline_bytes()?, count)
    }

    /// The elements of a resolved (`InlineBytes`) `uint4` constant, unpacked, each 0..=15;
    /// `None` for other types, other initializers or a length that is not the declared one
    /// (two per byte, the first in the low nibble).
    ///
    /// ```
    /// use webnn_weights_runtime::load_graph;
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/packed4/quant.webnn");
    /// let graph = load_graph(path)?;
    /// assert_eq!(graph.consts["w_u"].unpack_uint4(), Some(vec![1, 2, 6, 4, 11]));
    /// # Ok::<(), webnn_weights_runtime::Error>(())
    /// ```
    pub fn unpack_uint4(&self) -> Option<Vec<u8>> {
        let count = crate::graph::dtype::count_if(self.data_type, DataType::Uint4, &self.shape)?;
        crate::graph::dtype::unpack_uint4(self.inline_bytes()?, count)
    }

    /// The bytes of an `InlineBytes` initializer.
    fn inline_bytes(&self) -> Option<&[u8]> {
        match &self.init {
            ConstInit::InlineBytes { bytes } => Some(bytes),
            _ => None,
        }
    }
}

/// Where a constant's value comes from, tagged by `kind` in JSON.
///
/// Read by a hand-written `Deserialize` that accepts and rejects exactly what serde's
/// internally tagged form (`#[serde(tag = "kind")]`) did, with the same messages, but
/// reads the fields straight into their types when `kind` comes first (as every writer
/// here puts it) instead of buffering each value first: graphs of thousands of
/// constants open several times faster. Errors now carry a line and column.
///
/// ```
/// use webnn_weights_runtime::ConstInit;
/// let init: ConstInit = serde_json::from_str(r#"{"kind": "weights", "ref": "w"}"#).unwrap();
/// assert_eq!(init, ConstInit::Weights { r#ref: "w".into() });
/// let init: ConstInit = serde_json::from_str(r#"{"value": 0.5, "kind": "scalar"}"#).unwrap();
/// assert_eq!(init, ConstInit::Scalar { value: serde_json::json!(0.5) });
/// let err = serde_json::from_str::<ConstInit>(r#"{"kind": "weights"}"#).unwrap_err();
/// assert!(err.to_string().starts_with("missing field `ref`"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ConstInit {
    /// Bytes come from a sidecar tensor named `ref` (`@weights("ref")`).
    Weights {
        /// The reference into the sidecar.
        r#ref: String,
    },
    /// A single number (`@scalar(x)`).
    Scalar {
        /// The JSON number.
        value: serde_json::Value,
    },
    /// Little-endian element bytes stored in the graph (`@bytes([...])`), or resolved
    /// from a sidecar.
    ///
    /// A [`bytes::Bytes`]: owned memory, a view into a read-only mapping of the sidecar,
    /// a slice of a caller's buffer, or the binary's `'static` data. Cloning it (and so a
    /// graph) copies no byte; it dereferences to `[u8]`. In JSON it is one number per
    /// byte, as before.
    InlineBytes {
        /// The bytes (one JSON number per byte).
        #[serde(with = "bytes_as_numbers")]
        bytes: bytes::Bytes,
    },
}

mod const_init_de;

/// The maps of GraphJson, read into a vector and built in one step: writers sort their
/// keys, and a `BTreeMap` built from sorted entries costs a check of the order instead of
/// a search per key (names that share long prefixes, such as `layers.123.weight`, made
/// the searches a third of the time to open a graph of 20,000 constants). Of repeated
/// keys the last wins, as with inserting one by one.
mod sorted_map {
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    pub fn deserialize<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        struct MapVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = BTreeMap<String, V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, V)> =
                    Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                // `from_iter` sorts stably (one pass over sorted input) and keeps the last
                // of equal keys.
                Ok(entries.into_iter().collect())
            }
        }

        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

/// `InlineBytes` in JSON: an array of numbers 0..=255, exactly as a `Vec<u8>` (never a
/// string, which `Bytes`' own serde form would also accept).
pub(crate) mod bytes_as_numbers {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(bytes: &bytes::Bytes, s: S) -> Result<S::Ok, S::Error> {
        <[u8]>::serialize(bytes, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bytes::Bytes, D::Error> {
        Vec::<u8>::deserialize(d).map(bytes::Bytes::from)
    }
}

/// One operation.
///
/// Names are [`Name`]s: strings that keep names of up to 24 bytes inline (no allocation
/// per name when a graph is read), readable as `&str` and comparable with `&str` and
/// `String`.
///
/// ```
/// use webnn_weights_runtime::{Name, Node, NodeOptions};
/// let node = Node {
///     id: "y".into(),
///     op: "add".into(),
///     inputs: vec!["a".into(), Name::from(String::from("b"))],
///     options: NodeOptions::new(),
///     outputs: None,
/// };
/// assert_eq!(node.inputs, ["a", "b"]);
/// assert_eq!(node.produced(), ["y"]);
/// let name: &str = &node.op;
/// assert_eq!(name, "add");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The node's id; for a multi-output node, its first output.
    pub id: Name,
    /// Operation name.
    pub op: Name,
    /// Operand references.
    pub inputs: Vec<Name>,
    /// Named options, sorted by name (a JSON object in GraphJson).
    #[serde(default)]
    pub options: NodeOptions,
    /// `None` for a single-output node (whose output is `id`); the produced names otherwise.
    #[serde(default)]
    pub outputs: Option<Vec<Name>>,
}

impl Node {
    /// The operand names this node produces.
    pub fn produced(&self) -> &[Name] {
        match &self.outputs {
            Some(outputs) => outputs,
            None => std::slice::from_ref(&self.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(json: &str) -> Result<Vec<Dimension>, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn dimensions_read_both_forms() {
        assert_eq!(
            dims(r#"[0, 4294967295, {"name": "b", "maxSize": 8, "extra": 1}]"#).unwrap(),
            vec![
                Dimension::Static(0),
                Dimension::Static(u32::MAX),
                Dimension::Dynamic {
                    name: "b".into(),
                    max_size: 8
                }
            ]
        );
    }

    #[test]
    fn bad_dimensions_say_what_is_wrong() {
        let e = dims("[4294967296]").unwrap_err();
        assert!(e.contains("dimension 4294967296 does not fit u32"), "{e}");
        let e = dims("[-1]").unwrap_err();
        assert!(e.contains("dimension -1 is negative"), "{e}");
        let e = dims("[1.5]").unwrap_err();
        assert!(
            e.contains("expected a dimension: an unsigned integer"),
            "{e}"
        );
        let e = dims(r#"["4"]"#).unwrap_err();
        assert!(e.contains("expected a dimension"), "{e}");
        let e = dims(r#"[{"name": "b"}]"#).unwrap_err();
        assert!(e.contains("missing field `maxSize`"), "{e}");
        let e = dims(r#"[{"name": "b", "maxSize": 4294967296}]"#).unwrap_err();
        assert!(e.contains("4294967296"), "{e}");
    }

    #[test]
    fn dimensions_write_as_before() {
        let d = vec![
            Dimension::Static(3),
            Dimension::Dynamic {
                name: "n".into(),
                max_size: 2,
            },
        ];
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"[3,{"name":"n","maxSize":2}]"#
        );
    }
}

#[cfg(test)]
mod sorted_map_tests {
    use super::*;

    #[test]
    fn maps_read_in_any_order_and_the_last_repeated_key_wins() {
        #[derive(Debug, Deserialize)]
        struct M {
            #[serde(deserialize_with = "sorted_map::deserialize")]
            m: BTreeMap<String, u32>,
        }
        let m: M = serde_json::from_str(r#"{"m": {"b": 1, "a": 2, "c": 3, "a": 4}}"#).unwrap();
        let expected: BTreeMap<String, u32> =
            serde_json::from_str(r#"{"b": 1, "a": 2, "c": 3, "a": 4}"#).unwrap();
        assert_eq!(m.m, expected);
        assert_eq!(m.m["a"], 4);
        let e = serde_json::from_str::<M>(r#"{"m": [1]}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid type: sequence, expected a map"),
            "{e}"
        );
        let e = serde_json::from_str::<M>(r#"{"m": {"a": "x"}}"#).unwrap_err();
        assert!(e.to_string().contains("line 1 column 15"), "{e}");
    }
}
