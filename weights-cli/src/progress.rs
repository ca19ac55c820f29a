//! What the CLI shows on stderr besides errors: the `--quiet` switch, and a byte progress bar
//! for long copies.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use webnn_weights_tools::weight_tools::Progress;

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets the global `--quiet` flag: no success messages on stderr, no progress bars.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Work above this many bytes shows a progress bar (when stderr is a terminal).
pub const PROGRESS_THRESHOLD: u64 = 64 << 20;

/// A [`Progress`] that draws an indicatif bar on stderr when the work is larger than
/// [`PROGRESS_THRESHOLD`], stderr is a terminal and `--quiet` is off; silent otherwise.
pub struct Bar {
    label: &'static str,
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar labelled `label`; `--quiet` disables it.
    pub fn new(label: &'static str) -> Bar {
        Bar {
            label,
            enabled: !quiet() && std::io::stderr().is_terminal(),
            bar: None,
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, total_bytes: u64) {
        if !self.enabled || total_bytes <= PROGRESS_THRESHOLD {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(self.label);
        self.bar = Some(bar);
    }

    fn advance(&mut self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
