//! The tiny model of the workspace's examples (`examples/models/tiny_mlp.webnn`), embedded
//! by build.rs + [`include_webnn_graph!`], for the browser: compiled to
//! `wasm32-unknown-unknown`, this library exports plain C functions (no wasm-bindgen) that
//! hand the page
//!
//! - the program: the graph lowered by the WebNN table of `webnn-weights-web`
//!   ([`WebGraph::new`] of [`EmbeddedGraph::try_graph`], the structure whose constants keep
//!   their `@weights` references, with the SHA-256 the weights lock pins for each), as JSON,
//!   for the builder module's `buildProgram(context, program, bytesOf)`. Not
//!   [`EmbeddedGraph::to_graph_json`]: its constants are inline bytes, which the program
//!   would carry in base64 (a copy, decoded in JavaScript);
//! - every constant's name and bytes as a pointer and a length into the module's linear
//!   memory: the embedded `&'static [u8]` itself. The page makes `Uint8Array` views of
//!   `memory.buffer` over them and passes those to `MLGraphBuilder.constant`; no byte is
//!   copied in JavaScript.
//!
//! All allocation happens in [`program_ptr`] (the program is lowered once and kept in a
//! static); the other functions allocate nothing, so views taken after the program was read
//! stay valid (growing the memory would detach them).
//!
//! The host bins of this crate read the same static: `native` computes the model in plain
//! Rust (the expected output), `builder-js` writes the builder module.

use std::sync::OnceLock;
use webnn_weights_runtime::{include_webnn_graph, EmbeddedConstant, EmbeddedGraph};
use webnn_weights_web::WebGraph;

/// `examples/models/tiny_mlp.webnn` with its SafeTensors weights, embedded (the same path
/// string as in build.rs).
pub static MODEL: EmbeddedGraph = include_webnn_graph!("../models/tiny_mlp.webnn");

/// The lowered program as JSON, or why it could not be lowered.
pub fn program_json() -> &'static Result<String, String> {
    static PROGRAM: OnceLock<Result<String, String>> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let constants = MODEL.try_constants().map_err(|e| e.to_string())?;
        let graph = MODEL.try_graph().map_err(|e| e.to_string())?;
        let mut program = WebGraph::new(graph).map_err(|e| e.to_string())?;
        // The page checks the bytes it reads from the wasm memory against the lock's digests.
        program.set_digests(|reference| {
            constants
                .iter()
                .find(|c| c.reference() == reference)
                .and_then(EmbeddedConstant::sha256)
        });
        Ok(program.to_json())
    })
}

fn text(result: &'static Result<String, String>) -> &'static str {
    match result {
        Ok(json) | Err(json) => json,
    }
}

fn constant(index: u32) -> Option<&'static EmbeddedConstant> {
    MODEL.try_constants().ok()?.get(index as usize)
}

/// 1 when the graph was lowered ([`program_ptr`] is the program), 0 when not (it is the
/// error's text). Lowers the program on first call, as [`program_ptr`] does.
#[no_mangle]
pub extern "C" fn program_ok() -> u32 {
    program_json().is_ok() as u32
}

/// The program's JSON (UTF-8), or the error's text; lowers it on first call (the only
/// function that allocates).
#[no_mangle]
pub extern "C" fn program_ptr() -> *const u8 {
    text(program_json()).as_ptr()
}

/// The length in bytes of [`program_ptr`]'s text.
#[no_mangle]
pub extern "C" fn program_len() -> usize {
    text(program_json()).len()
}

/// How many constants the embedded graph has (0 if its weights could not be read).
#[no_mangle]
pub extern "C" fn constant_count() -> u32 {
    MODEL.try_constants().map_or(0, |c| c.len() as u32)
}

/// The name (UTF-8) of constant `index`, null past the end.
#[no_mangle]
pub extern "C" fn constant_name_ptr(index: u32) -> *const u8 {
    constant(index).map_or(std::ptr::null(), |c| c.name().as_ptr())
}

/// The length in bytes of constant `index`'s name, 0 past the end.
#[no_mangle]
pub extern "C" fn constant_name_len(index: u32) -> usize {
    constant(index).map_or(0, |c| c.name().len())
}

/// The address of constant `index`'s bytes in linear memory (the embedded data, 64-byte
/// aligned), null past the end.
#[no_mangle]
pub extern "C" fn constant_bytes_ptr(index: u32) -> *const u8 {
    constant(index).map_or(std::ptr::null(), |c| c.bytes().as_ptr())
}

/// The length of constant `index`'s bytes, 0 past the end.
#[no_mangle]
pub extern "C" fn constant_bytes_len(index: u32) -> usize {
    constant(index).map_or(0, |c| c.bytes().len())
}
