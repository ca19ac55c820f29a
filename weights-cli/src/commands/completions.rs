//! `completions SHELL` and `man [--output DIR]`: shell completion scripts and man pages,
//! generated from the command's own clap definition (`clap_complete`, `clap_mangen`), so
//! they always list exactly the subcommands and flags this binary accepts.

use super::CliError;
use clap::Args;
use clap_complete::Shell;
use std::io::Write;
use std::path::{Path, PathBuf};
use webnn_weights_tools::weight_tools::{Staging, ToolError};

/// The name the completion scripts and man pages are written for.
const BIN_NAME: &str = "webnn-weights";

/// Arguments of `completions`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
webnn-weights completions bash > ~/.local/share/bash-completion/completions/webnn-weights\n  \
webnn-weights completions zsh > ~/.zfunc/_webnn-weights    # a folder on $fpath\n  \
webnn-weights completions fish > ~/.config/fish/completions/webnn-weights.fish\n  \
webnn-weights completions powershell >> $PROFILE\n  \
webnn-weights completions elvish >> ~/.config/elvish/rc.elv\n\n\
The script is printed on standard output; it covers every subcommand and flag of this binary.")]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
webnn-weights man | man -l -\n  \
webnn-weights man --output ~/.local/share/man/man1\n\n\
Without --output, prints the page of `webnn-weights` itself (roff) on standard output. With \
--output DIR, writes webnn-weights.1 and one webnn-weights-COMMAND.1 per subcommand into DIR \
(created if missing), all staged and renamed into place together: on error nothing is left \
behind.")]
pub struct ManArgs {
    /// Folder to write one page per command into (section 1), instead of printing the
    /// main page on standard output.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Runs `completions`: prints the completion script of `args.shell` for `cli` (the whole
/// command definition) on standard output.
pub fn completions(args: &CompletionsArgs, mut cli: clap::Command) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, BIN_NAME, &mut script);
    if args.shell == Shell::Bash {
        script = fix_bash_state_names(script);
    }
    print_stdout(&script)
}

/// Works around clap_complete's bash generator (4.6.12, clap-rs/clap#6421) for a binary
/// name with a hyphen: the loop that follows the typed words names the state of
/// `webnn-weights unpack-weights` `webnn__weights__subcmd__unpack__subcmd__weights`, but
/// the `case` arms that offer each subcommand's flags spell the binary's part
/// `webnn__subcmd__weights`, so no arm matches and no subcommand flag is ever completed.
/// This respells the arms the way the loop does; once clap_complete spells them alike, the
/// pattern no longer occurs and nothing changes.
fn fix_bash_state_names(script: Vec<u8>) -> Vec<u8> {
    let wrong = format!("{}__subcmd__", BIN_NAME.replace('-', "__subcmd__"));
    let right = format!("{}__subcmd__", BIN_NAME.replace('-', "__"));
    match String::from_utf8(script) {
        Ok(text) => text.replace(&wrong, &right).into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

/// Runs `man`: prints the main page, or writes every page into `args.output`.
pub fn man(args: &ManArgs, cli: clap::Command) -> Result<(), CliError> {
    let cli = prepare_for_man(cli);
    match &args.output {
        None => print_stdout(&render_page(cli)?.1),
        Some(dir) => {
            let mut pages = Vec::new();
            render_pages(cli, &mut pages)?;
            write_pages(dir, &pages)?;
            super::weight_tools_common::note(format_args!(
                "wrote {} into {}",
                super::counted(pages.len(), "man page"),
                dir.display()
            ));
            Ok(())
        }
    }
}

/// The definition the pages are rendered from: without clap's `help` subcommand (it has
/// no page of its own, as in `clap_mangen::generate_to`), and built, which names each
/// subcommand `webnn-weights-NAME`.
fn prepare_for_man(cli: clap::Command) -> clap::Command {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    cli
}

/// The file name (`webnn-weights.1`, `webnn-weights-convert.1`, ...) and roff text of
/// `cmd`'s page. Every page names the package version as its source (clap_mangen would
/// give subcommand pages the bare subcommand name); no date, so pages are reproducible.
fn render_page(cmd: clap::Command) -> Result<(String, Vec<u8>), CliError> {
    let man = clap_mangen::Man::new(cmd)
        .source(concat!("webnn-weights ", env!("CARGO_PKG_VERSION")))
        .manual("webnn-weights manual");
    let mut roff = Vec::new();
    man.render(&mut roff)
        .map_err(|e| CliError::Input(format!("cannot render the man page: {e}")))?;
    Ok((man.get_filename(), roff))
}

/// Renders the page of `cmd` and then of every visible subcommand, recursively.
fn render_pages(cmd: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<(), CliError> {
    let subcommands: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    pages.push(render_page(cmd)?);
    for sub in subcommands {
        render_pages(sub, pages)?;
    }
    Ok(())
}

/// Writes `pages` into `dir` all together (staged, then renamed).
fn write_pages(dir: &Path, pages: &[(String, Vec<u8>)]) -> Result<(), CliError> {
    // The nearest existing ancestor (or `dir` itself) must be a folder.
    if let Some(existing) = dir.ancestors().find(|a| a.exists()) {
        if !existing.is_dir() {
            return Err(CliError::Input(format!(
                "{}: not a folder (--output {} names the folder the man pages go into)",
                existing.display(),
                dir.display()
            )));
        }
    }
    let mut staging = Staging::new();
    staging.ensure_dir(dir)?;
    for (name, roff) in pages {
        let path = dir.join(name);
        staging.stage(&path, |w| {
            w.write_all(roff).map_err(|e| ToolError::io(&path, e))
        })?;
    }
    staging.commit()?;
    Ok(())
}

/// Writes `bytes` on standard output; a closed pipe or full disk is an input/output error
/// (exit status 1), not a panic.
fn print_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Input(format!("cannot write to standard output: {e}")))
}
