//! Matching `@weights` references to stored names: exact first, then normalized.

use super::discover::Context;
use super::error::ResolveError;
use super::plan::Request;
use super::source::{Source, Stored};
use std::collections::HashMap;

/// The format's compatibility normalization: `::` -> `__`, then `.` -> `_`.
///
/// ```
/// assert_eq!(webnn_weights_runtime::normalize_weight_name("enc.layer::w"), "enc_layer__w");
/// ```
pub fn normalize_weight_name(name: &str) -> String {
    name.replace("::", "__").replace('.', "_")
}

/// Stored names by exact and by normalized spelling.
pub(crate) struct Index<'s> {
    exact: HashMap<&'s str, usize>,
    normalized: HashMap<String, Vec<usize>>,
}

impl<'s> Index<'s> {
    pub fn new(tensors: &'s [Stored]) -> Index<'s> {
        let mut exact = HashMap::with_capacity(tensors.len());
        let mut normalized: HashMap<String, Vec<usize>> = HashMap::with_capacity(tensors.len());
        for (i, t) in tensors.iter().enumerate() {
            exact.insert(t.name.as_str(), i);
            normalized
                .entry(normalize_weight_name(&t.name))
                .or_default()
                .push(i);
        }
        Index { exact, normalized }
    }

    /// The index of the stored tensor for `reference`; `Err(candidates)` when there is
    /// none (empty) or more than one normalized match.
    pub fn lookup(&self, reference: &str) -> Result<usize, Vec<usize>> {
        if let Some(&i) = self.exact.get(reference) {
            return Ok(i);
        }
        match self.normalized.get(reference).map(Vec::as_slice) {
            Some(&[one]) => Ok(one),
            Some(many) => Err(many.to_vec()),
            None => Err(Vec::new()),
        }
    }
}

pub(crate) fn lookup_error(
    ctx: &Context<'_>,
    source: &Source,
    request: &Request<'_>,
    candidates: Vec<usize>,
) -> ResolveError {
    let name_of = |i: usize| {
        source
            .tensors
            .get(i)
            .map(|t| t.name.clone())
            .unwrap_or_default()
    };
    if candidates.is_empty() {
        let mut available: Vec<String> = source.tensors.iter().map(|t| t.name.clone()).collect();
        available.sort();
        let total = available.len();
        available.truncate(10);
        ResolveError::MissingTensor {
            graph: ctx.graph.to_path_buf(),
            constant: request.name.to_string(),
            reference: request.reference.to_string(),
            sidecar: source.names_file().to_path_buf(),
            available,
            available_total: total,
        }
    } else {
        let mut names: Vec<String> = candidates.into_iter().map(name_of).collect();
        names.sort();
        ResolveError::AmbiguousTensor {
            graph: ctx.graph.to_path_buf(),
            constant: request.name.to_string(),
            reference: request.reference.to_string(),
            sidecar: source.names_file().to_path_buf(),
            candidates: names,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(names: &[&str]) -> Vec<Stored> {
        names
            .iter()
            .map(|n| Stored {
                name: n.to_string(),
                dtype: None,
                shape: None,
                offset: 0,
                length: 0,
            })
            .collect()
    }

    #[test]
    fn exact_then_normalized() {
        let t = stored(&["a.b", "a_b", "x::y.z", "p.q", "p::q"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("a.b"), Ok(0));
        assert_eq!(index.lookup("a_b"), Ok(1)); // exact wins over a normalized collision
        assert_eq!(index.lookup("x__y_z"), Ok(2));
        assert_eq!(index.lookup("p_q"), Ok(3));
        assert_eq!(index.lookup("p__q"), Ok(4));
        assert_eq!(index.lookup("nope"), Err(vec![]));
        let t = stored(&["m.w", "m_w", "m::w"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m_w"), Ok(1));
        let t = stored(&["m.w", "m::w", "m.w.x", "m_w_x"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m_w_x"), Ok(3));
        let t = stored(&["m.w", "m::w", "q.w", "q::w"]);
        let index = Index::new(&t);
        assert_eq!(index.lookup("m__w"), Ok(1));
        let t = stored(&["a.b.c", "a_b.c", "other"]);
        let index = Index::new(&t);
        let mut err = index.lookup("a_b_c").unwrap_err();
        err.sort();
        assert_eq!(err, vec![0, 1]);
    }
}
