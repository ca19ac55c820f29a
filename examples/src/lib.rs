//! Examples of webnn-weights.
