//! The nearest of some names to a name that names nothing: the "did you mean" of the build
//! helper (a graph file that does not exist) and of the macro (a graph the build script did
//! not prepare).

/// The candidate nearest to `wanted` by edit distance (Damerau–Levenshtein: a swap of two
/// neighbours counts as one edit), if it is close: at most a third of `wanted`'s characters
/// (and at least one) differ. Of equally near candidates, the first.
///
/// ```
/// use webnn_weights_artifacts::closest;
/// let names = ["model.webnn", "other.onnx"];
/// assert_eq!(closest("modle.webnn", names), Some("model.webnn"));
/// assert_eq!(closest("model.webnn", names), Some("model.webnn"));
/// assert_eq!(closest("vgg16.onnx", names), None);
/// ```
pub fn closest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (wanted.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|name| (strsim::damerau_levenshtein(wanted, name), name))
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn nearest_first_and_only_when_close() {
        let names = [
            "models/model.webnn",
            "models/mode.webnn",
            "models/big.webnn",
        ];
        assert_eq!(
            closest("models/modle.webnn", names),
            Some("models/model.webnn")
        );
        assert_eq!(
            closest("models/mode.webnn", names),
            Some("models/mode.webnn")
        );
        assert_eq!(closest("weights/x.json", names), None);
        assert_eq!(closest("a", []), None);
        // One edit is always close, even in a short name.
        assert_eq!(closest("b", ["a"]), Some("a"));
    }
}
