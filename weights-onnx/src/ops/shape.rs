//! Shape and data movement: `Reshape`, `Flatten`, `Squeeze`, `Unsqueeze`, `Transpose`,
//! `Concat`, `Split`, `Slice`, `Gather*`, `Scatter*`, `Pad`, `Expand`, `Tile`, `Shape`, `Size`,
//! `ConstantOfShape`, `Range`, `Cast`, `CastLike`, `DepthToSpace`, `SpaceToDepth`, `Trilu`,
//! `Resize`, `Upsample`, `OneHot`, `EyeLike`, `Compress`.
//!
//! Shapes are static, so `Shape` and `Size` always fold to constants, and every operator here
//! folds on the host when its data inputs are host values (the shape subgraphs of exported
//! models: `Shape → Gather → Unsqueeze → Concat → Reshape`). Integer data is moved as bytes,
//! never through `f64`, so int64 shapes stay exact.

mod cast;
mod gather;
mod host;
mod layout;
mod make;
mod movement;
mod pad;
mod resize;
mod scatter;

use super::Lower;

/// The ONNX operators of this family.
pub(crate) const OPS: &[&str] = &[
    "Cast",
    "CastLike",
    "Compress",
    "Concat",
    "ConstantOfShape",
    "DepthToSpace",
    "Expand",
    "EyeLike",
    "Flatten",
    "Gather",
    "GatherElements",
    "GatherND",
    "OneHot",
    "Pad",
    "Range",
    "Reshape",
    "Resize",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "Shape",
    "Size",
    "Slice",
    "SpaceToDepth",
    "Split",
    "Squeeze",
    "Tile",
    "Transpose",
    "Trilu",
    "Unsqueeze",
    "Upsample",
];

/// The lowering of `op_type`, if this family has it.
pub(crate) fn lookup(op_type: &str) -> Option<Lower> {
    Some(match op_type {
        "Reshape" => layout::reshape,
        "Flatten" => layout::flatten,
        "Squeeze" => layout::squeeze,
        "Unsqueeze" => layout::unsqueeze,
        "Shape" => layout::shape,
        "Size" => layout::size,
        "Transpose" => movement::transpose,
        "Concat" => movement::concat,
        "Split" => movement::split,
        "Slice" => movement::slice,
        "Expand" => movement::expand,
        "Tile" => movement::tile,
        "Pad" => pad::pad,
        "Gather" => gather::gather,
        "GatherElements" => gather::gather_elements,
        "GatherND" => gather::gather_nd,
        "Scatter" | "ScatterElements" => gather::scatter_elements,
        "ScatterND" => gather::scatter_nd,
        "Compress" => gather::compress,
        "OneHot" => gather::one_hot,
        "ConstantOfShape" => make::constant_of_shape,
        "Range" => make::range,
        "EyeLike" => make::eye_like,
        "Trilu" => make::trilu,
        "Cast" | "CastLike" => cast::cast,
        "DepthToSpace" => layout::depth_to_space,
        "SpaceToDepth" => layout::space_to_depth,
        "Resize" | "Upsample" => resize::resize,
        _ => return None,
    })
}
