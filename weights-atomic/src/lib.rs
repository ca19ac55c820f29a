//! # webnn-weights-atomic
//!
//! Installing files atomically: write a uniquely named temporary file in the destination
//! folder, flush and sync it, rename it over the destination, then sync the folder. Shared by
//! the build helper (artifacts under `OUT_DIR`) and the tools (the SafeTensors writer, the
//! blob tools, the CLI's outputs), so that a build script compiles this and not the tools.
//!
//! **One file** ([`write_file`], [`write_by_path`], [`install_staged`]): a failure at any
//! point removes the temporary file and leaves the destination as it was (absent, or the
//! previous complete version); a reader sees the old file or the complete new one, never a
//! partial one, even when the process is killed.
//!
//! **A set of files** ([`write_set_by_path`], [`install_all_staged`]): every file is complete
//! and synced before the first rename; the renames then run in the order given. Before a
//! rename replaces a file, that file is kept under a marked name in its folder (a second hard
//! link, so the destination stays in place; where the file system has no hard links, the file
//! itself renamed aside). If a rename fails, every file the set replaced is renamed back over
//! its destination and every new file that replaced nothing is removed, so the destinations
//! are as they were: each absent or its previous file, byte for byte. If one of those steps
//! fails too, the error says so ([`RestoreError`]: the original failure, and each file that
//! could not be put back with the marked name its previous version is still kept under).
//! After a successful install the kept files are removed. A set is not atomic against a
//! kill: a process killed between two renames leaves the earlier destinations new and the
//! later ones old (each file complete), with the previous versions of the new ones still kept
//! under marked names beside them. Where a file was moved aside (no hard links), a kill after
//! that move and before its replacement's rename leaves that destination absent, its previous
//! file kept under the marked name.
//!
//! Temporary (and kept) files are named `.<file name>.webnn-weights-tmp<unique>` (the process
//! id, a per-process counter and the clock's nanoseconds; std only, no dependency) so that
//! leftovers of a killed process are recognizable; producers that make temporary files of
//! their own work inside a folder of that name ([`write_by_path`]). Nothing in this crate
//! reads such names: discovery looks only for the exact candidate names of the format.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

mod set;

pub use set::RestoreError;

/// The marker in the name of every temporary file (or folder) this crate creates.
pub const TEMP_MARKER: &str = ".webnn-weights-tmp";

/// Writes `destination` atomically with the bytes that `write` produces.
///
/// The destination is never removed or truncated before its replacement is complete.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.bin");
/// webnn_weights_atomic::write_file(&path, |w| {
///     use std::io::Write;
///     w.write_all(b"hello")
/// }).unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"hello");
/// ```
pub fn write_file<F>(destination: &Path, write: F) -> io::Result<()>
where
    F: FnOnce(&mut BufWriter<&mut File>) -> io::Result<()>,
{
    let mut temp = create_temp(destination)?;
    {
        let mut writer = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
        write(&mut writer)?;
        writer.flush()?;
    }
    install(temp, destination)
}

/// The folder a temporary for `destination` goes in, the destination's file name, and the
/// marked name prefix the temporary gets: `.<file name>.webnn-weights-tmp`.
fn temp_location(destination: &Path) -> io::Result<(&Path, &std::ffi::OsStr, String)> {
    let file_name = destination.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", destination.display()),
        )
    })?;
    let dir = match destination.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        // Say so plainly, rather than through the temporary file's name.
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("folder {} does not exist", dir.display()),
        ));
    }
    let prefix = format!(".{}{}", file_name.to_string_lossy(), TEMP_MARKER);
    Ok((dir, file_name, prefix))
}

/// How many names [`create_marked`] tries before it gives up: another process would have
/// to create the same process id, counter and nanoseconds again and again.
const ATTEMPTS: u32 = 64;

/// Creates `dir/<prefix><unique>` with `create` (which must fail with `AlreadyExists` when
/// the name is taken) and returns its path and what `create` returned.
fn create_marked<T>(
    dir: &Path,
    prefix: &str,
    create: impl Fn(&Path) -> io::Result<T>,
) -> io::Result<(PathBuf, T)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{prefix}{}-{count}-{nanos}", process_id()));
        match create(&path) {
            Ok(made) => return Ok((path, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "no free temporary name {prefix}… in {} after {ATTEMPTS} attempts: {}",
            dir.display(),
            last.map_or_else(String::new, |e| e.to_string())
        ),
    ))
}

/// The process id, part of every temporary name. WASI has none (std's `process::id` panics
/// there): 0, the counter and the clock keep names apart within the one process.
fn process_id() -> u32 {
    #[cfg(target_os = "wasi")]
    return 0;
    #[cfg(not(target_os = "wasi"))]
    std::process::id()
}

/// A temporary file beside its destination, open for writing: removed when dropped, unless
/// [`TempFile::persist`] or [`stage`] took it over. Made by [`create_temp`].
#[derive(Debug)]
pub struct TempFile {
    // Declared first, so closed before `path` removes the file (Windows removes no open
    // file).
    file: File,
    path: StagedFile,
}

impl TempFile {
    /// The open file.
    pub fn as_file(&self) -> &File {
        &self.file
    }

    /// The open file, to write.
    pub fn as_file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Where the file is (beside its destination, a marked name).
    pub fn path(&self) -> &Path {
        self.path.path()
    }

    /// Closes the file and renames it to `destination` as it is (no sync: [`write_file`]
    /// and [`install_staged`] sync first). On failure the temporary file is removed.
    pub fn persist(self, destination: &Path) -> io::Result<()> {
        let TempFile { file, path } = self;
        drop(file);
        path.rename(destination)
    }
}

/// A filled, synced and closed temporary file waiting to be installed by
/// [`install_staged`]; removed when dropped. Made by [`stage`].
#[derive(Debug)]
pub struct StagedFile {
    path: PathBuf,
}

impl StagedFile {
    /// Where the file is (beside its destination, a marked name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the file to `destination`; removes it when that fails.
    fn rename(self, destination: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, destination)?;
        self.installed();
        Ok(())
    }

    /// The file was renamed away: nothing to remove any more.
    fn installed(mut self) {
        self.path = PathBuf::new();
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A temporary folder beside a destination, removed with its contents when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(dir: &Path, prefix: &str) -> io::Result<TempDir> {
        let (path, ()) = create_marked(dir, prefix, |path| std::fs::create_dir(path))?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Creates an empty, exclusively created temporary file beside `destination`, with the
/// permissions of a new file (`File::create`'s: 0666 less the umask on Unix).
///
/// Fill it through [`TempFile::as_file_mut`], then [`stage`] and [`install_staged`] it, or
/// [`TempFile::persist`] it; dropping it instead removes it.
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.bin");
/// let mut temp = webnn_weights_atomic::create_temp(&path).unwrap();
/// temp.as_file_mut().write_all(b"hi").unwrap();
/// let staged = webnn_weights_atomic::stage(temp).unwrap();
/// webnn_weights_atomic::install_staged(staged, &path).unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"hi");
/// ```
pub fn create_temp(destination: &Path) -> io::Result<TempFile> {
    let (dir, _, prefix) = temp_location(destination)?;
    let (path, file) = create_marked(dir, &prefix, |path| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
    })?;
    Ok(TempFile {
        file,
        path: StagedFile { path },
    })
}

/// Writes `destination` atomically through a producer that writes a file *by path* and may
/// create temporary files of its own beside that path (such as
/// `safetensors::serialize_to_file`, whose private temporary file carries no marker).
///
/// `write` is given a path inside a fresh folder `.<file name>.webnn-weights-tmp<unique>`
/// beside `destination`, so everything it creates carries the marker, even when the
/// process is killed; the finished file gets the permissions of a new file (like
/// `File::create`), is synced, renamed to `destination`, and the folder is removed. On
/// any failure the folder and its contents are removed and the destination is left as it
/// was. I/O errors of these steps become `E` through `io_error`.
///
/// ```
/// use std::io;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("out.bin");
/// webnn_weights_atomic::write_by_path(&path, |p| std::fs::write(p, b"hi"), |e: io::Error| e)
///     .unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"hi");
/// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1); // no folder left
/// ```
pub fn write_by_path<E, W, I>(destination: &Path, write: W, io_error: I) -> Result<(), E>
where
    W: FnOnce(&Path) -> Result<(), E>,
    I: Fn(io::Error) -> E,
{
    let staged = stage_by_path(destination, write, &io_error)?;
    install_staged(staged, destination).map_err(io_error)
}

/// Stages a file for `destination` through a producer that writes a file *by path* (like
/// [`write_by_path`]), to be installed later with others by [`install_all_staged`].
///
/// `write` is given a path inside a fresh marked temporary folder beside `destination`; the
/// finished file gets the permissions of a new file, is synced, and is moved out of the
/// folder to a marked temporary name beside `destination` (the folder is removed). Nothing
/// is visible under the destination's name; dropping the returned [`StagedFile`] removes the
/// file. On any failure nothing is left. I/O errors of these steps become `E` through
/// `io_error`.
///
/// ```
/// use std::io;
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
/// let staged = vec![
///     (webnn_weights_atomic::stage_by_path(&a, |p| std::fs::write(p, b"a"), |e: io::Error| e)
///         .unwrap(), a.clone()),
///     (webnn_weights_atomic::stage_by_path(&b, |p| std::fs::write(p, b"b"), |e: io::Error| e)
///         .unwrap(), b.clone()),
/// ];
/// assert!(!a.exists()); // staged, not installed
/// webnn_weights_atomic::install_all_staged(staged).unwrap();
/// assert_eq!(std::fs::read(&b).unwrap(), b"b");
/// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2); // nothing else left
/// ```
pub fn stage_by_path<E, W, I>(destination: &Path, write: W, io_error: I) -> Result<StagedFile, E>
where
    W: FnOnce(&Path) -> Result<(), E>,
    I: Fn(io::Error) -> E,
{
    let (dir, file_name, prefix) = temp_location(destination).map_err(&io_error)?;
    let folder = TempDir::new(dir, &prefix).map_err(&io_error)?;
    let path = folder.path.join(file_name);
    // The permissions a new file gets here (0666 less the umask on Unix); the producer
    // may replace the file by a private temporary one, so they are reapplied below.
    let permissions = File::create(&path)
        .and_then(|f| f.metadata())
        .map_err(&io_error)?
        .permissions();
    write(&path)?;
    let file = File::open(&path).map_err(&io_error)?;
    file.set_permissions(permissions).map_err(&io_error)?;
    file.sync_all().map_err(&io_error)?;
    drop(file);
    // Out of the folder, over an empty placeholder that reserves a marked name of its own.
    let (staged, placeholder) = create_marked(dir, &prefix, |path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    })
    .map_err(&io_error)?;
    drop(placeholder);
    let staged = StagedFile { path: staged };
    std::fs::rename(&path, staged.path()).map_err(&io_error)?;
    // Only the (now empty) folder is left.
    drop(folder);
    Ok(staged)
}

/// Writes several files of one folder as a set, through a producer that writes files
/// *by path* (like [`write_by_path`]): `write` gets one path per destination, all inside
/// a fresh marked temporary folder beside the first destination. Once `write` succeeded,
/// every file gets the permissions of a new file and is synced, then they are renamed
/// into place **in the order given** (put an index last: readers that find it find every
/// file it names). Nothing is installed when `write` or a sync fails. If a rename fails,
/// the install is undone as the [crate docs](crate) say: every file it replaced is put back
/// and every new file that replaced nothing is removed; the error names the destination that
/// failed (and, in a [`RestoreError`], anything that could not be put back).
///
/// Every destination must be in the folder of the first and have a distinct file name.
///
/// ```
/// use std::io;
/// let dir = tempfile::tempdir().unwrap();
/// let (a, index) = (dir.path().join("a.bin"), dir.path().join("a.index"));
/// webnn_weights_atomic::write_set_by_path(
///     &[a.clone(), index.clone()],
///     |paths| { std::fs::write(&paths[0], b"data")?; std::fs::write(&paths[1], b"index") },
///     |e: io::Error| e,
/// ).unwrap();
/// assert_eq!(std::fs::read(&index).unwrap(), b"index");
/// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2); // no folder left
/// ```
pub fn write_set_by_path<E, W, I>(
    destinations: &[std::path::PathBuf],
    write: W,
    io_error: I,
) -> Result<(), E>
where
    W: FnOnce(&[std::path::PathBuf]) -> Result<(), E>,
    I: Fn(io::Error) -> E,
{
    write_set_by_path_with(destinations, write, io_error, &set::Std)
}

/// [`write_set_by_path`] with the file-system calls of the install given.
fn write_set_by_path_with<E, W, I>(
    destinations: &[std::path::PathBuf],
    write: W,
    io_error: I,
    ops: &dyn set::Ops,
) -> Result<(), E>
where
    W: FnOnce(&[std::path::PathBuf]) -> Result<(), E>,
    I: Fn(io::Error) -> E,
{
    let Some(first) = destinations.first() else {
        return Ok(());
    };
    let (dir, _, prefix) = temp_location(first).map_err(&io_error)?;
    let mut names = Vec::with_capacity(destinations.len());
    for destination in destinations {
        let (other_dir, name, _) = temp_location(destination).map_err(&io_error)?;
        if other_dir != dir || names.contains(&name) {
            return Err(io_error(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a distinct file in {}",
                    destination.display(),
                    dir.display()
                ),
            )));
        }
        names.push(name);
    }
    let folder = TempDir::new(dir, &prefix).map_err(&io_error)?;
    let paths: Vec<std::path::PathBuf> = names.iter().map(|n| folder.path.join(n)).collect();
    let permissions = File::create(&paths[0])
        .and_then(|f| f.metadata())
        .map_err(&io_error)?
        .permissions();
    write(&paths)?;
    for path in &paths {
        let file = File::open(path).map_err(&io_error)?;
        file.set_permissions(permissions.clone())
            .map_err(&io_error)?;
        file.sync_all().map_err(&io_error)?;
    }
    let files: Vec<(&Path, &Path)> = paths
        .iter()
        .zip(destinations)
        .map(|(from, to)| (from.as_path(), to.as_path()))
        .collect();
    let context = |destination: &Path, e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("cannot install {}: {e}", destination.display()),
        )
    };
    set::install_set(&files, ops, &context).map_err(|failure| io_error(failure.error))?;
    // Everything is installed or put back: only the (now empty) folder is left.
    drop(folder);
    Ok(())
}

/// Installs staged files ([`stage`], [`stage_by_path`]) at their destinations, **in the
/// order given**, as a set ([crate docs](crate)): if a rename fails, every file it replaced
/// is put back and every new file that replaced nothing is removed, the staged files not
/// reached are discarded, and the error names the destination that failed (its
/// [`io::Error`] carries a [`RestoreError`] when something could not be put back). The
/// destinations may be in different folders.
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let (data, index) = (dir.path().join("d.bin"), dir.path().join("d.index"));
/// let mut staged = Vec::new();
/// for (path, text) in [(&data, "data"), (&index, "index")] {
///     let mut temp = webnn_weights_atomic::create_temp(path).unwrap();
///     temp.as_file_mut().write_all(text.as_bytes()).unwrap();
///     staged.push((webnn_weights_atomic::stage(temp).unwrap(), path.clone()));
/// }
/// webnn_weights_atomic::install_all_staged(staged).unwrap();
/// assert_eq!(std::fs::read(&index).unwrap(), b"index");
/// ```
pub fn install_all_staged(files: Vec<(StagedFile, PathBuf)>) -> Result<(), (PathBuf, io::Error)> {
    install_all_staged_with(files, &set::Std)
}

/// [`install_all_staged`] with the file-system calls of the install given.
fn install_all_staged_with(
    files: Vec<(StagedFile, PathBuf)>,
    ops: &dyn set::Ops,
) -> Result<(), (PathBuf, io::Error)> {
    let pairs: Vec<(&Path, &Path)> = files
        .iter()
        .map(|(staged, to)| (staged.path(), to.as_path()))
        .collect();
    // The error goes with the destination's path: no need to name it again.
    match set::install_set(&pairs, ops, &|_, e| e) {
        Ok(()) => {
            for (staged, _) in files {
                staged.installed();
            }
            Ok(())
        }
        // Dropping `files` removes the staged files not reached (those installed were
        // renamed away, then replaced or removed by the undo).
        Err(failure) => Err((files[failure.index].1.clone(), failure.error)),
    }
}

/// Syncs `temp`, renames it to `destination` and syncs the folder.
fn install(temp: TempFile, destination: &Path) -> io::Result<()> {
    install_staged(stage(temp)?, destination)
}

/// Syncs and closes a filled temporary file, keeping only its path, so that many outputs
/// can be staged without holding a descriptor each; [`install_staged`] installs it later.
/// Dropping the returned [`StagedFile`] removes the file.
pub fn stage(temp: TempFile) -> io::Result<StagedFile> {
    temp.as_file().sync_all()?;
    let TempFile { file, path } = temp;
    drop(file);
    Ok(path)
}

/// Renames a file staged by [`stage`] to `destination` and syncs the folder; on failure
/// the staged file is removed.
pub fn install_staged(temp: StagedFile, destination: &Path) -> io::Result<()> {
    temp.rename(destination)?;
    sync_parent(destination);
    Ok(())
}

/// Best effort: makes the rename durable. Folders cannot be opened for syncing on every
/// platform, and a failure here does not undo a completed rename, so it is not reported.
fn sync_parent(destination: &Path) {
    #[cfg(unix)]
    if let Some(parent) = destination.parent() {
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = destination;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_leaves_old_version_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        std::fs::write(&path, b"old").unwrap();
        let err = write_file(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn replaces_existing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        std::fs::write(&path, b"old").unwrap();
        write_file(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn installed_files_get_the_permissions_of_a_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("a.bin");
        write_file(&ours, |w| w.write_all(b"x")).unwrap();
        let plain = dir.path().join("b.bin");
        File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

    #[test]
    fn write_by_path_keeps_producer_temporaries_inside_a_marked_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        std::fs::write(&path, b"old").unwrap();
        // A producer that leaves its own unmarked temporary file and then fails.
        let err = write_by_path(
            &path,
            |p| {
                let parent = p.parent().unwrap();
                let folder = parent.file_name().unwrap().to_string_lossy().into_owned();
                assert!(folder.starts_with(".a.bin.webnn-weights-tmp"), "{folder}");
                std::fs::write(parent.join(".tmpXYZ"), b"partial")?;
                Err(io::Error::other("boom"))
            },
            |e| e,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A producer that replaces its file with a private (0600) one.
        write_by_path(
            &path,
            |p| {
                let temp = p.with_extension("private");
                std::fs::write(&temp, b"new")?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600))?;
                }
                std::fs::rename(&temp, p)
            },
            |e| e,
        )
        .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let plain = dir.path().join("plain");
            File::create(&plain).unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&plain));
        }
    }

    #[test]
    fn concurrent_temporaries_get_distinct_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        let names: Vec<PathBuf> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        // Kept until every worker made its own.
                        (0..16)
                            .map(|_| create_temp(&path).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let temps: Vec<Vec<TempFile>> =
                workers.into_iter().map(|w| w.join().unwrap()).collect();
            temps
                .iter()
                .flatten()
                .map(|t| t.path().to_path_buf())
                .collect()
        });
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 8 * 16);
        for name in &names {
            let file = name.file_name().unwrap().to_string_lossy().into_owned();
            assert!(file.starts_with(".a.bin.webnn-weights-tmp"), "{file}");
        }
        // All dropped: none left.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn dropped_and_staged_temporaries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        let mut temp = create_temp(&path).unwrap();
        temp.as_file_mut().write_all(b"x").unwrap();
        let temp_path = temp.path().to_path_buf();
        assert!(temp_path.exists());
        drop(temp);
        assert!(!temp_path.exists());
        let staged = stage(create_temp(&path).unwrap()).unwrap();
        let staged_path = staged.path().to_path_buf();
        assert!(staged_path.exists());
        drop(staged);
        assert!(!staged_path.exists());
        assert!(!path.exists());
    }

    #[test]
    fn staged_files_install_and_failed_installs_remove_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        let mut temp = create_temp(&path).unwrap();
        temp.as_file_mut().write_all(b"staged").unwrap();
        install_staged(stage(temp).unwrap(), &path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"staged");
        // A rename onto a folder that is not empty fails on every platform.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        let staged = stage(create_temp(&blocked).unwrap()).unwrap();
        let staged_path = staged.path().to_path_buf();
        assert!(install_staged(staged, &blocked).is_err());
        assert!(!staged_path.exists());
        let temp = create_temp(&blocked).unwrap();
        let temp_path = temp.path().to_path_buf();
        assert!(temp.persist(&blocked).is_err());
        assert!(!temp_path.exists());
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["a.bin", "blocked"]);
    }

    /// Both installers of a set into an empty folder, with a failure injected at each
    /// rename in turn (the destination is a folder that is not empty, which no rename
    /// replaces): the files installed before it, which replaced nothing, are removed, the
    /// failing destination is named and left as it was, no temporary remains, and a set
    /// without a failure installs every file. (Over an existing set: `set::tests`.)
    #[test]
    fn a_failed_rename_anywhere_in_a_set_installs_nothing() {
        const FILES: usize = 3;
        for fail_at in 0..=FILES {
            for staged_api in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let paths: Vec<PathBuf> = (0..FILES)
                    .map(|i| dir.path().join(format!("f{i}")))
                    .collect();
                if fail_at < FILES {
                    std::fs::create_dir_all(paths[fail_at].join("inside")).unwrap();
                }
                let result = if staged_api {
                    let staged = paths
                        .iter()
                        .map(|p| {
                            let mut temp = create_temp(p).unwrap();
                            temp.as_file_mut().write_all(b"new").unwrap();
                            (stage(temp).unwrap(), p.clone())
                        })
                        .collect();
                    install_all_staged(staged).map_err(|(path, _)| path)
                } else {
                    write_set_by_path(
                        &paths,
                        |temps| temps.iter().try_for_each(|t| std::fs::write(t, b"new")),
                        |e| e,
                    )
                    .map_err(|_| paths[fail_at].clone())
                };
                let case = format!("failure at rename {fail_at}, staged {staged_api}");
                let mut left: Vec<String> = std::fs::read_dir(dir.path())
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                left.sort();
                if fail_at == FILES {
                    assert_eq!(result, Ok(()), "{case}");
                    assert_eq!(left, ["f0", "f1", "f2"], "{case}");
                    assert!(paths.iter().all(|p| std::fs::read(p).unwrap() == b"new"));
                } else {
                    assert_eq!(result, Err(paths[fail_at].clone()), "{case}");
                    assert_eq!(left, [format!("f{fail_at}")], "{case}");
                    assert!(paths[fail_at].join("inside").is_dir(), "{case}");
                }
            }
        }
    }

    #[test]
    fn missing_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope").join("a.bin");
        let err = write_file(&path, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let folder = dir.path().join("nope");
        assert_eq!(
            err.to_string(),
            format!("folder {} does not exist", folder.display())
        );
    }
}
