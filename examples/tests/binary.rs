//! What an application that only reads an embedded graph's constants carries: the constant
//! table's decoder, and none of the resolver (`src/bin/infer.rs`).

use object::{Object, ObjectSymbol, SymbolKind};
use webnn_weights_examples::TINY_MLP;

/// The names of the functions and data in the `infer` binary (mangled; a Rust path's
/// segments appear in them verbatim under both manglings). Not the file symbols: the linker
/// lists every object file it opened, also those whose code it then dropped.
fn symbols() -> Option<Vec<String>> {
    let path = env!("CARGO_BIN_EXE_infer");
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let file = object::File::parse(&*bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    if file.format() != object::BinaryFormat::Elf {
        // PE keeps its symbols in a separate PDB; Mach-O is not checked here.
        eprintln!("skipped: {path} is not ELF");
        return None;
    }
    let names: Vec<String> = file
        .symbols()
        .filter(|s| matches!(s.kind(), SymbolKind::Text | SymbolKind::Data))
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    assert!(!names.is_empty(), "{path} has no symbol table (stripped?)");
    Some(names)
}

#[test]
fn an_embedded_graph_links_no_resolver() {
    let Some(names) = symbols() else { return };
    let count = |part: &str| names.iter().filter(|n| n.contains(part)).count();
    // Present in either mode (the accessors `infer` calls): the symbol table names what
    // the binary holds.
    assert!(
        count("EmbeddedGraph") > 0,
        "no method of `EmbeddedGraph` is linked into infer"
    );
    // This test process was built with the same settings as `infer`: an embedding build
    // links no run-time resolution, a run-time build (`WEBNN_WEIGHTS_EMBED=0`) does.
    if TINY_MLP.is_embedded() {
        for part in [
            "resolve_at_run_time",
            "plan_external_weights",
            "safetensors",
            "serde_json",
            "memmap2",
        ] {
            let found: Vec<&String> = names.iter().filter(|n| n.contains(part)).collect();
            assert!(found.is_empty(), "infer links `{part}`: {found:#?}");
        }
    } else {
        assert!(count("resolve_at_run_time") > 0);
        assert!(count("plan_external_weights") > 0);
    }
}
