//! Every relative link in the README, the docs and the crates' READMEs resolves: the file
//! (or folder) exists, and a `#anchor` names a heading of the target Markdown file, spelled
//! as GitHub spells heading anchors. Links to web sites are not checked (no network). The
//! README stays at most 250 lines.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use webnn_weights_test_support::{markdown_pages, repo_root};

/// GitHub's anchor for a heading: lower case, characters other than letters, digits, `-`,
/// `_` and spaces dropped, each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `text` outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// The anchors of a Markdown file's headings; a repeated heading gets `-1`, `-2`, … as on
/// GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let heading = line[hashes..].trim().trim_end_matches('#');
        let base = slug(heading);
        let mut candidate = base.clone();
        let mut n = 0;
        while !found.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{base}-{n}");
        }
    }
    found
}

/// `line` without its inline code spans (a link inside backticks is not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The link targets of a Markdown text (`[text](target)`, `![alt](target)` and reference
/// definitions `[name]: target`), with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            if let Some(end) = trimmed.find("]:") {
                if let Some(target) = trimmed[end + 2..].split_whitespace().next() {
                    found.push((number, target.to_string()));
                }
            }
        }
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            found.push((number, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
    }
    found
}

/// Every broken relative link of `file` (whose text is `text`), as `file:line: why`.
fn broken_links(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let shown = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    let mut problems = Vec::new();
    for (line, target) in links(text) {
        if target.is_empty() {
            problems.push(format!("{shown}:{line}: empty link target"));
            continue;
        }
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().expect("a file has a folder").join(path)
        };
        if !resolved.exists() {
            problems.push(format!(
                "{shown}:{line}: link `{target}`: {} does not exist",
                resolved.display()
            ));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if resolved.extension().is_none_or(|e| e != "md") {
            problems.push(format!(
                "{shown}:{line}: link `{target}`: an anchor into a file that is not Markdown"
            ));
            continue;
        }
        let target_text = fs::read_to_string(&resolved).expect("a linked Markdown file is UTF-8");
        let known = anchors(&target_text);
        if !known.contains(anchor) {
            problems.push(format!(
                "{shown}:{line}: link `{target}`: {} has no heading with the anchor `#{anchor}` (its anchors: {})",
                resolved.display(),
                known.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    problems
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = repo_root();
    let files = markdown_pages(&root);
    assert!(files.iter().any(|f| f.ends_with("docs/embedding.md")));
    assert!(files
        .iter()
        .any(|f| f.ends_with("weights-runtime/README.md")));
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        checked += links(&text).len();
        problems.extend(broken_links(&root, file, &text));
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_docs_page_starts_by_saying_what_it_covers() {
    // The first paragraph that is not a title is one sentence or more about the page's
    // subject; a page that opens with a table, a list or code does not say it.
    let root = repo_root();
    for file in markdown_pages(&root)
        .iter()
        .filter(|f| f.parent() == Some(&root.join("docs")))
    {
        let text = fs::read_to_string(file).unwrap();
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap_or("");
        assert!(
            first.chars().next().is_some_and(char::is_alphabetic) && first.len() > 30,
            "{}: starts with {first:?}, not a line saying what the page covers",
            file.display()
        );
    }
}

#[test]
fn github_anchors() {
    let cases = [
        ("Quickstart", "quickstart"),
        (
            "Benchmarks: run-time resolve",
            "benchmarks-run-time-resolve",
        ),
        ("`inspect` of a sidecar alone", "inspect-of-a-sidecar-alone"),
        (
            "Fixes over `webnn-graph` 0.4.0",
            "fixes-over-webnn-graph-040",
        ),
        ("build.rs and the macro", "buildrs-and-the-macro"),
        (
            "Real-linker checks: `bench/platforms.sh`",
            "real-linker-checks-benchplatformssh",
        ),
        ("`resolve/` in layers", "resolve-in-layers"),
        (
            "Installing: completions and man page",
            "installing-completions-and-man-page",
        ),
        ("snake_case stays", "snake_case-stays"),
    ];
    for (heading, anchor) in cases {
        assert_eq!(slug(heading), anchor, "heading {heading:?}");
    }
    let repeated = anchors("# A\n## Measured\n```\n# not a heading\n```\n### Measured\n#no\n");
    assert_eq!(
        repeated.into_iter().collect::<Vec<_>>(),
        ["a", "measured", "measured-1"]
    );
}

#[test]
fn broken_links_are_reported_with_file_line_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("docs")).unwrap();
    fs::write(root.join("docs/page.md"), "# Page\n\n## Two words\n").unwrap();
    let readme = "\
# Title
[ok](docs/page.md) [ok](docs/page.md#two-words) [ok](#title) ![chart](docs/page.md)
[site](https://example.com/x#y) `[code](missing.md)`
```
[fenced](missing.md)
```
[gone](docs/missing.md) [bad anchor](docs/page.md#three) [self](#nope)
[ref]: docs/also-missing.md
";
    let file = root.join("README.md");
    fs::write(&file, readme).unwrap();
    let problems = broken_links(root, &file, readme);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].starts_with("README.md:7: link `docs/missing.md`"));
    assert!(problems[1].contains("`docs/page.md#three`") && problems[1].contains("two-words"));
    assert!(problems[2].starts_with("README.md:7: link `#nope`"));
    assert!(problems[3].starts_with("README.md:8: link `docs/also-missing.md`"));
}

/// The README is the front door: at most 250 lines, depth in docs/ (its "Documentation" table).
#[test]
fn the_readme_stays_a_front_door() {
    const MAX_LINES: usize = 250;
    let text = fs::read_to_string(repo_root().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= MAX_LINES,
        "README.md has {lines} lines, more than {MAX_LINES}: move the detail into the docs/ page \
         the README links to, and keep a sentence and the link"
    );
}
