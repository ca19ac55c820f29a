//! Reading and writing speed of `.webnn` text and GraphJson, and `GraphJson::validate`, on a
//! generated graph of 100k nodes.
//!
//! Run: `cargo bench -p webnn-weights-runtime --bench parse` (prints MB/s; not a test);
//! words after `--` select cases by name (`-- parse_webnn validate`); `-- --free-between`
//! frees each result before the next run instead of keeping them all (see `time`).
//! `GraphJson::validate` is reported against the size of the text, for comparison with a parse.
//! `JSON 20k consts from_str` reads the GraphJson of 20,000 `@weights` constants as an
//! `EmbeddedGraph` does on first access (`bench/many-constants.sh` builds such a graph).

use serde_json::json;
use std::any::Any;
use std::hint::black_box;
use std::time::{Duration, Instant};
use webnn_weights_runtime::write_webnn_text;
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, to_webnn_text, write_graph_json, ConstDecl, ConstInit, DataType,
    Dimension, GraphJson, JsonStyle, Node, OperandDesc,
};

const NODES: usize = 100_000;
const ITERATIONS: usize = 7;

/// A chain of 100k nodes: element-wise ops with options, every 10th a two-output split
/// with nested options, reading 1000 constants of all three kinds. The options repeat,
/// as a model's do (every split alike, every element-wise op alike), unless `distinct`:
/// then every node's options differ, and the reader shares none.
fn generate(distinct: bool) -> GraphJson {
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
                "splits": [128, if distinct { i } else { 128 }],
                "metadata": {"kind": "split", "tags": ["a", "b"], "enabled": true},
            });
            g.nodes.push(Node {
                id: a.clone().into(),
                op: "split".into(),
                inputs: vec![previous.clone().into()],
                options: options.as_object().cloned().unwrap_or_default().into(),
                outputs: Some(vec![a.clone().into(), b.into()]),
            });
            previous = a;
        } else {
            let id = format!("n{i}");
            let alpha = if distinct { i as f64 / 1024.0 } else { 0.5 };
            let options = json!({"alpha": alpha, "axes": [0, 1]});
            g.nodes.push(Node {
                id: id.clone().into(),
                op: ["add", "mul", "relu", "matmul"][i % 4].into(),
                inputs: vec![previous.clone().into(), constant.into()],
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
/// Freeing is never timed (freeing a 100k-node graph costs about as much as building it
/// and is not part of reading). By default every result is kept until the last run is
/// over (the warm-up's too), so that each run allocates fresh memory, as a reader in a
/// new process does (the CLI, a build script, an application's first access). With `--free-between` each
/// result is freed before the next run, which then reuses the fragments of the graph
/// just freed: a heap state of its own (glibc spends about a third of a text parse
/// sorting and merging free chunks), reported for comparison.
fn time<T>(mut f: impl FnMut() -> T) -> Timing {
    let free_between = std::env::args().any(|a| a == "--free-between");
    let mut kept = Vec::with_capacity(ITERATIONS + 1);
    let warm_up = black_box(f());
    if !free_between {
        kept.push(warm_up);
    }
    let mut wall = Vec::with_capacity(ITERATIONS);
    let mut cpu = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let (start, start_cpu) = (Instant::now(), thread_cpu());
        let result = black_box(f());
        let (elapsed, elapsed_cpu) = (start.elapsed(), thread_cpu() - start_cpu);
        if !free_between {
            kept.push(result);
        }
        wall.push(elapsed);
        cpu.push(elapsed_cpu);
    }
    drop(kept);
    wall.sort();
    cpu.sort();
    Timing {
        best: wall[0],
        median: wall[ITERATIONS / 2],
        cpu_best: cpu[0],
    }
}

/// Wall time (fastest and median run) and the fastest run's CPU time of this thread.
struct Timing {
    best: Duration,
    median: Duration,
    cpu_best: Duration,
}

/// CPU time of this thread: on a loaded machine wall time includes the time other
/// processes had the core; CPU time does not (cache sharing still slows it).
/// Zero under valgrind, whose process crashes in rustix's vDSO call (profile with
/// `valgrind --tool=callgrind`, which counts instructions instead).
#[cfg(unix)]
fn thread_cpu() -> Duration {
    static UNDER_VALGRIND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *UNDER_VALGRIND
        .get_or_init(|| std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload")))
    {
        return Duration::ZERO;
    }
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

#[cfg(not(unix))]
fn thread_cpu() -> Duration {
    Duration::ZERO
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

fn report(what: &str, bytes: usize, t: Timing) {
    let mb = bytes as f64 / 1e6;
    let rate = |d: Duration| mb / d.as_secs_f64();
    let cpu = if t.cpu_best.is_zero() {
        String::new()
    } else {
        format!(
            "   cpu best {:>8.2} ms = {:>7.1} MB/s",
            t.cpu_best.as_secs_f64() * 1e3,
            rate(t.cpu_best)
        )
    };
    println!(
        "{what:<44} {mb:>7.2} MB  best {:>8.2} ms = {:>7.1} MB/s   median {:>8.2} ms = {:>7.1} MB/s{cpu}",
        t.best.as_secs_f64() * 1e3,
        rate(t.best),
        t.median.as_secs_f64() * 1e3,
        rate(t.median),
    );
}

/// `graph` as `.webnn` text, checked to read back to `graph`; exits on failure.
fn webnn_text(graph: &GraphJson) -> String {
    let text = match to_webnn_text(graph) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot write the generated graph: {e}");
            std::process::exit(1);
        }
    };
    match parse_webnn(&text) {
        Ok(back) if back == *graph => text,
        other => {
            eprintln!("the generated text does not read back: {:?}", other.err());
            std::process::exit(1);
        }
    }
}

fn main() {
    let graph = generate(false);
    let text = webnn_text(&graph);
    let json_pretty = graph.to_json_string().unwrap_or_default();
    let json_compact = serde_json::to_string(&graph).unwrap_or_default();
    println!(
        "graph: {} nodes, {} constants; {ITERATIONS} timed iterations after a warm-up, results {}",
        graph.nodes.len(),
        graph.consts.len(),
        if std::env::args().any(|a| a == "--free-between") {
            "freed between runs"
        } else {
            "kept until the case ends"
        }
    );
    // Each case returns what it made, so that freeing it happens after the clock stops.
    let many = serde_json::to_string(&many_constants()).unwrap_or_default();
    let distinct = webnn_text(&generate(true));
    let cases: [(&str, usize, &Case<'_>); 10] = [
        (".webnn text  parse_webnn", text.len(), &|| {
            Box::new(parse_webnn(&text))
        }),
        (
            ".webnn distinct options  parse_webnn",
            distinct.len(),
            &|| Box::new(parse_webnn(&distinct)),
        ),
        ("JSON pretty  parse_graph_json", json_pretty.len(), &|| {
            Box::new(parse_graph_json(&json_pretty))
        }),
        ("JSON compact parse_graph_json", json_compact.len(), &|| {
            Box::new(parse_graph_json(&json_compact))
        }),
        ("JSON 20k consts from_str", many.len(), &|| {
            Box::new(serde_json::from_str::<GraphJson>(&many))
        }),
        ("graph        GraphJson::validate", text.len(), &|| {
            Box::new(graph.validate())
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
