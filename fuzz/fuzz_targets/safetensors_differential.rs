//! SafeTensors, both readers: arbitrary bytes as a whole archive, read by the runtime
//! (`Catalog::read_safetensors`, from a scratch file) and by the pinned `safetensors` crate
//! (`SafeTensors::read_metadata` and `deserialize`). They must agree on the verdict and, for
//! a valid archive, on every tensor's name, dtype, shape and byte range and on the metadata,
//! except for the documented exceptions: the comparison is the differential test's
//! (`weights-runtime/tests/support/safetensors_compare.rs`, included here as a file).
#![no_main]

use libfuzzer_sys::fuzz_target;
use webnn_weights_fuzz::put;
use webnn_weights_runtime::formats::Catalog;

// The verdict's details serve the test's tally, not this target.
#[allow(dead_code)]
#[path = "../../weights-runtime/tests/support/safetensors_compare.rs"]
mod compare;

fuzz_target!(|data: &[u8]| {
    let path = put("differential.safetensors", data);
    let ours = Catalog::read_safetensors(&path);
    if let Err(disagreement) = compare::compare(data, &ours) {
        panic!("the readers disagree: {disagreement}");
    }
});
