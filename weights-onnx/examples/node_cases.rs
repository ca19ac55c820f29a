//! Prepares the ONNX node tests (`onnx/backend/test/data/node` of the onnx 1.22.0 wheel) for the
//! browser suite `web/onnx/node-tests.sh`:
//!
//! ```text
//! cargo run --release -p webnn-weights-onnx --example node_cases -- NODE_DIR OUT_DIR [GLOB...]
//! ```
//!
//! For every case folder of `NODE_DIR` whose name matches one of the globs (`*`, `?`, `[…]`; all
//! cases without one), `OUT_DIR/<case>/` gets `case.json` (always) and, for a converted model,
//! `<case>.webnn` (the graph as `.webnn` text), `<case>.safetensors` (its `@weights` constants;
//! none when there are none), `inputs.json` and `expected.json` (the op suite's format, keyed by
//! the graph's names). `case.json`'s `status` is one of
//!
//! - `converted`: `constantInputs` lists the graph inputs fixed to their test values because a
//!   node needs them at conversion time (empty when none was);
//! - `refused`: the converter's message (or why the test's inputs or outputs cannot be WebNN
//!   operands: `double`, `string`, `int16`, …);
//! - `unreadable`: a file of the case could not be read (the message says which and why);
//! - `mismatch`: the converted graph's inputs do not match the test's data (a converter bug);
//! - `web-refused`: our own writers refused the converted graph (`to_webnn_text`, the
//!   SafeTensors writer): a converter bug;
//! - `crashed`: the conversion panicked, aborted or did not finish within the time limit.
//!
//! Each case is prepared in a child process (this program with `--one`), so a panic, an abort
//! or a hang is that case's verdict and never stops the run. `OUT_DIR/cases.json` lists every
//! case with its status; the last line printed is a summary.
//!
//! With `WEBNN_ONNX_WEBNN_GRAPH=PATH` (webnn-graph's CLI) every case is converted by
//! `PATH convert-onnx` instead (`web/onnx/compare-webnn-graph.sh`): `<case>.webnn`,
//! `<case>.weights` and `<case>.manifest.json` as it writes them (`case.json` names the last two
//! under `weights` and `manifest` when the graph has `@weights` constants). Its non-zero exit is
//! `refused` (its message), a panic (exit status 101), a signal or a hang `crashed`, a graph our
//! `.webnn` parser refuses `web-refused`; graph inputs and outputs are matched with the test's
//! by name (as is, or rewritten by webnn-graph's rule), else `mismatch`. No input is fixed as a
//! constant: webnn-graph has no such option.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use webnn_weights_onnx::{convert, read_tensor_proto, ConvertOptions, ElemType, HostTensor};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        return match args.as_slice() {
            [_, case, out] => one(Path::new(case), Path::new(out)),
            _ => usage(),
        };
    }
    if args.len() < 2 || args.iter().any(|a| a == "-h" || a == "--help") {
        return usage();
    }
    let node = PathBuf::from(&args[0]);
    let out = PathBuf::from(&args[1]);
    let globs = &args[2..];
    match run(&node, &out, globs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("node_cases: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: node_cases NODE_DIR OUT_DIR [GLOB...]   (see the top of weights-onnx/examples/node_cases.rs)");
    ExitCode::from(2)
}

/// Seconds a case may take to convert and be written.
const TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// the driver: one child process per case, as many at once as there are cores

fn run(node: &Path, out: &Path, globs: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let entries = fs::read_dir(node).map_err(|e| format!("cannot list {}: {e}", node.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", node.display()))?;
        if !entry.path().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if globs.is_empty() || globs.iter().any(|g| glob_match(g, &name)) {
            names.push(name);
        }
    }
    names.sort();
    if names.is_empty() {
        return Err(format!(
            "no case folder in {} matches {}",
            node.display(),
            if globs.is_empty() {
                "(any)".to_string()
            } else {
                globs.join(" ")
            }
        ));
    }
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let lanes = std::thread::available_parallelism().map_or(2, |n| n.get());

    let mut pending = names.iter();
    let mut running: Vec<(String, Child, Instant)> = Vec::new();
    let mut statuses = BTreeMap::new();
    loop {
        while running.len() < lanes {
            let Some(name) = pending.next() else { break };
            let case_out = out.join(name);
            // a stale folder of an earlier run must not pass for this run's output
            let _ = fs::remove_dir_all(&case_out);
            fs::create_dir_all(&case_out)
                .map_err(|e| format!("cannot create {}: {e}", case_out.display()))?;
            let child = Command::new(&exe)
                .arg("--one")
                .arg(node.join(name))
                .arg(&case_out)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
            running.push((name.clone(), child, Instant::now()));
        }
        if running.is_empty() {
            break;
        }
        let mut i = 0;
        let mut finished_any = false;
        while i < running.len() {
            let (name, child, since) = &mut running[i];
            let verdict = match child.try_wait() {
                Ok(Some(status)) => Some(finished(child, status)),
                Ok(None) if since.elapsed() > TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    Some(Err(format!(
                        "did not finish within {} s (killed)",
                        TIMEOUT.as_secs()
                    )))
                }
                Ok(None) => None,
                Err(e) => Some(Err(format!("cannot wait for the child: {e}"))),
            };
            let Some(verdict) = verdict else {
                i += 1;
                continue;
            };
            let case_out = out.join(&*name);
            let status = match verdict.and_then(|()| read_status(&case_out)) {
                Ok(status) => status,
                Err(message) => {
                    let case = json!({"name": name, "status": "crashed", "message": message});
                    write_json(&case_out.join("case.json"), &case)?;
                    "crashed".to_string()
                }
            };
            statuses.insert(name.clone(), status);
            running.swap_remove(i);
            finished_any = true;
        }
        if !finished_any {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    let list: Vec<Value> = statuses
        .iter()
        .map(|(name, status)| json!({"name": name, "status": status}))
        .collect();
    write_json(&out.join("cases.json"), &Value::Array(list))?;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for status in statuses.values() {
        *counts.entry(status.as_str()).or_default() += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    println!(
        "node_cases: {} cases: {} ({:.1} s, into {})",
        statuses.len(),
        counts.join(", "),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(())
}

/// The child's end: `Ok` when it exited cleanly, else its status and the end of its stderr.
fn finished(child: &mut Child, status: std::process::ExitStatus) -> Result<(), String> {
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    if status.success() {
        return Ok(());
    }
    let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!("exited with {status}: {}", tail.join("\n")))
}

/// The status a child wrote into `case.json`.
fn read_status(case_out: &Path) -> Result<String, String> {
    let path = case_out.join("case.json");
    let text = fs::read_to_string(&path)
        .map_err(|e| format!("exited cleanly but wrote no {}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    value
        .get("status")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("{} has no status", path.display()))
}

fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| format!("cannot serialize {}: {e}", path.display()))?;
    fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Compact JSON (the data files can be large).
fn write_data(path: &Path, value: &Value) -> Result<(), String> {
    let text = serde_json::to_string(value)
        .map_err(|e| format!("cannot serialize {}: {e}", path.display()))?;
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Shell-style glob: `*` any run, `?` one character, `[abc]`/`[a-z]`/`[!a]` a class.
fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| glob_at(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(2).position(|&c| c == ']').map(|i| i + 2) else {
                return n.first() == Some(&'[') && glob_at(&p[1..], &n[1..]);
            };
            let Some(&c) = n.first() else { return false };
            let (negate, class) = match p[1] {
                '!' | '^' => (true, &p[2..close]),
                _ => (false, &p[1..close]),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == '-' {
                    hit |= class[i] <= c && c <= class[i + 2];
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit != negate && glob_at(&p[close + 1..], &n[1..])
        }
        Some(&c) => n.first() == Some(&c) && glob_at(&p[1..], &n[1..]),
    }
}

// ---------------------------------------------------------------------------------------------
// one case (the child)

fn one(case: &Path, out: &Path) -> ExitCode {
    let name = case
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = prepare(case, out, &name);
    // messages name the model relative to the node folder: the same on every machine
    if let (Some(parent), Some(Value::String(message))) = (case.parent(), meta.get_mut("message")) {
        *message = message.replace(&format!("{}/", parent.display()), "");
    }
    meta.insert("name".into(), json!(name));
    match write_json(&out.join("case.json"), &Value::Object(meta)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("node_cases: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A case's verdict: `case.json` without its name.
type Meta = Map<String, Value>;

fn verdict(status: &str, message: impl Into<String>) -> Meta {
    let mut m = Meta::new();
    m.insert("status".into(), json!(status));
    m.insert("message".into(), json!(message.into()));
    m
}

/// A test's data files, `input_N.pb` or `output_N.pb` from 0 on.
fn read_set(dir: &Path, prefix: &str) -> Result<Vec<HostTensor>, String> {
    if !dir.is_dir() {
        return Err(format!("{}: no such folder", dir.display()));
    }
    let mut tensors = Vec::new();
    for i in 0.. {
        let path = dir.join(format!("{prefix}_{i}.pb"));
        if !path.exists() {
            break;
        }
        let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let tensor = read_tensor_proto(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        tensors.push(tensor);
    }
    Ok(tensors)
}

/// The model's graph inputs (initializers left out) and outputs, in order: test data files
/// without a name are matched by position.
fn model_names(model: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    use prost::Message as _;
    use webnn_weights_onnx::proto::ModelProto;
    let bytes = fs::read(model).map_err(|e| format!("{}: {e}", model.display()))?;
    let m = ModelProto::decode(&bytes[..]).map_err(|e| format!("{}: {e}", model.display()))?;
    let g = m.graph.unwrap_or_default();
    let init: Vec<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let inputs = g
        .input
        .iter()
        .filter_map(|v| v.name.clone())
        .filter(|n| !init.contains(&n.as_str()))
        .collect();
    let outputs = g.output.iter().filter_map(|v| v.name.clone()).collect();
    Ok((inputs, outputs))
}

/// The tensors of a data set by ONNX name: each file's own name, or its position's.
fn by_name(tensors: Vec<HostTensor>, order: &[String]) -> BTreeMap<String, HostTensor> {
    tensors
        .into_iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let name = if t.name.is_empty() {
                order.get(i)?.clone()
            } else {
                t.name.clone()
            };
            Some((name, t))
        })
        .collect()
}

struct Data {
    inputs: BTreeMap<String, HostTensor>,
    outputs: BTreeMap<String, HostTensor>,
}

fn read_data(case: &Path, model: &Path) -> Result<Data, String> {
    let set = case.join("test_data_set_0");
    let (input_order, output_order) = model_names(model)?;
    Ok(Data {
        inputs: by_name(read_set(&set, "input")?, &input_order),
        outputs: by_name(read_set(&set, "output")?, &output_order),
    })
}

fn prepare(case: &Path, out: &Path, name: &str) -> Meta {
    if let Some(bin) = webnn_graph_bin() {
        return prepare_webnn_graph(&bin, case, out, name);
    }
    let model = case.join("model.onnx");
    let mut data: Option<Result<Data, String>> = None;
    let mut options = ConvertOptions::new();
    let mut constants: Vec<String> = Vec::new();
    // fix the inputs a node needs at conversion time, then convert again (a fixed input can
    // let shapes fold that ask for another one: a few rounds)
    let conversion = loop {
        let error = match convert(&model, &options) {
            Ok(c) => break c,
            Err(e) => e,
        };
        let needed: Vec<String> = error
            .inputs_needed_as_constants()
            .into_iter()
            .map(str::to_string)
            .filter(|n| !constants.contains(n))
            .collect();
        let only_constants = error.problems().iter().all(|p| p.needs_constant.is_some());
        if needed.is_empty() || !only_constants || constants.len() > 16 {
            let mut m = verdict("refused", error.to_string());
            m.insert("constantInputs".into(), json!(constants));
            return m;
        }
        let data = match data.get_or_insert_with(|| read_data(case, &model)) {
            Ok(d) => d,
            Err(e) => return verdict("unreadable", format!("test data: {e}")),
        };
        for n in needed {
            let Some(t) = data.inputs.get(&n) else {
                return verdict(
                    "unreadable",
                    format!("input {n:?} is needed as a constant, but the test has no data for it"),
                );
            };
            options = options.constant_input(n.clone(), t.clone());
            constants.push(n);
        }
    };
    let data = match data.unwrap_or_else(|| read_data(case, &model)) {
        Ok(d) => d,
        Err(e) => return verdict("unreadable", format!("test data: {e}")),
    };
    match write_case(&conversion, &data, out, name) {
        Ok(mut m) => {
            m.insert("constantInputs".into(), json!(constants));
            m
        }
        Err(m) => m,
    }
}

/// Writes the graph, its weights, `inputs.json` and `expected.json`; the verdict, or why not.
fn write_case(
    c: &webnn_weights_onnx::Conversion,
    data: &Data,
    out: &Path,
    name: &str,
) -> Result<Meta, Meta> {
    let (inputs, expected) = test_io(&c.graph, &c.inputs, &c.outputs, data)?;
    let text = webnn_weights_runtime::to_webnn_text(&c.graph)
        .map_err(|e| verdict("web-refused", format!("to_webnn_text: {e}")))?;
    let io = |e: String| verdict("crashed", e);
    let graph_path = out.join(format!("{name}.webnn"));
    fs::write(&graph_path, text).map_err(|e| io(format!("{}: {e}", graph_path.display())))?;
    let mut weights = Value::Null;
    if c.graph.has_external_weights() {
        let file = format!("{name}.safetensors");
        webnn_weights_tools::write_external_weights_safetensors(
            &c.graph,
            &c.weights_map(),
            &out.join(&file),
        )
        .map_err(|e| {
            verdict(
                "web-refused",
                format!("write_external_weights_safetensors: {e}"),
            )
        })?;
        weights = json!(file);
    }
    write_data(&out.join("inputs.json"), &Value::Object(inputs)).map_err(io)?;
    write_data(&out.join("expected.json"), &Value::Object(expected)).map_err(io)?;
    let mut m = Meta::new();
    m.insert("status".into(), json!("converted"));
    m.insert("weights".into(), weights);
    Ok(m)
}

/// The contents of `inputs.json` and `expected.json`.
type TestIo = (Map<String, Value>, Map<String, Value>);

/// `inputs.json` and `expected.json` of a converted graph: the test's data under the graph's
/// names (`inputs` and `outputs` pair each ONNX name with its graph name), each input checked
/// against the graph's declaration.
fn test_io(
    graph_json: &webnn_weights_runtime::GraphJson,
    onnx_inputs: &[(String, String)],
    onnx_outputs: &[(String, String)],
    data: &Data,
) -> Result<TestIo, Meta> {
    let mut inputs = Map::new();
    for (onnx, graph) in onnx_inputs {
        let Some(t) = data.inputs.get(onnx) else {
            return Err(verdict(
                "unreadable",
                format!("graph input {onnx:?} has no test data (test_data_set_0/input_N.pb)"),
            ));
        };
        let desc = describe(t).map_err(|m| verdict("refused", format!("input {onnx:?}: {m}")))?;
        if let Some(decl) = graph_json.inputs.get(graph) {
            let shape: Vec<Value> = decl
                .shape
                .iter()
                .map(|d| serde_json::to_value(d).unwrap_or(Value::Null))
                .collect();
            let declared = json!({"dataType": decl.data_type.json_name(), "shape": shape});
            let given = json!({"dataType": desc["dataType"], "shape": desc["shape"]});
            if declared != given {
                return Err(verdict(
                    "mismatch",
                    format!("graph input {graph:?} (ONNX {onnx:?}) is declared {declared}, the test data is {given}"),
                ));
            }
        } else {
            return Err(verdict(
                "mismatch",
                format!("the conversion names graph input {graph:?} for ONNX input {onnx:?}, the graph has none"),
            ));
        }
        inputs.insert(graph.clone(), desc);
    }
    let mut expected = Map::new();
    for (onnx, graph) in onnx_outputs {
        let Some(t) = data.outputs.get(onnx) else {
            return Err(verdict(
                "unreadable",
                format!("graph output {onnx:?} has no test data (test_data_set_0/output_N.pb)"),
            ));
        };
        let mut desc =
            describe(t).map_err(|m| verdict("refused", format!("output {onnx:?}: {m}")))?;
        let tolerance = if t.elem.is_float() {
            json!({"atol": 1e-5, "rtol": 1e-3})
        } else {
            json!({"atol": 0, "rtol": 0})
        };
        if let Some(o) = desc.as_object_mut() {
            o.insert("tolerance".into(), tolerance);
        }
        expected.insert(graph.clone(), desc);
    }
    Ok((inputs, expected))
}

// ---------------------------------------------------------------------------------------------
// webnn-graph's converter (WEBNN_ONNX_WEBNN_GRAPH): the comparison of
// web/onnx/compare-webnn-graph.sh

/// Seconds webnn-graph may take for one model (within the case's [`TIMEOUT`]).
const WEBNN_GRAPH_TIMEOUT: Duration = Duration::from_secs(100);

/// `WEBNN_ONNX_WEBNN_GRAPH`: the path of webnn-graph's CLI, whose `convert-onnx` then converts
/// every case instead of weights-onnx.
fn webnn_graph_bin() -> Option<PathBuf> {
    std::env::var_os("WEBNN_ONNX_WEBNN_GRAPH")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// webnn-graph's rule for graph names (`webnn_graph::onnx::convert::sanitize_identifier`).
fn webnn_graph_name(onnx: &str) -> String {
    let base = onnx.replace("::", "__").replace([':', '.', '/'], "_");
    if base.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{base}")
    } else {
        base
    }
}

/// The graph name of each ONNX name that has one: the same name, webnn-graph's rewrite of it,
/// or (one name on each side) the only one. `None`: a graph name no ONNX name matches.
fn pair_names<'a>(
    onnx: impl Iterator<Item = &'a String> + Clone,
    graph: &[&String],
) -> Result<Vec<(String, String)>, String> {
    let onnx: Vec<&String> = onnx.collect();
    let mut pairs = Vec::new();
    for g in graph {
        let found = onnx
            .iter()
            .find(|o| o == &g)
            .or_else(|| onnx.iter().find(|o| &&webnn_graph_name(o) == g))
            .or_else(|| (onnx.len() == 1 && graph.len() == 1).then(|| &onnx[0]));
        match found {
            Some(o) => pairs.push(((*o).clone(), (*g).clone())),
            None => return Err(g.to_string()),
        }
    }
    Ok(pairs)
}

/// `webnn-graph convert-onnx` into `out`: a non-zero exit is `refused`, a panic (exit status 101),
/// a signal or a hang `crashed`; the written graph is parsed with our `.webnn` parser (an error
/// is `web-refused`: not a WebNN graph our tools take) and its names matched with the test's.
fn prepare_webnn_graph(bin: &Path, case: &Path, out: &Path, name: &str) -> Meta {
    let model = case.join("model.onnx");
    let graph_file = format!("{name}.webnn");
    let weights_file = format!("{name}.weights");
    let manifest_file = format!("{name}.manifest.json");
    let stderr_path = out.join("webnn-graph.stderr");
    let stderr = match fs::File::create(&stderr_path) {
        Ok(f) => f,
        Err(e) => return verdict("crashed", format!("{}: {e}", stderr_path.display())),
    };
    let child = Command::new(bin)
        .arg("convert-onnx")
        .arg("--input")
        .arg(&model)
        .arg("--output")
        .arg(out.join(&graph_file))
        .arg("--weights")
        .arg(out.join(&weights_file))
        .arg("--manifest")
        .arg(out.join(&manifest_file))
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return verdict("crashed", format!("cannot start {}: {e}", bin.display())),
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > WEBNN_GRAPH_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return verdict(
                    "crashed",
                    format!(
                        "webnn-graph convert-onnx did not finish within {} s (killed)",
                        WEBNN_GRAPH_TIMEOUT.as_secs()
                    ),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return verdict("crashed", format!("cannot wait for webnn-graph: {e}")),
        }
    };
    let text = fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = fs::remove_file(&stderr_path);
    if !status.success() {
        let panicked = text.lines().position(|l| l.contains("panicked at"));
        let message = match panicked {
            // the panic's place in webnn-graph's sources and its message (the next line)
            Some(i) => {
                let lines: Vec<&str> = text.lines().skip(i).take(2).collect();
                let at = lines[0]
                    .split_once("panicked at ")
                    .map_or(lines[0], |(_, at)| at);
                let at = at.find("webnn-graph-").map_or(at, |j| &at[j..]);
                format!("panicked at {at} {}", lines.get(1).unwrap_or(&""))
            }
            // anyhow's report up to its backtrace
            None => text
                .lines()
                .skip_while(|l| !l.starts_with("Error:"))
                .take_while(|l| !l.starts_with("Stack backtrace"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
        };
        let message = message.replace(&format!("{}/", case.display()), "");
        return match status.code() {
            Some(101) | None => verdict(
                "crashed",
                format!("webnn-graph convert-onnx ({status}): {message}"),
            ),
            _ => verdict("refused", format!("webnn-graph convert-onnx: {message}")),
        };
    }

    let graph_path = out.join(&graph_file);
    let graph_text = match fs::read_to_string(&graph_path) {
        Ok(t) => t,
        Err(e) => {
            return verdict(
                "crashed",
                format!("webnn-graph convert-onnx exited cleanly but wrote no {graph_file}: {e}"),
            )
        }
    };
    let graph = match webnn_weights_runtime::parse_webnn(&graph_text) {
        Ok(g) => g,
        Err(e) => return verdict("web-refused", format!("parse_webnn: {e}")),
    };
    let data = match read_data(case, &model) {
        Ok(d) => d,
        Err(e) => return verdict("unreadable", format!("test data: {e}")),
    };
    let graph_inputs: Vec<&String> = graph.inputs.keys().collect();
    let inputs = match pair_names(data.inputs.keys(), &graph_inputs) {
        Ok(p) => p,
        Err(g) => {
            return verdict(
                "mismatch",
                format!("graph input {g:?} is none of the test's inputs"),
            )
        }
    };
    let graph_outputs: Vec<&String> = graph.outputs.keys().collect();
    let outputs = match pair_names(data.outputs.keys(), &graph_outputs) {
        Ok(p) => p,
        Err(g) => {
            return verdict(
                "mismatch",
                format!("graph output {g:?} is none of the test's outputs"),
            )
        }
    };
    if let Some(o) = data
        .outputs
        .keys()
        .find(|o| !outputs.iter().any(|(onnx, _)| onnx == *o))
    {
        return verdict(
            "mismatch",
            format!("the test's output {o:?} is not an output of the graph"),
        );
    }
    let (inputs, expected) = match test_io(&graph, &inputs, &outputs, &data) {
        Ok(io) => io,
        Err(m) => return m,
    };
    for (file, value) in [("inputs.json", inputs), ("expected.json", expected)] {
        if let Err(e) = write_data(&out.join(file), &Value::Object(value)) {
            return verdict("crashed", e);
        }
    }
    let mut m = Meta::new();
    m.insert("status".into(), json!("converted"));
    if graph.has_external_weights() {
        m.insert("weights".into(), json!(weights_file));
        m.insert("manifest".into(), json!(manifest_file));
    } else {
        m.insert("weights".into(), Value::Null);
    }
    m.insert("constantInputs".into(), json!([]));
    m
}

/// `{dataType, shape, data}` of a tensor in the op suite's format: floats as numbers (`"NaN"`,
/// `"Infinity"`, `"-Infinity"` as strings), float16 also as `bits`, 64-bit integers as decimal
/// strings, bool as uint8 0/1, 4-bit types unpacked in `data` and packed in `packed`.
fn describe(t: &HostTensor) -> Result<Value, String> {
    let Some(data_type) = t.elem.webnn() else {
        return Err(format!(
            "{} tensors have no WebNN data type (the browser cannot take or give them)",
            t.elem
        ));
    };
    let count = usize::try_from(t.element_count()).map_err(|e| e.to_string())?;
    let want = t.elem.byte_len(count as u64).unwrap_or(u64::MAX);
    if t.bytes.len() as u64 != want {
        return Err(format!(
            "{} bytes for {} {} elements",
            t.bytes.len(),
            count,
            t.elem
        ));
    }
    let mut d = Map::new();
    d.insert("dataType".into(), json!(data_type.json_name()));
    d.insert("shape".into(), json!(t.shape));
    let data: Vec<Value> = match t.elem {
        ElemType::F32 | ElemType::F16 | ElemType::Bf16 => {
            t.to_f64s().into_iter().map(float_value).collect()
        }
        ElemType::I64 => t.to_i64s().iter().map(|v| json!(v.to_string())).collect(),
        ElemType::U64 => t
            .bytes
            .chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                json!(u64::from_le_bytes(a).to_string())
            })
            .collect(),
        _ => t.to_i64s().into_iter().map(|v| json!(v)).collect(),
    };
    d.insert("data".into(), Value::Array(data));
    if t.elem == ElemType::F16 {
        let bits: Vec<u16> = t
            .bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        d.insert("bits".into(), json!(bits));
    }
    if matches!(t.elem, ElemType::I4 | ElemType::U4) {
        d.insert("packed".into(), json!(t.bytes.to_vec()));
    }
    Ok(Value::Object(d))
}

fn float_value(v: f64) -> Value {
    if v.is_nan() {
        json!("NaN")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("test_add*", "test_add_bcast"));
        assert!(!glob_match("test_add*", "test_and"));
        assert!(glob_match("test_?dd", "test_add"));
        assert!(glob_match("test_[ab]*", "test_bitshift"));
        assert!(!glob_match("test_[!ab]*", "test_add"));
        assert!(glob_match("*", ""));
    }
}
