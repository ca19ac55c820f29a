//! Shared by `weights-runtime/benches/resolve.rs` and `bench/compare-webnn-graph`:
//! generating the benchmark models, measuring a child process, and the floor.
//!
//! Protocol: the driver re-runs its own executable with `child <what> <args>`; the child
//! does one thing, then prints one line `elapsed_seconds peak_rss_kib bytes` on stdout.
//! Peak RSS is the child's own `VmHWM` from /proc/self/status (Linux).

#![allow(dead_code)]

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Size of each generated model's tensor data.
pub const MODEL_BYTES: u64 = 512 << 20;
/// Tensors per model (8 MiB float32 [2048, 1024] each).
pub const TENSORS: u64 = 64;
const ROWS: u64 = 2048;
const COLS: u64 = 1024;

/// `WEBNN_BENCH_RUNS`, or `default` when it is unset or not a number.
pub fn runs(default: usize) -> usize {
    std::env::var("WEBNN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `f` in a fresh folder `<WEBNN_BENCH_DIR, or the temporary folder>/<label>-<pid>`,
/// removed afterwards whatever `f` returns.
pub fn in_scratch(label: &str, f: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let dir = std::env::var_os("WEBNN_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let work = dir.join(format!("{label}-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let result = f(&work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// A generated model: graph file and where its tensor bytes are in the sidecar.
pub struct Model {
    pub label: &'static str,
    pub graph: PathBuf,
    pub sidecar: PathBuf,
    pub data_offset: u64,
}

fn tensor_name(i: u64) -> String {
    format!("layers.{i}.weight")
}

/// Deterministic, incompressible-looking bytes.
fn fill(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

fn write_tensor_data(w: &mut impl Write, tensors: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; (ROWS * COLS * 4) as usize];
    for i in 0..tensors {
        fill(&mut buf, i + 1);
        w.write_all(&buf)?;
    }
    Ok(())
}

fn graph_json(tensors: u64) -> String {
    let consts: Vec<String> = (0..tensors)
        .map(|i| {
            format!(
                r#""c{i:02}":{{"dataType":"float32","shape":[{ROWS},{COLS}],"init":{{"kind":"weights","ref":"{}"}}}}"#,
                tensor_name(i)
            )
        })
        .collect();
    format!(
        r#"{{"format":"webnn-graph-json","version":2,"quantized":false,"inputs":{{}},"consts":{{{}}},"nodes":[],"outputs":{{}}}}"#,
        consts.join(",")
    )
}

/// Writes a SafeTensors model of `tensors` float32 [2048, 1024] tensors (8 MiB each) as
/// `dir/model.safetensors`, and its graph (GraphJson) as `dir/<graph_file>`, found by
/// discovery when `graph_file`'s stem is `model`.
pub fn generate_safetensors(dir: &Path, graph_file: &str, tensors: u64) -> std::io::Result<Model> {
    let tensor_len = ROWS * COLS * 4;
    let st_dir = dir;
    std::fs::create_dir_all(st_dir)?;
    let entries: Vec<String> = (0..tensors)
        .map(|i| {
            format!(
                r#""{}":{{"dtype":"F32","shape":[{ROWS},{COLS}],"data_offsets":[{},{}]}}"#,
                tensor_name(i),
                i * tensor_len,
                (i + 1) * tensor_len
            )
        })
        .collect();
    let mut header = format!("{{{}}}", entries.join(",")).into_bytes();
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let st_path = st_dir.join("model.safetensors");
    {
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&st_path)?);
        w.write_all(&(header.len() as u64).to_le_bytes())?;
        w.write_all(&header)?;
        write_tensor_data(&mut w, tensors)?;
        w.flush()?;
    }
    std::fs::write(st_dir.join(graph_file), graph_json(tensors))?;
    Ok(Model {
        label: "SafeTensors",
        graph: st_dir.join(graph_file),
        sidecar: st_path,
        data_offset: 8 + header.len() as u64,
    })
}

/// Writes a 512 MiB SafeTensors model (`st/model.json` + `st/model.safetensors`) and a
/// 512 MiB WGWT blob model (`blob/model.json` + `blob/model.weights` +
/// `blob/model.manifest.json`) under `dir`; both are found by discovery.
pub fn generate(dir: &Path) -> std::io::Result<Vec<Model>> {
    let tensor_len = ROWS * COLS * 4;
    let st = Model {
        label: "SafeTensors 512 MiB",
        ..generate_safetensors(&dir.join("st"), "model.json", TENSORS)?
    };
    // WGWT blob
    let blob_dir = dir.join("blob");
    std::fs::create_dir_all(&blob_dir)?;
    let blob_path = blob_dir.join("model.weights");
    {
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&blob_path)?);
        w.write_all(b"WGWT")?;
        w.write_all(&1u32.to_le_bytes())?;
        write_tensor_data(&mut w, TENSORS)?;
        w.flush()?;
    }
    let tensors: Vec<String> = (0..TENSORS)
        .map(|i| {
            format!(
                r#""{}":{{"dataType":"float32","shape":[{ROWS},{COLS}],"byteOffset":{},"byteLength":{tensor_len},"layout":"row-major"}}"#,
                tensor_name(i),
                8 + i * tensor_len
            )
        })
        .collect();
    std::fs::write(
        blob_dir.join("model.manifest.json"),
        format!(
            r#"{{"format":"wg-weights-manifest","version":1,"endianness":"little","tensors":{{{}}}}}"#,
            tensors.join(",")
        ),
    )?;
    std::fs::write(blob_dir.join("model.json"), graph_json(TENSORS))?;
    Ok(vec![
        st,
        Model {
            label: "WGWT blob 512 MiB",
            graph: blob_dir.join("model.json"),
            sidecar: blob_path,
            data_offset: 8,
        },
    ])
}

/// This process's peak resident set size in KiB (`VmHWM`), or 0 where unavailable.
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

/// This process's current resident set size in KiB (`VmRSS`), or 0 where unavailable.
pub fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Prints the child's result line.
pub fn report(start: Instant, bytes: u64) {
    println!(
        "{} {} {}",
        start.elapsed().as_secs_f64(),
        peak_rss_kib(),
        bytes
    );
}

/// The floor: read `len` bytes at `offset` of `path` once into fresh memory.
pub fn floor_child(path: &Path, offset: u64, len: u64) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let start = Instant::now();
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, offset)
        .map_err(|e| e.to_string())?;
    std::hint::black_box(&buf);
    report(start, buf.len() as u64);
    Ok(())
}

/// One child measurement.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub seconds: f64,
    pub peak_kib: u64,
    pub bytes: u64,
    /// Optional further fields a child prints after the first three (0 when absent),
    /// e.g. RSS after loading and RSS growth of a clone, in KiB.
    pub extra: [u64; 2],
}

/// Runs `exe child <args>` `runs` times; returns the fastest run's time and the lowest peak.
pub fn measure(exe: &Path, args: &[String], runs: usize) -> Result<Sample, String> {
    let mut best: Option<Sample> = None;
    for _ in 0..runs {
        let out = Command::new(exe)
            .arg("child")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!(
                "child {:?} failed: {}",
                args,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().last().unwrap_or("");
        let f: Vec<&str> = line.split_whitespace().collect();
        let parse = || -> Option<Sample> {
            Some(Sample {
                seconds: f.first()?.parse().ok()?,
                peak_kib: f.get(1)?.parse().ok()?,
                bytes: f.get(2)?.parse().ok()?,
                extra: [
                    f.get(3).and_then(|v| v.parse().ok()).unwrap_or(0),
                    f.get(4).and_then(|v| v.parse().ok()).unwrap_or(0),
                ],
            })
        };
        let s = parse().ok_or_else(|| format!("child {:?} printed {line:?}", args))?;
        best = Some(match best {
            None => s,
            Some(b) => Sample {
                seconds: b.seconds.min(s.seconds),
                peak_kib: b.peak_kib.min(s.peak_kib),
                bytes: s.bytes,
                extra: [b.extra[0].min(s.extra[0]), b.extra[1].min(s.extra[1])],
            },
        });
    }
    best.ok_or_else(|| "no runs".to_string())
}

/// Runs `program args` once under `/usr/bin/time`: its wall time in seconds and its peak
/// RSS in MiB (the `bench/compare-webnn-graph` binaries that time whole commands).
pub fn timed_command(program: &Path, args: &[&str]) -> Result<(f64, f64), String> {
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run /usr/bin/time: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{} {args:?} failed: {stderr}", program.display()));
    }
    let kib: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("no peak memory in {stderr:?}"))?;
    Ok((seconds, kib / 1024.0))
}

/// Formats a sample: time, GiB/s, peak MiB.
pub fn row(name: &str, s: &Sample) -> String {
    let gib = s.bytes as f64 / (1u64 << 30) as f64;
    format!(
        "{name:<28} {:>8.3} s {:>7.2} GiB/s {:>8.1} MiB peak",
        s.seconds,
        gib / s.seconds,
        s.peak_kib as f64 / 1024.0
    )
}
