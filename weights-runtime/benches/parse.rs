//! Reading and writing speed of `.webnn` text and GraphJson, and `validate_graph`, on a
//! generated graph of 100k nodes.
//!
//! Run: `cargo bench -p webnn-weights-runtime --bench parse` (prints MB/s; not a test);
//! words after `--` select cases by name (`-- parse_webnn validate`).
//! `validate_graph` is reported against the size of the text, for comparison with a parse.
//! `JSON 20k consts from_str` reads the GraphJson of 20,000 `@weights` constants as an
//! `EmbeddedGraph` does on first access (`bench/many-constants.sh` builds such a graph).

use serde_json::json;
use std::any::Any;
use std::hint::black_box;
use std::time::{Duration, Instant};
use webnn_weights_runtime::text::write_webnn_text;
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, to_graph_json_string, to_webnn_text, validate_graph,
    write_graph_json, ConstDecl, ConstInit, DataType, Dimension, GraphJson, JsonStyle, Node,
    OperandDesc,
};

const NODES: usize = 100_000;
const ITERATIONS: usize = 7;

/// A chain of 100k nodes: element-wise ops with options, every 10th a two-output split
/// with nested options, reading 1000 constants of all three kinds.
fn generate() -> GraphJson {
    let mut g = GraphJson::new(Some("bench".into()));
    g.inputs.insert(
        "x".into(),
        OperandDesc {
            data_type: DataType::Float32,
            shape: vec![
                Dimension::Dynamic {
                    name: "batch".into(),
                    max_size: 8,
                },
                Dimension::Static(256),
            ],
        },
    );
    for c in 0..1000 {
        let init = match c % 3 {
            0 => ConstInit::Weights {
                r#ref: format!("encoder.layers.{c}.weight"),
            },
            1 => ConstInit::Scalar {
                value: json!(0.001 * c as f64),
            },
            _ => ConstInit::InlineBytes {
                bytes: (0..16).map(|b| (b * c % 256) as u8).collect(),
            },
        };
        g.consts.insert(
            format!("c{c}"),
            ConstDecl {
                data_type: if c % 3 == 2 {
                    DataType::Uint8
                } else {
                    DataType::Float32
                },
                shape: if c % 3 == 2 { vec![16] } else { vec![] },
                init,
            },
        );
    }
    let mut previous = "x".to_string();
    for i in 0..NODES {
        let constant = format!("c{}", i % 1000);
        if i % 10 == 9 {
            let (a, b) = (format!("n{i}"), format!("n{i}_b"));
            let options = json!({
                "axis": 1,
                "splits": [128, 128],
                "metadata": {"kind": "split", "tags": ["a", "b"], "enabled": true},
            });
            g.nodes.push(Node {
                id: a.clone(),
                op: "split".into(),
                inputs: vec![previous.clone()],
                options: options.as_object().cloned().unwrap_or_default().into(),
                outputs: Some(vec![a.clone(), b]),
            });
            previous = a;
        } else {
            let id = format!("n{i}");
            let options = json!({"alpha": 0.5, "axes": [0, 1]});
            g.nodes.push(Node {
                id: id.clone(),
                op: ["add", "mul", "relu", "matmul"][i % 4].into(),
                inputs: vec![previous.clone(), constant],
                options: options.as_object().cloned().unwrap_or_default().into(),
                outputs: None,
            });
            previous = id;
        }
    }
    g.outputs.insert(previous.clone(), previous);
    g
}

/// 20,000 `f32[64]` constants, every one `@weights`, and one node: the graph of
/// `bench/many-constants.sh`, whose GraphJson an `EmbeddedGraph` decodes on first access.
fn many_constants() -> GraphJson {
    let mut g = GraphJson::new(Some("many".into()));
    for c in 0..20_000 {
        g.consts.insert(
            format!("layers.{c}.weight"),
            ConstDecl {
                data_type: DataType::Float32,
                shape: vec![64],
                init: ConstInit::Weights {
                    r#ref: format!("layers.{c}.weight"),
                },
            },
        );
    }
    g.nodes.push(Node {
        id: "y".into(),
        op: "identity".into(),
        inputs: vec!["layers.0.weight".into()],
        options: Default::default(),
        outputs: None,
    });
    g.outputs.insert("y".into(), "y".into());
    g
}

/// Runs `f` ITERATIONS times after one warm-up; returns the fastest and the median time.
/// Results are dropped after the clock stops (freeing a 100k-node graph costs about as
/// much as building it and is not part of reading).
fn time<T>(mut f: impl FnMut() -> T) -> (Duration, Duration) {
    black_box(f());
    let mut times: Vec<Duration> = (0..ITERATIONS)
        .map(|_| {
            let start = Instant::now();
            let result = black_box(f());
            let elapsed = start.elapsed();
            drop(result);
            elapsed
        })
        .collect();
    times.sort();
    (times[0], times[ITERATIONS / 2])
}

/// Whether the case `what` runs: every case, or those whose name contains one of the
/// words given on the command line (`cargo bench --bench parse -- parse_webnn`).
fn selected(what: &str) -> bool {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    words.is_empty() || words.iter().any(|w| what.contains(w.as_str()))
}

/// One timed case: returns what it made, to be freed outside the timed region.
type Case<'a> = dyn Fn() -> Box<dyn Any> + 'a;

fn report(what: &str, bytes: usize, (best, median): (Duration, Duration)) {
    let mb = bytes as f64 / 1e6;
    println!(
        "{what:<28} {mb:>7.2} MB  best {:>8.2} ms = {:>7.1} MB/s   median {:>8.2} ms = {:>7.1} MB/s",
        best.as_secs_f64() * 1e3,
        mb / best.as_secs_f64(),
        median.as_secs_f64() * 1e3,
        mb / median.as_secs_f64(),
    );
}

fn main() {
    let graph = generate();
    let text = match to_webnn_text(&graph) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot write the generated graph: {e}");
            std::process::exit(1);
        }
    };
    let json_pretty = to_graph_json_string(&graph).unwrap_or_default();
    let json_compact = serde_json::to_string(&graph).unwrap_or_default();
    match parse_webnn(&text) {
        Ok(back) if back == graph => {}
        other => {
            eprintln!("the generated text does not read back: {:?}", other.err());
            std::process::exit(1);
        }
    }
    println!(
        "graph: {} nodes, {} constants; {ITERATIONS} timed iterations after a warm-up",
        graph.nodes.len(),
        graph.consts.len()
    );
    // Each case returns what it made, so that freeing it happens after the clock stops.
    let many = serde_json::to_string(&many_constants()).unwrap_or_default();
    let cases: [(&str, usize, &Case<'_>); 9] = [
        (".webnn text  parse_webnn", text.len(), &|| {
            Box::new(parse_webnn(&text))
        }),
        ("JSON pretty  parse_graph_json", json_pretty.len(), &|| {
            Box::new(parse_graph_json(&json_pretty))
        }),
        ("JSON compact parse_graph_json", json_compact.len(), &|| {
            Box::new(parse_graph_json(&json_compact))
        }),
        ("JSON 20k consts from_str", many.len(), &|| {
            Box::new(serde_json::from_str::<GraphJson>(&many))
        }),
        ("graph        validate_graph", text.len(), &|| {
            Box::new(validate_graph(&graph))
        }),
        (".webnn text  to_webnn_text", text.len(), &|| {
            Box::new(to_webnn_text(&graph))
        }),
        (".webnn text  write_webnn_text", text.len(), &|| {
            let mut out = Vec::with_capacity(text.len());
            Box::new(write_webnn_text(&graph, &mut out).map(|()| out))
        }),
        ("JSON pretty  write_graph_json", json_pretty.len(), &|| {
            let mut out = Vec::with_capacity(json_pretty.len());
            Box::new(write_graph_json(&graph, &mut out, JsonStyle::Pretty).map(|()| out))
        }),
        ("JSON compact write_graph_json", json_compact.len(), &|| {
            let mut out = Vec::with_capacity(json_compact.len());
            Box::new(write_graph_json(&graph, &mut out, JsonStyle::Compact).map(|()| out))
        }),
    ];
    for (what, bytes, f) in cases {
        if selected(what) {
            report(what, bytes, time(f));
        }
    }
}
