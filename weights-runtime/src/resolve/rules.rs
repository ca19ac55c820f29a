//! The format's rules over a catalog, without the graph: name lookup (exact first, then
//! normalized) and the per-constant checks (storage type, shape, packed 4-bit marker and
//! storage, range within the file, byte length). Planning adds the graph's context to the
//! [`Broken`] verdicts.

use super::model::Conversion;
use crate::graph::dtype::DataType;
use crate::graph::near::{nearest, normalize_weight_name};
use crate::sidecar::formats::safetensors::Dtype;
use crate::sidecar::formats::{Catalog, Storage, StoredTensor};
use std::collections::HashMap;

/// Stored names by exact and by normalized spelling (the names of one archive or
/// manifest, or the union of a sharded archive's `weight_map`).
pub(crate) struct Index<'s> {
    names: Vec<&'s str>,
    exact: HashMap<&'s str, usize>,
    normalized: HashMap<String, Vec<usize>>,
}

impl<'s> Index<'s> {
    /// The index of the stored tensors' names (positions are positions in `tensors`).
    pub fn new(tensors: &'s [StoredTensor]) -> Index<'s> {
        Index::of_names(tensors.iter().map(StoredTensor::name))
    }

    /// The index of `names` (positions are positions in the iteration).
    pub fn of_names(names: impl Iterator<Item = &'s str>) -> Index<'s> {
        let names: Vec<&'s str> = names.collect();
        let mut exact = HashMap::with_capacity(names.len());
        let mut normalized: HashMap<String, Vec<usize>> = HashMap::with_capacity(names.len());
        for (i, &name) in names.iter().enumerate() {
            exact.insert(name, i);
            normalized
                .entry(normalize_weight_name(name))
                .or_default()
                .push(i);
        }
        Index {
            names,
            exact,
            normalized,
        }
    }

    /// The name at position `i`.
    pub fn name(&self, i: usize) -> Option<&'s str> {
        self.names.get(i).copied()
    }

    /// The index of the stored tensor for `reference`; `Err(candidates)` when there is
    /// none (empty) or more than one normalized match.
    pub fn lookup(&self, reference: &str) -> Result<usize, Vec<usize>> {
        if let Some(&i) = self.exact.get(reference) {
            return Ok(i);
        }
        match self.normalized.get(reference).map(Vec::as_slice) {
            Some(&[one]) => Ok(one),
            Some(many) => Err(many.to_vec()),
            None => Err(Vec::new()),
        }
    }
}

/// What a declaration asks of one stored tensor.
pub(crate) struct Ask<'a> {
    pub data_type: DataType,
    pub shape: &'a [u32],
    /// The declaration's byte size (checked, fits `usize`).
    pub length: u64,
}

/// Why a stored tensor cannot serve a declaration (the graph's context is added by
/// planning).
pub(crate) enum Broken {
    /// No stored name matches: the nearest names (nearest first) and the total.
    Missing {
        available: Vec<String>,
        total: usize,
    },
    /// Several stored names normalize to the reference (sorted).
    Ambiguous {
        candidates: Vec<String>,
    },
    DataType {
        expected: String,
        found: String,
    },
    Shape {
        expected: Vec<u64>,
        found: Vec<u64>,
        why: &'static str,
    },
    PackedMarker {
        found: Option<String>,
    },
    Range {
        file_len: u64,
    },
    Length {
        expected: u64,
    },
}

/// Finds the position of the stored name for `reference` in `index`.
pub(crate) fn lookup(index: &Index<'_>, reference: &str) -> Result<usize, Broken> {
    index.lookup(reference).map_err(|candidates| {
        if candidates.is_empty() {
            Broken::Missing {
                available: nearest(&index.names, reference),
                total: index.names.len(),
            }
        } else {
            let mut candidates: Vec<String> = candidates
                .into_iter()
                .filter_map(|i| index.name(i).map(str::to_string))
                .collect();
            candidates.sort();
            Broken::Ambiguous { candidates }
        }
    })
}

/// Checks `stored` (a tensor of `catalog`) against `ask` and returns the conversion from
/// stored to declared bytes.
pub(crate) fn check(
    catalog: &Catalog,
    stored: &StoredTensor,
    ask: &Ask<'_>,
) -> Result<Conversion, Broken> {
    let mut conversion = Conversion::None;
    match &stored.storage {
        Storage::Untyped { .. } => {
            let file_len = catalog.files().get(stored.file()).map_or(0, |f| f.len());
            if !stored.fits(file_len) {
                return Err(Broken::Range { file_len });
            }
        }
        Storage::Typed { dtype, shape } => {
            let found_dtype = dtype.to_string();
            if ask.data_type.is_packed_4bit() {
                // The marker of the archive holding the tensor (its shard, when sharded).
                match catalog.packed_marker_of(stored) {
                    Some(crate::sidecar::formats::safetensors::PACKED_4BIT_METADATA_VERSION) => {}
                    other => {
                        return Err(Broken::PackedMarker {
                            found: other.map(str::to_string),
                        })
                    }
                }
                if *dtype != Dtype::U8 {
                    return Err(Broken::DataType {
                        expected: "U8 (packed 4-bit storage)".to_string(),
                        found: found_dtype,
                    });
                }
                if shape.as_slice() != [ask.length] {
                    return Err(Broken::Shape {
                        expected: vec![ask.length],
                        found: shape.clone(),
                        why: "(packed 4-bit storage is 1-D: [ceil(elements / 2)])",
                    });
                }
            } else {
                let wanted = Dtype::of(ask.data_type);
                if ask.data_type == DataType::Float32 && *dtype == Dtype::BF16 {
                    conversion = Conversion::Bf16ToF32;
                } else if Some(*dtype) != wanted {
                    let expected = match wanted {
                        Some(d) if ask.data_type == DataType::Float32 => format!("{d} or BF16"),
                        Some(d) => d.to_string(),
                        None => String::new(),
                    };
                    return Err(Broken::DataType {
                        expected,
                        found: found_dtype,
                    });
                }
                let declared: Vec<u64> = ask.shape.iter().map(|&d| u64::from(d)).collect();
                if *shape != declared {
                    return Err(Broken::Shape {
                        expected: declared,
                        found: shape.clone(),
                        why: "(the declared shape; shapes must match exactly)",
                    });
                }
            }
        }
    }
    let expected_stored = conversion.stored_length(ask.length);
    if expected_stored != Some(stored.length()) {
        return Err(Broken::Length {
            expected: expected_stored.unwrap_or(ask.length),
        });
    }
    Ok(conversion)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(names: &[&str]) -> Vec<StoredTensor> {
        names
            .iter()
            .map(|n| StoredTensor {
                name: n.to_string(),
                storage: Storage::Untyped {
                    data_type: None,
                    shape: None,
                },
                file: 0,
                offset: 0,
                length: 0,
            })
            .collect()
    }

    #[test]
    fn exact_then_normalized() {
        let t = stored(&["a.b", "a_b", "x::y.z", "p.q", "p::q"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("a.b"), Ok(0));
        assert_eq!(index.lookup("a_b"), Ok(1)); // exact wins over a normalized collision
        assert_eq!(index.lookup("x__y_z"), Ok(2));
        assert_eq!(index.lookup("p_q"), Ok(3));
        assert_eq!(index.lookup("p__q"), Ok(4));
        assert_eq!(index.lookup("nope"), Err(vec![]));
        let t = stored(&["m.w", "m_w", "m::w"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m_w"), Ok(1));
        let t = stored(&["m.w", "m::w", "m.w.x", "m_w_x"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m_w_x"), Ok(3));
        let t = stored(&["m.w", "m::w", "q.w", "q::w"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m__w"), Ok(1));
        let t = stored(&["a.b.c", "a_b.c", "other"]);
        let index = Index::new(&t);
        let mut err = index.lookup("a_b_c").unwrap_err();
        err.sort();
        assert_eq!(err, vec![0, 1]);
    }
}
