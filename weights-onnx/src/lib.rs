//! # webnn-weights-onnx
//!
//! ONNX models in: an `.onnx` file (and its external data) converted to a WebNN graph
//! ([`GraphJson`](webnn_weights_runtime::GraphJson)) plus the bytes of its weights, ready for
//! the rest of webnn-weights — written as a `.webnn` graph with a SafeTensors or WGWT sidecar by
//! `webnn-weights convert-onnx`, embedded by the build helper (feature `onnx`), or loaded at run
//! time (the runtime's feature `onnx`).
//!
//! - **No `protoc`, stable Rust.** The ONNX messages are Rust code generated from the
//!   `onnx-ml.proto` of the onnx 1.22.0 wheel and committed ([`proto`]); `weights-onnx/codegen`
//!   regenerates them with `protox` (a protobuf compiler in pure Rust) and `prost-build`. `prost`
//!   is the decoder: the most used protobuf crate, small, and able to decode `bytes` fields as
//!   [`bytes::Bytes`] views of the input, which is what keeps weights uncopied.
//! - **Bytes stay where they are.** The model file is mapped and decoded as a `Bytes`; an
//!   initializer's `raw_data` is a view of the mapping, and ONNX external data files are mapped
//!   once each and sliced. Nothing is copied until it is written (float data kept in typed
//!   fields, `bfloat16` widened to `float32`, and folded values are the exceptions). The files
//!   must not be truncated or rewritten while a model converts and while a [`Conversion`]'s
//!   weights are in use (the mapping would show the new bytes).
//! - **Static shapes.** Every value has a known shape while converting: graph inputs get theirs
//!   from the model, [`ConvertOptions::override_dim`], [`ConvertOptions::input_shape`] or the
//!   model's `freeDimensionOverrides` metadata; shape arithmetic (`Shape`, `Gather`, `Concat`, …)
//!   folds to constants. A shape that cannot be known is an error naming the node, never a guess.
//! - **Every problem at once.** [`ConvertError`] lists each node that cannot convert with its
//!   operator, domain, opset and why.
//!
//! ```
//! use prost::Message as _;
//! use webnn_weights_onnx::proto::*;
//!
//! // y = relu(x), x: float[1, 4]
//! let tensor_type = |dims: &[i64]| TypeProto {
//!     value: Some(type_proto::Value::TensorType(type_proto::Tensor {
//!         elem_type: Some(1),
//!         shape: Some(TensorShapeProto {
//!             dim: dims.iter().map(|&d| tensor_shape_proto::Dimension {
//!                 value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
//!                 ..Default::default()
//!             }).collect(),
//!         }),
//!     })),
//!     ..Default::default()
//! };
//! let model = ModelProto {
//!     ir_version: Some(8),
//!     opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
//!     graph: Some(GraphProto {
//!         node: vec![NodeProto {
//!             op_type: Some("Relu".into()),
//!             input: vec!["x".into()],
//!             output: vec!["y".into()],
//!             ..Default::default()
//!         }],
//!         input: vec![ValueInfoProto { name: Some("x".into()), r#type: Some(tensor_type(&[1, 4])), ..Default::default() }],
//!         output: vec![ValueInfoProto { name: Some("y".into()), r#type: Some(tensor_type(&[1, 4])), ..Default::default() }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let bytes = bytes::Bytes::from(model.encode_to_vec());
//! let conversion = webnn_weights_onnx::convert_bytes(bytes, None, &Default::default()).unwrap();
//! assert_eq!(conversion.graph.nodes[0].op, "relu");
//! assert_eq!(conversion.outputs, [("y".to_string(), "y".to_string())]);
//! ```
#![warn(missing_docs)]
#![deny(unsafe_code)]

mod attrs;
mod convert;
mod cx;
mod error;
mod model;
mod node;
mod ops;
mod options;
pub mod proto;
mod tensor;
mod value;

pub use convert::{convert, convert_bytes, Conversion, OPSET_RANGE};
pub use cx::sanitize_name;
pub use error::{ConvertError, Problem};
pub use options::{ConvertOptions, INLINE_THRESHOLD};
pub use tensor::{read_tensor_proto, ElemType, HostTensor, TensorError, MAX_ELEMENTS};

/// Every ai.onnx operator this converter lowers, sorted.
pub fn supported_operators() -> Vec<&'static str> {
    ops::supported()
}

/// Every com.microsoft operator (onnxruntime's contrib operators) this converter lowers,
/// sorted. `docs/onnx.md` lists them with what each becomes.
///
/// ```
/// let contrib = webnn_weights_onnx::supported_contrib_operators();
/// assert!(contrib.contains(&"MatMulNBits"));
/// assert!(contrib.windows(2).all(|w| w[0] < w[1]));
/// ```
pub fn supported_contrib_operators() -> Vec<&'static str> {
    let mut all = ops::contrib::OPS.to_vec();
    all.sort_unstable();
    all
}
