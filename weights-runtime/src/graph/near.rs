//! Nearest names, for "did you mean": the stored tensors nearest to an unknown `@weights`
//! reference (the resolver) and the operands nearest to an undefined one (validation), by
//! edit distance over raw and over normalized spellings. Behind the feature `load` (strsim).

/// The format's compatibility normalization: `::` -> `__`, then `.` -> `_`.
pub(crate) fn normalize_weight_name(name: &str) -> String {
    name.replace("::", "__").replace('.', "_")
}

/// How many stored names a "not found" error suggests.
const SUGGESTIONS: usize = 5;

/// The stored names nearest to `reference` (at most [`SUGGESTIONS`], nearest first, then
/// by name): by edit distance over the raw spellings and over the normalized ones, whichever
/// is smaller (a swap of two neighbours counts as one edit), so that
/// `encoder_layer_0_weigth` finds `encoder.layer.0.weight`.
pub(crate) fn nearest(names: &[&str], reference: &str) -> Vec<String> {
    let normalized_reference = normalize_weight_name(reference);
    let mut ranked: Vec<(usize, &str)> = names
        .iter()
        .map(|&name| {
            let raw = strsim::damerau_levenshtein(reference, name);
            let normalized =
                strsim::damerau_levenshtein(&normalized_reference, &normalize_weight_name(name));
            (raw.min(normalized), name)
        })
        .collect();
    ranked.sort_unstable();
    ranked
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, name)| name.to_string())
        .collect()
}

/// Whether `suggestion` is close enough to `reference` to be offered as what was meant:
/// at most a third of the reference's characters (and at least one) differ.
pub(crate) fn is_close(reference: &str, suggestion: &str) -> bool {
    let distance =
        strsim::damerau_levenshtein(reference, suggestion).min(strsim::damerau_levenshtein(
            &normalize_weight_name(reference),
            &normalize_weight_name(suggestion),
        ));
    distance <= (reference.chars().count() / 3).max(1)
}

/// The name of `names` to offer for `wanted` ("did you mean"): the nearest, when it is
/// close ([`is_close`]).
pub(crate) fn suggestion<'n>(names: impl Iterator<Item = &'n str>, wanted: &str) -> Option<String> {
    let names: Vec<&str> = names.collect();
    nearest(&names, wanted)
        .into_iter()
        .next()
        .filter(|near| is_close(wanted, near))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_replaces_paths_then_dots() {
        assert_eq!(normalize_weight_name("enc.layer::w"), "enc_layer__w");
        assert_eq!(normalize_weight_name("a:b.c"), "a:b_c");
    }

    #[test]
    fn suggests_the_nearest_only_when_close() {
        let names = ["x", "fc1_weight", "fc1_bias", "h"];
        assert_eq!(
            suggestion(names.into_iter(), "fc1_wieght").as_deref(),
            Some("fc1_weight")
        );
        assert_eq!(suggestion(names.into_iter(), "undefined_x"), None);
        assert_eq!(suggestion([].into_iter(), "x"), None);
    }
}
