//! `include_webnn_graph!`: embeds the artifacts that `webnn-weights-build` prepared.
//!
//! Use it through `webnn_weights_runtime::include_webnn_graph!`. The macro reads only
//! what the build script wrote under `OUT_DIR/webnn-weights/<key>/` (it never resolves a
//! sidecar) and reports every problem with `compile_error!` on the path literal.

// The generated code declares the linked data symbol (see `// SAFETY:` there); the macro
// itself has no unsafe code.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// Embeds a graph prepared by `webnn-weights-build` as a `'static`
/// `webnn_weights_runtime::EmbeddedGraph`.
///
/// The argument is the graph path exactly as given to `webnn_weights_build::compile` in the
/// package's build.rs (relative to the package root). The expansion is a constant
/// expression, meant for a `static`:
///
/// ```ignore
/// static MODEL: webnn_weights_runtime::EmbeddedGraph =
///     webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
/// ```
///
/// Compile errors (on the literal): the package has no build script (no `OUT_DIR`); the
/// build script did not prepare this graph (the message quotes the build.rs line to add);
/// the artifacts are missing, damaged or of another version.
///
/// The `static` may be in the library, a binary, a test or an example of the package whose
/// build script prepared the graph.
#[proc_macro]
pub fn include_webnn_graph(input: TokenStream) -> TokenStream {
    let lit = match syn::parse::<syn::LitStr>(input) {
        Ok(lit) => lit,
        Err(err) => return err.to_compile_error().into(),
    };
    match expand(&lit) {
        Ok(tokens) => tokens.into(),
        Err(message) => syn::Error::new(lit.span(), message)
            .to_compile_error()
            .into(),
    }
}

fn expand(lit: &syn::LitStr) -> Result<TokenStream2, String> {
    let literal = lit.value();
    let build_line = format!("webnn_weights_build::compile_or_exit({literal:?});");
    let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| {
        format!(
            "include_webnn_graph!: OUT_DIR is not set, so this package has no build script; \
             add a build.rs with `fn main() {{ {build_line} }}` and \
             `[build-dependencies] webnn-weights-build` to Cargo.toml"
        )
    })?;
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .ok_or("include_webnn_graph!: CARGO_MANIFEST_DIR is not set (build with cargo)")?;
    let key = artifact_key(Path::new(&manifest_dir), Path::new(&literal));
    let rel = format!("OUT_DIR/webnn-weights/{key}");
    let dir = Path::new(&out_dir).join("webnn-weights").join(&key);
    let index_path = dir.join("index.json");
    let index_text = match std::fs::read_to_string(&index_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "include_webnn_graph!: graph `{literal}` was not prepared by this package's build \
                 script ({rel}/index.json does not exist); add this line to build.rs: \
                 `{build_line}` (the path must be the same string)"
            ))
        }
        Err(e) => {
            return Err(format!(
                "include_webnn_graph!: cannot read {rel}/index.json: {e}"
            ))
        }
    };
    let bad = |what: String| {
        format!(
            "include_webnn_graph!: the artifacts of `{literal}` are inconsistent: {what}; \
             rebuild them (`cargo clean -p <this package>` and build again)"
        )
    };
    let index: Value = serde_json::from_str(&index_text)
        .map_err(|e| bad(format!("{rel}/index.json is not valid JSON ({e})")))?;
    let field = |name: &str| index.get(name).unwrap_or(&Value::Null);
    if field("format").as_str() != Some("webnn-weights-artifacts") {
        return Err(bad(format!(
            "{rel}/index.json is not a webnn-weights index"
        )));
    }
    if field("version").as_u64() != Some(1) {
        return Err(bad(format!(
            "{rel}/index.json has version {}, expected 1 (webnn-weights-build and \
             webnn-weights-runtime versions differ?)",
            field("version")
        )));
    }
    let mode = field("mode").as_str().unwrap_or("");

    let graph_json_path = dir.join("graph.json");
    let graph_text = std::fs::read_to_string(&graph_json_path)
        .map_err(|e| bad(format!("cannot read {rel}/graph.json ({e})")))?;
    let graph: Value = serde_json::from_str(&graph_text)
        .map_err(|e| bad(format!("{rel}/graph.json is not valid JSON ({e})")))?;
    let consts = graph.get("consts").and_then(Value::as_object);

    let index_str = path_str(&index_path)?;
    let graph_str = path_str(&graph_json_path)?;
    let track = quote! {
        // Makes rustc (and so cargo) track the index: a rebuilt index recompiles this crate.
        const _: &[u8] = include_bytes!(#index_str);
    };

    if mode == "runtime" {
        let runtime = field("runtime");
        let graph_path = runtime
            .get("graphPath")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("{rel}/index.json: runtime.graphPath is missing")))?;
        let opt = |name: &str| match runtime.get(name).and_then(Value::as_str) {
            Some(p) => quote!(::core::option::Option::Some(#p)),
            None => quote!(::core::option::Option::None),
        };
        let (weights, manifest) = (opt("weights"), opt("manifest"));
        return Ok(quote! {{
            #track
            ::webnn_weights_runtime::EmbeddedGraph::__runtime(
                #literal,
                include_str!(#graph_str),
                #graph_path,
                #weights,
                #manifest,
            )
        }});
    }
    if mode != "static-lib" && mode != "include-bytes" {
        return Err(bad(format!("{rel}/index.json has unknown mode `{mode}`")));
    }

    let empty = Vec::new();
    let constants = field("constants").as_array().unwrap_or(&empty);
    let data = field("data");
    let data_len = if constants.is_empty() {
        0
    } else {
        data.get("length")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(format!("{rel}/index.json: data.length is missing")))?
    };
    let mut entries = Vec::with_capacity(constants.len());
    let mut previous: Option<&str> = None;
    for c in constants {
        let s = |k: &str| c.get(k).and_then(Value::as_str);
        let u = |k: &str| c.get(k).and_then(Value::as_u64);
        let (Some(name), Some(reference), Some(dtype), Some(offset), Some(length)) = (
            s("name"),
            s("reference"),
            s("dataType"),
            u("offset"),
            u("length"),
        ) else {
            return Err(bad(format!(
                "{rel}/index.json: a constant entry lacks a field"
            )));
        };
        let variant = dtype_variant(dtype).ok_or_else(|| {
            bad(format!(
                "{rel}/index.json: constant `{name}` has unknown data type `{dtype}`"
            ))
        })?;
        let shape: Vec<u32> = c
            .get("shape")
            .and_then(Value::as_array)
            .map(|dims| {
                dims.iter()
                    .map(|d| d.as_u64().and_then(|d| u32::try_from(d).ok()))
                    .collect::<Option<Vec<u32>>>()
            })
            .unwrap_or(None)
            .ok_or_else(|| {
                bad(format!(
                    "{rel}/index.json: constant `{name}` has no valid shape"
                ))
            })?;
        if offset % 64 != 0 || offset.checked_add(length).is_none_or(|end| end > data_len) {
            return Err(bad(format!(
                "{rel}/index.json: constant `{name}` at {offset}..+{length} is not a 64-byte \
                 aligned range of the {data_len} data bytes"
            )));
        }
        if previous.is_some_and(|p| p >= name) {
            return Err(bad(format!(
                "{rel}/index.json: constants are not sorted by name"
            )));
        }
        previous = Some(name);
        let declared = consts.and_then(|m| m.get(name));
        let declared_ref = declared
            .and_then(|d| d.get("init"))
            .and_then(|i| i.get("ref"))
            .and_then(Value::as_str);
        if declared_ref != Some(reference) {
            return Err(bad(format!(
                "{rel}/graph.json does not declare constant `{name}` as @weights(\"{reference}\")"
            )));
        }
        let variant = syn::Ident::new(variant, Span::call_site());
        let (offset, length) = (offset as usize, length as usize);
        entries.push(quote! {
            ::webnn_weights_runtime::embed::__ConstantEntry {
                name: #name,
                reference: #reference,
                data_type: ::webnn_weights_runtime::DataType::#variant,
                shape: &[#(#shape),*],
                offset: #offset,
                length: #length,
            }
        });
    }
    let count = entries.len();

    let data_expr = if constants.is_empty() {
        quote!(&[])
    } else {
        let file = data
            .get("file")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("{rel}/index.json: data.file is missing")))?;
        let data_path = dir.join(file);
        let size = std::fs::metadata(&data_path)
            .map_err(|e| bad(format!("cannot read {rel}/{file} ({e})")))?
            .len();
        let len_usize = usize::try_from(data_len)
            .map_err(|_| bad(format!("{data_len} data bytes exceed this target")))?;
        if mode == "include-bytes" {
            if size != data_len {
                return Err(bad(format!(
                    "{rel}/{file} has {size} bytes, {rel}/index.json says {data_len}"
                )));
            }
            let data_str = path_str(&data_path)?;
            quote! {{
                static __WEBNN_WEIGHTS_DATA: &::webnn_weights_runtime::embed::__Aligned<[u8]> =
                    &::webnn_weights_runtime::embed::__Aligned(*include_bytes!(#data_str));
                &__WEBNN_WEIGHTS_DATA.0
            }}
        } else {
            if size < data_len {
                return Err(bad(format!(
                    "{rel}/{file} has {size} bytes, too few for the {data_len} data bytes of \
                     {rel}/index.json"
                )));
            }
            let symbol = data
                .get("symbol")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("{rel}/index.json: data.symbol is missing")))?;
            quote! {{
                unsafe extern "C" {
                    // SAFETY: defined by the static library that the build script wrote
                    // and linked, from the same artifacts as this declaration: a symbol of
                    // exactly this many immutable bytes (checked against the data file
                    // above) in a read-only, 64-byte aligned section, so reading them is
                    // safe. Tested by every static-library embedding in tests/tests/embed.rs.
                    #[link_name = #symbol]
                    safe static __WEBNN_WEIGHTS_DATA: [u8; #len_usize];
                }
                &__WEBNN_WEIGHTS_DATA
            }}
        }
    };

    Ok(quote! {{
        #track
        static __WEBNN_WEIGHTS_ENTRIES: [::webnn_weights_runtime::embed::__ConstantEntry; #count] =
            [#(#entries),*];
        ::webnn_weights_runtime::EmbeddedGraph::__embedded(
            #literal,
            include_str!(#graph_str),
            #data_expr,
            &__WEBNN_WEIGHTS_ENTRIES,
        )
    }})
}

fn path_str(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| {
        format!(
            "include_webnn_graph!: {} is not valid UTF-8",
            path.display()
        )
    })
}

fn dtype_variant(json_name: &str) -> Option<&'static str> {
    Some(match json_name {
        "float32" => "Float32",
        "float16" => "Float16",
        "int4" => "Int4",
        "uint4" => "Uint4",
        "int32" => "Int32",
        "uint32" => "Uint32",
        "int64" => "Int64",
        "uint64" => "Uint64",
        "int8" => "Int8",
        "uint8" => "Uint8",
        _ => return None,
    })
}

// The key rule of webnn-weights-build (weights-build/src/key.rs); both must agree.

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn artifact_key(manifest_dir: &Path, literal: &Path) -> String {
    let manifest_dir = normalize(manifest_dir);
    let full = normalize(&manifest_dir.join(literal));
    let relative = full.strip_prefix(&manifest_dir).unwrap_or(&full);
    let text: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let digest = Sha256::digest(text.join("/").as_bytes());
    let stem: String = full
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{stem}-{hex}")
}
