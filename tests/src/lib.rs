//! Whole-pipeline tests of webnn-weights.
