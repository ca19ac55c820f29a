//! The target the build helper writes artifacts for, read once from cargo's description.

use std::fmt;

/// The object-file format a target's linker reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectFormat {
    /// ELF (Linux, Android, the BSDs, illumos, Fuchsia).
    Elf,
    /// Mach-O (Apple platforms).
    MachO,
    /// COFF (Windows).
    Coff,
    /// Anything else (WebAssembly, …): no object file is written for it.
    None,
}

/// Byte order of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

/// The target a build script builds for, as cargo describes it to build scripts.
///
/// Built once per [`Builder::compile`](crate::Builder::compile) from cargo's variables
/// (`CARGO_CFG_TARGET_OS`, `CARGO_CFG_TARGET_ARCH`, `CARGO_CFG_TARGET_ENV`,
/// `CARGO_CFG_TARGET_ENDIAN`, `CARGO_CFG_TARGET_POINTER_WIDTH`, and `TARGET` for messages),
/// never from the machine the build script runs on: a cross build gets the target's object
/// format. Outside cargo (a tool or a test calling the builder) a variable that is not set
/// falls back to the host's value.
///
/// Setting those variables as cargo would is a supported way to drive the builder for a
/// foreign target (the repository's `bench/platforms.sh` does that to write Windows and macOS
/// static libraries on Linux).
///
/// ```
/// use webnn_weights_build::{Endian, ObjectFormat, Target};
/// let vars = [
///     ("TARGET", "aarch64-apple-darwin"),
///     ("CARGO_CFG_TARGET_OS", "macos"),
///     ("CARGO_CFG_TARGET_ARCH", "aarch64"),
///     ("CARGO_CFG_TARGET_ENV", ""),
///     ("CARGO_CFG_TARGET_ENDIAN", "little"),
///     ("CARGO_CFG_TARGET_POINTER_WIDTH", "64"),
/// ];
/// let target = Target::from_vars(|name| {
///     vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
/// });
/// assert_eq!(target.object_format(), ObjectFormat::MachO);
/// assert_eq!(target.endian(), Endian::Little);
/// assert_eq!(target.pointer_width(), 64);
/// assert_eq!(target.triple(), "aarch64-apple-darwin");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    triple: String,
    os: String,
    arch: String,
    env: String,
    endian: Endian,
    pointer_width: u32,
}

impl Target {
    /// The target of the running build script: cargo's variables, each falling back to the
    /// host's value when it is not set.
    pub fn from_env() -> Target {
        Target::from_vars(|name| std::env::var(name).ok())
    }

    /// The target described by `var` (a lookup of cargo's variable names, such as
    /// `CARGO_CFG_TARGET_OS`); a name it does not know falls back to the host's value.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Target {
        let host = Target::host();
        let get = |name: &str, host: &str| var(name).unwrap_or_else(|| host.to_string());
        let os = get("CARGO_CFG_TARGET_OS", &host.os);
        let arch = get("CARGO_CFG_TARGET_ARCH", &host.arch);
        let env = get("CARGO_CFG_TARGET_ENV", &host.env);
        let endian = match var("CARGO_CFG_TARGET_ENDIAN").as_deref() {
            Some("big") => Endian::Big,
            Some(_) => Endian::Little,
            None => host.endian,
        };
        let pointer_width = var("CARGO_CFG_TARGET_POINTER_WIDTH")
            .and_then(|w| w.trim().parse().ok())
            .unwrap_or(host.pointer_width);
        let triple = var("TARGET").unwrap_or_else(|| {
            if env.is_empty() {
                format!("{arch}-{os}")
            } else {
                format!("{arch}-{os}-{env}")
            }
        });
        Target {
            triple,
            os,
            arch,
            env,
            endian,
            pointer_width,
        }
    }

    /// The machine this code runs on (the fallback outside cargo).
    fn host() -> Target {
        let env = if cfg!(target_env = "gnu") {
            "gnu"
        } else if cfg!(target_env = "msvc") {
            "msvc"
        } else if cfg!(target_env = "musl") {
            "musl"
        } else {
            ""
        };
        Target {
            triple: String::new(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            env: env.to_string(),
            endian: if cfg!(target_endian = "big") {
                Endian::Big
            } else {
                Endian::Little
            },
            pointer_width: usize::BITS,
        }
    }

    /// The target triple (`TARGET`), for messages; outside cargo, `<arch>-<os>[-<env>]`.
    pub fn triple(&self) -> &str {
        &self.triple
    }

    /// `target_os` (`linux`, `macos`, `windows`, …).
    pub fn os(&self) -> &str {
        &self.os
    }

    /// `target_arch` (`x86_64`, `aarch64`, …).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// `target_env` (`gnu`, `msvc`, `musl`, or empty).
    pub fn env(&self) -> &str {
        &self.env
    }

    /// `target_endian`.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// `target_pointer_width` in bits.
    pub fn pointer_width(&self) -> u32 {
        self.pointer_width
    }

    /// The object-file format of the target's linker.
    ///
    /// ```
    /// use webnn_weights_build::{ObjectFormat, Target};
    /// let windows = Target::from_vars(|name| match name {
    ///     "CARGO_CFG_TARGET_OS" => Some("windows".into()),
    ///     "CARGO_CFG_TARGET_ARCH" => Some("x86_64".into()),
    ///     "CARGO_CFG_TARGET_ENV" => Some("msvc".into()),
    ///     _ => None,
    /// });
    /// assert_eq!(windows.object_format(), ObjectFormat::Coff);
    /// ```
    pub fn object_format(&self) -> ObjectFormat {
        match self.os.as_str() {
            "macos" | "ios" | "tvos" | "watchos" | "visionos" => ObjectFormat::MachO,
            "windows" | "uefi" => ObjectFormat::Coff,
            "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
            | "solaris" | "fuchsia" | "hermit" | "redox" | "haiku" | "l4re" | "nto" | "horizon"
            | "vita" | "espidf" | "hurd" => ObjectFormat::Elf,
            "none" if !self.arch.starts_with("wasm") && self.arch != "nvptx64" => ObjectFormat::Elf,
            _ => ObjectFormat::None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.triple)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A little-endian target as cargo would describe it to a build script.
    pub(crate) fn target(triple: &str, os: &str, arch: &str, env: &str) -> Target {
        Target::from_vars(|name| {
            Some(
                match name {
                    "TARGET" => triple,
                    "CARGO_CFG_TARGET_OS" => os,
                    "CARGO_CFG_TARGET_ARCH" => arch,
                    "CARGO_CFG_TARGET_ENV" => env,
                    "CARGO_CFG_TARGET_ENDIAN" => "little",
                    "CARGO_CFG_TARGET_POINTER_WIDTH" => {
                        if arch.ends_with("64") {
                            "64"
                        } else {
                            "32"
                        }
                    }
                    _ => return None,
                }
                .to_string(),
            )
        })
    }

    #[test]
    fn formats_follow_the_os_not_the_host() {
        let cases = [
            (
                "x86_64-apple-darwin",
                "macos",
                "x86_64",
                "",
                ObjectFormat::MachO,
            ),
            (
                "x86_64-pc-windows-gnu",
                "windows",
                "x86_64",
                "gnu",
                ObjectFormat::Coff,
            ),
            (
                "aarch64-unknown-linux-gnu",
                "linux",
                "aarch64",
                "gnu",
                ObjectFormat::Elf,
            ),
            (
                "wasm32-unknown-unknown",
                "unknown",
                "wasm32",
                "",
                ObjectFormat::None,
            ),
            ("wasm32-wasip1", "wasi", "wasm32", "p1", ObjectFormat::None),
        ];
        for (triple, os, arch, env, format) in cases {
            let t = target(triple, os, arch, env);
            assert_eq!(t.object_format(), format, "{triple}");
            assert_eq!(t.triple(), triple);
            assert_eq!((t.os(), t.arch(), t.env()), (os, arch, env));
        }
        assert_eq!(
            target("i686-pc-windows-msvc", "windows", "x86", "msvc").pointer_width(),
            32
        );
    }

    #[test]
    fn unset_variables_fall_back_to_the_host() {
        let t = Target::from_vars(|_| None);
        assert_eq!(t.os(), std::env::consts::OS);
        assert_eq!(t.arch(), std::env::consts::ARCH);
        assert_eq!(t.pointer_width(), usize::BITS);
        assert!(t.triple().starts_with(std::env::consts::ARCH));
        let big = Target::from_vars(|n| (n == "CARGO_CFG_TARGET_ENDIAN").then(|| "big".into()));
        assert_eq!(big.endian(), Endian::Big);
    }
}
