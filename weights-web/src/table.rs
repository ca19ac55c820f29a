//! The table of WebNN semantics: how each GraphJson operation becomes one `MLGraphBuilder`
//! call, read the way rustnn 0.6.0's `webnn_json::from_graph_json` reads it.
//!
//! One entry per operation: the builder method, its positional arguments in the order of
//! the WebNN IDL (node inputs, or values taken out of the node's options), the keys of its
//! options dictionary, how many operands it returns, and the adapter the JavaScript builder
//! applies where rustnn's reading and the browser's API differ in shape rather than in
//! meaning. Lowering ([`crate::lower`]) is the only reader of this table; the JavaScript
//! builder executes what lowering produced and knows no operation by name (the adapters
//! excepted, each named here).

/// What a value in a node's options must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The name of an operand declared before the node (rustnn's operand options).
    Operand,
    /// An unsigned integer that fits `u32`.
    U32,
    /// An array of `u32`.
    U32s,
    /// A JSON number.
    Number,
    /// An array of JSON numbers.
    Numbers,
    /// An integer that fits `i32`.
    I32,
    /// `true` or `false`.
    Bool,
    /// One of the given strings.
    Enum(&'static [&'static str]),
    /// An operand data type spelled as in GraphJson (`float32`, `int8`, …).
    DataType,
    /// `split`'s splits: a count, or the sizes as an array of `u32`.
    Splits,
    /// An array of recurrent-network activations.
    Activations,
    /// Read by rustnn and without meaning for the builder (legacy keys): accepted, dropped.
    Dropped,
}

/// A value the lowering fills in when the node does not give one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Absent {
    /// The node must give it.
    Required,
    /// Left out, so the browser applies the WebNN default (which rustnn shares).
    Omit,
    /// rustnn's own default, a JSON literal, passed explicitly because the WebNN default
    /// differs (or the IDL argument is not optional).
    Default(&'static str),
}

/// One positional argument of a builder method.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    /// The next node input.
    Input(&'static str),
    /// The next node input when there is one (an adapter supplies the operand otherwise).
    OptionalInput(&'static str),
    /// Every remaining node input, as one sequence (`concat`).
    Inputs,
    /// A value taken out of the node's options: its key, other spellings rustnn accepts,
    /// what it must be, and what happens when it is absent.
    Param(Param),
}

/// A positional argument that lives in the node's options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    pub key: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub absent: Absent,
}

/// One key of an operation's options dictionary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    /// The key in GraphJson.
    pub key: &'static str,
    /// Other spellings rustnn reads for it.
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub absent: Absent,
    /// Extra keys the browser reads for the same value: WebIDL dictionaries ignore keys they
    /// do not know, so passing both spellings works with either revision of the API.
    pub also: &'static [&'static str],
}

/// How many operands an operation returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outputs {
    /// One operand.
    One,
    /// A sequence: `split` (one per split).
    Split,
    /// A sequence of `base` operands, one more when `returnSequence` is true.
    Recurrent { base: usize },
    /// A sequence of a fixed length.
    Fixed(usize),
}

/// The JavaScript builder's adapters, each a function of the same name in `builder.js`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adapter {
    /// `quantizeLinear` / `dequantizeLinear`: scale and zero point broadcast to the input's
    /// rank as numpy does (rustnn lowers them to broadcasting arithmetic; the browser wants
    /// equal ranks), a zero point of zeros when the node has none, and the arithmetic form
    /// `x * scale - zeroPoint * scale` when the zero point's type is not the input's.
    Quantize,
}

impl Adapter {
    /// The adapter's name in the lowered program and in `builder.js`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Adapter::Quantize => "quantize",
        }
    }
}

/// One operation of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Op {
    /// The name in GraphJson.
    pub name: &'static str,
    /// The `MLGraphBuilder` method.
    pub method: &'static str,
    pub args: &'static [Arg],
    /// Node inputs past the positional ones that rustnn reads as operand options when the
    /// option is absent (`conv2d`'s third input is its bias): input index, option key.
    pub extra_inputs: &'static [(usize, &'static str)],
    pub options: &'static [Opt],
    pub outputs: Outputs,
    pub adapter: Option<Adapter>,
}

const fn input(name: &'static str) -> Arg {
    Arg::Input(name)
}

const fn param(key: &'static str, kind: Kind, absent: Absent) -> Arg {
    Arg::Param(Param {
        key,
        aliases: &[],
        kind,
        absent,
    })
}

const fn param_aka(
    key: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    absent: Absent,
) -> Arg {
    Arg::Param(Param {
        key,
        aliases,
        kind,
        absent,
    })
}

const fn opt(key: &'static str, kind: Kind) -> Opt {
    Opt {
        key,
        aliases: &[],
        kind,
        absent: Absent::Omit,
        also: &[],
    }
}

const fn opt_default(key: &'static str, kind: Kind, default: &'static str) -> Opt {
    Opt {
        key,
        aliases: &[],
        kind,
        absent: Absent::Default(default),
        also: &[],
    }
}

const fn dropped(key: &'static str) -> Opt {
    opt(key, Kind::Dropped)
}

const fn simple(name: &'static str, args: &'static [Arg], options: &'static [Opt]) -> Op {
    Op {
        name,
        method: name,
        args,
        extra_inputs: &[],
        options,
        outputs: Outputs::One,
        adapter: None,
    }
}

const UNARY: &[Arg] = &[input("input")];
const BINARY: &[Arg] = &[input("a"), input("b")];
const NONE: &[Opt] = &[];

const INPUT_LAYOUT: Kind = Kind::Enum(&["nchw", "nhwc"]);
const CONV_FILTER_LAYOUT: Kind = Kind::Enum(&["oihw", "hwio", "ohwi", "ihwo"]);
const CONV_TRANSPOSE_FILTER_LAYOUT: Kind = Kind::Enum(&["iohw", "hwoi", "ohwi"]);
const DIRECTION: Kind = Kind::Enum(&["forward", "backward", "both"]);
const GRU_LAYOUT: Kind = Kind::Enum(&["zrn", "rzn"]);
const LSTM_LAYOUT: Kind = Kind::Enum(&["iofg", "ifgo"]);
const ROUNDING: Kind = Kind::Enum(&["floor", "ceil"]);

const CONV2D_OPTIONS: &[Opt] = &[
    opt("padding", Kind::U32s),
    opt("strides", Kind::U32s),
    opt("dilations", Kind::U32s),
    opt("groups", Kind::U32),
    opt("inputLayout", INPUT_LAYOUT),
    opt("filterLayout", CONV_FILTER_LAYOUT),
    opt("bias", Kind::Operand),
];

const CONV_TRANSPOSE2D_OPTIONS: &[Opt] = &[
    opt("padding", Kind::U32s),
    opt("strides", Kind::U32s),
    opt("dilations", Kind::U32s),
    opt("outputPadding", Kind::U32s),
    opt("outputSizes", Kind::U32s),
    opt("groups", Kind::U32),
    opt("inputLayout", INPUT_LAYOUT),
    opt("filterLayout", CONV_TRANSPOSE_FILTER_LAYOUT),
    opt("bias", Kind::Operand),
];

const POOL_OPTIONS: &[Opt] = &[
    opt("windowDimensions", Kind::U32s),
    opt("padding", Kind::U32s),
    opt("strides", Kind::U32s),
    opt("dilations", Kind::U32s),
    opt("layout", INPUT_LAYOUT),
    Opt {
        key: "outputShapeRounding",
        aliases: &["roundingType"],
        kind: ROUNDING,
        absent: Absent::Omit,
        // Chromium's name for it before the specification renamed it.
        also: &["roundingType"],
    },
    opt("outputSizes", Kind::U32s),
];

const REDUCE_OPTIONS: &[Opt] = &[opt("axes", Kind::U32s), opt("keepDimensions", Kind::Bool)];

const ARG_MIN_MAX_ARGS: &[Arg] = &[
    input("input"),
    param("axis", Kind::U32, Absent::Default("0")),
];
const ARG_MIN_MAX_OPTIONS: &[Opt] = &[
    opt("keepDimensions", Kind::Bool),
    opt("outputDataType", Kind::DataType),
];

const GATHER_OPTIONS: &[Opt] = &[
    opt("axis", Kind::U32),
    // rustnn keeps it as an extra of the operation; WebNN has no such parameter, so only
    // its neutral value is accepted (see `lower`).
    Opt {
        key: "batchDimensions",
        aliases: &["batch_dimensions"],
        kind: Kind::U32,
        absent: Absent::Omit,
        also: &[],
    },
];

const NORMALIZATION_LEGACY: [Opt; 4] = [
    dropped("hasScale"),
    dropped("hasBias"),
    dropped("has_scale"),
    dropped("has_bias"),
];

const HIDDEN_SIZE: Arg = param_aka("hiddenSize", &["hidden_size"], Kind::U32, Absent::Required);

/// The table: every operation of the WebNN specification that rustnn 0.6.0 reads from
/// GraphJson, in the specification's order.
pub(crate) const OPS: &[Op] = &[
    simple("argMin", ARG_MIN_MAX_ARGS, ARG_MIN_MAX_OPTIONS),
    simple("argMax", ARG_MIN_MAX_ARGS, ARG_MIN_MAX_OPTIONS),
    simple(
        "batchNormalization",
        &[input("input"), input("mean"), input("variance")],
        &[
            opt("scale", Kind::Operand),
            opt("bias", Kind::Operand),
            opt("axis", Kind::U32),
            opt("epsilon", Kind::Number),
        ],
    ),
    simple(
        "cast",
        &[
            input("input"),
            // rustnn reads `to`, then `dataType`, and casts to float32 without either.
            param_aka(
                "to",
                &["dataType"],
                Kind::DataType,
                Absent::Default("\"float32\""),
            ),
        ],
        NONE,
    ),
    simple(
        "clamp",
        UNARY,
        &[opt("minValue", Kind::Number), opt("maxValue", Kind::Number)],
    ),
    simple(
        "concat",
        &[Arg::Inputs, param("axis", Kind::U32, Absent::Default("0"))],
        NONE,
    ),
    Op {
        extra_inputs: &[(2, "bias")],
        ..simple("conv2d", &[input("input"), input("filter")], CONV2D_OPTIONS)
    },
    Op {
        extra_inputs: &[(2, "bias")],
        ..simple(
            "convTranspose2d",
            &[input("input"), input("filter")],
            CONV_TRANSPOSE2D_OPTIONS,
        )
    },
    simple(
        "cumulativeSum",
        &[
            input("input"),
            param("axis", Kind::U32, Absent::Default("0")),
        ],
        &[opt("exclusive", Kind::Bool), opt("reversed", Kind::Bool)],
    ),
    simple("add", BINARY, NONE),
    simple("sub", BINARY, NONE),
    simple("mul", BINARY, NONE),
    simple("div", BINARY, NONE),
    simple("max", BINARY, NONE),
    simple("min", BINARY, NONE),
    simple("pow", BINARY, NONE),
    simple("equal", BINARY, NONE),
    simple("notEqual", BINARY, NONE),
    simple("greater", BINARY, NONE),
    simple("greaterOrEqual", BINARY, NONE),
    simple("lesser", BINARY, NONE),
    simple("lesserOrEqual", BINARY, NONE),
    simple("logicalNot", &[input("a")], NONE),
    simple("logicalAnd", BINARY, NONE),
    simple("logicalOr", BINARY, NONE),
    simple("logicalXor", BINARY, NONE),
    simple("isNaN", &[input("a")], NONE),
    simple("isInfinite", &[input("a")], NONE),
    simple("abs", UNARY, NONE),
    simple("ceil", UNARY, NONE),
    simple("cos", UNARY, NONE),
    simple("erf", UNARY, NONE),
    simple("exp", UNARY, NONE),
    simple("floor", UNARY, NONE),
    simple("identity", UNARY, NONE),
    simple("log", UNARY, NONE),
    simple("neg", UNARY, NONE),
    simple("reciprocal", UNARY, NONE),
    simple("roundEven", UNARY, NONE),
    simple("sin", UNARY, NONE),
    simple("sign", UNARY, NONE),
    simple("sqrt", UNARY, NONE),
    simple("tan", UNARY, NONE),
    Op {
        adapter: Some(Adapter::Quantize),
        ..simple(
            "dequantizeLinear",
            &[
                input("input"),
                input("scale"),
                Arg::OptionalInput("zeroPoint"),
            ],
            NONE,
        )
    },
    Op {
        adapter: Some(Adapter::Quantize),
        ..simple(
            "quantizeLinear",
            &[
                input("input"),
                input("scale"),
                Arg::OptionalInput("zeroPoint"),
            ],
            NONE,
        )
    },
    simple("elu", UNARY, &[opt("alpha", Kind::Number)]),
    simple(
        "expand",
        &[
            input("input"),
            param_aka("newShape", &["new_shape"], Kind::U32s, Absent::Required),
        ],
        // rustnn drops an `axes` key of expand.
        &[dropped("axes")],
    ),
    simple(
        "gather",
        &[input("input"), input("indices")],
        GATHER_OPTIONS,
    ),
    simple(
        "gatherElements",
        &[input("input"), input("indices")],
        GATHER_OPTIONS,
    ),
    simple("gatherND", &[input("input"), input("indices")], NONE),
    simple("gelu", UNARY, NONE),
    simple(
        "gemm",
        BINARY,
        &[
            opt("c", Kind::Operand),
            opt("alpha", Kind::Number),
            opt("beta", Kind::Number),
            opt("aTranspose", Kind::Bool),
            opt("bTranspose", Kind::Bool),
        ],
    ),
    Op {
        outputs: Outputs::Recurrent { base: 1 },
        ..simple(
            "gru",
            &[
                input("input"),
                input("weight"),
                input("recurrentWeight"),
                param("steps", Kind::U32, Absent::Required),
                HIDDEN_SIZE,
            ],
            &[
                opt("bias", Kind::Operand),
                opt("recurrentBias", Kind::Operand),
                opt("initialHiddenState", Kind::Operand),
                // rustnn's default is false (WebNN's is true).
                opt_default("resetAfter", Kind::Bool, "false"),
                opt("returnSequence", Kind::Bool),
                opt("direction", DIRECTION),
                opt("layout", GRU_LAYOUT),
                opt("activations", Kind::Activations),
            ],
        )
    },
    Op {
        // rustnn reads a fifth and sixth input as bias and recurrent bias.
        extra_inputs: &[(4, "bias"), (5, "recurrentBias")],
        ..simple(
            "gruCell",
            &[
                input("input"),
                input("weight"),
                input("recurrentWeight"),
                input("hiddenState"),
                HIDDEN_SIZE,
            ],
            &[
                opt("bias", Kind::Operand),
                opt("recurrentBias", Kind::Operand),
                opt_default("resetAfter", Kind::Bool, "false"),
                opt("layout", GRU_LAYOUT),
                opt("activations", Kind::Activations),
            ],
        )
    },
    simple(
        "hardSigmoid",
        UNARY,
        &[opt("alpha", Kind::Number), opt("beta", Kind::Number)],
    ),
    simple("hardSwish", UNARY, NONE),
    simple(
        "instanceNormalization",
        UNARY,
        &[
            opt("scale", Kind::Operand),
            opt("bias", Kind::Operand),
            opt("epsilon", Kind::Number),
            opt("layout", INPUT_LAYOUT),
            NORMALIZATION_LEGACY[0],
            NORMALIZATION_LEGACY[1],
            NORMALIZATION_LEGACY[2],
            NORMALIZATION_LEGACY[3],
        ],
    ),
    simple(
        "layerNormalization",
        UNARY,
        &[
            opt("scale", Kind::Operand),
            opt("bias", Kind::Operand),
            opt("axes", Kind::U32s),
            opt("epsilon", Kind::Number),
            NORMALIZATION_LEGACY[0],
            NORMALIZATION_LEGACY[1],
            NORMALIZATION_LEGACY[2],
            NORMALIZATION_LEGACY[3],
        ],
    ),
    simple("leakyRelu", UNARY, &[opt("alpha", Kind::Number)]),
    simple(
        "linear",
        UNARY,
        &[opt("alpha", Kind::Number), opt("beta", Kind::Number)],
    ),
    Op {
        outputs: Outputs::Recurrent { base: 2 },
        ..simple(
            "lstm",
            &[
                input("input"),
                input("weight"),
                input("recurrentWeight"),
                param("steps", Kind::U32, Absent::Required),
                HIDDEN_SIZE,
            ],
            &[
                opt("bias", Kind::Operand),
                opt("recurrentBias", Kind::Operand),
                opt("peepholeWeight", Kind::Operand),
                opt("initialHiddenState", Kind::Operand),
                opt("initialCellState", Kind::Operand),
                opt("returnSequence", Kind::Bool),
                opt("direction", DIRECTION),
                opt("layout", LSTM_LAYOUT),
                opt("activations", Kind::Activations),
            ],
        )
    },
    Op {
        outputs: Outputs::Fixed(2),
        ..simple(
            "lstmCell",
            &[
                input("input"),
                input("weight"),
                input("recurrentWeight"),
                input("hiddenState"),
                input("cellState"),
                HIDDEN_SIZE,
            ],
            &[
                opt("bias", Kind::Operand),
                opt("recurrentBias", Kind::Operand),
                opt("peepholeWeight", Kind::Operand),
                opt("layout", LSTM_LAYOUT),
                opt("activations", Kind::Activations),
            ],
        )
    },
    simple("matmul", BINARY, NONE),
    simple(
        "pad",
        &[
            input("input"),
            param_aka(
                "beginningPadding",
                &["beginning_padding"],
                Kind::U32s,
                Absent::Required,
            ),
            param_aka(
                "endingPadding",
                &["ending_padding"],
                Kind::U32s,
                Absent::Required,
            ),
        ],
        &[
            opt("mode", Kind::Enum(&["constant", "edge", "reflection"])),
            opt("value", Kind::Number),
        ],
    ),
    simple("averagePool2d", UNARY, POOL_OPTIONS),
    simple("l2Pool2d", UNARY, POOL_OPTIONS),
    simple("maxPool2d", UNARY, POOL_OPTIONS),
    simple("prelu", &[input("input"), input("slope")], NONE),
    simple("reduceL1", UNARY, REDUCE_OPTIONS),
    simple("reduceL2", UNARY, REDUCE_OPTIONS),
    simple("reduceLogSum", UNARY, REDUCE_OPTIONS),
    simple("reduceLogSumExp", UNARY, REDUCE_OPTIONS),
    simple("reduceMax", UNARY, REDUCE_OPTIONS),
    simple("reduceMean", UNARY, REDUCE_OPTIONS),
    simple("reduceMin", UNARY, REDUCE_OPTIONS),
    simple("reduceProduct", UNARY, REDUCE_OPTIONS),
    simple("reduceSum", UNARY, REDUCE_OPTIONS),
    simple("reduceSumSquare", UNARY, REDUCE_OPTIONS),
    simple("relu", UNARY, NONE),
    simple(
        "resample2d",
        UNARY,
        &[
            opt("mode", Kind::Enum(&["nearest-neighbor", "linear"])),
            opt("scales", Kind::Numbers),
            opt("sizes", Kind::U32s),
            opt("axes", Kind::U32s),
        ],
    ),
    simple(
        "reshape",
        &[
            input("input"),
            param_aka("newShape", &["new_shape"], Kind::U32s, Absent::Required),
        ],
        NONE,
    ),
    simple("reverse", UNARY, &[opt("axes", Kind::U32s)]),
    simple(
        "scatterElements",
        &[input("input"), input("indices"), input("updates")],
        &[opt("axis", Kind::U32)],
    ),
    simple(
        "scatterND",
        &[input("input"), input("indices"), input("updates")],
        NONE,
    ),
    simple("sigmoid", UNARY, NONE),
    simple(
        "slice",
        &[
            input("input"),
            param("starts", Kind::U32s, Absent::Required),
            param("sizes", Kind::U32s, Absent::Required),
        ],
        &[opt("strides", Kind::U32s)],
    ),
    simple(
        "softmax",
        &[
            input("input"),
            param("axis", Kind::U32, Absent::Default("0")),
        ],
        NONE,
    ),
    simple("softplus", UNARY, NONE),
    simple("softsign", UNARY, NONE),
    Op {
        outputs: Outputs::Split,
        ..simple(
            "split",
            &[
                input("input"),
                param("splits", Kind::Splits, Absent::Required),
            ],
            &[opt("axis", Kind::U32)],
        )
    },
    simple("tanh", UNARY, NONE),
    simple(
        "tile",
        &[
            input("input"),
            param("repetitions", Kind::U32s, Absent::Required),
        ],
        NONE,
    ),
    simple("transpose", UNARY, &[opt("permutation", Kind::U32s)]),
    simple(
        "triangular",
        UNARY,
        &[opt("upper", Kind::Bool), opt("diagonal", Kind::I32)],
    ),
    simple(
        "where",
        &[input("condition"), input("trueValue"), input("falseValue")],
        NONE,
    ),
];

/// Other names rustnn reads for an operation of the table.
pub(crate) const ALIASES: &[(&str, &str)] = &[("round", "roundEven")];

/// Operations rustnn reads that the WebNN specification does not define, with the fix.
pub(crate) const NOT_WEBNN: &[(&str, &str)] = &[
    (
        "squeeze",
        "write it as reshape with the squeezed shape (newShape=[...])",
    ),
    (
        "unsqueeze",
        "write it as reshape with the new shape (newShape=[...])",
    ),
    (
        "globalAveragePool",
        "write it as averagePool2d without windowDimensions (the whole spatial extent)",
    ),
    (
        "globalMaxPool",
        "write it as maxPool2d without windowDimensions (the whole spatial extent)",
    ),
    (
        "shape",
        "replace it with an int64 constant holding the shape (WebNN shapes are static)",
    ),
];

/// The table's entry for a GraphJson operation name (aliases included).
pub(crate) fn find(name: &str) -> Option<&'static Op> {
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, target)| target);
    OPS.iter().find(|op| op.name == name)
}

/// The names of every operation the table knows, sorted.
pub(crate) fn names() -> Vec<&'static str> {
    let mut names: Vec<_> = OPS.iter().map(|op| op.name).collect();
    names.extend(ALIASES.iter().map(|(alias, _)| *alias));
    names.sort_unstable();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_operation_is_listed_once_and_options_are_unique() {
        let mut seen = HashSet::new();
        for op in OPS {
            assert!(seen.insert(op.name), "{} listed twice", op.name);
            let mut keys = HashSet::new();
            let params = op.args.iter().filter_map(|arg| match arg {
                Arg::Param(p) => Some(std::iter::once(p.key).chain(p.aliases.iter().copied())),
                _ => None,
            });
            for key in params.flatten().chain(
                op.options
                    .iter()
                    .flat_map(|o| std::iter::once(o.key).chain(o.aliases.iter().copied())),
            ) {
                assert!(keys.insert(key), "{}: key {key} twice", op.name);
            }
            for (_, key) in op.extra_inputs {
                assert!(
                    op.options
                        .iter()
                        .any(|o| o.key == *key && o.kind == Kind::Operand),
                    "{}: extra input {key} is no operand option",
                    op.name
                );
            }
        }
        for (alias, target) in ALIASES {
            assert!(find(target).is_some(), "alias {alias} -> {target}");
            assert!(!seen.contains(alias));
        }
        for (name, _) in NOT_WEBNN {
            assert!(find(name).is_none());
        }
    }

    /// The operand options are exactly the keys rustnn resolves as operand references.
    #[test]
    fn operand_options_are_rustnns() {
        let rustnn = [
            "scale",
            "bias",
            "c",
            "recurrentBias",
            "peepholeWeight",
            "initialHiddenState",
            "initialCellState",
        ];
        let mut ours: Vec<&str> = OPS
            .iter()
            .flat_map(|op| op.options)
            .filter(|o| o.kind == Kind::Operand)
            .map(|o| o.key)
            .collect();
        ours.sort_unstable();
        ours.dedup();
        let mut expected = rustnn.to_vec();
        expected.sort_unstable();
        assert_eq!(ours, expected);
    }
}

#[cfg(test)]
mod docs {
    /// docs/web.md lists the table's operations, in its order: the list there is this table.
    #[test]
    fn the_docs_list_every_operation_of_the_table() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/web.md"))
            .expect("docs/web.md");
        let start = docs
            .find("The operations, in the specification's order:")
            .expect("the list's heading");
        let list = &docs[start..];
        let list = &list[..list.find(" (").expect("the list's count")];
        let listed: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
        let table: Vec<&str> = super::OPS.iter().map(|op| op.name).collect();
        assert_eq!(listed, table);
        assert!(docs[start..].contains(&format!("` ({}).", table.len())));
    }
}
