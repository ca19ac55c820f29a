//! The format versions the docs state are the ones the code writes and reads: the artifact
//! index (`INDEX_VERSION`), the constant table (`TABLE_VERSION`), the weights lock
//! (`LOCK_VERSION`), the weights manifest and the WGWT blob header of the blob tools
//! (`MANIFEST_VERSION`, `WGWT_VERSION`) and the packed 4-bit marker
//! (`PACKED_4BIT_METADATA_VERSION`).
//!
//! Every statement below is looked up in the README, every `docs/*.md` and the README of
//! every top-level folder (whitespace, line breaks included, counts as one space), and the
//! number after it must be the constant's. A statement that no longer occurs anywhere fails
//! too: the test would check nothing, so it must follow the docs' new wording. The CHANGELOG
//! is not read (its entries name the versions of their day).
//!
//! Public constants are read from the crates; crate-private ones from their source line
//! (`const NAME: u32 = N;`), so that nothing is exposed for a test.

use std::fs;
use std::path::{Path, PathBuf};
use webnn_weights_test_support::{markdown_pages, repo_root};

/// The value of `const NAME: u32 = N;` in a source file of the repository (crate-private
/// constants).
fn private_constant(file: &str, name: &str) -> u32 {
    let text = fs::read_to_string(repo_root().join(file))
        .unwrap_or_else(|e| panic!("{file} is readable: {e}"));
    let needle = format!("const {name}: u32 = ");
    let mut found = text.match_indices(&needle).map(|(at, _)| {
        let rest = &text[at + needle.len()..];
        let end = rest.find(';').expect("the constant ends with `;`");
        rest[..end]
            .trim()
            .parse::<u32>()
            .unwrap_or_else(|e| panic!("{file}: `{name}` is not a number: {e}"))
    });
    let value = found
        .next()
        .unwrap_or_else(|| panic!("{file} no longer defines `{needle}…;`"));
    assert!(found.next().is_none(), "{file} defines `{name}` twice");
    value
}

/// A doc's text with every run of whitespace as one space, and the line each character of
/// that text came from.
fn normalized(text: &str) -> (String, Vec<usize>) {
    let (mut out, mut lines) = (String::new(), Vec::new());
    let mut line = 1;
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                lines.push(line);
            }
            in_space = true;
        } else {
            out.push(c);
            lines.extend(std::iter::repeat_n(line, c.len_utf8()));
            in_space = false;
        }
        if c == '\n' {
            line += 1;
        }
    }
    (out, lines)
}

/// A version statement: the text right before the number, the constant it must equal.
struct Claim {
    before: &'static str,
    constant: &'static str,
    version: u32,
}

fn claims() -> Vec<Claim> {
    let index = webnn_weights_artifacts::INDEX_VERSION;
    let table = webnn_weights_artifacts::TABLE_VERSION;
    let lock = private_constant("weights-runtime/src/resolve/lock.rs", "LOCK_VERSION");
    let format = "weights-tools/src/weight_tools/format.rs";
    let manifest = private_constant(format, "MANIFEST_VERSION");
    let wgwt = private_constant(format, "WGWT_VERSION");
    let packed = webnn_weights_runtime::formats::safetensors::PACKED_4BIT_METADATA_VERSION
        .parse::<u32>()
        .expect("the packed 4-bit marker's version is a number");
    let claim = |before, constant, version| Claim {
        before,
        constant,
        version,
    };
    vec![
        // docs/artifacts.md: the contract's table and the section headings.
        claim("`INDEX_VERSION` (", "INDEX_VERSION", index),
        claim("## `index.json` (version ", "INDEX_VERSION", index),
        claim("`TABLE_VERSION` (", "TABLE_VERSION", table),
        claim("## The constant table (version ", "TABLE_VERSION", table),
        // docs/embedding.md: the artifact folder's files.
        claim(
            r#""format": "webnn-weights-artifacts"`, `"version": "#,
            "INDEX_VERSION",
            index,
        ),
        // docs/lock.md: the example lock and the table of its keys.
        claim(
            r#""format": "webnn-weights-lock", "version": "#,
            "LOCK_VERSION",
            lock,
        ),
        claim(
            "| `format`, `version` | `webnn-weights-lock`, `",
            "LOCK_VERSION",
            lock,
        ),
        // docs/cli.md and docs/runtime.md: the blob tools' manifest and WGWT header.
        claim(
            "format `wg-weights-manifest`, version ",
            "MANIFEST_VERSION",
            manifest,
        ),
        claim("(`WGWT`, u32 LE version ", "WGWT_VERSION", wgwt),
        claim("it must then be version ", "WGWT_VERSION", wgwt),
        claim("header: WGWT v", "WGWT_VERSION", wgwt),
        claim("WGWT header has version 2, expected ", "WGWT_VERSION", wgwt),
        claim(
            "starts with `WGWT` and a version other than ",
            "WGWT_VERSION",
            wgwt,
        ),
        // docs/format.md, docs/runtime.md, docs/cli.md: the packed 4-bit marker.
        claim(
            r#""rustnn.webnn.packed4": ""#,
            "PACKED_4BIT_METADATA_VERSION",
            packed,
        ),
        claim(
            r#"`"rustnn.webnn.packed4"` / `""#,
            "PACKED_4BIT_METADATA_VERSION",
            packed,
        ),
        claim(
            "`rustnn.webnn.packed4: ",
            "PACKED_4BIT_METADATA_VERSION",
            packed,
        ),
    ]
}

/// Every mismatch (`file:line: …`), and the statements found nowhere.
fn check(root: &Path, docs: &[(PathBuf, String)]) -> (Vec<String>, Vec<&'static str>) {
    let docs: Vec<(String, String, Vec<usize>)> = docs
        .iter()
        .map(|(path, text)| {
            let shown = path
                .strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string();
            let (text, lines) = normalized(text);
            (shown, text, lines)
        })
        .collect();
    let (mut wrong, mut missing) = (Vec::new(), Vec::new());
    for claim in claims() {
        let mut seen = 0;
        for (file, text, lines) in &docs {
            for (at, _) in text.match_indices(claim.before) {
                seen += 1;
                let rest = &text[at + claim.before.len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if digits.parse::<u32>().ok() != Some(claim.version) {
                    wrong.push(format!(
                        "{file}:{}: `{}{digits}`: the docs say {}, {} is {}",
                        lines[at],
                        claim.before,
                        if digits.is_empty() {
                            "no number"
                        } else {
                            &digits
                        },
                        claim.constant,
                        claim.version,
                    ));
                }
            }
        }
        if seen == 0 {
            missing.push(claim.before);
        }
    }
    (wrong, missing)
}

#[test]
fn the_docs_give_the_format_versions_of_the_code() {
    let root = repo_root();
    // Every page but the CHANGELOG, which keeps the versions of earlier releases.
    let docs: Vec<(PathBuf, String)> = markdown_pages(&root)
        .into_iter()
        .filter(|path| !path.ends_with("CHANGELOG.md"))
        .map(|path| {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{} is readable: {e}", path.display()));
            (path, text)
        })
        .collect();
    let (wrong, missing) = check(&root, &docs);
    assert!(
        wrong.is_empty(),
        "version numbers in the docs differ from the code:\n{}",
        wrong.join("\n")
    );
    assert!(
        missing.is_empty(),
        "these version statements occur in no doc any more; update the claims of \
         tests/tests/doc_versions.rs to the new wording:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_wrong_number_is_caught_with_its_file_and_line() {
    let root = repo_root();
    let table = webnn_weights_artifacts::TABLE_VERSION;
    let index = webnn_weights_artifacts::INDEX_VERSION;
    let (old_table, new_index) = (table - 1, index + 1);
    let text = format!(
        "# Artifacts\n\n| the table | `TABLE_VERSION` ({old_table}) |\n\n\
         ## `index.json`\n(version {new_index})\n"
    );
    let docs = vec![(root.join("docs/example.md"), text)];
    let (wrong, missing) = check(&root, &docs);
    assert_eq!(
        wrong,
        [
            format!(
                "docs/example.md:5: `## `index.json` (version {new_index}`: the docs say \
                 {new_index}, INDEX_VERSION is {index}"
            ),
            format!(
                "docs/example.md:3: ``TABLE_VERSION` ({old_table}`: the docs say {old_table}, \
                 TABLE_VERSION is {table}"
            ),
        ]
    );
    // Everything else of the list is missing from this one-file "docs".
    assert!(!missing.contains(&"`TABLE_VERSION` ("));
    assert!(missing.contains(&"header: WGWT v"));
}
