//! Graphs embedded with `Embedding::Runtime`: the constants resolved from the sidecar on
//! first use, into one buffer laid out like the build-time data file (by the same
//! `WeightPlan::data_layout`; views into a mapping with the feature `mmap`).

use super::*;
use crate::{DataLayout, DataWriteError, PlannedConstant};
use std::borrow::Cow;

/// Views into a read-only mapping of the sidecar for the constants stored 64-byte
/// aligned without conversion (the mapping is page aligned), kept for the rest of the
/// process with the mapping they share. On wasm, which cannot map files, there are none
/// (and no file is mapped when no constant is picked).
#[cfg(feature = "mmap")]
fn mapped_views(
    plan: &crate::WeightPlan,
    aligned: impl Fn(u64) -> bool,
) -> Result<&'static BTreeMap<String, Bytes>, EmbedErrorKind> {
    let map = cfg!(not(target_family = "wasm"));
    let views = plan
        .materialize_mapped_where(|c| {
            map && c.conversion == crate::Conversion::None && c.length > 0 && aligned(c.offset)
        })
        .map_err(|e| EmbedErrorKind::Resolve(Box::new(e)))?;
    Ok(Box::leak(Box::new(views)))
}

/// Without the feature `mmap` nothing is mapped: no constant is a view.
#[cfg(not(feature = "mmap"))]
fn mapped_views(
    _: &crate::WeightPlan,
    _: impl Fn(u64) -> bool,
) -> Result<&'static BTreeMap<String, Bytes>, EmbedErrorKind> {
    static NONE: BTreeMap<String, Bytes> = BTreeMap::new();
    Ok(&NONE)
}

/// Plans the sidecar of `graph`; with the feature `mmap`, maps it read-only for the
/// constants stored 64-byte aligned without conversion (views into the mapping,
/// [`mapped_views`]), and reads every other constant into one 64-byte aligned buffer
/// laid out like the build-time data file, by the same function with the views left out
/// ([`WeightPlan::data_layout`](crate::WeightPlan::data_layout), [`read_buffer`]). Both
/// are kept for the rest of the process.
pub(super) fn resolve(
    graph: &GraphJson,
    graph_path: &str,
    [weights, manifest, lock]: [Option<&str>; 3],
) -> Result<Vec<EmbeddedConstant>, EmbedErrorKind> {
    use std::path::Path;
    let resolve_error = |e| EmbedErrorKind::Resolve(Box::new(e));
    let plan = crate::plan_external_weights(
        graph,
        Path::new(graph_path),
        weights.map(Path::new),
        manifest.map(Path::new),
    )
    .map_err(resolve_error)?
    .with_lock_file(lock.map(Path::new))
    .map_err(resolve_error)?;
    let aligned = |at: u64| at % CONSTANT_ALIGNMENT as u64 == 0;
    let views = mapped_views(&plan, aligned)?;
    let view = |c: &PlannedConstant| -> Option<&'static [u8]> {
        let bytes: &'static [u8] = views.get(&c.name)?;
        aligned(bytes.as_ptr() as u64).then_some(bytes)
    };
    // The views are left out of the buffer; constants on the same stored bytes share one
    // range of it, read once (the build helper's rule, `WeightPlan::data_layout`).
    let layout = plan
        .data_layout(|c| view(c).is_some())
        .map_err(|e| EmbedErrorKind::Inconsistent(format!("the constants: {e}")))?;
    let data = read_buffer(&layout)?;
    plan.constants()
        .iter()
        .enumerate()
        .map(|(i, constant)| {
            // A range of the buffer, or else (left out of it) a view of the mapping.
            let in_buffer = layout.range_of(i).and_then(|range| {
                data.get(usize::try_from(range.offset).ok()?..usize::try_from(range.end()).ok()?)
            });
            let bytes = in_buffer.or_else(|| view(constant)).ok_or_else(|| {
                EmbedErrorKind::Inconsistent(format!(
                    "constant `{}`: neither a view of the sidecar nor in the buffer",
                    constant.name
                ))
            })?;
            Ok(EmbeddedConstant {
                name: Cow::Owned(constant.name.clone()),
                reference: Cow::Owned(constant.reference.clone()),
                data_type: constant.data_type,
                shape: Cow::Owned(constant.shape.clone()),
                bytes,
                // Verified while read, when a lock applies.
                sha256: plan
                    .lock()
                    .and_then(|lock| lock.entry(&constant.name))
                    .map(|entry| entry.sha256),
            })
        })
        .collect()
}

/// Reads the constants `layout` holds into one [`CONSTANT_ALIGNMENT`]-aligned buffer of its
/// data length, through one reader ([`DataLayout::write_data`]), kept for the rest of the
/// process: the graph lives in a `static` and resolves once. Fails when the data does not
/// fit this target's address space.
fn read_buffer(layout: &DataLayout<'_>) -> Result<&'static [u8], EmbedErrorKind> {
    let too_big = || {
        EmbedErrorKind::Inconsistent(format!(
            "the constants need {} bytes, more than this target can address",
            layout.data_len()
        ))
    };
    let total = usize::try_from(layout.data_len()).map_err(|_| too_big())?;
    let data: &'static mut [u8] = leak_aligned_zeroed(total).ok_or_else(too_big)?;
    let mut out: &mut [u8] = &mut *data;
    layout.write_data(&mut out).map_err(|e| match e {
        DataWriteError::Resolve(e) => EmbedErrorKind::Resolve(Box::new(e)),
        other => EmbedErrorKind::Inconsistent(format!("the buffer of {total} bytes: {other}")),
    })?;
    if !out.is_empty() {
        return Err(EmbedErrorKind::Inconsistent(format!(
            "the sidecar provided {} bytes fewer than the {total} of the constants' data",
            out.len()
        )));
    }
    Ok(data)
}

/// `len` zero bytes whose first is [`CONSTANT_ALIGNMENT`]-aligned, as in the embedded data,
/// kept for the rest of the process: a zeroed allocation `CONSTANT_ALIGNMENT - 1` bytes
/// longer, of which the aligned range is returned (the padding before it is never used).
/// `None` when `len` does not fit the address space.
pub(super) fn leak_aligned_zeroed(len: usize) -> Option<&'static mut [u8]> {
    let all: &'static mut [u8] = Vec::leak(vec![0; len.checked_add(CONSTANT_ALIGNMENT - 1)?]);
    // The distance to the next multiple of the alignment, from the address.
    let pad = (all.as_ptr() as usize).wrapping_neg() % CONSTANT_ALIGNMENT;
    all.get_mut(pad..pad.checked_add(len)?)
}
