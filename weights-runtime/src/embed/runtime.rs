//! Graphs embedded with `Embedding::Runtime`: the constants resolved from the sidecar on
//! first use, into one buffer laid out like the build-time data file (views into a mapping
//! with the feature `mmap`).

use super::*;
use crate::PlannedConstant;
use std::borrow::Cow;
use webnn_weights_artifacts::Layout;

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
/// laid out like the build-time data file. Both are kept for the rest of the process.
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
    // Where each constant's bytes are: a view into the mapping, or a range of one buffer
    // laid out like the build helper's data file, where constants on the same stored
    // bytes share one range, read once.
    #[derive(Clone, Copy)]
    enum Place {
        View(&'static [u8]),
        Read(usize),
    }
    let first = plan.first_with_same_bytes();
    let mut layout = Layout::with_capacity(first.len());
    let mut places: Vec<Place> = Vec::with_capacity(first.len());
    // The constant that fills each range.
    let mut filler: Vec<usize> = Vec::new();
    // `first[i] <= i`: `places.get(first[i])` is the first constant's place, or `None` for a
    // constant that is first on its bytes.
    for (i, (c, &f)) in plan.constants().iter().zip(&first).enumerate() {
        let place = match (view(c), places.get(f)) {
            (Some(bytes), _) => Place::View(bytes),
            (None, Some(&Place::Read(entry))) => Place::Read(entry),
            (None, _) => {
                filler.push(i);
                Place::Read(
                    layout
                        .push(c.length)
                        .map_err(|e| EmbedErrorKind::Inconsistent(format!("the constants: {e}")))?,
                )
            }
        };
        places.push(place);
    }
    let too_big = || {
        EmbedErrorKind::Inconsistent(format!(
            "the constants need {} bytes, more than this target can address",
            layout.data_len()
        ))
    };
    let total = usize::try_from(layout.data_len()).map_err(|_| too_big())?;
    let offsets = layout
        .ranges()
        .iter()
        .map(|r| Ok((usize::try_from(r.offset)?, usize::try_from(r.length)?)))
        .collect::<Result<Vec<(usize, usize)>, std::num::TryFromIntError>>()
        .map_err(|_| too_big())?;
    // Kept for the rest of the process: the graph lives in a `static` and resolves once.
    let data: &'static mut [u8] = leak_aligned_zeroed(total).ok_or_else(too_big)?;
    {
        let bytes: &mut [u8] = &mut *data;
        // One reader: each file opened once, small neighbouring constants read together.
        let mut reader = plan.reader();
        for (&i, &(start, length)) in filler.iter().zip(&offsets) {
            let constant = &plan.constants()[i];
            let mut out = &mut bytes[start..start + length];
            reader
                .copy_constant(constant, &mut out)
                .map_err(|e| EmbedErrorKind::Resolve(Box::new(e)))?;
            if !out.is_empty() {
                return Err(EmbedErrorKind::Inconsistent(format!(
                    "constant `{}`: the sidecar provided fewer than {length} bytes",
                    constant.name
                )));
            }
        }
        reader
            .finish()
            .map_err(|e| EmbedErrorKind::Resolve(Box::new(e)))?;
    }
    let data: &'static [u8] = data;
    Ok(plan
        .constants()
        .iter()
        .zip(places)
        .map(|(constant, place)| EmbeddedConstant {
            name: Cow::Owned(constant.name.clone()),
            reference: Cow::Owned(constant.reference.clone()),
            data_type: constant.data_type,
            shape: Cow::Owned(constant.shape.clone()),
            bytes: match place {
                Place::View(bytes) => bytes,
                Place::Read(entry) => {
                    let (start, length) = offsets[entry];
                    &data[start..start + length]
                }
            },
            // Verified while read above, when a lock applies.
            sha256: plan
                .lock()
                .and_then(|lock| lock.entry(&constant.name))
                .map(|entry| entry.sha256),
        })
        .collect())
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
