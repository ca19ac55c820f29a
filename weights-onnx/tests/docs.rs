//! `docs/onnx.md` lists exactly the operators that convert: the first column of the tables in
//! its `## Operators` section against `supported_operators()` (ai.onnx) and
//! `supported_contrib_operators()` (the table under the `### com.microsoft …` heading).

use std::collections::BTreeSet;

/// The operator names of the `## Operators` tables: (ai.onnx, com.microsoft), in file order.
fn documented(text: &str) -> (Vec<String>, Vec<String>) {
    let mut in_section = false;
    let mut heading = String::new();
    let (mut onnx, mut contrib) = (Vec::new(), Vec::new());
    for (number, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            in_section = h.trim() == "Operators";
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(h) = line.strip_prefix("### ") {
            heading = h.trim().to_string();
            continue;
        }
        let Some(row) = line.trim().strip_prefix('|') else {
            continue;
        };
        let first = row.split('|').next().unwrap_or("").trim();
        if first == "ONNX operator" || first.chars().all(|c| matches!(c, '-' | ':' | ' ')) {
            continue; // the header and the separator
        }
        let name = first
            .strip_prefix('`')
            .and_then(|s| s.strip_suffix('`'))
            .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()))
            .unwrap_or_else(|| {
                panic!(
                    "docs/onnx.md line {}: the first cell {first:?} is not one `Operator` name",
                    number + 1
                )
            });
        if heading.contains("com.microsoft") {
            contrib.push(name.to_string());
        } else {
            onnx.push(name.to_string());
        }
    }
    (onnx, contrib)
}

/// Fails listing what only the docs name, what only the code has, and names given twice.
fn same(what: &str, docs: &[String], code: &[&str]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let twice: Vec<&str> = docs
        .iter()
        .filter(|n| !seen.insert(n.as_str()))
        .map(String::as_str)
        .collect();
    let code: BTreeSet<&str> = code.iter().copied().collect();
    let only_docs: Vec<&str> = seen.difference(&code).copied().collect();
    let only_code: Vec<&str> = code.difference(&seen).copied().collect();
    if twice.is_empty() && only_docs.is_empty() && only_code.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{what}: docs/onnx.md's ## Operators tables and the code disagree:\n  \
         converted but not in the docs: {only_code:?}\n  \
         in the docs but not converted: {only_docs:?}\n  \
         rows given twice: {twice:?}"
    ))
}

fn docs_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/onnx.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

#[test]
fn operator_tables_match_the_code() {
    let (onnx, contrib) = documented(&docs_text());
    let problems: Vec<String> = [
        same("ai.onnx", &onnx, &webnn_weights_onnx::supported_operators()),
        same(
            "com.microsoft",
            &contrib,
            &webnn_weights_onnx::supported_contrib_operators(),
        ),
    ]
    .into_iter()
    .filter_map(Result::err)
    .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_sees_a_missing_or_extra_row() {
    let text = docs_text();
    let (onnx, contrib) = documented(&text);
    assert!(
        onnx.len() > 100 && !contrib.is_empty(),
        "the tables were not found"
    );
    // a row removed
    let without = text.replacen("| `Softsign` |", "| `Softsign2` |", 1);
    let (edited, _) = documented(&without);
    let err = same(
        "ai.onnx",
        &edited,
        &webnn_weights_onnx::supported_operators(),
    )
    .unwrap_err();
    assert!(
        err.contains("\"Softsign\"") && err.contains("\"Softsign2\""),
        "{err}"
    );
    // a row given twice
    let twice = [onnx.clone(), vec!["Relu".to_string()]].concat();
    let err = same(
        "ai.onnx",
        &twice,
        &webnn_weights_onnx::supported_operators(),
    )
    .unwrap_err();
    assert!(err.contains("rows given twice: [\"Relu\"]"), "{err}");
    // the contrib table is read apart from the others
    assert!(contrib.iter().any(|n| n == "MatMulNBits"));
    assert!(!onnx.iter().any(|n| n == "MatMulNBits"));
}
