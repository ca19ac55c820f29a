//! Reading [`ConstInit`] without buffering.
//!
//! serde's internally tagged enums read every field of the object into a generic buffer
//! before they know the variant, then read the variant from the buffer: at 20,000
//! constants that doubles the work of opening a graph. Here the fields go straight into
//! their types once `kind` is known (writers put it first); only fields that come
//! before `kind` are buffered, as `serde_json::Value`s.
//!
//! What is accepted and rejected, and the messages, are those of
//! `#[serde(tag = "kind", rename_all = "camelCase")]` (including its sequence form
//! `["weights", "ref"]`): `kind` is required and must name a variant; the variant's own
//! field is required and may not repeat; other fields, and the other variants' fields,
//! are ignored whatever their values.
//!
//! The repeated `kind` or variant field is serde's per-field error (`duplicate field`), as
//! every derived struct of the graph gives; any other repeated key of a graph file is refused
//! after the typed parse by the one walk of the crate (`json_keys`).

use super::ConstInit;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

const VARIANTS: &[&str] = &["weights", "scalar", "inlineBytes"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Weights,
    Scalar,
    InlineBytes,
}

impl Variant {
    /// The name of the variant's one field.
    fn field(self) -> &'static str {
        match self {
            Variant::Weights => "ref",
            Variant::Scalar => "value",
            Variant::InlineBytes => "bytes",
        }
    }

    fn struct_name(self) -> &'static str {
        match self {
            Variant::Weights => "struct variant ConstInit::Weights with 1 element",
            Variant::Scalar => "struct variant ConstInit::Scalar with 1 element",
            Variant::InlineBytes => "struct variant ConstInit::InlineBytes with 1 element",
        }
    }
}

impl<'de> Deserialize<'de> for Variant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Variant, D::Error> {
        struct VariantVisitor;

        impl Visitor<'_> for VariantVisitor {
            type Value = Variant;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("variant identifier")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Variant, E> {
                match v {
                    "weights" => Ok(Variant::Weights),
                    "scalar" => Ok(Variant::Scalar),
                    "inlineBytes" => Ok(Variant::InlineBytes),
                    other => Err(E::unknown_variant(other, VARIANTS)),
                }
            }
        }

        deserializer.deserialize_identifier(VariantVisitor)
    }
}

/// An object key of a `ConstInit`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Kind,
    /// The field of this variant (`ref`, `value` or `bytes`).
    Field(Variant),
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "kind" => Key::Kind,
                    "ref" => Key::Field(Variant::Weights),
                    "value" => Key::Field(Variant::Scalar),
                    "bytes" => Key::Field(Variant::InlineBytes),
                    _ => Key::Other,
                })
            }
        }

        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// The value of a variant's field, read by the variant's rule.
fn read_field<'de, D: Deserializer<'de>>(
    variant: Variant,
    deserializer: D,
) -> Result<ConstInit, D::Error> {
    Ok(match variant {
        Variant::Weights => ConstInit::Weights {
            r#ref: String::deserialize(deserializer)?,
        },
        Variant::Scalar => ConstInit::Scalar {
            value: Value::deserialize(deserializer)?,
        },
        Variant::InlineBytes => ConstInit::InlineBytes {
            bytes: super::bytes_as_numbers::deserialize(deserializer)?,
        },
    })
}

/// Reads a map field's value as the variant's field.
struct FieldSeed(Variant);

impl<'de> de::DeserializeSeed<'de> for FieldSeed {
    type Value = ConstInit;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ConstInit, D::Error> {
        read_field(self.0, deserializer)
    }
}

struct InitVisitor;

impl<'de> Visitor<'de> for InitVisitor {
    type Value = ConstInit;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("internally tagged enum ConstInit")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConstInit, A::Error> {
        let mut kind: Option<Variant> = None;
        // The variant's field, once read; and fields met before `kind`, buffered.
        let mut read: Option<ConstInit> = None;
        let mut early: Vec<(Variant, Value)> = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Kind => {
                    if kind.is_some() {
                        return Err(de::Error::duplicate_field("kind"));
                    }
                    kind = Some(map.next_value::<Variant>()?);
                }
                Key::Field(field) => match kind {
                    Some(variant) if variant == field => {
                        if read.is_some() {
                            return Err(de::Error::duplicate_field(field.field()));
                        }
                        read = Some(map.next_value_seed(FieldSeed(field))?);
                    }
                    Some(_) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    None => early.push((field, map.next_value::<Value>()?)),
                },
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(variant) = kind else {
            return Err(de::Error::missing_field("kind"));
        };
        // Buffered fields of this variant come before any read after `kind`.
        let mut buffered = early.into_iter().filter(|(field, _)| *field == variant);
        if let Some((_, value)) = buffered.next() {
            if buffered.next().is_some() || read.is_some() {
                return Err(de::Error::duplicate_field(variant.field()));
            }
            return read_field(variant, value).map_err(de::Error::custom);
        }
        read.ok_or_else(|| de::Error::missing_field(variant.field()))
    }

    /// serde's sequence form of an internally tagged enum: `["weights", "ref"]`.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConstInit, A::Error> {
        let Some(variant) = seq.next_element::<Variant>()? else {
            return Err(de::Error::missing_field("kind"));
        };
        let Some(init) = seq.next_element_seed(FieldSeed(variant))? else {
            return Err(de::Error::invalid_length(0, &variant.struct_name()));
        };
        let mut extra = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            extra += 1;
        }
        if extra > 0 {
            return Err(de::Error::invalid_length(
                1 + extra,
                &"1 element in sequence",
            ));
        }
        Ok(init)
    }
}

impl<'de> Deserialize<'de> for ConstInit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ConstInit, D::Error> {
        deserializer.deserialize_any(InitVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of an error without serde_json's position (the buffered reading of
    /// serde's tagged enums had none for errors inside the object).
    fn read(json: &str) -> Result<ConstInit, String> {
        serde_json::from_str::<ConstInit>(json).map_err(|e| {
            let text = e.to_string();
            match text.find(" at line ") {
                Some(i) => text[..i].to_string(),
                None => text,
            }
        })
    }

    fn weights(r: &str) -> Result<ConstInit, String> {
        Ok(ConstInit::Weights { r#ref: r.into() })
    }

    fn scalar(v: Value) -> Result<ConstInit, String> {
        Ok(ConstInit::Scalar { value: v })
    }

    fn bytes(b: &[u8]) -> Result<ConstInit, String> {
        Ok(ConstInit::InlineBytes {
            bytes: bytes::Bytes::copy_from_slice(b),
        })
    }

    fn err(message: &str) -> Result<ConstInit, String> {
        Err(message.to_string())
    }

    /// Every case gives what serde's `#[serde(tag = "kind")]` derive gives (checked
    /// against that derive, kept below in `reference`).
    #[test]
    fn accepts_and_rejects_what_the_tagged_derive_did() {
        use serde_json::json;
        let cases = [
            (r#"{"kind":"weights","ref":"a"}"#, weights("a")),
            (r#"{"ref":"a","kind":"weights"}"#, weights("a")),
            (r#"{"kind":"scalar","value":1.5}"#, scalar(json!(1.5))),
            (r#"{"value":2,"kind":"scalar"}"#, scalar(json!(2))),
            (r#"{"kind":"inlineBytes","bytes":[1,2]}"#, bytes(&[1, 2])),
            (r#"{"bytes":[1,2],"kind":"inlineBytes"}"#, bytes(&[1, 2])),
            (r#"{"kind":"weights"}"#, err("missing field `ref`")),
            (r#"{"ref":"a"}"#, err("missing field `kind`")),
            (
                r#"{"kind":"other","ref":"a"}"#,
                err("unknown variant `other`, expected one of `weights`, `scalar`, `inlineBytes`"),
            ),
            (r#"{"kind":"weights","ref":"a","extra":1}"#, weights("a")),
            (
                r#"{"kind":"weights","ref":1}"#,
                err("invalid type: integer `1`, expected a string"),
            ),
            (
                r#"{"ref":1,"kind":"weights"}"#,
                err("invalid type: integer `1`, expected a string"),
            ),
            (
                r#"{"kind":"inlineBytes","bytes":[256]}"#,
                err("invalid value: integer `256`, expected u8"),
            ),
            (
                r#"{"kind":"weights","ref":"a","ref":"b"}"#,
                err("duplicate field `ref`"),
            ),
            (
                r#"{"ref":"a","ref":"b","kind":"weights"}"#,
                err("duplicate field `ref`"),
            ),
            (
                r#"{"ref":"a","kind":"weights","ref":"b"}"#,
                err("duplicate field `ref`"),
            ),
            (
                r#"{"kind":"weights","kind":"weights","ref":"a"}"#,
                err("duplicate field `kind`"),
            ),
            (
                r#"{"kind":"weights","ref":"a","bytes":"junk"}"#,
                weights("a"),
            ),
            (
                r#"{"bytes":"junk","kind":"weights","ref":"a"}"#,
                weights("a"),
            ),
            (
                r#"{"kind":"scalar","ref":1,"ref":2,"value":3}"#,
                scalar(json!(3)),
            ),
            (r#"["weights","a"]"#, weights("a")),
            (r#"["scalar",true]"#, scalar(json!(true))),
            (
                r#"["weights"]"#,
                err("invalid length 0, expected struct variant ConstInit::Weights with 1 element"),
            ),
            (
                r#"["weights","a","b"]"#,
                err("invalid length 2, expected 1 element in sequence"),
            ),
            (r#"[]"#, err("missing field `kind`")),
            (
                r#""weights""#,
                err("invalid type: string \"weights\", expected internally tagged enum ConstInit"),
            ),
            (
                r#"{"kind":1,"ref":"a"}"#,
                err("invalid type: integer `1`, expected variant identifier"),
            ),
            (r#"{"kind":"scalar","value":"x"}"#, scalar(json!("x"))),
            (r#"{"kind":"scalar"}"#, err("missing field `value`")),
            (r#"{"kind":"scalar","value":null}"#, scalar(Value::Null)),
            (
                r#"{"kind":"inlineBytes","bytes":"AQI="}"#,
                err("invalid type: string \"AQI=\", expected a sequence"),
            ),
            (r#"{"kind":"inlineBytes"}"#, err("missing field `bytes`")),
            (r#"{}"#, err("missing field `kind`")),
            (
                r#"null"#,
                err("invalid type: null, expected internally tagged enum ConstInit"),
            ),
            (
                r#"{"kind":null,"ref":"a"}"#,
                err("invalid type: null, expected variant identifier"),
            ),
            (
                r#"{"kind":"Weights","ref":"a"}"#,
                err(
                    "unknown variant `Weights`, expected one of `weights`, `scalar`, `inlineBytes`",
                ),
            ),
            (r#"{"kind":"weights","ref":"a\"b"}"#, weights("a\"b")),
            (
                r#"{"kind":"weights","ref":null}"#,
                err("invalid type: null, expected a string"),
            ),
            (
                r#"{"kind":"inlineBytes","bytes":[-1]}"#,
                err("invalid value: integer `-1`, expected u8"),
            ),
            (
                r#"{"kind":"inlineBytes","bytes":[1.5]}"#,
                err("invalid type: floating point `1.5`, expected u8"),
            ),
            (r#"{"kind":"weights","ref":"a","value":1}"#, weights("a")),
            (
                r#"{"value":{"a":1},"kind":"scalar"}"#,
                scalar(json!({"a": 1})),
            ),
            (r#"{"1":2,"kind":"scalar","value":3}"#, scalar(json!(3))),
        ];
        for (json, expected) in cases {
            assert_eq!(read(json), expected, "{json}");
            assert_eq!(read_reference(json), expected, "reference derive: {json}");
        }
    }

    /// serde's derive, as `ConstInit` had it, kept to check the cases against (named
    /// `ConstInit` too: the derive's messages carry the name).
    mod reference {
        use serde::Deserialize;
        use serde_json::Value;

        #[derive(Deserialize)]
        #[serde(tag = "kind", rename_all = "camelCase")]
        pub enum ConstInit {
            Weights {
                r#ref: String,
            },
            Scalar {
                value: Value,
            },
            InlineBytes {
                #[serde(with = "crate::graph::model::bytes_as_numbers")]
                bytes: bytes::Bytes,
            },
        }
    }

    fn read_reference(json: &str) -> Result<ConstInit, String> {
        match serde_json::from_str::<reference::ConstInit>(json) {
            Ok(reference::ConstInit::Weights { r#ref }) => Ok(ConstInit::Weights { r#ref }),
            Ok(reference::ConstInit::Scalar { value }) => Ok(ConstInit::Scalar { value }),
            Ok(reference::ConstInit::InlineBytes { bytes }) => Ok(ConstInit::InlineBytes { bytes }),
            Err(e) => {
                let text = e.to_string();
                Err(match text.find(" at line ") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                })
            }
        }
    }

    #[test]
    fn errors_inside_the_object_now_have_a_position() {
        let e =
            serde_json::from_str::<ConstInit>("{\"kind\": \"weights\",\n \"ref\": 7}").unwrap_err();
        assert_eq!((e.line(), e.column()), (2, 9), "{e}");
    }
}
