//! The build script's environment, read in one place, once per `Builder::compile`: what
//! cargo sets for build scripts and the embedding switch.
//! Everything below takes these values as arguments, so that no other module reads a
//! variable (and tests set values, not the process environment).

use crate::target::Target;
use crate::Error;
use std::path::PathBuf;

/// The environment variable that switches embedding off (`0`, `false`, `off`, `no`) or forces
/// the portable path (`include-bytes`) while building.
pub(crate) const EMBED_ENV: &str = "WEBNN_WEIGHTS_EMBED";

/// What [`EMBED_ENV`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmbedSwitch {
    /// Unset, or any other value: the builder's settings decide.
    Default,
    /// `0`, `false`, `off`, `no`: nothing embedded.
    Off,
    /// `include-bytes`: the portable path.
    IncludeBytes,
}

impl EmbedSwitch {
    /// The switch of a value of [`EMBED_ENV`].
    pub fn parse(value: &str) -> EmbedSwitch {
        match value.trim().to_ascii_lowercase().as_str() {
            "0" | "false" | "off" | "no" => EmbedSwitch::Off,
            "include-bytes" => EmbedSwitch::IncludeBytes,
            _ => EmbedSwitch::Default,
        }
    }
}

/// The values a build reads from its environment.
#[derive(Debug)]
pub(crate) struct BuildEnv {
    /// The package root (`CARGO_MANIFEST_DIR`, or the builder's `package_dir`).
    pub package_dir: PathBuf,
    /// `OUT_DIR`, or the builder's `out_dir`.
    pub out_dir: PathBuf,
    /// [`EMBED_ENV`].
    pub embed: EmbedSwitch,
    /// `CARGO_PKG_NAME` and `CARGO_PKG_VERSION` (part of the data symbol's name).
    pub package: (String, String),
    /// The target (cargo's `CARGO_CFG_TARGET_*`, or the builder's `target`).
    pub target: Target,
}

impl BuildEnv {
    /// Reads every variable a build uses; `package_dir`, `out_dir` and `target` given by the
    /// builder take the place of cargo's.
    pub fn read(
        package_dir: Option<&PathBuf>,
        out_dir: Option<&PathBuf>,
        target: Option<&Target>,
    ) -> Result<BuildEnv, Error> {
        let path = |given: Option<&PathBuf>, var: &'static str| match given {
            Some(path) => Ok(path.clone()),
            None => std::env::var_os(var)
                .map(PathBuf::from)
                .ok_or(Error::MissingEnv(var)),
        };
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        Ok(BuildEnv {
            package_dir: path(package_dir, "CARGO_MANIFEST_DIR")?,
            out_dir: path(out_dir, "OUT_DIR")?,
            embed: EmbedSwitch::parse(&var(EMBED_ENV)),
            package: (var("CARGO_PKG_NAME"), var("CARGO_PKG_VERSION")),
            target: target.cloned().unwrap_or_else(Target::from_env),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_reads_as_documented() {
        for off in ["0", "false", "OFF", " no "] {
            assert_eq!(EmbedSwitch::parse(off), EmbedSwitch::Off, "{off}");
        }
        assert_eq!(
            EmbedSwitch::parse("include-bytes"),
            EmbedSwitch::IncludeBytes
        );
        for default in ["", "1", "yes", "static"] {
            assert_eq!(
                EmbedSwitch::parse(default),
                EmbedSwitch::Default,
                "{default}"
            );
        }
    }
}
