//! One hand-over of a large graph to rustnn, timed, for `bench/rustnn-handover.sh`.
//!
//! `handover WAY GRAPH` loads GRAPH (a `.webnn` file beside its SafeTensors sidecar) the way
//! WAY says and hands it to `rustnn::webnn_json::from_graph_json_owned`, then prints one line:
//! `WAY seconds peak_rss_bytes constants`. Each way runs in a fresh process, so the peak
//! resident set (VmHWM) is that way's alone.
//!
//! - `rustnn`: rustnn's own `load_graph_from_path` (webnn-graph's parser and resolver);
//! - `owned`: our `load_graph`, then `From` into webnn-graph's type (the buffers move);
//! - `mapped`: our `load_graph_mapped`, then `From` (the mapped bytes are copied once);
//! - `embedded`: the graph embedded at build time (`bench/big.webnn`, feature `bench`),
//!   `EmbeddedGraph::to_webnn_graph` (the binary's bytes are copied once);
//! - `json`: our `load_graph`, to GraphJson text, then `serde_json` into webnn-graph's type.

use std::time::Instant;
use webnn_weights_runtime::{include_webnn_graph, load_graph, load_graph_mapped, EmbeddedGraph};

static BIG: EmbeddedGraph = include_webnn_graph!("bench/big.webnn");

/// The process's peak resident set size in bytes (`VmHWM` of /proc/self/status).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("VmHWM in /proc/self/status")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(way), Some(path)) = (args.next(), args.next()) else {
        return Err("usage: handover rustnn|owned|mapped|embedded|json GRAPH".into());
    };
    let start = Instant::now();
    let graph = match way.as_str() {
        "rustnn" => rustnn::load_graph_from_path(&path)?,
        "owned" => rustnn::webnn_json::from_graph_json_owned(load_graph(&path)?.into())?,
        "mapped" => rustnn::webnn_json::from_graph_json_owned(load_graph_mapped(&path)?.into())?,
        "embedded" => rustnn::webnn_json::from_graph_json_owned(BIG.to_webnn_graph())?,
        "json" => {
            let text = serde_json::to_string(&load_graph(&path)?)?;
            let theirs: webnn_graph::ast::GraphJson = serde_json::from_str(&text)?;
            rustnn::webnn_json::from_graph_json_owned(theirs)?
        }
        other => return Err(format!("unknown way {other:?}").into()),
    };
    let seconds = start.elapsed().as_secs_f64();
    let constants = graph.constant_operand_ids_to_handles.len();
    println!("{way} {seconds:.4} {} {constants}", peak_rss());
    Ok(())
}
