//! All-or-nothing installation of several output files.

use super::ToolError;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use webnn_weights_atomic as atomic;

/// Stages output files as temporary files beside their destinations and installs them
/// all with [`Staging::commit`].
///
/// Until `commit`, nothing is visible under a destination name. Dropping a `Staging`
/// without committing removes every temporary file and every folder that
/// [`Staging::ensure_dir`] created, so a failed operation leaves nothing behind. The
/// renames in `commit` run only after every file is complete and synced, in staging order,
/// as one set (`webnn_weights_atomic::install_all_staged`): if a rename fails (rare: the
/// folder changed under us, or a destination is a folder), every file that commit had
/// replaced is put back, byte for byte, every new file is removed again with the folders
/// made for it, and the error names the destination that failed, and also any file that
/// could not be put back (`webnn_weights_atomic::RestoreError`).
///
/// ```
/// use webnn_weights_tools::weight_tools::{Staging, ToolError};
/// let dir = tempfile::tempdir().unwrap();
/// let mut staging = Staging::new();
/// staging.ensure_dir(&dir.path().join("out")).unwrap();
/// let dest = dir.path().join("out/a.bin");
/// staging.stage(&dest, |w| std::io::Write::write_all(w, b"a").map_err(|e| ToolError::io(&dest, e))).unwrap();
/// drop(staging); // not committed: no file, no folder
/// assert!(!dir.path().join("out").exists());
/// ```
#[derive(Debug, Default)]
pub struct Staging {
    staged: Vec<(atomic::StagedFile, PathBuf)>,
    created_dirs: Vec<PathBuf>,
}

impl Staging {
    /// An empty staging area.
    pub fn new() -> Staging {
        Staging::default()
    }

    /// Creates `dir` and any missing ancestors, remembering the ones it created so they
    /// are removed again if the operation fails.
    pub fn ensure_dir(&mut self, dir: &Path) -> Result<(), ToolError> {
        let mut missing = Vec::new();
        let mut current = Some(dir);
        while let Some(d) = current {
            if d.as_os_str().is_empty() || d.is_dir() {
                break;
            }
            missing.push(d.to_path_buf());
            current = d.parent();
        }
        for d in missing.into_iter().rev() {
            match fs::create_dir(&d) {
                Ok(()) => self.created_dirs.push(d),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => return Err(ToolError::io(d, e)),
            }
        }
        Ok(())
    }

    /// Writes a temporary file for `destination` with what `write` produces (through a
    /// 1 MiB buffer), syncs and closes it, and keeps it for [`Staging::commit`].
    pub fn stage<F>(&mut self, destination: &Path, write: F) -> Result<(), ToolError>
    where
        F: FnOnce(&mut BufWriter<&mut File>) -> Result<(), ToolError>,
    {
        let mut temp = atomic::create_temp(destination).map_err(|e| {
            ToolError::io(
                destination,
                std::io::Error::new(e.kind(), format!("cannot create a temporary file: {e}")),
            )
        })?;
        {
            let mut writer = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
            write(&mut writer)?;
            writer.flush().map_err(|e| ToolError::io(destination, e))?;
        }
        let path = atomic::stage(temp).map_err(|e| ToolError::io(destination, e))?;
        self.staged.push((path, destination.to_path_buf()));
        Ok(())
    }

    /// Keeps a file staged elsewhere (the SafeTensors writer's) for [`Staging::commit`].
    pub(crate) fn push(&mut self, staged: atomic::StagedFile, destination: PathBuf) {
        self.staged.push((staged, destination));
    }

    /// Moves everything `other` staged (and the folders it created) to the end of this
    /// staging area: its files are installed by this one's [`Staging::commit`], after the
    /// files staged here so far.
    pub fn append(&mut self, mut other: Staging) {
        self.staged.append(&mut other.staged);
        self.created_dirs.append(&mut other.created_dirs);
    }

    /// Renames every staged file to its destination, in staging order, as one set: on
    /// failure every destination is as it was before (see [`Staging`]).
    pub fn commit(mut self) -> Result<(), ToolError> {
        // All or nothing (`install_all_staged` puts back what it replaced); on failure the
        // created folders go in `Drop`.
        atomic::install_all_staged(std::mem::take(&mut self.staged))
            .map_err(|(destination, e)| ToolError::io(&destination, e))?;
        // Installed files live in the created folders: keep them.
        self.created_dirs.clear();
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Removes the temporary files (a StagedFile deletes on drop) ...
        self.staged.clear();
        // ... then the folders made for them, innermost first; a folder that is not
        // empty (someone else wrote there meanwhile) stays.
        for dir in self.created_dirs.drain(..).rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}
