//! The `webnn-weights` command.
fn main() {}
