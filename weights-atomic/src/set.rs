//! Installing several files as one set ([`install_set`]), so that a failure loses nothing.
//!
//! Before a rename replaces a file, that file is kept under a marked name in its folder: a
//! second hard link to it (the destination stays in place meanwhile), or, where the file
//! system has no hard links, the file itself renamed aside. When a later step fails, the set
//! is undone in reverse order: every kept file is renamed back over its destination and every
//! new file that replaced nothing is removed. When every rename succeeded, the kept files are
//! removed. A failure to undo is reported with the failure that caused the undo
//! ([`RestoreError`]), never dropped.

use crate::{create_marked, sync_parent, temp_location};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The file-system calls a set install makes: [`Std`]'s, or in this crate's tests calls that
/// fail on demand (a private seam: nothing outside the crate can pass other calls).
pub(crate) trait Ops {
    /// Renames `from` to `to`, replacing a file there.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes `link` a second name of the file `original`; `AlreadyExists` when `link` exists.
    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The standard library's calls.
pub(crate) struct Std;

impl Ops for Std {
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        fs::hard_link(original, link)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// Where the file a destination held before the install is kept meanwhile.
#[derive(Debug)]
enum Kept {
    /// A second hard link to it: the destination kept its file until the rename.
    Linked(PathBuf),
    /// The file itself, renamed aside (no hard links here): the destination is empty until
    /// the rename.
    Aside(PathBuf),
}

impl Kept {
    fn path(&self) -> &Path {
        match self {
            Kept::Linked(path) | Kept::Aside(path) => path,
        }
    }
}

/// One destination of a set, as far as the install got.
struct Step<'a> {
    destination: &'a Path,
    /// Its previous file, when it had one.
    kept: Option<Kept>,
    /// Whether the new file was renamed over it.
    installed: bool,
}

/// A set install that failed: the position of the destination that failed and the error
/// (a [`RestoreError`] inside it when undoing the install failed too).
#[derive(Debug)]
pub(crate) struct SetFailure {
    pub index: usize,
    pub error: io::Error,
}

/// Renames each `(temporary, destination)` of `files` in order, keeping every file it
/// replaces until all succeeded (then the kept files are removed). When a step fails, the
/// install is undone (see the module) and the failure gives the position of the destination
/// that failed, and its error through `context` (given the destination), then with what the
/// undo could not do. The folders concerned are synced either way (best effort).
///
/// A kept file that cannot be removed after a successful install stays under its marked
/// name (the set is installed; it is a leftover like a killed process's).
pub(crate) fn install_set(
    files: &[(&Path, &Path)],
    ops: &dyn Ops,
    context: &dyn Fn(&Path, io::Error) -> io::Error,
) -> Result<(), SetFailure> {
    let mut steps: Vec<Step<'_>> = Vec::with_capacity(files.len());
    let mut failure = None;
    for (index, &(temporary, destination)) in files.iter().enumerate() {
        let kept = match keep_previous(destination, ops) {
            Ok(kept) => kept,
            Err(e) => {
                let error = io::Error::new(
                    e.kind(),
                    format!("cannot keep the previous file to put it back on failure: {e}"),
                );
                failure = Some((index, error));
                break;
            }
        };
        let renamed = ops.rename(temporary, destination);
        let failed = renamed.is_err();
        steps.push(Step {
            destination,
            kept,
            installed: !failed,
        });
        if let Err(error) = renamed {
            failure = Some((index, error));
            break;
        }
    }
    let result = match failure {
        None => {
            for step in &steps {
                if let Some(kept) = &step.kept {
                    // Installed: a copy left here would be a leftover, not a loss.
                    let _ = ops.remove_file(kept.path());
                }
            }
            Ok(())
        }
        Some((index, cause)) => {
            let cause = context(files[index].1, cause);
            let problems = undo(steps.drain(..).rev().collect(), ops);
            let error = if problems.is_empty() {
                cause
            } else {
                io::Error::new(cause.kind(), RestoreError { cause, problems })
            };
            Err(SetFailure { index, error })
        }
    };
    sync_folders(files.iter().map(|&(_, destination)| destination));
    result
}

/// Keeps the file at `destination`, if there is one, under a marked name beside it: a hard
/// link, or the file renamed aside where that fails. A folder is not kept: no rename of a
/// file replaces a folder, so the install's rename fails there.
fn keep_previous(destination: &Path, ops: &dyn Ops) -> io::Result<Option<Kept>> {
    match fs::symlink_metadata(destination) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(meta) if meta.is_dir() => return Ok(None),
        Ok(_) => {}
    }
    let (dir, _, prefix) = temp_location(destination)?;
    let link_error = match create_marked(dir, &prefix, |link| ops.hard_link(destination, link)) {
        Ok((link, ())) => return Ok(Some(Kept::Linked(link))),
        // Gone meanwhile: there is nothing to keep.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => e,
    };
    // No hard links here (or not for this file): the file itself goes aside, over an empty
    // placeholder that reserves a marked name.
    let (aside, placeholder) = create_marked(dir, &prefix, |path| {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    })?;
    drop(placeholder);
    match ops.rename(destination, &aside) {
        Ok(()) => Ok(Some(Kept::Aside(aside))),
        Err(e) => {
            let _ = fs::remove_file(&aside);
            Err(io::Error::new(
                e.kind(),
                format!("no hard link ({link_error}), and it cannot be moved aside: {e}"),
            ))
        }
    }
}

/// Undoes `steps` (given last first): kept files back over their destinations, new files
/// that replaced nothing removed. Returns what could not be undone.
fn undo(steps: Vec<Step<'_>>, ops: &dyn Ops) -> Vec<Problem> {
    let mut problems = Vec::new();
    for step in steps {
        let destination = step.destination.to_path_buf();
        match (step.installed, step.kept) {
            // A hard link, or a file moved aside: back over (or into) its place.
            (true, Some(kept)) | (false, Some(kept @ Kept::Aside(_))) => {
                if let Err(error) = ops.rename(kept.path(), &destination) {
                    problems.push(Problem::NotPutBack {
                        destination,
                        kept: kept.path().to_path_buf(),
                        error,
                    });
                }
            }
            (true, None) => {
                if let Err(error) = ops.remove_file(&destination) {
                    problems.push(Problem::NewNotRemoved { destination, error });
                }
            }
            // The rename failed and the destination still holds its file: only the extra
            // link goes.
            (false, Some(Kept::Linked(link))) => {
                if let Err(error) = ops.remove_file(&link) {
                    problems.push(Problem::CopyNotRemoved {
                        destination,
                        copy: link,
                        error,
                    });
                }
            }
            (false, None) => {}
        }
    }
    problems
}

/// Syncs each folder of `destinations` once (the files of a set usually share one).
fn sync_folders<'a>(destinations: impl Iterator<Item = &'a Path>) {
    let mut synced: Vec<&Path> = Vec::new();
    for destination in destinations {
        let parent = destination.parent().unwrap_or(Path::new(""));
        if !synced.contains(&parent) {
            synced.push(parent);
            sync_parent(destination);
        }
    }
}

/// One thing that undoing a failed set install could not do.
#[derive(Debug)]
enum Problem {
    /// The destination's previous file could not be renamed back: it is still at `kept`.
    NotPutBack {
        destination: PathBuf,
        kept: PathBuf,
        error: io::Error,
    },
    /// A new file installed where there was none could not be removed.
    NewNotRemoved {
        destination: PathBuf,
        error: io::Error,
    },
    /// The destination is as it was, but the extra link kept to it could not be removed.
    CopyNotRemoved {
        destination: PathBuf,
        copy: PathBuf,
        error: io::Error,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotPutBack {
                destination,
                kept,
                error,
            } => write!(
                f,
                "the previous {} could not be put back ({error}); it is kept as {}",
                destination.display(),
                kept.display()
            ),
            Problem::NewNotRemoved { destination, error } => write!(
                f,
                "the new {} (there was no file there before) could not be removed ({error})",
                destination.display()
            ),
            Problem::CopyNotRemoved {
                destination,
                copy,
                error,
            } => write!(
                f,
                "{} is unchanged, but the copy of it kept as {} could not be removed ({error})",
                destination.display(),
                copy.display()
            ),
        }
    }
}

/// A set install (`write_set_by_path`, `install_all_staged`) failed, and undoing it failed
/// too: some destination is not as it was before.
///
/// It travels inside the [`io::Error`] the installer returns (with the kind of the original
/// failure; [`io::Error::get_ref`] and `downcast_ref` reach it). Its message gives both the
/// original failure and every step of the undo that failed, naming the files: a destination
/// whose previous file could not be put back (that file is then still at the marked name
/// given, byte for byte), or a new file that could not be removed where there was none
/// before. [`std::error::Error::source`] is `None`: the original failure is part of the
/// message (and [`RestoreError::cause`]).
#[derive(Debug)]
pub struct RestoreError {
    cause: io::Error,
    problems: Vec<Problem>,
}

impl RestoreError {
    /// The failure that made the install undo itself.
    pub fn cause(&self) -> &io::Error {
        &self.cause
    }

    /// The destinations left otherwise than they were before the install, each with the
    /// marked file that still holds its previous version (`None` where there was no file
    /// before and the new one could not be removed).
    pub fn not_restored(&self) -> Vec<(&Path, Option<&Path>)> {
        self.problems
            .iter()
            .filter_map(|p| match p {
                Problem::NotPutBack {
                    destination, kept, ..
                } => Some((destination.as_path(), Some(kept.as_path()))),
                Problem::NewNotRemoved { destination, .. } => Some((destination.as_path(), None)),
                Problem::CopyNotRemoved { .. } => None,
            })
            .collect()
    }
}

impl fmt::Display for RestoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; undoing the install failed too: ", self.cause)?;
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RestoreError {}

#[cfg(test)]
mod tests;
