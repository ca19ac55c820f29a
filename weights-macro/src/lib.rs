//! `include_webnn_graph!`: embeds the artifacts that `webnn-weights-build` prepared.
//!
//! Use it through `webnn_weights_runtime::include_webnn_graph!`. The macro reads only
//! what the build script wrote under `OUT_DIR/webnn-weights/<key>/` (it never resolves a
//! sidecar) and reports every problem with `compile_error!` on the path literal. The key,
//! the file names, the `index.json` schema and the constant table come from
//! `webnn-weights-artifacts`, the crate the build helper writes through.
//!
//! The expansion has the same size whatever the graph: through a static library, data,
//! constant table and graph JSON are one linked run of bytes between two symbols, one at each
//! end (in every object format), and the expansion holds their ranges; otherwise the graph
//! structure is one `include_str!`, the constant table one `include_bytes!` (checked here
//! first) and the data one `include_bytes!`.

// The generated code declares the linked data symbols (`unsafe extern`, see `// SAFETY:`
// there, and docs/embedding.md, "Unsafe code"); the macro itself has no unsafe code.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod literal;

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use webnn_weights_artifacts::{
    artifact_key, closest, prepared_env_var, prepared_stamp, ConstantTable, Index, IndexData,
    IndexError, Mode, ARTIFACTS_DIR, INDEX_FILE,
};

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
/// build script did not prepare this graph (the message lists the graphs its run did
/// prepare, asks "did you mean" the one whose name is near, and quotes the build.rs line
/// to add for a new graph);
/// the artifacts are missing, damaged or of another version.
///
/// The `static` may be in the library, a binary, a test or an example of the package whose
/// build script prepared the graph.
#[proc_macro]
pub fn include_webnn_graph(input: TokenStream) -> TokenStream {
    let (literal, span) = match literal::one_string(input) {
        Ok(found) => found,
        Err((message, span)) => return compile_error(&message, span),
    };
    let expansion = match expand(&literal) {
        Ok(source) => source,
        Err(message) => return compile_error(&message, span),
    };
    // Every piece of the source is ours (paths and strings written as `{:?}` literals), so it
    // parses; should it not, the error says so instead of a panic.
    expansion.parse().unwrap_or_else(|e| {
        compile_error(
            &format!("include_webnn_graph!: internal error, the expansion does not parse: {e}"),
            span,
        )
    })
}

/// `::core::compile_error! { "message" }`, every token at `span` so that the error points
/// at the literal (or the token) that is wrong.
fn compile_error(message: &str, span: Span) -> TokenStream {
    let punct = |c, spacing| TokenTree::Punct(Punct::new(c, spacing));
    let ident = |name| TokenTree::Ident(Ident::new(name, span));
    let mut message = Literal::string(message);
    message.set_span(span);
    let mut body = Group::new(
        Delimiter::Brace,
        TokenStream::from(TokenTree::Literal(message)),
    );
    body.set_span(span);
    [
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        ident("core"),
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        ident("compile_error"),
        punct('!', Spacing::Alone),
        TokenTree::Group(body),
    ]
    .into_iter()
    .map(|mut token| {
        token.set_span(span);
        token
    })
    .collect()
}

/// A Rust string literal of `text` (`str`'s `Debug` writes one, escapes included).
fn lit(text: &str) -> String {
    format!("{text:?}")
}

/// The expansion as Rust source text.
fn expand(literal: &str) -> Result<String, String> {
    let artifacts = Artifacts::locate(literal)?;
    let index = artifacts.read_index()?;
    let index_str = lit(&path_str(&artifacts.dir.join(INDEX_FILE))?);
    // Makes rustc (and so cargo) track the index: a rebuilt index recompiles this crate.
    let track = format!("const _: &[u8] = include_bytes!({index_str});");
    let label = lit(literal);

    if let (Mode::StaticLib, Some(data)) = (index.mode, &index.data) {
        let construct = linked(&artifacts, data, &label)?;
        return Ok(format!("{{ {track} {construct} }}"));
    }
    let graph_str = artifacts.graph_json(&index)?;
    if index.mode == Mode::Runtime {
        let construct = artifacts.runtime(&index, &label, &graph_str)?;
        return Ok(format!("{{ {track} {construct} }}"));
    }
    // `include_bytes!`, or a static library without constants (nothing to link).
    let (table_str, no_constants) = artifacts.table(&index)?;
    let data_expr = if no_constants {
        "&[]".to_string()
    } else {
        artifacts.data(&index)?
    };
    Ok(format!(
        "{{ {track} \
         static __WEBNN_WEIGHTS_TABLE: &::webnn_weights_runtime::__macro::Aligned<[u8]> = \
         &::webnn_weights_runtime::__macro::Aligned(*include_bytes!({table_str})); \
         ::webnn_weights_runtime::__macro::embedded({label}, include_str!({graph_str}), \
         {data_expr}, &__WEBNN_WEIGHTS_TABLE.0) }}"
    ))
}

/// The artifact folder the build script prepared for the graph the macro names, and the
/// words of every problem with it.
struct Artifacts<'a> {
    /// The graph path as the macro call writes it.
    literal: &'a str,
    /// The artifact key (`<stem>-<16 hex digits>`).
    key: String,
    /// The folder, `OUT_DIR/webnn-weights/<key>`.
    dir: PathBuf,
    /// The folder as messages name it (`OUT_DIR/…`).
    rel: String,
    /// `OUT_DIR`.
    out_dir: PathBuf,
}

impl<'a> Artifacts<'a> {
    /// The folder of the graph `literal` under this package's `OUT_DIR`, or why there is
    /// none (no build script, or not built by cargo).
    fn locate(literal: &'a str) -> Result<Artifacts<'a>, String> {
        let build_line = format!("webnn_weights_build::compile_or_exit({literal:?});");
        let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| {
            format!(
                "include_webnn_graph!: OUT_DIR is not set, so this package has no build \
                 script; add a build.rs with `fn main() {{ {build_line} }}` and \
                 `[build-dependencies] webnn-weights-build` to Cargo.toml"
            )
        })?;
        let package_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .ok_or("include_webnn_graph!: CARGO_MANIFEST_DIR is not set (build with cargo)")?;
        let key = artifact_key(Path::new(&package_dir), Path::new(&literal));
        Ok(Artifacts {
            literal,
            rel: format!("OUT_DIR/{ARTIFACTS_DIR}/{key}"),
            dir: Path::new(&out_dir).join(ARTIFACTS_DIR).join(&key),
            out_dir: PathBuf::from(out_dir),
            key,
        })
    }

    /// The message of artifacts that do not agree with each other, and the fix.
    fn bad(&self, what: String) -> String {
        format!(
            "include_webnn_graph!: the artifacts of `{}` are inconsistent: {what}; \
             rebuild them (`cargo clean -p <this package>` and build again)",
            self.literal
        )
    }

    /// The index, if the build script's current run wrote it: cargo hands rustc that run's
    /// `rustc-env` values, so artifacts an earlier run left in OUT_DIR (a build.rs line
    /// since removed or changed) have no stamp, or another.
    fn read_index(&self) -> Result<Index, String> {
        let rel = &self.rel;
        let prepared = std::env::var(prepared_env_var(&self.key)).ok();
        let index_text = match std::fs::read_to_string(self.dir.join(INDEX_FILE)) {
            Ok(_) if prepared.is_none() => {
                return Err(self.not_prepared(format!(
                    "{rel} was left by an earlier run of the build script, which this run did \
                     not renew, so its weights may be out of date"
                )))
            }
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.not_prepared(format!("{rel}/{INDEX_FILE} does not exist")))
            }
            Err(e) => {
                return Err(format!(
                    "include_webnn_graph!: cannot read {rel}/{INDEX_FILE}: {e}"
                ))
            }
        };
        if prepared.as_deref() != Some(prepared_stamp(index_text.as_bytes()).as_str()) {
            return Err(self.bad(format!(
                "{rel}/{INDEX_FILE} is not the index the build script wrote in this run"
            )));
        }
        Index::from_json(&index_text)
            .map_err(|e: IndexError| self.bad(format!("{rel}/{INDEX_FILE} {e}")))
    }

    /// The message of a graph this run of the build script did not prepare (`why`), with
    /// the graphs it did prepare and the build.rs line to add.
    fn not_prepared(&self, why: String) -> String {
        not_prepared_message(self.literal, &why, &prepared_graphs(&self.out_dir))
    }

    /// The graph JSON file's path as a string literal (every mode but a linked one names
    /// one: `Index::from_json` checked).
    fn graph_json(&self, index: &Index) -> Result<String, String> {
        let rel = &self.rel;
        let Some(graph_file) = &index.graph_json else {
            return Err(self.bad(format!("{rel}/{INDEX_FILE}: graphJson is missing")));
        };
        let graph_json_path = self.dir.join(graph_file);
        if !graph_json_path.is_file() {
            return Err(self.bad(format!("{rel}/{graph_file} does not exist")));
        }
        Ok(lit(&path_str(&graph_json_path)?))
    }

    /// The expression of a graph the program resolves on first use (runtime mode, whose
    /// runtime section `Index::from_json` checked), with its graph JSON `graph_str`.
    fn runtime(&self, index: &Index, label: &str, graph_str: &str) -> Result<String, String> {
        let Some(runtime) = &index.runtime else {
            return Err(self.bad(format!("{}/{INDEX_FILE}: runtime is missing", self.rel)));
        };
        let graph_path = lit(&runtime.graph_path);
        let opt = |path: &Option<String>| match path {
            Some(p) => format!("::core::option::Option::Some({})", lit(p)),
            None => "::core::option::Option::None".to_string(),
        };
        let (weights, manifest, lock) = (
            opt(&runtime.weights),
            opt(&runtime.manifest),
            opt(&runtime.lock),
        );
        Ok(format!(
            "::webnn_weights_runtime::__macro::runtime({label}, \
             include_str!({graph_str}), {graph_path}, {weights}, {manifest}, {lock})"
        ))
    }

    /// The constant table file's path as a string literal, after checking the table
    /// against the index (the embedding modes name one: `Index::from_json` checked); and
    /// whether it has no constants.
    fn table(&self, index: &Index) -> Result<(String, bool), String> {
        let rel = &self.rel;
        let Some(table_file) = &index.table else {
            return Err(self.bad(format!("{rel}/{INDEX_FILE}: table is missing")));
        };
        let table_path = self.dir.join(table_file);
        let table_bytes = std::fs::read(&table_path)
            .map_err(|e| self.bad(format!("cannot read {rel}/{table_file} ({e})")))?;
        // Every entry: strings, shape, data type, an aligned range of the data, sorted names.
        let table = ConstantTable::parse(&table_bytes)
            .map_err(|e| self.bad(format!("{rel}/{table_file} {e}")))?;
        table.check_data_len(index.data_len()).map_err(|e| {
            self.bad(format!(
                "{rel}/{table_file} {e} according to {rel}/{INDEX_FILE}"
            ))
        })?;
        if table.len() as u64 != index.constant_count {
            return Err(self.bad(format!(
                "{rel}/{table_file} has {} constants, {rel}/{INDEX_FILE} says {}",
                table.len(),
                index.constant_count
            )));
        }
        Ok((lit(&path_str(&table_path)?), table.is_empty()))
    }

    /// The expression of the data file, embedded aligned with `include_bytes!` after
    /// checking its length against the index.
    fn data(&self, index: &Index) -> Result<String, String> {
        let rel = &self.rel;
        let Some(data) = &index.data else {
            return Err(self.bad(format!("{rel}/{INDEX_FILE}: data is missing")));
        };
        let file = &data.file;
        let data_path = self.dir.join(file);
        let size = std::fs::metadata(&data_path)
            .map_err(|e| self.bad(format!("cannot read {rel}/{file} ({e})")))?
            .len();
        if size != data.length {
            return Err(self.bad(format!(
                "{rel}/{file} has {size} bytes, {rel}/{INDEX_FILE} says {}",
                data.length
            )));
        }
        let data_str = lit(&path_str(&data_path)?);
        Ok(format!(
            "{{ static __WEBNN_WEIGHTS_DATA: &::webnn_weights_runtime::__macro::Aligned<[u8]> = \
             &::webnn_weights_runtime::__macro::Aligned(*include_bytes!({data_str})); \
             &__WEBNN_WEIGHTS_DATA.0 }}"
        ))
    }
}

/// The graphs the build script's current run prepared under `out_dir`, sorted: each
/// artifact folder whose index the run vouched for ([`prepared_env_var`] holds the stamp of
/// the index there), named by the graph path its index records (as build.rs gave it).
/// Anything unreadable is left out: this only words a message.
fn prepared_graphs(out_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(out_dir.join(ARTIFACTS_DIR)) else {
        return Vec::new();
    };
    let mut graphs: Vec<String> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let key = entry.file_name().into_string().ok()?;
            let stamp = std::env::var(prepared_env_var(&key)).ok()?;
            let index = std::fs::read_to_string(entry.path().join(INDEX_FILE)).ok()?;
            if prepared_stamp(index.as_bytes()) != stamp {
                return None;
            }
            Some(Index::from_json(&index).ok()?.graph)
        })
        .collect();
    graphs.sort();
    graphs.dedup();
    graphs
}

/// The prepared graph `literal` most likely meant: one whose file name is near `literal`'s
/// (`models/model.webnn` for `model.webnn`, `modle.webnn` or `modles/model.webnn`), of
/// several such the one whose path is nearest.
fn meant<'a>(literal: &str, prepared: &'a [String]) -> Option<&'a str> {
    let paths = prepared.iter().map(String::as_str);
    let near = closest(file_name(literal)?, paths.clone().filter_map(file_name))?;
    let named: Vec<&str> = paths.filter(|path| file_name(path) == Some(near)).collect();
    closest(literal, named.iter().copied()).or(named.first().copied())
}

/// The last component of the path `path`, if it has one.
fn file_name(path: &str) -> Option<&str> {
    Path::new(path).file_name()?.to_str()
}

/// The message of the graph `literal` that the build script's current run did not prepare
/// (`why`), given the graphs it did prepare: those graphs, "did you mean" the one near
/// `literal`, and the build.rs line that prepares `literal`, for a graph that is new.
fn not_prepared_message(literal: &str, why: &str, prepared: &[String]) -> String {
    let build_line = format!("webnn_weights_build::compile_or_exit({literal:?});");
    let head = format!(
        "include_webnn_graph!: graph `{literal}` was not prepared by this package's build \
         script ({why})"
    );
    if prepared.is_empty() {
        return format!(
            "{head}; this run of the build script prepared no graph; add this line to \
             build.rs: `{build_line}` (the path must be the same string)"
        );
    }
    let list = prepared
        .iter()
        .map(|graph| format!("`{graph}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let ran = format!("this run of the build script prepared {list}");
    match meant(literal, prepared) {
        Some(near) => format!(
            "{head}; {ran}: did you mean `{near}`? (the macro's path must be the same \
             string as build.rs's); for another graph, add this line to build.rs: \
             `{build_line}`"
        ),
        None => format!(
            "{head}; {ran}; to embed another graph, add this line to build.rs: \
             `{build_line}` (the path must be the same string)"
        ),
    }
}

/// The expression of a graph whose data, constant table and graph JSON a static library
/// links (`data` from the index, which `Index::from_json` checked: a symbol, the table and
/// the graph JSON in order after the data). Nothing of the files reaches rustc; the
/// program checks the table and parses the graph JSON on first use.
fn linked(artifacts: &Artifacts, data: &IndexData, label: &str) -> Result<String, String> {
    let (dir, rel) = (&artifacts.dir, &artifacts.rel);
    let bad = |what| artifacts.bad(what);
    let file = &data.file;
    let (Some(symbol), Some(end_symbol), Some(table), Some(graph)) =
        (&data.symbol, &data.end_symbol, data.table, data.graph)
    else {
        return Err(bad(format!(
            "{rel}/{INDEX_FILE} has no data.symbol, data.endSymbol, data.table or data.graph"
        )));
    };
    let len = data.linked_len();
    let size = std::fs::metadata(dir.join(file))
        .map_err(|e| bad(format!("cannot read {rel}/{file} ({e})")))?
        .len();
    if size < len {
        return Err(bad(format!(
            "{rel}/{file} has {size} bytes, too few for the {len} linked bytes of \
             {rel}/{INDEX_FILE}"
        )));
    }
    let usize_of = |n: u64| {
        usize::try_from(n).map_err(|_| bad(format!("{len} linked bytes exceed this target")))
    };
    let (len, data_len) = (usize_of(len)?, usize_of(data.length)?);
    let (table_at, table_len) = (usize_of(table.offset)?, usize_of(table.length)?);
    let (graph_at, graph_len) = (usize_of(graph.offset)?, usize_of(graph.length)?);
    let parts = format!(
        "::webnn_weights_runtime::__macro::Parts {{ data: {data_len}, \
         table: ({table_at}, {table_len}), graph: ({graph_at}, {graph_len}) }}"
    );
    let symbol = lit(symbol);
    let end_symbol = lit(end_symbol);
    // Zero-sized symbols at both ends, read as addresses (`&raw const`, never a reference
    // to zero bytes): `EmbeddedGraph` makes them a slice only after checking, on first use,
    // that they are `len` bytes apart.
    Ok(format!(
        "::webnn_weights_runtime::__macro::linked({label}, {{
            unsafe extern \"C\" {{
                // SAFETY: zero bytes, so reading this declaration reads nothing: the symbol
                // that the static library the build script wrote and linked defines at the
                // first linked byte. Only its address is taken.
                #[link_name = {symbol}]
                safe static __WEBNN_WEIGHTS_DATA: [u8; 0];
            }}
            fn start() -> *const u8 {{
                (&raw const __WEBNN_WEIGHTS_DATA).cast()
            }}
            start
        }}, {{
            unsafe extern \"C\" {{
                // SAFETY: zero bytes, never read: the symbol the same static library
                // defines right after the last linked byte. Only its address is taken.
                #[link_name = {end_symbol}]
                safe static __WEBNN_WEIGHTS_DATA_END: [u8; 0];
            }}
            fn end() -> *const u8 {{
                (&raw const __WEBNN_WEIGHTS_DATA_END).cast()
            }}
            end
        }}, {len}, {parts})"
    ))
}

fn path_str(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| {
        format!(
            "include_webnn_graph!: {} is not valid UTF-8",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::not_prepared_message;

    const WHY: &str = "OUT_DIR/webnn-weights/model-0123456789abcdef/index.json does not exist";

    fn message(literal: &str, prepared: &[&str]) -> String {
        let prepared: Vec<String> = prepared.iter().map(|p| p.to_string()).collect();
        not_prepared_message(literal, WHY, &prepared)
    }

    #[test]
    fn a_near_prepared_graph_is_named_and_the_build_line_offered() {
        // The folder left out: the same file name.
        let text = message("model.webnn", &["models/model.webnn"]);
        assert_eq!(
            text,
            format!(
                "include_webnn_graph!: graph `model.webnn` was not prepared by this package's \
                 build script ({WHY}); this run of the build script prepared \
                 `models/model.webnn`: did you mean `models/model.webnn`? (the macro's path \
                 must be the same string as build.rs's); for another graph, add this line to \
                 build.rs: `webnn_weights_build::compile_or_exit(\"model.webnn\");`"
            )
        );
        // A typo, among several graphs: every one listed, the near one meant.
        let text = message(
            "models/modle.webnn",
            &["models/encoder.onnx", "models/model.webnn"],
        );
        assert!(
            text.contains(
                "prepared `models/encoder.onnx`, `models/model.webnn`: did you mean \
                 `models/model.webnn`?"
            ),
            "{text}"
        );
        let text = message("modles/model.webnn", &["models/model.webnn"]);
        assert!(
            text.contains("did you mean `models/model.webnn`?"),
            "{text}"
        );
        // The same file name in two folders: the nearer path.
        let text = message(
            "decoder/model.webnn",
            &["encoder/model.webnn", "models/model.webnn"],
        );
        assert!(
            text.contains("did you mean `encoder/model.webnn`?"),
            "{text}"
        );
    }

    #[test]
    fn a_new_graph_gets_the_build_line() {
        let text = message("models/classifier.webnn", &["models/model.webnn"]);
        assert!(!text.contains("did you mean"), "{text}");
        assert!(
            text.ends_with(
                "; this run of the build script prepared `models/model.webnn`; to embed \
                 another graph, add this line to build.rs: \
                 `webnn_weights_build::compile_or_exit(\"models/classifier.webnn\");` (the path \
                 must be the same string)"
            ),
            "{text}"
        );
        let text = message("models/model.webnn", &[]);
        assert!(
            text.ends_with(
                "; this run of the build script prepared no graph; add this line to build.rs: \
                 `webnn_weights_build::compile_or_exit(\"models/model.webnn\");` (the path \
                 must be the same string)"
            ),
            "{text}"
        );
    }
}
