//! Property tests: generated graphs survive text and JSON round trips, and the text reader
//! never panics, whatever it is given.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Number, Value};
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, to_webnn_text, ConstDecl, ConstInit, DataType, Dimension,
    GraphJson, Name, Node, NodeOptions, OperandDesc,
};

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z_/$][a-zA-Z0-9_./]{0,6}"
}

/// Any string: identifiers, the characters that matter to the lexer, and arbitrary Unicode.
fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        ident(),
        "[\"\\\\ a-z0-9#{}\\[\\](),;:=@\n\r\t-]{0,8}",
        any::<String>(),
        Just("true".to_string()),
        Just("null".to_string()),
    ]
}

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        (-1000i64..1000).prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        (-1e6f64..1e6).prop_filter_map("finite", Number::from_f64),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            1e16,
            1e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE
        ])
        .prop_filter_map("finite", Number::from_f64),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(any_string(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn data_type() -> impl Strategy<Value = DataType> {
    prop::sample::select(DataType::ALL.to_vec())
}

fn dimension() -> impl Strategy<Value = Dimension> {
    prop_oneof![
        any::<u32>().prop_map(Dimension::Static),
        (any_string(), any::<u32>())
            .prop_map(|(name, max_size)| Dimension::Dynamic { name, max_size }),
    ]
}

fn const_init() -> impl Strategy<Value = ConstInit> {
    prop_oneof![
        any_string().prop_map(|r| ConstInit::Weights { r#ref: r }),
        number().prop_map(|n| ConstInit::Scalar {
            value: Value::Number(n)
        }),
        vec(any::<u8>(), 0..8).prop_map(|bytes| ConstInit::InlineBytes {
            bytes: bytes.into()
        }),
    ]
}

/// A node without its names: op, inputs, options and the number of outputs
/// (`None` = single-output statement).
type NodeParts = (String, Vec<String>, NodeOptions, Option<usize>);

fn node_parts() -> impl Strategy<Value = NodeParts> {
    (
        ident(),
        vec(any_string(), 0..4),
        btree_map(ident(), value(), 0..4).prop_map(|m| m.into_iter().collect()),
        prop::option::of(1usize..4),
    )
}

/// Graphs that text can express: identifier names, unique across the graph, outputs bound
/// to operands of the same name.
fn expressible_graph() -> impl Strategy<Value = GraphJson> {
    (
        any_string(),
        1u32..=2,
        any::<bool>(),
        vec((data_type(), vec(dimension(), 0..4)), 0..4),
        vec((data_type(), vec(any::<u32>(), 0..4), const_init()), 0..4),
        vec(node_parts(), 0..6),
        vec(ident(), 1..8),
        vec(any::<Index>(), 0..4),
    )
        .prop_map(
            |(name, version, quantized, inputs, consts, nodes, pool, picks)| {
                let mut counter = 0usize;
                // `prefix_<n>` with a unique n: unique names whatever the prefixes.
                let mut fresh = || {
                    counter += 1;
                    format!("{}_{counter}", pool[counter % pool.len()])
                };
                let mut g = GraphJson::new(Some(name));
                g.version = version;
                g.quantized = quantized;
                for (data_type, shape) in inputs {
                    g.inputs.insert(fresh(), OperandDesc { data_type, shape });
                }
                for (data_type, shape, init) in consts {
                    g.consts.insert(
                        fresh(),
                        ConstDecl {
                            data_type,
                            shape,
                            init,
                        },
                    );
                }
                for (op, inputs, options, outputs) in nodes {
                    let outputs: Option<Vec<String>> =
                        outputs.map(|n| (0..n).map(|_| fresh()).collect());
                    let id = match &outputs {
                        Some(list) => list[0].clone(),
                        None => fresh(),
                    };
                    g.nodes.push(Node {
                        id: id.into(),
                        op: op.into(),
                        inputs: inputs.into_iter().map(Name::from).collect(),
                        options,
                        outputs: outputs.map(|list| list.into_iter().map(Name::from).collect()),
                    });
                }
                let declared: Vec<String> = g
                    .inputs
                    .keys()
                    .chain(g.consts.keys())
                    .cloned()
                    .chain(
                        g.nodes
                            .iter()
                            .flat_map(|n| n.produced().iter().map(|p| p.to_string())),
                    )
                    .collect();
                if !declared.is_empty() {
                    for pick in picks {
                        let name = pick.get(&declared).clone();
                        g.outputs.insert(name.clone(), name);
                    }
                }
                g
            },
        )
}

/// Graphs with arbitrary names, bindings and versions: often not expressible in text.
fn arbitrary_graph() -> impl Strategy<Value = GraphJson> {
    (
        expressible_graph(),
        vec((any_string(), any_string()), 0..3),
        prop::option::of(any_string()),
        vec(any_string(), 0..3),
        prop::option::of(0u32..4),
    )
        .prop_map(|(mut g, outputs, node_id, const_names, version)| {
            for (k, v) in outputs {
                g.outputs.insert(k, v);
            }
            if let (Some(id), Some(node)) = (node_id, g.nodes.first_mut()) {
                node.id = id.into();
            }
            for name in const_names {
                g.consts.insert(
                    name.clone(),
                    ConstDecl {
                        data_type: DataType::Float32,
                        shape: vec![],
                        init: ConstInit::Weights { r#ref: name },
                    },
                );
            }
            if let Some(v) = version {
                g.version = v;
            }
            g
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn text_round_trip(g in expressible_graph()) {
        let text = to_webnn_text(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = parse_webnn(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- text:\n{text}")))?;
        prop_assert_eq!(back, g);
    }

    #[test]
    fn repeated_options_round_trip(g in expressible_graph(), picks in vec(any::<Index>(), 6)) {
        // Options copied between nodes, whatever their operation: the reader shares the
        // repeats, and must still read every node's options as written.
        let mut g = g;
        let pool: Vec<NodeOptions> = g.nodes.iter().map(|n| n.options.clone()).collect();
        if !pool.is_empty() {
            for (node, pick) in g.nodes.iter_mut().zip(picks) {
                node.options = pick.get(&pool).clone();
            }
        }
        let text = to_webnn_text(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = parse_webnn(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- text:\n{text}")))?;
        prop_assert_eq!(back, g);
    }

    #[test]
    fn json_round_trip(g in expressible_graph()) {
        let pretty = g.to_json_string().unwrap();
        prop_assert_eq!(parse_graph_json(&pretty).unwrap(), g.clone());
        let compact = serde_json::to_string(&g).unwrap();
        prop_assert_eq!(parse_graph_json(&compact).unwrap(), g);
    }

    #[test]
    fn writing_succeeds_only_when_it_round_trips(g in arbitrary_graph()) {
        if let Ok(text) = to_webnn_text(&g) {
            let back = parse_webnn(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n--- text:\n{text}")))?;
            prop_assert_eq!(back, g);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check_any_input(&s)?;
    }

    #[test]
    fn mutated_text_never_panics(
        g in expressible_graph(),
        edits in vec((any::<Index>(), 0u8..4, "[\\[\\]{}(),;:=@#\"\\\\ a1.e-]{1,3}"), 1..6),
    ) {
        let text = to_webnn_text(&g).unwrap();
        let mut chars: Vec<char> = text.chars().collect();
        for (at, kind, insert) in edits {
            let i = at.index(chars.len() + 1);
            match kind {
                0 => chars.truncate(i),
                1 => {
                    if i < chars.len() {
                        chars.remove(i);
                    }
                }
                2 => {
                    for (k, c) in insert.chars().enumerate() {
                        chars.insert(i + k, c);
                    }
                }
                _ => {
                    let end = (i + 8).min(chars.len());
                    let copy: Vec<char> = chars[i.min(end)..end].to_vec();
                    for (k, c) in copy.into_iter().enumerate() {
                        chars.insert(i + k, c);
                    }
                }
            }
        }
        let mutated: String = chars.into_iter().collect();
        check_any_input(&mutated)?;
    }
}

/// Whatever the input: no panic; an error has a sane location; a success writes back
/// and reads again to the same graph.
fn check_any_input(s: &str) -> Result<(), TestCaseError> {
    match parse_webnn(s) {
        Ok(g) => {
            let text = to_webnn_text(&g)
                .map_err(|e| TestCaseError::fail(format!("parsed but not writable: {e}")))?;
            prop_assert_eq!(parse_webnn(&text).unwrap(), g);
        }
        Err(e) => {
            prop_assert!(e.line() >= 1 && e.column() >= 1);
            prop_assert!(e.line() <= s.split('\n').count());
            prop_assert!(!e.to_string().is_empty());
        }
    }
    Ok(())
}
