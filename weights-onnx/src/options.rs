//! How a model converts: dims for symbolic or unknown input dimensions, inputs fixed to
//! values, and where small constants go.

use crate::tensor::HostTensor;
use std::collections::BTreeMap;

/// Constants of at most this many bytes are written into the graph (`inlineBytes`); larger
/// ones are `@weights` references into the sidecar. Shape-like and scalar constants stay in
/// the graph, where a reader sees them; every weight tensor goes to the sidecar.
pub const INLINE_THRESHOLD: u64 = 1024;

/// Options of a conversion.
///
/// Dims of graph inputs are resolved in this order, the first that applies winning:
/// [`input_shape`](Self::input_shape) (the whole shape of one input), then
/// [`override_dim`](Self::override_dim) (a named dim, `dim_param`, wherever it appears), then the
/// model's metadata entry `freeDimensionOverrides` (a JSON object of name to size, as
/// webnn-graph reads it), then the model's own `dim_value`. A dim still unknown is an error
/// naming the input and the dim.
///
/// ```
/// let options = webnn_weights_onnx::ConvertOptions::new()
///     .override_dim("batch", 1)
///     .input_shape("pixels", &[1, 3, 224, 224]);
/// assert_eq!(options.dim("batch"), Some(1));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConvertOptions {
    pub(crate) dims: BTreeMap<String, u32>,
    pub(crate) input_shapes: BTreeMap<String, Vec<u32>>,
    pub(crate) constant_inputs: BTreeMap<String, HostTensor>,
    pub(crate) inline_threshold: u64,
    pub(crate) inline_all: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions::new()
    }
}

impl ConvertOptions {
    /// No overrides; constants up to [`INLINE_THRESHOLD`] bytes inline.
    pub fn new() -> ConvertOptions {
        ConvertOptions {
            dims: BTreeMap::new(),
            input_shapes: BTreeMap::new(),
            constant_inputs: BTreeMap::new(),
            inline_threshold: INLINE_THRESHOLD,
            inline_all: false,
        }
    }

    /// Gives the symbolic dim `name` (an ONNX `dim_param`) the size `value` everywhere.
    pub fn override_dim(mut self, name: impl Into<String>, value: u32) -> ConvertOptions {
        self.dims.insert(name.into(), value);
        self
    }

    /// Gives graph input `name` the shape `dims`, replacing what the model declares (for dims
    /// without a name: `-1`, `?`, or none at all). Its rank must match the model's when the
    /// model declares one.
    pub fn input_shape(mut self, name: impl Into<String>, dims: &[u32]) -> ConvertOptions {
        self.input_shapes.insert(name.into(), dims.to_vec());
        self
    }

    /// Fixes graph input `name` to `value`: the input disappears from the graph and its value
    /// is known while converting (for inputs that WebNN needs as constants, such as a
    /// Reshape's shape fed by a graph input). The element type and shape must match the
    /// model's declaration.
    pub fn constant_input(mut self, name: impl Into<String>, value: HostTensor) -> ConvertOptions {
        self.constant_inputs.insert(name.into(), value);
        self
    }

    /// Writes constants of at most `bytes` bytes into the graph instead of the sidecar.
    pub fn inline_threshold(mut self, bytes: u64) -> ConvertOptions {
        self.inline_threshold = bytes;
        self
    }

    /// Writes every constant into the graph (`inlineBytes`): no sidecar (webnn-graph's
    /// `--inline-weights`).
    pub fn inline_weights(mut self, inline: bool) -> ConvertOptions {
        self.inline_all = inline;
        self
    }

    /// The size given to a symbolic dim, if any.
    pub fn dim(&self, name: &str) -> Option<u32> {
        self.dims.get(name).copied()
    }
}
