//! What a planned sidecar holds, independent of its kind, and the per-constant checks.

use super::discover::Context;
use super::error::ResolveError;
use super::plan::{Conversion, PlannedConstant, Request, Sidecar, SidecarKind};
use crate::dtype::{DataType, SafeTensorsStorage};
use safetensors::Dtype;
use std::path::{Path, PathBuf};

/// One stored tensor (archive tensor or manifest entry).
pub(crate) struct Stored {
    pub name: String,
    /// The SafeTensors storage type; `None` for blob entries (untyped bytes).
    pub dtype: Option<Dtype>,
    /// The SafeTensors shape; `None` for blob entries.
    pub shape: Option<Vec<u64>>,
    /// Absolute offset in the sidecar file.
    pub offset: u64,
    pub length: u64,
}

/// A sidecar's header or manifest, read and checked against the file's size.
pub(crate) struct Source {
    pub sidecar: Sidecar,
    pub tensors: Vec<Stored>,
    /// The archive's packed-4-bit marker value, if any (archives only).
    pub packed_marker: Option<String>,
}

impl Source {
    /// The file where the stored names live (the manifest for blobs).
    pub fn names_file(&self) -> &Path {
        match &self.sidecar.kind {
            SidecarKind::SafeTensors => &self.sidecar.path,
            SidecarKind::Blob { manifest } => manifest,
        }
    }

    /// Checks one request against the stored tensor `index` and plans it.
    pub fn check(
        &self,
        ctx: &Context<'_>,
        request: &Request<'_>,
        index: usize,
    ) -> Result<PlannedConstant, ResolveError> {
        let Some(stored) = self.tensors.get(index) else {
            return Err(ResolveError::NotInPlan {
                graph: ctx.graph.to_path_buf(),
                constant: request.name.to_string(),
            });
        };
        let graph = || ctx.graph.to_path_buf();
        let sidecar = || self.sidecar.path.clone();
        let mut conversion = Conversion::None;
        match &self.sidecar.kind {
            SidecarKind::Blob { manifest } => {
                let in_file = stored
                    .offset
                    .checked_add(stored.length)
                    .is_some_and(|end| end <= self.sidecar.len);
                if !in_file {
                    return Err(ResolveError::RangeOutOfBounds {
                        graph: graph(),
                        constant: request.name.to_string(),
                        reference: request.reference.to_string(),
                        stored_name: stored.name.clone(),
                        sidecar: sidecar(),
                        manifest: manifest.clone(),
                        offset: stored.offset,
                        length: stored.length,
                        file_len: self.sidecar.len,
                    });
                }
            }
            SidecarKind::SafeTensors => {
                let found_dtype = stored.dtype.map(|d| d.to_string()).unwrap_or_default();
                let found_shape = stored.shape.clone().unwrap_or_default();
                let dtype_error = |expected: &str| ResolveError::DataTypeMismatch {
                    graph: graph(),
                    constant: request.name.to_string(),
                    reference: request.reference.to_string(),
                    stored_name: stored.name.clone(),
                    sidecar: sidecar(),
                    declared: request.data_type,
                    expected: expected.to_string(),
                    found: found_dtype.clone(),
                };
                let shape_error = |expected: Vec<u64>, why: &str| ResolveError::ShapeMismatch {
                    graph: graph(),
                    constant: request.name.to_string(),
                    reference: request.reference.to_string(),
                    stored_name: stored.name.clone(),
                    sidecar: sidecar(),
                    expected,
                    found: found_shape.clone(),
                    why: why.to_string(),
                };
                if request.data_type.is_packed_4bit() {
                    match self.packed_marker.as_deref() {
                        Some(crate::PACKED_4BIT_METADATA_VERSION) => {}
                        other => {
                            return Err(ResolveError::PackedMarker {
                                graph: graph(),
                                constant: request.name.to_string(),
                                reference: request.reference.to_string(),
                                sidecar: sidecar(),
                                declared: request.data_type,
                                found: other.map(str::to_string),
                            })
                        }
                    }
                    if stored.dtype != Some(Dtype::U8) {
                        return Err(dtype_error("U8 (packed 4-bit storage)"));
                    }
                    if found_shape != [request.length] {
                        return Err(shape_error(
                            vec![request.length],
                            "(packed 4-bit storage is 1-D: [ceil(elements / 2)])",
                        ));
                    }
                } else {
                    let wanted = request.data_type.safetensors_dtype();
                    let bf16 =
                        request.data_type == DataType::Float32 && stored.dtype == Some(Dtype::BF16);
                    if bf16 {
                        conversion = Conversion::Bf16ToF32;
                    } else if stored.dtype != wanted {
                        let expected = match wanted {
                            Some(d) if request.data_type == DataType::Float32 => {
                                format!("{d} or BF16")
                            }
                            Some(d) => d.to_string(),
                            None => String::new(),
                        };
                        return Err(dtype_error(&expected));
                    }
                    let declared: Vec<u64> = request.shape.iter().map(|&d| u64::from(d)).collect();
                    if found_shape != declared {
                        return Err(shape_error(
                            declared,
                            "(the declared shape; shapes must match exactly)",
                        ));
                    }
                }
            }
        }
        let expected_stored = match conversion {
            Conversion::None => Some(request.length),
            Conversion::Bf16ToF32 => Some(request.length / 2).filter(|_| request.length % 2 == 0),
        };
        if expected_stored != Some(stored.length) {
            return Err(ResolveError::LengthMismatch {
                graph: graph(),
                constant: request.name.to_string(),
                reference: request.reference.to_string(),
                stored_name: stored.name.clone(),
                sidecar: self.names_file().to_path_buf(),
                data_type: request.data_type,
                shape: request.shape.to_vec(),
                expected: expected_stored.unwrap_or(request.length),
                found: stored.length,
            });
        }
        Ok(PlannedConstant {
            name: request.name.to_string(),
            reference: request.reference.to_string(),
            stored_name: stored.name.clone(),
            data_type: request.data_type,
            shape: request.shape.to_vec(),
            offset: stored.offset,
            stored_length: stored.length,
            length: request.length,
            conversion,
        })
    }
}

/// Opens `path` and records its size and modification time.
pub(crate) fn open_stamped(
    ctx: &Context<'_>,
    path: &Path,
) -> Result<(std::fs::File, super::error::Stamp), ResolveError> {
    let file = std::fs::File::open(path).map_err(|e| ctx.io(path, e))?;
    let meta = file.metadata().map_err(|e| ctx.io(path, e))?;
    Ok((file, super::error::Stamp::of(&meta)))
}

pub(crate) fn sidecar(path: &Path, kind: SidecarKind, stamp: super::error::Stamp) -> Sidecar {
    Sidecar {
        path: PathBuf::from(path),
        kind,
        len: stamp.len,
        stamp,
    }
}
