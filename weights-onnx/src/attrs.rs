//! A node's attributes, read by name with the type ONNX gives them.

use crate::proto::{attribute_proto::AttributeType, AttributeProto, TensorProto};

/// The attributes of one node.
pub(crate) struct Attrs<'a> {
    list: &'a [AttributeProto],
}

impl<'a> Attrs<'a> {
    pub fn new(list: &'a [AttributeProto]) -> Attrs<'a> {
        Attrs { list }
    }

    fn find(&self, name: &str) -> Option<&'a AttributeProto> {
        self.list.iter().find(|a| a.name.as_deref() == Some(name))
    }

    fn kind(a: &AttributeProto) -> Option<AttributeType> {
        a.r#type.and_then(|t| AttributeType::try_from(t).ok())
    }

    /// Whether the node sets `name`.
    pub fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// An `INT` attribute.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) if Self::kind(a) == Some(AttributeType::Int) || a.i.is_some() => {
                Ok(Some(a.i.unwrap_or(0)))
            }
            Some(_) => Err(format!("attribute {name} must be an INT")),
        }
    }

    /// An `INT` attribute with a default.
    pub fn int_or(&self, name: &str, default: i64) -> Result<i64, String> {
        Ok(self.int(name)?.unwrap_or(default))
    }

    /// An `INTS` attribute.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) if Self::kind(a) == Some(AttributeType::Ints) || !a.ints.is_empty() => {
                Ok(Some(a.ints.clone()))
            }
            Some(_) => Err(format!("attribute {name} must be INTS")),
        }
    }

    /// A `FLOAT` attribute.
    pub fn float(&self, name: &str) -> Result<Option<f32>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) if Self::kind(a) == Some(AttributeType::Float) || a.f.is_some() => {
                Ok(Some(a.f.unwrap_or(0.0)))
            }
            Some(_) => Err(format!("attribute {name} must be a FLOAT")),
        }
    }

    /// A `FLOAT` attribute with a default.
    pub fn float_or(&self, name: &str, default: f32) -> Result<f32, String> {
        Ok(self.float(name)?.unwrap_or(default))
    }

    /// A `FLOATS` attribute.
    pub fn floats(&self, name: &str) -> Result<Option<Vec<f32>>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) if Self::kind(a) == Some(AttributeType::Floats) || !a.floats.is_empty() => {
                Ok(Some(a.floats.clone()))
            }
            Some(_) => Err(format!("attribute {name} must be FLOATS")),
        }
    }

    /// A `STRING` attribute (UTF-8).
    pub fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) => match &a.s {
                Some(s) => String::from_utf8(s.to_vec())
                    .map(Some)
                    .map_err(|_| format!("attribute {name} is not UTF-8")),
                None if Self::kind(a) == Some(AttributeType::String) => Ok(Some(String::new())),
                None => Err(format!("attribute {name} must be a STRING")),
            },
        }
    }

    /// A `STRING` attribute with a default.
    pub fn string_or(&self, name: &str, default: &str) -> Result<String, String> {
        Ok(self.string(name)?.unwrap_or_else(|| default.to_string()))
    }

    /// A `STRINGS` attribute (UTF-8 each).
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>, String> {
        match self.find(name) {
            None => Ok(None),
            Some(a) => a
                .strings
                .iter()
                .map(|s| {
                    String::from_utf8(s.to_vec())
                        .map_err(|_| format!("attribute {name} holds a string that is not UTF-8"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    /// A `TENSOR` attribute.
    pub fn tensor(&self, name: &str) -> Option<&'a TensorProto> {
        self.find(name).and_then(|a| a.t.as_ref())
    }
}
