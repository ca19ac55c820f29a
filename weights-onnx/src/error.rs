//! What went wrong: every problem of a model, found in one pass and reported at once.

use std::fmt;

/// One thing the converter could not do, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where: `node "conv1" (Conv, ai.onnx opset 13)`, `input "x"`, `initializer "w"`, …
    pub place: String,
    /// What was expected, what was found, and the fix where there is one.
    pub message: String,
    /// The graph input whose value the node needs at conversion time, when that is the
    /// problem (a Reshape's shape fed by a graph input, say): `ConvertOptions::constant_input`
    /// supplies it.
    pub needs_constant: Option<String>,
}

impl fmt::Display for Problem {
    /// The place, then the message: a predicate about the place (`has shape …`, `is not a
    /// tensor …`) continues it as one sentence (`input "x" has shape …`); a sentence of its
    /// own (`operator … is not supported`) follows a colon.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let predicate = ["is ", "has "].iter().any(|p| self.message.starts_with(p));
        let between = if predicate { " " } else { ": " };
        write!(f, "{}{between}{}", self.place, self.message)
    }
}

/// A model that did not convert: every problem found, in graph order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    /// The model file, when there is one.
    pub(crate) file: Option<String>,
    pub(crate) problems: Vec<Problem>,
}

impl ConvertError {
    pub(crate) fn one(
        file: Option<String>,
        place: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ConvertError {
            file,
            problems: vec![Problem {
                place: place.into(),
                message: message.into(),
                needs_constant: None,
            }],
        }
    }

    /// Each problem, in graph order.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The graph inputs that nodes need as constants (see [`Problem::needs_constant`]).
    pub fn inputs_needed_as_constants(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .problems
            .iter()
            .filter_map(|p| p.needs_constant.as_deref())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_deref().unwrap_or("the model");
        match self.problems.as_slice() {
            [one] => write!(f, "{file}: {one}"),
            many => {
                write!(f, "{file}: {} problems:", many.len())?;
                for p in many {
                    write!(f, "\n  - {p}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ConvertError {}

/// Why one operation could not convert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpError {
    /// Bad or unsupported use: the message says what and the fix.
    Message(String),
    /// The node needs the value of input `index` at conversion time, and it is computed by
    /// the graph (or a graph input).
    NeedsConstant { index: usize, what: String },
}

impl From<String> for OpError {
    fn from(message: String) -> Self {
        OpError::Message(message)
    }
}

impl From<&str> for OpError {
    fn from(message: &str) -> Self {
        OpError::Message(message.to_string())
    }
}

/// The result of lowering one operation.
pub(crate) type OpResult<T> = Result<T, OpError>;

/// `Err(OpError::Message(format!(...)))`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::OpError::Message(format!($($arg)*)))
    };
}
pub(crate) use bail;

#[cfg(test)]
mod tests {
    use super::Problem;

    fn problem(place: &str, message: &str) -> String {
        Problem {
            place: place.into(),
            message: message.into(),
            needs_constant: None,
        }
        .to_string()
    }

    #[test]
    fn a_predicate_continues_its_place_and_a_sentence_follows_a_colon() {
        assert_eq!(
            problem("input \"x\"", "has dims without a size: dim 0 is \"batch\""),
            "input \"x\" has dims without a size: dim 0 is \"batch\""
        );
        assert_eq!(
            problem("initializer \"w\"", "is not a tensor"),
            "initializer \"w\" is not a tensor"
        );
        assert_eq!(
            problem(
                "node \"f\" (Frobnicate)",
                "operator Frobnicate is not supported"
            ),
            "node \"f\" (Frobnicate): operator Frobnicate is not supported"
        );
    }
}
