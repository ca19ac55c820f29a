//! Graphs embedded at build time: [`EmbeddedGraph`] and [`EmbeddedConstant`].
//!
//! An `EmbeddedGraph` is what [`include_webnn_graph!`](crate::include_webnn_graph) expands
//! to. It is built by a `const` expression, so it lives in a `static`:
//!
//! ```ignore
//! static MODEL: webnn_weights_runtime::EmbeddedGraph =
//!     webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
//! ```
//!
//! It has two modes, chosen by the build script (`webnn-weights-build`):
//!
//! - **embedded** (the default): the constants' bytes are part of the binary. Every constant
//!   starts on a 64-byte boundary, so the typed views ([`EmbeddedConstant::as_f32`], …) are
//!   zero-copy on little-endian targets. Through a static library (the default where the
//!   target has one), the constant table and the graph JSON are linked with the data, so the
//!   crate that expands the macro compiles as fast whatever the graph's size; the first use
//!   checks that the library's end symbol is the linked length after its start symbol
//!   (every object format has both). That check, and the parsing of the linked table and
//!   graph JSON, can fail at run time: when a linker option moved the library's sections
//!   (a symbol ordering file, section sorting or shuffling, a linker script), or when the
//!   artifacts were damaged. Through `include_bytes!` (`Embedding::IncludeBytes`, and targets
//!   without a static library) the macro checks the constant table against the data while
//!   expanding, so only a damaged graph JSON can fail at run time.
//! - **run time** (`Builder::embedding(Embedding::Runtime)` or `WEBNN_WEIGHTS_EMBED=0` while
//!   building): the binary holds only the graph structure and the sidecar's location; the first
//!   call that needs a constant resolves the sidecar with the same rules and checks as
//!   [`load_graph`](crate::load_graph), once, and keeps the result (64-byte aligned as well).
//!   With the feature `mmap`, like [`load_graph_mapped`](crate::load_graph_mapped), it maps
//!   the sidecar read-only: constants stored at a 64-byte aligned offset that need no
//!   conversion are views into the mapping (nothing is read until used); the others (BF16
//!   widened to float32, unaligned ranges) are read into one 64-byte aligned buffer. Without
//!   the feature `mmap` (and on wasm32, which cannot map files) nothing is mapped and every
//!   constant is read into that buffer. Mapping and buffer are kept for the rest of the
//!   process, so with a mapping [the mapping contract](crate::GraphLoader::mapped) applies
//!   while the program runs: do not truncate or rewrite the sidecar in place (a truncated
//!   file makes reads of the lost pages fault, `SIGBUS` on Unix); install a new one by
//!   renaming it into place. On Windows the system refuses to truncate a mapped file (and
//!   may refuse to replace or delete it) while the program runs.
//!   Resolution can fail (a sidecar deleted or changed since the build).
//!
//! Which accessors can fail, and so which infallible ones can panic, in which mode: see
//! [`EmbeddedGraph`]'s "Panics".
//!
//! The graph structure ([`EmbeddedGraph::name`], [`inputs`](EmbeddedGraph::inputs),
//! [`nodes`](EmbeddedGraph::nodes), [`outputs`](EmbeddedGraph::outputs)) never touches the
//! weights in either mode, and [`EmbeddedGraph::to_graph_json`] copies no weight byte in
//! either: its constants are [`Bytes::from_static`] views of the bytes above.

use crate::graph::{ConstInit, GraphJson, Node, OperandDesc};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use webnn_weights_artifacts::DATA_ALIGN;

pub mod abi;
mod constant;
mod error;
mod linked;
#[cfg(feature = "load")]
mod runtime;

use constant::decode_table;
pub use constant::EmbeddedConstant;
pub use error::{EmbedError, EmbedErrorKind};
use linked::{part, Linked};

use abi::Parts;

/// The alignment of every embedded constant, in bytes (the artifact contract's
/// `DATA_ALIGN`).
pub const CONSTANT_ALIGNMENT: usize = DATA_ALIGN as usize;

#[derive(Debug)]
enum Source {
    /// Data and table given as slices (`include_bytes!`), the graph JSON as text.
    Included {
        graph_json: &'static str,
        data: &'static [u8],
        /// A `webnn_weights_artifacts::ConstantTable`, parsed on first use.
        table: &'static [u8],
    },
    /// Data, table and graph JSON in the bytes a static library links, at `parts`.
    Linked { bytes: Linked, parts: Parts },
    #[cfg(feature = "load")]
    Runtime {
        graph_json: &'static str,
        graph_path: &'static str,
        weights: Option<&'static str>,
        manifest: Option<&'static str>,
        lock: Option<&'static str>,
        /// The resolver, reached only through this pointer: a binary whose graphs are all
        /// embedded links none of it (a direct call in the `match` of
        /// `EmbeddedGraph::load_constants` would keep the resolver and its dependencies in
        /// every binary).
        resolve: Resolver,
    },
}

/// Resolves an [`EmbeddedGraph`]'s constants from its sidecar: the graph, then its
/// `graph_path`, `weights`, `manifest` and `lock` as the macro recorded them.
#[cfg(feature = "load")]
type Resolver = fn(
    &'static EmbeddedGraph,
    &'static str,
    [Option<&'static str>; 3],
) -> Result<Vec<EmbeddedConstant>, EmbedError>;

/// A graph prepared by `webnn-weights-build` and embedded by
/// [`include_webnn_graph!`](crate::include_webnn_graph): the graph structure plus every
/// `@weights` constant's bytes, checked at build time.
///
/// All accessors take `&'static self`: the value is meant to live in a `static`.
///
/// # Panics
///
/// Every failure is an [`EmbedError`] from a `try_*` accessor; the infallible accessors
/// **panic with the error's message** on the same failures, which depend on the mode:
///
/// | accessors | static library | `include_bytes!` | run time |
/// |---|---|---|---|
/// | [`graph`](EmbeddedGraph::graph), [`name`](EmbeddedGraph::name), [`inputs`](EmbeddedGraph::inputs), [`nodes`](EmbeddedGraph::nodes), [`outputs`](EmbeddedGraph::outputs) | placement check failed; graph JSON damaged | graph JSON damaged | graph JSON damaged |
/// | [`constants`](EmbeddedGraph::constants), [`constant`](EmbeddedGraph::constant) | placement check failed; constant table damaged | never | graph JSON damaged; sidecar not resolved (missing, or changed since the build) |
/// | [`to_graph_json`](EmbeddedGraph::to_graph_json) | either row's | graph JSON damaged | either row's |
///
/// The placement check, on first use in every object format, is that the library's end
/// symbol is the linked length after its start symbol: a linker option that moves the
/// library's sections (a symbol ordering file, section sorting or shuffling, a linker
/// script) fails it. "Damaged" means changed after the build script wrote the artifacts
/// (the macro embeds the graph JSON unparsed, and reads neither it nor the table of a
/// static library; it checks the `include_bytes!` table against the data, hence "never"),
/// or a value built by hand through the macro's hidden constructors.
pub struct EmbeddedGraph {
    label: &'static str,
    source: Source,
    // Both kept by reference (built once, then leaked: the value lives in a `static` and its
    // state for the rest of the process anyway). A `static` whose type owns a `GraphJson`
    // makes rustc collect that type's whole drop glue in every crate that declares one; by
    // reference, the crate that expands `include_webnn_graph!` compiles as fast as one
    // without our crates (measured in docs/benchmarks.md).
    graph: OnceLock<&'static Result<GraphJson, EmbedError>>,
    constants: OnceLock<&'static Result<Vec<EmbeddedConstant>, EmbedError>>,
}

impl fmt::Debug for EmbeddedGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddedGraph")
            .field("graph", &self.label)
            .field("embedded", &self.is_embedded())
            .finish_non_exhaustive()
    }
}

impl EmbeddedGraph {
    /// The value every constructor makes: nothing parsed or loaded yet.
    const fn new(label: &'static str, source: Source) -> EmbeddedGraph {
        EmbeddedGraph {
            label,
            source,
            graph: OnceLock::new(),
            constants: OnceLock::new(),
        }
    }

    /// The graph path as written in `include_webnn_graph!`.
    pub fn path(&self) -> &'static str {
        self.label
    }

    /// Whether the weights are part of the binary (`false`: resolved at run time).
    pub fn is_embedded(&self) -> bool {
        match self.source {
            #[cfg(feature = "load")]
            Source::Runtime { .. } => false,
            _ => true,
        }
    }

    /// The graph JSON's bytes: given, or a range of the linked bytes.
    fn graph_json(&self) -> Result<&'static [u8], EmbedErrorKind> {
        match &self.source {
            Source::Included { graph_json, .. } => Ok(graph_json.as_bytes()),
            #[cfg(feature = "load")]
            Source::Runtime { graph_json, .. } => Ok(graph_json.as_bytes()),
            Source::Linked { bytes, parts } => part(bytes.bytes()?, parts.graph, "graph JSON"),
        }
    }

    /// The graph structure; `@weights` constants still carry their references. Never reads
    /// weights.
    ///
    /// Fails through a static library when the linker did not place the linked bytes as
    /// the build script wrote them (the end symbol is not the linked length after the start
    /// symbol), and in every mode when the graph JSON is damaged (see [`EmbeddedGraph`]'s
    /// "Panics").
    pub fn try_graph(&'static self) -> Result<&'static GraphJson, EmbedError> {
        self.graph
            .get_or_init(|| {
                let parsed = self.graph_json().and_then(|json| {
                    serde_json::from_slice(json)
                        .map_err(|e| EmbedErrorKind::GraphJson(e.to_string()))
                });
                Box::leak(Box::new(parsed.map_err(|kind| self.error(kind))))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The graph structure (see [`EmbeddedGraph::try_graph`]).
    ///
    /// # Panics
    /// With the error's message when [`EmbeddedGraph::try_graph`] fails: through a static
    /// library when the placement check fails, and in every mode when the graph JSON was
    /// damaged after the build script wrote it (see [`EmbeddedGraph`]'s "Panics").
    pub fn graph(&'static self) -> &'static GraphJson {
        match self.try_graph() {
            Ok(graph) => graph,
            Err(err) => panic!("{}", crate::Report::new(&err)),
        }
    }

    /// The graph's name, if it has one.
    ///
    /// # Panics
    /// As [`EmbeddedGraph::graph`]; so do [`inputs`](EmbeddedGraph::inputs),
    /// [`nodes`](EmbeddedGraph::nodes) and [`outputs`](EmbeddedGraph::outputs).
    pub fn name(&'static self) -> Option<&'static str> {
        self.graph().name.as_deref()
    }

    /// The graph inputs by name.
    pub fn inputs(&'static self) -> &'static BTreeMap<String, OperandDesc> {
        &self.graph().inputs
    }

    /// The operations, in order.
    pub fn nodes(&'static self) -> &'static [Node] {
        &self.graph().nodes
    }

    /// Output binding -> operand name.
    pub fn outputs(&'static self) -> &'static BTreeMap<String, String> {
        &self.graph().outputs
    }

    /// Every `@weights` constant, sorted by name; resolves the sidecar on first use in
    /// run-time mode.
    pub fn try_constants(&'static self) -> Result<&'static [EmbeddedConstant], EmbedError> {
        self.constants
            .get_or_init(|| Box::leak(Box::new(self.load_constants())))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// Every `@weights` constant, sorted by name.
    ///
    /// # Panics
    /// With the error's message when [`EmbeddedGraph::try_constants`] fails: in run-time mode
    /// when the sidecar cannot be resolved (or the graph JSON is damaged); through a static
    /// library when the placement check fails or the linked constant table is damaged; never
    /// through `include_bytes!` (the macro checks the table against the data), except for a
    /// hand-built value (see [`EmbeddedGraph`]'s "Panics"). Use
    /// [`EmbeddedGraph::try_constants`] to handle those cases.
    pub fn constants(&'static self) -> &'static [EmbeddedConstant] {
        match self.try_constants() {
            Ok(constants) => constants,
            Err(err) => panic!("{}", crate::Report::new(&err)),
        }
    }

    /// The `@weights` constant called `name`, if there is one.
    pub fn try_constant(
        &'static self,
        name: &str,
    ) -> Result<Option<&'static EmbeddedConstant>, EmbedError> {
        let constants = self.try_constants()?;
        Ok(constants
            .binary_search_by(|c| c.name().cmp(name))
            .ok()
            .map(|i| &constants[i]))
    }

    /// The `@weights` constant called `name`, if there is one.
    ///
    /// # Panics
    /// As [`EmbeddedGraph::constants`].
    pub fn constant(&'static self, name: &str) -> Option<&'static EmbeddedConstant> {
        match self.try_constant(name) {
            Ok(constant) => constant,
            Err(err) => panic!("{}", crate::Report::new(&err)),
        }
    }

    /// The whole graph with every `@weights` constant replaced by its bytes
    /// (`ConstInit::InlineBytes`), equal to what [`load_graph`](crate::load_graph) returns
    /// for the same files.
    ///
    /// No weight byte is copied: each constant is a [`Bytes::from_static`] view of
    /// [`EmbeddedConstant::bytes`] (the binary's data, or in run-time mode the kept mapping
    /// or buffer), so the result costs the graph structure only, and so do its clones.
    ///
    /// ```ignore
    /// static MODEL: webnn_weights_runtime::EmbeddedGraph =
    ///     webnn_weights_runtime::include_webnn_graph!("models/model.webnn");
    /// let graph = MODEL.to_graph_json();
    /// let webnn_weights_runtime::ConstInit::InlineBytes { bytes } = &graph.consts["w"].init
    /// else { unreachable!() };
    /// assert_eq!(bytes.as_ptr(), MODEL.constant("w").unwrap().bytes().as_ptr());
    /// ```
    pub fn try_to_graph_json(&'static self) -> Result<GraphJson, EmbedError> {
        let mut graph = self.try_graph()?.clone();
        for constant in self.try_constants()? {
            match graph.consts.get_mut(constant.name()) {
                Some(decl) => {
                    decl.init = ConstInit::InlineBytes {
                        bytes: Bytes::from_static(constant.bytes()),
                    }
                }
                None => {
                    return Err(self.error(EmbedErrorKind::Inconsistent(format!(
                        "constant `{}` is not declared by the graph",
                        constant.name()
                    ))))
                }
            }
        }
        Ok(graph)
    }

    /// See [`EmbeddedGraph::try_to_graph_json`].
    ///
    /// # Panics
    /// As [`EmbeddedGraph::graph`] and as [`EmbeddedGraph::constants`].
    pub fn to_graph_json(&'static self) -> GraphJson {
        match self.try_to_graph_json() {
            Ok(graph) => graph,
            Err(err) => panic!("{}", crate::Report::new(&err)),
        }
    }

    fn error(&self, kind: EmbedErrorKind) -> EmbedError {
        EmbedError {
            graph: self.label.to_string(),
            kind: Arc::new(kind),
        }
    }

    fn load_constants(&'static self) -> Result<Vec<EmbeddedConstant>, EmbedError> {
        match &self.source {
            Source::Included { data, table, .. } => {
                decode_table(data, table).map_err(|kind| self.error(kind))
            }
            Source::Linked { bytes, parts } => {
                let linked = |bytes: &Linked| {
                    let bytes = bytes.bytes()?;
                    let data = part(bytes, (0, parts.data), "data")?;
                    decode_table(data, part(bytes, parts.table, "constant table")?)
                };
                linked(bytes).map_err(|kind| self.error(kind))
            }
            #[cfg(feature = "load")]
            Source::Runtime {
                graph_path,
                weights,
                manifest,
                lock,
                resolve,
                ..
            } => resolve(self, graph_path, [*weights, *manifest, *lock]),
        }
    }

    /// The [`Resolver`] of `abi::runtime`: the constants resolved from the sidecar.
    #[cfg(feature = "load")]
    fn resolve_at_run_time(
        &'static self,
        graph_path: &'static str,
        paths: [Option<&'static str>; 3],
    ) -> Result<Vec<EmbeddedConstant>, EmbedError> {
        let graph = self.try_graph()?;
        runtime::resolve(graph, graph_path, paths).map_err(|kind| self.error(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::dtype::DataType;
    use constant::byte_order_fits;
    use runtime::leak_aligned_zeroed;
    use std::borrow::Cow;
    use webnn_weights_artifacts::{ConstantTable, TableRow};

    #[test]
    fn one_byte_views_need_no_byte_order() {
        assert!(byte_order_fits::<u8>() && byte_order_fits::<i8>());
        assert_eq!(byte_order_fits::<f32>(), cfg!(target_endian = "little"));
        assert_eq!(byte_order_fits::<u64>(), cfg!(target_endian = "little"));
    }

    const GRAPH: &str = r#"{"format":"webnn-graph-json","version":2,"name":"t",
        "inputs":{"x":{"dataType":"float32","shape":[2]}},
        "consts":{
          "a":{"dataType":"float32","shape":[2],"init":{"kind":"weights","ref":"A"}},
          "b":{"dataType":"int8","shape":[3],"init":{"kind":"weights","ref":"B"}},
          "s":{"dataType":"float32","shape":[],"init":{"kind":"scalar","value":1.5}}},
        "nodes":[{"id":"y","op":"add","inputs":["x","a"]}],
        "outputs":{"y":"y"}}"#;

    static DATA: &abi::Aligned<[u8; 128]> = &abi::Aligned({
        let mut data = [0u8; 128];
        // a = [1.0f32, 2.0] at 0, b = [1i8, -1, 3] at 64
        let head = [0, 0, 128, 63, 0, 0, 0, 64];
        let mut i = 0;
        while i < head.len() {
            data[i] = head[i];
            i += 1;
        }
        data[64] = 1;
        data[65] = 255;
        data[66] = 3;
        data
    });

    fn rows(b_offset: u64) -> [TableRow<'static>; 2] {
        [
            TableRow {
                name: "a",
                reference: "A",
                data_type: DataType::Float32,
                shape: &[2],
                offset: 0,
                length: 8,
                sha256: None,
            },
            TableRow {
                name: "b",
                reference: "B",
                data_type: DataType::Int8,
                shape: &[3],
                offset: b_offset,
                length: 3,
                sha256: None,
            },
        ]
    }

    /// A table as the build helper writes it, 64-byte aligned as the macro embeds it.
    fn aligned_table(bytes: &[u8]) -> &'static [u8] {
        let table = leak_aligned_zeroed(bytes.len()).unwrap();
        table.copy_from_slice(bytes);
        table
    }

    fn embedded(label: &'static str, data: &'static [u8], table: &[u8]) -> &'static EmbeddedGraph {
        let table = aligned_table(table);
        Box::leak(Box::new(abi::embedded(label, GRAPH, data, table)))
    }

    #[test]
    fn embedded_views_and_graph() {
        let table = ConstantTable::encode(&rows(64), 128).unwrap();
        let embedded = embedded("t.webnn", &DATA.0, &table);
        assert!(embedded.is_embedded());
        assert_eq!(embedded.name(), Some("t"));
        assert_eq!(embedded.inputs().len(), 1);
        assert_eq!(embedded.nodes()[0].op, "add");
        assert_eq!(embedded.outputs()["y"], "y");
        let a = embedded.constant("a").unwrap();
        assert_eq!(a.as_f32(), Some(&[1.0f32, 2.0][..]));
        assert_eq!(a.reference(), "A");
        assert_eq!(a.shape(), &[2]);
        if cfg!(target_endian = "little") {
            // Borrowed from the table, not decoded.
            assert!(matches!(a.shape, Cow::Borrowed(_)));
        }
        assert!(a.as_u32().is_none());
        #[cfg(feature = "f16")]
        assert!(a.as_f16().is_none());
        let b = embedded.constant("b").unwrap();
        assert_eq!(b.as_i8(), Some(&[1i8, -1, 3][..]));
        assert_eq!(b.bytes().as_ptr() as usize % 64, 0);
        assert!(embedded.constant("s").is_none(), "scalars are not external");
        assert!(std::ptr::eq(embedded.constants(), embedded.constants()));
        let json = embedded.to_graph_json();
        assert_eq!(
            json.consts["a"].init,
            ConstInit::InlineBytes {
                bytes: vec![0, 0, 128, 63, 0, 0, 0, 64].into()
            }
        );
        let ConstInit::InlineBytes { bytes } = &json.consts["a"].init else {
            unreachable!()
        };
        assert_eq!(bytes.as_ptr(), a.bytes().as_ptr(), "no copy");
        assert_eq!(bytes.as_ptr(), DATA.0.as_ptr());
        assert!(matches!(json.consts["s"].init, ConstInit::Scalar { .. }));
        assert!(format!("{embedded:?}").contains("t.webnn"));
    }

    #[test]
    fn unaligned_tables_decode_their_shapes() {
        let table = ConstantTable::encode(&rows(64), 128).unwrap();
        let mut shifted = vec![0u8; table.len() + 1];
        shifted[1..].copy_from_slice(&table);
        let leaked: &'static [u8] = Box::leak(shifted.into_boxed_slice());
        let graph = Box::leak(Box::new(abi::embedded(
            "u.webnn",
            GRAPH,
            &DATA.0,
            &leaked[1..],
        )));
        assert_eq!(graph.constant("b").unwrap().shape(), &[3]);
    }

    /// What a static library links: DATA, the table of `rows(64)` at 128, the graph JSON
    /// after it (leaked once, 64-byte aligned), with the parts the macro would pass.
    fn linked_bytes() -> (&'static [u8], Parts) {
        static LINKED: std::sync::OnceLock<(&'static [u8], Parts)> = std::sync::OnceLock::new();
        *LINKED.get_or_init(|| {
            let table = ConstantTable::encode(&rows(64), 128).unwrap();
            let table_end = 128 + table.len().next_multiple_of(64);
            let mut all = DATA.0.to_vec();
            all.extend_from_slice(&table);
            all.resize(table_end, 0);
            all.extend_from_slice(GRAPH.as_bytes());
            all.resize(all.len().next_multiple_of(64), 0);
            let parts = Parts {
                data: 128,
                table: (128, table.len()),
                graph: (table_end, GRAPH.len()),
            };
            (aligned_table(&all), parts)
        })
    }

    /// The symbols' addresses as the macro's expansion returns them: the first linked byte,
    /// just past the last, and 64 bytes short of that (a section the linker misplaced).
    fn start() -> *const u8 {
        linked_bytes().0.as_ptr()
    }
    fn end() -> *const u8 {
        linked_bytes().0.as_ptr_range().end
    }
    fn end_short() -> *const u8 {
        end().wrapping_sub(64)
    }

    /// A graph over the linked bytes, with `parts`, whose end symbol is `end`.
    fn linked(label: &'static str, end: fn() -> *const u8, parts: Parts) -> &'static EmbeddedGraph {
        let len = linked_bytes().0.len();
        Box::leak(Box::new(abi::linked(label, start, end, len, parts)))
    }

    #[test]
    fn linked_bytes_must_end_at_their_end_symbol() {
        let (bytes, parts) = linked_bytes();
        let whole = linked("whole.webnn", end, parts);
        assert!(whole.is_embedded());
        assert_eq!(whole.name(), Some("t"));
        assert_eq!(
            whole.constant("b").unwrap().as_i8(),
            Some(&[1i8, -1, 3][..])
        );
        assert_eq!(
            whole.constant("a").unwrap().bytes().as_ptr() as usize % 64,
            0
        );
        // The sections not back to back (one dropped or moved): no byte is handed out.
        let split = linked("split.webnn", end_short, parts);
        let len = bytes.len();
        let err = split.try_constants().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "embedded graph `split.webnn`: the linker did not place the {len} embedded bytes \
                 in one piece: the symbol past them is {} bytes from their start, not {len} (a \
                 linker option reordered or dropped the sections of the static library: a symbol \
                 ordering file, a section sorting or shuffling option, or a linker script; \
                 remove it for this library, or build with `Embedding::IncludeBytes`)",
                len - 64
            )
        );
        assert!(split.try_constant("a").is_err());
        assert!(split.try_to_graph_json().is_err());
        assert_eq!(split.try_graph().unwrap_err().to_string(), err.to_string());
    }

    #[test]
    fn one_symbol_holds_data_table_and_graph() {
        let (bytes, parts) = linked_bytes();
        let graph = linked("one.webnn", end, parts);
        assert_eq!(graph.outputs()["y"], "y");
        assert_eq!(
            graph.constant("a").unwrap().as_f32(),
            Some(&[1.0f32, 2.0][..])
        );
        assert_eq!(graph.to_graph_json().consts.len(), 3);
        // A part past the end (a symbol shorter than its parts say): an error, not a panic.
        let cut = Parts {
            graph: (parts.graph.0, bytes.len()),
            ..parts
        };
        let cut = linked("cut.webnn", end, cut);
        assert_eq!(
            cut.try_graph().unwrap_err().to_string(),
            format!(
                "embedded graph `cut.webnn`: the graph JSON at {}..+{} is not within the {} \
                 linked bytes",
                parts.graph.0,
                bytes.len(),
                bytes.len()
            )
        );
        assert!(cut.try_constants().is_ok(), "data and table are whole");
        let no_table = Parts {
            table: (usize::MAX, 2),
            ..parts
        };
        let no_table = linked("t.webnn", end, no_table);
        assert!(no_table
            .try_constants()
            .unwrap_err()
            .to_string()
            .contains("constant table"));
    }

    static BAD_JSON: EmbeddedGraph = abi::embedded("j.webnn", "{", &[], &[]);

    #[test]
    fn damaged_descriptions_are_errors() {
        // A table laid out over more data than is embedded.
        let table = ConstantTable::encode(&rows(64), 128).unwrap();
        let short = embedded("bad.webnn", DATA.0.split_at(64).0, &table);
        let err = short.try_constants().unwrap_err();
        assert_eq!(
            err.to_string(),
            "embedded graph `bad.webnn`: the constant table describes 128 data bytes, the \
             data has 64"
        );
        assert_eq!(err.graph(), "bad.webnn");
        assert!(matches!(err.kind(), EmbedErrorKind::Inconsistent(_)));
        // A damaged entry: `b` moved outside the data.
        let mut bytes = table.clone();
        bytes[32 + 48 + 32] = 192;
        let moved = embedded("moved.webnn", &DATA.0, &bytes);
        let err = moved.try_constant("a").unwrap_err();
        assert!(err.to_string().contains("entry 1: constant `b`"), "{err}");
        // Truncated, or not a table at all.
        for damaged in [&table[..table.len() - 1], b"{}".as_slice()] {
            let graph = embedded("cut.webnn", &DATA.0, damaged);
            assert!(graph.try_constants().is_err());
            assert!(graph.try_to_graph_json().is_err());
        }
        let err = BAD_JSON.try_graph().unwrap_err();
        assert!(matches!(err.kind(), EmbedErrorKind::GraphJson(_)), "{err}");
        assert!(BAD_JSON.try_to_graph_json().is_err());
    }

    static MISSING: EmbeddedGraph = abi::runtime(
        "missing.webnn",
        GRAPH,
        "/nonexistent/webnn-weights/t.webnn",
        None,
        None,
        None,
    );

    #[test]
    fn runtime_errors_are_results_and_panic_messages() {
        assert!(!MISSING.is_embedded());
        // The structure needs no weights.
        assert_eq!(MISSING.name(), Some("t"));
        let err = MISSING.try_constants().unwrap_err();
        assert!(matches!(err.kind(), EmbedErrorKind::Resolve(_)), "{err}");
        assert!(err
            .to_string()
            .starts_with("embedded graph `missing.webnn`: "));
        // The same error again, from the kept result.
        assert_eq!(
            MISSING.try_constant("a").unwrap_err().to_string(),
            err.to_string()
        );
        // Catching the panic needs unwinding (wasm32 builds abort on panic).
        #[cfg(panic = "unwind")]
        {
            let panic = std::panic::catch_unwind(|| MISSING.constants().len()).unwrap_err();
            let message = panic.downcast_ref::<String>().unwrap();
            assert_eq!(message, &err.to_string());
        }
    }

    #[test]
    fn runtime_mode_maps_aligned_ranges_and_reads_the_rest() {
        const MAPPED: &str = r#"{"format":"webnn-graph-json","version":2,"inputs":{},
            "consts":{
              "p":{"dataType":"uint8","shape":[64],"init":{"kind":"weights","ref":"P"}},
              "q":{"dataType":"uint8","shape":[64],"init":{"kind":"weights","ref":"Q"}},
              "r":{"dataType":"uint8","shape":[3],"init":{"kind":"weights","ref":"R"}}},
            "nodes":[],"outputs":{}}"#;
        let dir = webnn_weights_test_support::tempdir().unwrap();
        let blob: Vec<u8> = (0..=255u8).collect();
        std::fs::write(dir.path().join("t.weights"), &blob).unwrap();
        std::fs::write(
            dir.path().join("t.manifest.json"),
            r#"{"tensors":{"P":{"byteOffset":0,"byteLength":64},
                "Q":{"byteOffset":128,"byteLength":64},
                "R":{"byteOffset":3,"byteLength":3}}}"#,
        )
        .unwrap();
        let graph_path = dir.path().join("t.webnn");
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let graph: &'static EmbeddedGraph = Box::leak(Box::new(abi::runtime(
            "t.webnn",
            MAPPED,
            leak(graph_path.display().to_string()),
            None,
            None,
            None,
        )));
        let [p, q, r] = ["p", "q", "r"].map(|n| graph.constant(n).unwrap().bytes());
        assert_eq!((p, q, r), (&blob[..64], &blob[128..192], &blob[3..6]));
        for bytes in [p, q, r] {
            assert_eq!(bytes.as_ptr() as usize % CONSTANT_ALIGNMENT, 0);
        }
        // `p` and `q` are views into one mapping of the file (128 bytes apart, as there);
        // in a read buffer they are 64 bytes apart: on wasm (no mapping) every constant is read.
        let apart = if cfg!(target_family = "wasm") {
            64
        } else {
            128
        };
        assert_eq!(q.as_ptr() as usize - p.as_ptr() as usize, apart);
        // The graph JSON shares those bytes and equals what the loaders return.
        let json = graph.to_graph_json();
        for (name, bytes) in [("p", p), ("q", q), ("r", r)] {
            let ConstInit::InlineBytes { bytes: inline } = &json.consts[name].init else {
                panic!("{name} not resolved")
            };
            assert_eq!(inline.as_ptr(), bytes.as_ptr(), "{name} was copied");
        }
        let mut loaded: GraphJson = serde_json::from_str(MAPPED).unwrap();
        crate::resolve_external_weights(&mut loaded, &graph_path, None, None).unwrap();
        assert_eq!(json, loaded);
    }

    #[test]
    fn run_time_buffers_are_aligned_and_zeroed() {
        for len in [0, 1, 63, 64, 65, 3 * CONSTANT_ALIGNMENT + 5] {
            let bytes = leak_aligned_zeroed(len).unwrap();
            assert_eq!(bytes.len(), len);
            assert_eq!(bytes.as_ptr() as usize % CONSTANT_ALIGNMENT, 0, "{len}");
            assert!(bytes.iter().all(|&b| b == 0));
        }
        assert!(leak_aligned_zeroed(usize::MAX).is_none());
    }
}
