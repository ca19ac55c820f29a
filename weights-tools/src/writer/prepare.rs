//! The checks both writers run before anything is written: every external constant of a
//! graph against its supplied bytes, and the SafeTensors storage (type and shape) of each.

use super::WriteError;
use safetensors::tensor::TensorView;
use safetensors::Dtype;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use webnn_weights_runtime::formats::safetensors::storage_type;
use webnn_weights_runtime::{ConstInit, DataType, GraphJson};

/// The SafeTensors storage of a declaration: type and shape (packed rule for 4-bit).
fn storage(data_type: DataType, shape: &[u32], length: u64) -> (Dtype, Vec<u64>) {
    match storage_type(data_type).and_then(dtype_named) {
        Some(dtype) => (dtype, shape.iter().map(|&d| u64::from(d)).collect()),
        // Packed 4-bit: U8 bytes of shape [ceil(n / 2)].
        None => (Dtype::U8, vec![length]),
    }
}

/// `safetensors`' type of a storage type as a header spells it (the runtime's table gives
/// names; `safetensors` reads its types from those same names). `None` only for a name
/// `safetensors` does not know, which no entry of the table is (a test checks each).
fn dtype_named(name: &str) -> Option<Dtype> {
    use serde::de::{value::StrDeserializer, Deserialize};
    Dtype::deserialize(StrDeserializer::<serde::de::value::Error>::new(name)).ok()
}

/// One tensor to write: checked against its declaration.
pub(super) struct Prepared<'a> {
    /// The reference: the tensor's name in the archive.
    pub(super) reference: &'a str,
    /// The supplied bytes with their SafeTensors type and shape.
    pub(super) view: TensorView<'a>,
    /// The bytes' length.
    pub(super) length: u64,
    /// Whether the tensor is packed 4-bit (its archive then carries the marker).
    pub(super) packed: bool,
}

/// Checks every external constant of `graph` against its supplied bytes; one tensor per
/// reference, sorted by reference.
pub(super) fn prepare<'a>(
    graph: &'a GraphJson,
    weights: &'a HashMap<String, &'a [u8]>,
    destination: &Path,
) -> Result<Vec<Prepared<'a>>, WriteError> {
    let declarations = declarations(graph, destination)?;
    let mut prepared = Vec::with_capacity(declarations.len());
    for (&reference, declaration) in &declarations {
        prepared.push(prepare_one(reference, declaration, weights, destination)?);
    }
    Ok(prepared)
}

/// How a reference is declared: by its first constant (by name), with a type and shape.
struct Declaration<'a> {
    constant: &'a str,
    data_type: DataType,
    shape: &'a [u32],
}

/// The declaration of each reference of `graph`; an error when two constants on one
/// reference declare different types or shapes.
fn declarations<'a>(
    graph: &'a GraphJson,
    destination: &Path,
) -> Result<BTreeMap<&'a str, Declaration<'a>>, WriteError> {
    let mut declarations: BTreeMap<&str, Declaration<'_>> = BTreeMap::new();
    for (name, decl) in &graph.consts {
        let ConstInit::Weights { r#ref } = &decl.init else {
            continue;
        };
        match declarations.get(r#ref.as_str()) {
            Some(first) => {
                if first.data_type != decl.data_type || first.shape != decl.shape.as_slice() {
                    return Err(WriteError::ConflictingDeclarations {
                        destination: destination.to_path_buf(),
                        reference: r#ref.clone(),
                        first: first.constant.to_string(),
                        first_type: first.data_type,
                        first_shape: first.shape.to_vec(),
                        second: name.clone(),
                        second_type: decl.data_type,
                        second_shape: decl.shape.clone(),
                    });
                }
            }
            None => {
                declarations.insert(
                    r#ref,
                    Declaration {
                        constant: name,
                        data_type: decl.data_type,
                        shape: &decl.shape,
                    },
                );
            }
        }
    }
    Ok(declarations)
}

/// The tensor of `reference`, declared as `declaration`: its supplied bytes viewed with
/// their SafeTensors storage type and shape.
fn prepare_one<'a>(
    reference: &'a str,
    declaration: &Declaration<'_>,
    weights: &'a HashMap<String, &'a [u8]>,
    destination: &Path,
) -> Result<Prepared<'a>, WriteError> {
    let (length, bytes) = declared_bytes(reference, declaration, weights, destination)?;
    let Declaration {
        constant,
        data_type,
        shape,
    } = *declaration;
    let (dtype, stored_shape) = storage(data_type, shape, length);
    let unsupported = |reason: String| WriteError::Unsupported {
        destination: destination.to_path_buf(),
        reference: reference.to_string(),
        constant: constant.to_string(),
        reason,
    };
    let stored_shape = stored_shape
        .into_iter()
        .map(usize::try_from)
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| unsupported("its shape does not fit this platform's usize".to_string()))?;
    let view = TensorView::new(dtype, stored_shape, bytes)
        .map_err(|e| unsupported(format!("safetensors rejected the tensor: {e}")))?;
    Ok(Prepared {
        reference,
        view,
        length,
        packed: data_type.is_packed_4bit(),
    })
}

/// The declared byte length of `reference` and its supplied bytes, once the reference is a
/// name SafeTensors can hold, the length fits 64 bits and the bytes are exactly that long.
fn declared_bytes<'a>(
    reference: &str,
    declaration: &Declaration<'_>,
    weights: &'a HashMap<String, &'a [u8]>,
    destination: &Path,
) -> Result<(u64, &'a [u8]), WriteError> {
    let dest = || destination.to_path_buf();
    let &Declaration {
        constant,
        data_type,
        shape,
    } = declaration;
    if reference == "__metadata__" {
        return Err(WriteError::Unsupported {
            destination: dest(),
            reference: reference.to_string(),
            constant: constant.to_string(),
            reason: "`__metadata__` is the SafeTensors header's metadata key, not a tensor name; rename the reference".to_string(),
        });
    }
    let Some(length) = data_type.byte_length(shape) else {
        return Err(WriteError::Overflow {
            destination: dest(),
            reference: reference.to_string(),
            constant: constant.to_string(),
            data_type,
            shape: shape.to_vec(),
        });
    };
    let Some(&bytes) = weights.get(reference) else {
        return Err(WriteError::MissingBytes {
            destination: dest(),
            reference: reference.to_string(),
            constant: constant.to_string(),
        });
    };
    if bytes.len() as u64 != length {
        return Err(WriteError::LengthMismatch {
            destination: dest(),
            reference: reference.to_string(),
            constant: constant.to_string(),
            data_type,
            shape: shape.to_vec(),
            expected: length,
            found: bytes.len() as u64,
        });
    }
    Ok((length, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_storage_type_of_the_table_is_a_safetensors_type() {
        for data_type in DataType::ALL {
            let (dtype, shape) = storage(data_type, &[2, 3], 3);
            match storage_type(data_type) {
                Some(name) => {
                    assert_eq!(dtype.to_string(), name, "{data_type}");
                    assert_eq!(shape, [2, 3]);
                    let size = data_type.element_size().unwrap();
                    assert_eq!(dtype.bitsize() as u64, size * 8, "{data_type}");
                }
                None => {
                    assert!(data_type.is_packed_4bit(), "{data_type}");
                    assert_eq!((dtype, shape), (Dtype::U8, vec![3]));
                }
            }
        }
        assert_eq!(dtype_named("F8_E4M3"), Some(Dtype::F8_E4M3));
        assert_eq!(dtype_named("f32"), None);
    }
}
