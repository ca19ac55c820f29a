//! `WEBNN_WEIGHTS_EMBED` while building. One test in its own binary: it changes the
//! process environment.

use std::path::Path;
use webnn_weights_build::{Builder, Embedding};

#[test]
fn embed_env_switches_mode() {
    let pkg = tempfile::tempdir().unwrap();
    std::fs::create_dir(pkg.path().join("models")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/packed4");
    for name in ["quant.webnn", "quant.safetensors"] {
        std::fs::copy(fixtures.join(name), pkg.path().join("models").join(name)).unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let mode = |builder: Builder| {
        builder
            .package_dir(pkg.path())
            .out_dir(out.path())
            .emit_directives(false)
            .compile()
            .unwrap()
            .embedding()
    };
    let b = || Builder::new("models/quant.webnn");
    std::env::remove_var("WEBNN_WEIGHTS_EMBED");
    assert_eq!(mode(b()), Embedding::StaticLib);
    assert_eq!(mode(b().embedding(Embedding::Runtime)), Embedding::Runtime);
    for off in ["0", "false", "OFF", " no "] {
        std::env::set_var("WEBNN_WEIGHTS_EMBED", off);
        assert_eq!(mode(b()), Embedding::Runtime, "{off:?}");
        assert_eq!(
            mode(b().embedding(Embedding::StaticLib)),
            Embedding::Runtime
        );
    }
    std::env::set_var("WEBNN_WEIGHTS_EMBED", "include-bytes");
    assert_eq!(mode(b()), Embedding::IncludeBytes);
    assert_eq!(
        mode(b().embedding(Embedding::StaticLib)),
        Embedding::IncludeBytes
    );
    // Run time asked for in build.rs stays run time.
    assert_eq!(mode(b().embedding(Embedding::Runtime)), Embedding::Runtime);
    for on in ["1", "", "auto"] {
        std::env::set_var("WEBNN_WEIGHTS_EMBED", on);
        assert_eq!(mode(b()), Embedding::StaticLib, "{on:?}");
        assert_eq!(
            mode(b().embedding(Embedding::IncludeBytes)),
            Embedding::IncludeBytes
        );
    }
    std::env::remove_var("WEBNN_WEIGHTS_EMBED");
}
