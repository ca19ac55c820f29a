//! `completions SHELL` and `man [--output DIR]`, run as a process: every script and page
//! is generated from the binary's own clap definition, so each must name every
//! subcommand that `--help` lists.

mod common;

use common::{cli, listing};
use std::path::Path;

fn stdout_of(args: &[&str]) -> String {
    let output = cli().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "webnn-weights {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommands `webnn-weights --help` lists (clap's own `help` left out): the names
/// the scripts and pages must cover, read from the binary so a new command is checked too.
fn subcommands() -> Vec<String> {
    let help = stdout_of(&["--help"]);
    let names: Vec<String> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    // The parse must have found the real list, not an empty or partial one.
    for expected in [
        "convert",
        "resolve",
        "inspect",
        "pack-weights",
        "completions",
        "man",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "`{expected}` missing from the parsed --help list {names:?}"
        );
    }
    names
}

/// Flags of several subcommands, each of which every completion script must offer.
const FLAGS: [&str; 5] = [
    "--output",
    "--weights",
    "--graph-output",
    "--output-dir",
    "--quiet",
];

#[test]
fn every_shell_gets_a_script_naming_every_subcommand_and_flag() {
    let subcommands = subcommands();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(
            script.contains("webnn-weights"),
            "{shell}: the script does not name the binary"
        );
        for name in &subcommands {
            assert!(script.contains(name.as_str()), "{shell}: no `{name}`");
        }
        for flag in FLAGS {
            // fish spells long flags `-l output`, the others `--output`.
            let fish_spelling = format!("-l {}", &flag[2..]);
            assert!(
                script.contains(flag) || (shell == "fish" && script.contains(&fish_spelling)),
                "{shell}: no `{flag}`"
            );
        }
    }
}

#[test]
fn bash_script_registers_its_completion_function() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(
        script.contains(
            "complete -F _webnn__weights -o nosort -o bashdefault -o default webnn-weights\n"
        ),
        "{script}"
    );
}

/// Sources the bash script in a real bash and asks it to complete `words` (the last one
/// being the word under the cursor): the candidates it offers.
#[cfg(unix)]
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\n\
         _webnn__weights webnn-weights '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words[cword],
        words[cword - 1],
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash must be installed to test the bash completion script");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// clap_complete 4.6.12 spells the bash states of a hyphenated binary's subcommands two
/// ways (clap-rs/clap#6421); without our fix no subcommand flag is ever offered.
#[cfg(unix)]
#[test]
fn bash_completes_subcommands_and_each_subcommands_flags() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("webnn-weights.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();

    assert_eq!(
        bash_completes(&script, &["webnn-weights", "unpa"]),
        ["unpack-weights"]
    );
    assert_eq!(
        bash_completes(&script, &["webnn-weights", "unpack-weights", "--out"]),
        ["--output-dir"]
    );
    assert_eq!(
        bash_completes(&script, &["webnn-weights", "to-safetensors", "--gr"]),
        ["--graph-output"]
    );
    let shells = bash_completes(&script, &["webnn-weights", "completions", ""]);
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        assert!(shells.iter().any(|s| s == shell), "{shells:?}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_choices() {
    let output = cli().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("'tcsh'"), "{stderr}");
    assert!(
        stderr.contains("bash, elvish, fish, powershell, zsh"),
        "{stderr}"
    );
}

/// The first roff request of a page: `.TH NAME 1 ...` after clap_mangen's two-line
/// apostrophe prelude (`.ie` / `.el`), with nothing but requests before it.
fn title_line(roff: &str) -> &str {
    let line = roff
        .lines()
        .find(|line| line.starts_with(".TH "))
        .unwrap_or_else(|| panic!("no .TH header in:\n{roff}"));
    let before: Vec<&str> = roff
        .lines()
        .take_while(|l| !l.starts_with(".TH "))
        .collect();
    assert!(before.iter().all(|l| l.starts_with('.')), "{before:?}");
    line
}

/// The `.SH` section headings of a roff page, in order.
fn sections(roff: &str) -> Vec<&str> {
    roff.lines()
        .filter_map(|line| line.strip_prefix(".SH "))
        .collect()
}

#[test]
fn man_prints_the_main_page_listing_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(
        title_line(&page).starts_with(".TH webnn-weights 1 "),
        "{}",
        title_line(&page)
    );
    assert!(title_line(&page).contains(concat!("webnn-weights ", env!("CARGO_PKG_VERSION"))));
    let sections = sections(&page);
    for expected in ["NAME", "SYNOPSIS", "OPTIONS", "SUBCOMMANDS"] {
        assert!(
            sections.contains(&expected),
            "no {expected} in {sections:?}"
        );
    }
    // roff escapes `-` as `\-`: `webnn\-weights\-pack\-weights(1)`.
    let subcommand_section = page.split(".SH SUBCOMMANDS").nth(1).unwrap();
    for name in subcommands() {
        let reference = format!("webnn-weights-{name}(1)").replace('-', "\\-");
        assert!(
            subcommand_section.contains(&reference),
            "no {reference} in the SUBCOMMANDS section"
        );
    }
    assert!(!subcommand_section.contains("webnn\\-weights\\-help(1)"));
}

#[test]
fn man_output_writes_one_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("share/man/man1");
    cli()
        .args(["man", "--quiet", "--output"])
        .arg(&out)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    let mut expected: Vec<String> = subcommands()
        .iter()
        .map(|name| format!("webnn-weights-{name}.1"))
        .collect();
    expected.push("webnn-weights.1".to_owned());
    expected.sort();
    assert_eq!(listing(&out), expected);

    for name in subcommands() {
        let page = std::fs::read_to_string(out.join(format!("webnn-weights-{name}.1"))).unwrap();
        let title = title_line(&page);
        assert!(
            title.starts_with(&format!(".TH webnn-weights-{name} 1 ")),
            "{title}"
        );
        assert!(sections(&page).contains(&"OPTIONS"), "{name}");
    }
    // A subcommand's own flags are on its page.
    let to_safetensors =
        std::fs::read_to_string(out.join("webnn-weights-to-safetensors.1")).unwrap();
    assert!(to_safetensors.contains("\\-\\-graph\\-output"));
    let unpack = std::fs::read_to_string(out.join("webnn-weights-unpack-weights.1")).unwrap();
    assert!(unpack.contains("\\-\\-output\\-dir"));
}

#[test]
fn man_output_over_an_existing_page_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join("webnn-weights.1");
    std::fs::write(&stale, "stale").unwrap();
    cli()
        .args(["man", "--quiet", "--output"])
        .arg(dir.path())
        .assert()
        .success();
    let page = std::fs::read_to_string(&stale).unwrap();
    assert!(title_line(&page).starts_with(".TH webnn-weights 1 "));
}

#[test]
fn man_output_under_a_file_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    for target in [file.clone(), file.join("man1")] {
        let output = cli()
            .args(["man", "--output"])
            .arg(&target)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("{}: not a folder", file.display())),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert_eq!(listing(dir.path()), ["not-a-folder"]);
}
