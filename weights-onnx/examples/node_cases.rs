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
    let mut inputs = Map::new();
    for (onnx, graph) in &c.inputs {
        let Some(t) = data.inputs.get(onnx) else {
            return Err(verdict(
                "unreadable",
                format!("graph input {onnx:?} has no test data (test_data_set_0/input_N.pb)"),
            ));
        };
        let desc = describe(t).map_err(|m| verdict("refused", format!("input {onnx:?}: {m}")))?;
        if let Some(decl) = c.graph.inputs.get(graph) {
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
    for (onnx, graph) in &c.outputs {
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
