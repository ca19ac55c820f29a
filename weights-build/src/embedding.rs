//! How the constants' bytes reach the program: the [`Embedding`] for a build (from the
//! builder's settings, [`EMBED_ENV`] and the target) and the data symbol it is linked by.

use crate::env::EmbedSwitch;
#[cfg(doc)]
use crate::env::EMBED_ENV;
use crate::object::ObjectTarget;
use crate::target::Target;
use crate::Error;
use webnn_weights_artifacts::{self as artifacts, Mode};

/// How the constants' bytes reach the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// A static library with an object file written by the build script, linked with
    /// `cargo:rustc-link-lib=static:-bundle=…`: rustc never sees the bytes. For x86-64 and
    /// AArch64 on ELF (Linux, Android, the BSDs, illumos, Fuchsia), macOS (Mach-O) and
    /// Windows (COFF: `x86_64-pc-windows-gnu`, `x86_64-pc-windows-msvc`,
    /// `aarch64-pc-windows-msvc`); see docs/embedding.md, "Platforms".
    StaticLib,
    /// A 64-byte aligned `include_bytes!` of `data.bin`: works on every target, but rustc
    /// carries the bytes (slow and memory-hungry above a few hundred MiB, fails above about
    /// 1 GiB per crate).
    IncludeBytes,
    /// Nothing embedded: the program resolves the original sidecar on first use, with the
    /// same checks (fast builds of large models during development).
    Runtime,
}

impl Embedding {
    /// The index's `mode` for this embedding.
    pub(crate) fn mode(self) -> Mode {
        match self {
            Embedding::StaticLib => Mode::StaticLib,
            Embedding::IncludeBytes => Mode::IncludeBytes,
            Embedding::Runtime => Mode::Runtime,
        }
    }
}

/// The embedding for a build: `forced` [`Embedding::Runtime`] or [`EMBED_ENV`] off gives
/// [`Embedding::Runtime`]; [`EMBED_ENV`]`=include-bytes`, then `forced`, then the target's
/// default (the static library where a writer exists) decide the rest. Returns the
/// object writer when the static library is chosen.
pub(crate) fn choose(
    forced: Option<Embedding>,
    switch: EmbedSwitch,
    target: &Target,
) -> Result<(Embedding, Option<ObjectTarget>), Error> {
    let writer = ObjectTarget::for_target(target);
    if forced == Some(Embedding::Runtime) || switch == EmbedSwitch::Off {
        return Ok((Embedding::Runtime, None));
    }
    let forced = if switch == EmbedSwitch::IncludeBytes {
        Some(Embedding::IncludeBytes)
    } else {
        forced
    };
    match forced {
        Some(Embedding::Runtime) => Ok((Embedding::Runtime, None)),
        Some(Embedding::IncludeBytes) => Ok((Embedding::IncludeBytes, None)),
        Some(Embedding::StaticLib) => match writer {
            Some(w) => Ok((Embedding::StaticLib, Some(w))),
            None => Err(Error::UnsupportedTarget(target.triple().to_string())),
        },
        None => Ok(match writer {
            Some(w) => (Embedding::StaticLib, Some(w)),
            None => (Embedding::IncludeBytes, None),
        }),
    }
}

/// The name Rust code declares for a graph's data (`#[link_name]`; the object spells it for
/// its format). It depends only on what is the same wherever the package and the target
/// folder are — the package's name and version, the artifact key (from the graph's path
/// relative to the package root), the target and the embedding — so builds are reproducible,
/// and it differs between two packages embedding a graph at the same relative path and
/// between two targets of one package.
pub(crate) fn data_symbol(
    key: &str,
    target: &Target,
    embedding: Embedding,
    (package, version): (&str, &str),
) -> String {
    let seed = [
        package,
        version,
        key,
        target.triple(),
        embedding.mode().as_str(),
    ]
    .join("\0");
    let digest = hmac_sha256::Hash::hash(seed.as_bytes());
    format!("webnn_weights_data_{}", artifacts::hex(&digest[..8]))
}
