//! Memory bounds (issue 6, part 3): small files that claim terabytes are rejected using
//! kilobytes of memory.
//!
//! Two independent checks of the same hostile inputs:
//!
//! - in process, a counting global allocator measures the peak heap growth of the
//!   rejecting call on the calling thread (it must stay under [`PEAK_LIMIT`]);
//! - in a child process (this test binary re-executed) whose address space is capped with
//!   `setrlimit(RLIMIT_AS)` at its current size plus 64 MiB: a terabyte (or even a
//!   256 MiB) allocation cannot succeed there, which the child verifies first, and then
//!   every case must end in a clean error.
#![allow(clippy::result_large_err)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{
    parse_graph_json, parse_webnn, plan_external_weights, resolve_external_weights, ConstDecl,
    ConstInit, DataType, GraphJson, GraphLoader,
};
use webnn_weights_tools::weight_tools::{
    inline_weights, inspect_blob, inspect_safetensors, unpack_weights, NoProgress,
};

/// Peak heap growth allowed while rejecting one hostile input.
const PEAK_LIMIT: isize = 64 * 1024;

/// Counts the bytes allocated by the current thread (net, and the peak since [`measure`]
/// reset it), then forwards to the system allocator.
struct Counting;

thread_local! {
    // `const` thread-locals without destructors: accessing them never allocates and never
    // fails, so they are safe to use inside the allocator.
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = CURRENT.try_with(|current| {
        let now = current.get() + delta;
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every method forwards its arguments unchanged to `System`, which implements
// `GlobalAlloc` correctly, and returns `System`'s result; the only extra work is updating
// two thread-local counters, which neither allocates nor unwinds. Callers' obligations
// (valid layouts, pointers from this allocator) are passed straight through.
// Tested by `counting_allocator_counts_and_forwards`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract for `layout`, which is `System`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (all our allocations are) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller upholds
        // `realloc`'s contract for `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the peak heap growth of this thread during it.
fn measure<R>(f: impl FnOnce() -> R) -> (R, isize) {
    CURRENT.with(|c| c.set(0));
    PEAK.with(|p| p.set(0));
    let result = f();
    (result, PEAK.with(Cell::get))
}

#[test]
fn counting_allocator_counts_and_forwards() {
    let (v, peak) = measure(|| {
        let mut v = vec![7u8; 1 << 20];
        v.extend_from_slice(&[1; 1 << 20]); // realloc
        v
    });
    assert!(peak >= 2 << 20, "peak {peak}");
    assert_eq!(v.len(), 2 << 20);
    assert!(v[..1 << 20].iter().all(|&b| b == 7) && v[1 << 20..].iter().all(|&b| b == 1));
    let z = vec![0u64; 1000]; // alloc_zeroed
    assert!(z.iter().all(|&x| x == 0));
    let (_, peak) = measure(|| drop(v));
    assert_eq!(peak, 0);
    assert!(CURRENT.with(Cell::get) <= -(2 << 20));
}

/// A graph of one `@weights` constant.
fn one_constant(data_type: DataType, shape: &[u32], reference: &str) -> GraphJson {
    let mut g = GraphJson::new(None);
    g.consts.insert(
        "w".to_string(),
        ConstDecl {
            data_type,
            shape: shape.to_vec(),
            init: ConstInit::Weights {
                r#ref: reference.to_string(),
            },
        },
    );
    g
}

/// A 1 KiB SafeTensors file: `prefix` as the 8-byte header length, then `header`, padded
/// with spaces.
fn kib_archive(path: &Path, prefix: u64, header: &str) {
    let mut bytes = prefix.to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(1024, b' ');
    std::fs::write(path, bytes).unwrap();
}

/// An archive whose length prefix frames `header` exactly, padded to 1 KiB by the data
/// section it does not declare.
fn framed_archive(path: &Path, header: &str) {
    kib_archive(path, header.len() as u64, header);
}

/// The hostile cases: name, and a closure that prepares files in a folder and returns the
/// rejecting call.
type Case = (
    &'static str,
    fn(&Path) -> Box<dyn FnOnce() -> Result<(), String>>,
);

/// Resolves `graph` beside the files of `dir` in every mode (owned, mapped, and with the
/// sidecar in memory): each must reject it; the messages are joined.
fn resolve_in(dir: &Path, graph: GraphJson) -> Box<dyn FnOnce() -> Result<(), String>> {
    let graph_path = dir.join("model.webnn");
    let archive = dir.join("model.safetensors");
    let (weights, manifest) = if archive.exists() {
        (std::fs::read(&archive).unwrap(), None)
    } else {
        (
            std::fs::read(dir.join("model.weights")).unwrap(),
            Some(std::fs::read(dir.join("model.manifest.json")).unwrap()),
        )
    };
    Box::new(move || {
        let mut g = graph.clone();
        let owned = resolve_external_weights(&mut g, &graph_path, None, None);
        let mapped = GraphLoader::from_graph(graph.clone())
            .graph_path(&graph_path)
            .mapped()
            .load();
        let mut memory = GraphLoader::from_graph(graph).weights_bytes(weights);
        if let Some(m) = manifest {
            memory = memory.manifest_bytes(m);
        }
        let memory = memory.load();
        match (owned, mapped, memory) {
            (Err(a), Err(b), Err(c)) => Err(format!("{a} | mapped: {b} | in memory: {c}")),
            // Accepted in some mode: `run_cases` reports it.
            _ => Ok(()),
        }
    })
}

const TIB4: [u32; 3] = [65536, 65536, 256]; // 2^40 elements

fn cases() -> Vec<Case> {
    vec![
        ("safetensors header length 2^60", |dir| {
            kib_archive(&dir.join("model.safetensors"), 1 << 60, "{}");
            resolve_in(dir, one_constant(DataType::Float32, &[1], "w"))
        }),
        ("safetensors header length 2^64-1", |dir| {
            kib_archive(&dir.join("model.safetensors"), u64::MAX, "{}");
            resolve_in(dir, one_constant(DataType::Float32, &[1], "w"))
        }),
        ("safetensors header length at the 100 MB limit", |dir| {
            kib_archive(&dir.join("model.safetensors"), 100_000_000, "{}");
            resolve_in(dir, one_constant(DataType::Float32, &[1], "w"))
        }),
        ("safetensors tensor of 4 TiB in a 1 KiB file", |dir| {
            framed_archive(
                &dir.join("model.safetensors"),
                r#"{"w":{"dtype":"F32","shape":[65536,65536,256],"data_offsets":[0,4398046511104]}}"#,
            );
            resolve_in(dir, one_constant(DataType::Float32, &TIB4, "w"))
        }),
        ("safetensors shape whose product overflows", |dir| {
            framed_archive(
                &dir.join("model.safetensors"),
                r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,16]}}"#,
            );
            resolve_in(dir, one_constant(DataType::Float32, &[4], "w"))
        }),
        ("safetensors offsets near 2^64", |dir| {
            framed_archive(
                &dir.join("model.safetensors"),
                r#"{"w":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,18446744073709551615]}}"#,
            );
            resolve_in(
                dir,
                one_constant(DataType::Uint8, &[u32::MAX, u32::MAX], "w"),
            )
        }),
        ("inspect of a 4 TiB archive claim", |dir| {
            let path = dir.join("model.safetensors");
            framed_archive(
                &path,
                r#"{"w":{"dtype":"F32","shape":[65536,65536,256],"data_offsets":[0,4398046511104]}}"#,
            );
            Box::new(move || {
                inspect_safetensors(&path)
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }),
        ("manifest byteLength 2^50 (resolve)", |dir| {
            std::fs::write(dir.join("model.weights"), [0u8; 1024]).unwrap();
            std::fs::write(
                dir.join("model.manifest.json"),
                r#"{"tensors":{"w":{"byteOffset":0,"byteLength":1125899906842624}}}"#,
            )
            .unwrap();
            resolve_in(dir, one_constant(DataType::Uint8, &[1 << 25, 1 << 25], "w"))
        }),
        ("manifest byteOffset 2^64-1 (resolve)", |dir| {
            std::fs::write(dir.join("model.weights"), [0u8; 1024]).unwrap();
            std::fs::write(
                dir.join("model.manifest.json"),
                r#"{"tensors":{"w":{"byteOffset":18446744073709551615,"byteLength":4}}}"#,
            )
            .unwrap();
            resolve_in(dir, one_constant(DataType::Uint8, &[4], "w"))
        }),
        (
            "manifest byteLength 2^50 (inspect, unpack, inline)",
            |dir| {
                let blob = dir.join("model.weights");
                let manifest = dir.join("model.manifest.json");
                std::fs::write(&blob, [0u8; 1024]).unwrap();
                std::fs::write(
                &manifest,
                r#"{"format":"wg-weights-manifest","version":1,"endianness":"little","tensors":{"w":{"dataType":"uint8","shape":[33554432,33554432],"byteOffset":8,"byteLength":1125899906842624}}}"#,
            )
            .unwrap();
                let out = dir.join("unpacked");
                let graph_path = dir.join("model.webnn");
                Box::new(move || {
                    let graph = one_constant(DataType::Uint8, &[1 << 25, 1 << 25], "w");
                    let errors = [
                        inspect_blob(&blob, &manifest).map(drop),
                        unpack_weights(&blob, &manifest, &out, &mut NoProgress).map(drop),
                        inline_weights(&graph, &graph_path, &blob, &manifest, &mut NoProgress)
                            .map(drop),
                    ];
                    let mut messages = Vec::new();
                    for e in errors {
                        messages.push(e.err().ok_or("a tool accepted 2^50 bytes")?.to_string());
                    }
                    Err(messages.join(" | "))
                })
            },
        ),
        ("manifest parse with hostile numbers", |_| {
            Box::new(|| {
                let json = br#"{"tensors":{"w":{"byteOffset":-1,"byteLength":1e300}}}"#;
                Manifest::parse(json, Path::new("m.json"))
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }),
        (".webnn declaring a 16 EiB inline constant", |dir| {
            let graph_path = dir.join("model.webnn");
            Box::new(move || {
                let text = "webnn_graph \"g\" v1 {\n  inputs { x: f32[1]; }\n  consts { c: u64[4294967295, 4294967295] @bytes([1, 2]); }\n  nodes { y = add(x, x); }\n  outputs { y; }\n}\n";
                let graph = parse_webnn(text).map_err(|e| e.to_string())?;
                plan_external_weights(&graph, &graph_path, None, None)
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }),
        ("GraphJson declaring a 2^64-byte external constant", |dir| {
            let graph_path = dir.join("model.webnn");
            Box::new(move || {
                let json = r#"{"format":"webnn-graph-json","version":1,"inputs":{},"consts":{"c":{"dataType":"int64","shape":[4294967295,4294967295,4294967295],"init":{"kind":"weights","ref":"c"}}},"nodes":[],"outputs":{}}"#;
                let graph = parse_graph_json(json).map_err(|e| e.to_string())?;
                plan_external_weights(&graph, &graph_path, None, None)
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }),
    ]
}

/// Runs every case; returns (name, peak, message) per case, or the first failure.
fn run_cases() -> Result<Vec<(&'static str, isize, String)>, String> {
    let mut out = Vec::new();
    for (name, prepare) in cases() {
        let dir = webnn_weights_test_support::tempdir().map_err(|e| e.to_string())?;
        let call = prepare(dir.path());
        let (result, peak) = measure(call);
        let message = match result {
            Ok(()) => return Err(format!("{name}: accepted")),
            Err(m) => m,
        };
        if message.is_empty() {
            return Err(format!("{name}: empty error message"));
        }
        out.push((name, peak, message));
    }
    Ok(out)
}

#[test]
fn hostile_sizes_are_rejected_with_kilobytes_of_heap() {
    let results = run_cases().unwrap();
    assert_eq!(results.len(), cases().len());
    for (name, peak, message) in &results {
        println!("{name}: peak heap {peak} bytes: {message}");
        assert!(
            *peak < PEAK_LIMIT,
            "{name}: peak heap {peak} bytes (limit {PEAK_LIMIT}): {message}"
        );
    }
}

/// Set in the child process that runs [`rlimit_child`].
#[cfg(target_os = "linux")]
const CHILD_ENV: &str = "WEBNN_WEIGHTS_RLIMIT_CHILD";

/// Headroom above the child's current address-space size.
#[cfg(target_os = "linux")]
const HEADROOM: u64 = 64 << 20;

#[cfg(target_os = "linux")]
fn vm_size() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .expect("VmSize line");
    let kib: u64 = line
        .trim_start_matches("VmSize:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("VmSize in kB");
    kib * 1024
}

/// The child side of [`hostile_sizes_are_rejected_under_an_address_space_cap`]: caps its
/// own address space, proves that a 256 MiB allocation now fails, then runs every case.
/// Run by hand (`--ignored`) without the variable it runs the cases uncapped.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "child process of hostile_sizes_are_rejected_under_an_address_space_cap"]
fn rlimit_child() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    if std::env::var_os(CHILD_ENV).is_some() {
        let cap = vm_size() + HEADROOM;
        let old = getrlimit(Resource::As);
        setrlimit(
            Resource::As,
            Rlimit {
                current: Some(cap),
                maximum: old.maximum,
            },
        )
        .expect("setrlimit(RLIMIT_AS)");
        let mut probe: Vec<u8> = Vec::new();
        assert!(
            probe.try_reserve_exact(256 << 20).is_err(),
            "the address-space cap does not hold"
        );
        println!("rlimit: capped at {} MiB", cap >> 20);
    }
    let results = run_cases().unwrap();
    println!("rlimit: {} cases rejected", results.len());
}

#[cfg(target_os = "linux")]
#[test]
fn hostile_sizes_are_rejected_under_an_address_space_cap() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([
            "rlimit_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "child failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("rlimit: capped at"), "{stdout}");
    assert!(
        stdout.contains(&format!("rlimit: {} cases rejected", cases().len())),
        "{stdout}"
    );
}
