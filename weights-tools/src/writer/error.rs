//! [`WriteError`]: why a writer refused or failed, and the fix where there is one.

use std::path::PathBuf;
use webnn_weights_runtime::DataType;

/// Why [`write_external_weights_safetensors`](crate::write_external_weights_safetensors)
/// refused or failed. Nothing is installed at the destination in any of these cases.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// No bytes were supplied for a reference the graph uses.
    #[error("{}: @weights(\"{reference}\") (constant `{constant}`) has no supplied bytes", destination.display())]
    MissingBytes {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
    },
    /// Two constants use the same reference with different types or shapes.
    #[error(
        "{}: @weights(\"{reference}\") has conflicting declarations: constant `{first}` is {first_type} {first_shape:?}, constant `{second}` is {second_type} {second_shape:?}",
        destination.display()
    )]
    ConflictingDeclarations {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The shared reference.
        reference: String,
        /// The first constant (by name).
        first: String,
        /// Its type.
        first_type: DataType,
        /// Its shape.
        first_shape: Vec<u32>,
        /// The conflicting constant.
        second: String,
        /// Its type.
        second_type: DataType,
        /// Its shape.
        second_shape: Vec<u32>,
    },
    /// A reference or declaration that SafeTensors cannot store.
    #[error("{}: @weights(\"{reference}\") (constant `{constant}`) cannot be stored: {reason}", destination.display())]
    Unsupported {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Why.
        reason: String,
    },
    /// The supplied bytes do not have the declared size.
    #[error(
        "{}: @weights(\"{reference}\") (constant `{constant}`): declared {data_type} {shape:?} needs {expected} bytes, found {found}",
        destination.display()
    )]
    LengthMismatch {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
        /// Bytes the declaration needs.
        expected: u64,
        /// Bytes supplied.
        found: u64,
    },
    /// The declaration's element count or byte size overflows.
    #[error(
        "{}: @weights(\"{reference}\") (constant `{constant}`): declared {data_type} {shape:?} has an element count or byte size that overflows",
        destination.display()
    )]
    Overflow {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The reference.
        reference: String,
        /// A constant using it.
        constant: String,
        /// Declared type.
        data_type: DataType,
        /// Declared shape.
        shape: Vec<u32>,
    },
    /// SafeTensors could not serialize the archive.
    #[error("{}: cannot serialize the SafeTensors archive: {message}", destination.display())]
    Serialize {
        /// The archive that was to be written.
        destination: PathBuf,
        /// What safetensors reported.
        message: String,
    },
    /// The temporary file could not be created, synced or renamed into place.
    #[error("{}: cannot install the SafeTensors archive", destination.display())]
    Io {
        /// The archive that was to be written.
        destination: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl WriteError {
    /// How to fix the input, where there is an obvious way (data, not part of the message).
    pub fn fix(&self) -> Option<String> {
        let fix = match self {
            WriteError::MissingBytes { .. } => "pass its bytes keyed by the reference",
            WriteError::ConflictingDeclarations { .. } => {
                "give them distinct references or the same declaration"
            }
            _ => return None,
        };
        Some(fix.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error of the crates that offers a fix gives it as the same type (checked when
    /// this test compiles), and this crate's fix is data of the error.
    #[test]
    fn every_fix_is_an_owned_string() {
        use webnn_weights_runtime::formats::FormatError;
        use webnn_weights_runtime::{Error, ResolveError};
        let _: fn(&FormatError) -> Option<String> = FormatError::fix;
        let _: fn(&ResolveError) -> Option<String> = ResolveError::fix;
        let _: fn(&Error) -> Option<String> = Error::fix;
        let fix: fn(&WriteError) -> Option<String> = WriteError::fix;
        let missing = WriteError::MissingBytes {
            destination: PathBuf::from("m.safetensors"),
            reference: "r".into(),
            constant: "w".into(),
        };
        assert_eq!(
            fix(&missing).as_deref(),
            Some("pass its bytes keyed by the reference")
        );
    }
}
