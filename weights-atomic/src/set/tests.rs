//! The set installers over an existing set, with a failure injected at every file-system call
//! of the install (one at a time, then a second one while the install is undone), on file
//! systems with and without hard links: a failed install leaves every destination byte for
//! byte as it was and no temporary file, unless undoing it failed too, which the error then
//! says, naming each file and where its previous version is kept.

use super::{Ops, RestoreError};
use crate::{install_all_staged_with, stage, write_set_by_path_with, TEMP_MARKER};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// File-system calls that fail on demand: the calls numbered in `fail` (counting every
/// call from 0) fail with an error naming their number, and without hard links every
/// `hard_link` fails as on a file system that has none (not counted).
struct Faulty {
    calls: Cell<usize>,
    fail: Vec<usize>,
    no_links: bool,
}

impl Faulty {
    fn new(fail: Vec<usize>, no_links: bool) -> Faulty {
        Faulty {
            calls: Cell::new(0),
            fail,
            no_links,
        }
    }

    fn call(&self) -> io::Result<()> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        if self.fail.contains(&n) {
            return Err(io::Error::other(format!("injected failure at call {n}")));
        }
        Ok(())
    }
}

impl Ops for Faulty {
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.call()?;
        std::fs::rename(from, to)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        if self.no_links {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no hard links on this file system",
            ));
        }
        self.call()?;
        std::fs::hard_link(original, link)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.call()?;
        std::fs::remove_file(path)
    }
}

/// What a folder holds: each entry's name and its bytes (`None` for a folder).
type Snapshot = BTreeMap<String, Option<Vec<u8>>>;

fn snapshot(dir: &Path) -> Snapshot {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let bytes =
                (!e.file_type().unwrap().is_dir()).then(|| std::fs::read(e.path()).unwrap());
            (name, bytes)
        })
        .collect()
}

/// The set: four files, the third new (nothing there before).
const FILES: [&str; 4] = ["m-1.bin", "m-2.bin", "m-3.bin", "m.index"];
const NEW_FILE: usize = 2;

/// A folder holding the previous set (every file but the new one).
fn previous_set() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = FILES.iter().map(|f| dir.path().join(f)).collect();
    for (i, path) in paths.iter().enumerate() {
        if i != NEW_FILE {
            std::fs::write(path, format!("previous {i}")).unwrap();
        }
    }
    (dir, paths)
}

fn new_bytes(i: usize) -> Vec<u8> {
    format!("new contents of file {i}").into_bytes()
}

/// Installs the new set over `paths` with `ops`, through `write_set_by_path` or through
/// staged files and `install_all_staged`; the failing destination and the error.
fn install(paths: &[PathBuf], staged_api: bool, ops: &Faulty) -> Result<(), (PathBuf, io::Error)> {
    if staged_api {
        let staged = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut temp = crate::create_temp(p).unwrap();
                temp.as_file_mut().write_all(&new_bytes(i)).unwrap();
                (stage(temp).unwrap(), p.clone())
            })
            .collect();
        install_all_staged_with(staged, ops)
    } else {
        write_set_by_path_with(
            paths,
            |temps| {
                temps
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, t)| std::fs::write(t, new_bytes(i)))
            },
            |e| e,
            ops,
        )
        .map_err(|e| {
            // The message names the destination that failed.
            let failed = paths
                .iter()
                .find(|p| {
                    e.to_string()
                        .contains(&format!("cannot install {}:", p.display()))
                })
                .unwrap_or_else(|| panic!("no destination named in: {e}"))
                .clone();
            (failed, e)
        })
    }
}

/// The marked entries of a snapshot.
fn marked(snapshot: &Snapshot) -> Vec<&String> {
    snapshot
        .keys()
        .filter(|n| n.contains(TEMP_MARKER))
        .collect()
}

/// Checks the outcome of one install with `fail` injected: a success installed the new set
/// (at most one kept copy left, when removing it after the install was what failed); a
/// failure left the previous set as it was and nothing else, unless undoing it failed, which
/// the error then reports. Returns whether the undo failed.
fn check(fail: &[usize], staged_api: bool, no_links: bool) -> bool {
    let (dir, paths) = previous_set();
    let before = snapshot(dir.path());
    let ops = Faulty::new(fail.to_vec(), no_links);
    let result = install(&paths, staged_api, &ops);
    let after = snapshot(dir.path());
    let case = format!("failures at calls {fail:?}, staged {staged_api}, no links {no_links}");
    match result {
        Ok(()) => {
            for (i, name) in FILES.iter().enumerate() {
                assert_eq!(after[*name], Some(new_bytes(i)), "{case}");
            }
            // Only kept copies whose removal failed after the install may be left (one per
            // failure at most), each holding a previous file.
            let left = marked(&after);
            assert!(left.len() <= fail.len(), "{case}: {left:?}");
            for name in left {
                assert!(before.values().any(|b| b == &after[name]), "{case}: {name}");
            }
            false
        }
        Err((failed, error)) => {
            let message = error.to_string();
            assert!(
                fail.iter()
                    .any(|n| message.contains(&format!("injected failure at call {n}"))),
                "{case}: {message}"
            );
            assert!(paths.contains(&failed), "{case}: {}", failed.display());
            let Some(restore) = error
                .get_ref()
                .and_then(|e| e.downcast_ref::<RestoreError>())
            else {
                // Put back: byte for byte as before, no temporary left.
                assert_eq!(after, before, "{case}: {message}");
                assert!(marked(&after).is_empty(), "{case}");
                return false;
            };
            // Not put back: said so, naming every file, the previous versions kept.
            assert!(
                message.contains("undoing the install failed too"),
                "{case}: {message}"
            );
            let not_restored = restore.not_restored();
            for (name, previous) in &before {
                let path = dir.path().join(name);
                match not_restored.iter().find(|(d, _)| *d == path) {
                    Some((_, Some(kept))) => {
                        assert!(message.contains(&kept.display().to_string()), "{case}");
                        assert_eq!(&std::fs::read(kept).ok(), previous, "{case}: {name}");
                    }
                    Some((_, None)) => unreachable!("{case}: {name} existed before"),
                    None => assert_eq!(&after[name], previous, "{case}: {name}"),
                }
            }
            for (destination, _) in &not_restored {
                assert!(
                    message.contains(&destination.display().to_string()),
                    "{case}: {message}"
                );
            }
            // Every marked file left is named by the message (a kept previous version, or a
            // copy of an unchanged destination that could not be removed).
            for name in marked(&after) {
                assert!(
                    message.contains(name.as_str()),
                    "{case}: {name} in {message}"
                );
            }
            true
        }
    }
}

/// How many file-system calls an install of the set makes without a failure.
fn calls_without_failure(staged_api: bool, no_links: bool) -> usize {
    let (_dir, paths) = previous_set();
    let ops = Faulty::new(Vec::new(), no_links);
    install(&paths, staged_api, &ops).unwrap();
    ops.calls.get()
}

#[test]
fn a_failure_at_any_call_puts_the_previous_set_back() {
    for staged_api in [false, true] {
        for no_links in [false, true] {
            let calls = calls_without_failure(staged_api, no_links);
            // Keeping 3 previous files (a hard link each, or a rename aside without links),
            // 4 renames, 3 removals of the kept files.
            assert_eq!(calls, 10, "staged {staged_api}, no links {no_links}");
            let mut failures = 0;
            for n in 0..calls {
                assert!(!check(&[n], staged_api, no_links));
                failures += 1;
            }
            assert_eq!(failures, calls);
        }
    }
}

#[test]
fn a_failure_while_putting_back_is_reported_with_its_cause() {
    let mut reported = 0;
    for staged_api in [false, true] {
        for no_links in [false, true] {
            let calls = calls_without_failure(staged_api, no_links);
            for n in 0..calls {
                // The undo makes at most one call per file.
                for m in n + 1..calls + FILES.len() {
                    if check(&[n, m], staged_api, no_links) {
                        reported += 1;
                    }
                }
            }
        }
    }
    // Every kind of undo step failed somewhere: a previous file renamed back, a new file
    // removed, a kept link of an unchanged destination removed.
    assert!(reported > 20, "{reported}");
}

#[test]
fn each_kind_of_undo_failure_is_named() {
    // The fourth rename (the index) fails, then so does the first step of the undo, for
    // each of the three files installed before: m-3.bin (new: removing it), m-2.bin and
    // m-1.bin (putting the previous file back). With links: calls 0 link, 1 rename, 2 link,
    // 3 rename, 4 rename (new file), 5 link, 6 rename (fails), 7 link removed (the index is
    // unchanged), 8 m-3.bin removed, 9 m-2.bin back, 10 m-1.bin back.
    let cases: [(usize, &str); 4] = [
        (7, "m.index is unchanged, but the copy of it kept as"),
        (
            8,
            "m-3.bin (there was no file there before) could not be removed",
        ),
        (
            9,
            "m-2.bin could not be put back (injected failure at call 9); it is kept as",
        ),
        (
            10,
            "m-1.bin could not be put back (injected failure at call 10); it is kept as",
        ),
    ];
    for (undo_call, words) in cases {
        let (dir, paths) = previous_set();
        let before = snapshot(dir.path());
        let ops = Faulty::new(vec![6, undo_call], false);
        let (failed, error) = install(&paths, true, &ops).unwrap_err();
        assert_eq!(failed, paths[3]);
        let message = error.to_string();
        assert!(
            message.starts_with("injected failure at call 6; undoing the install failed too: "),
            "{message}"
        );
        assert!(message.contains(words), "{message}");
        let restore = error
            .get_ref()
            .and_then(|e| e.downcast_ref::<RestoreError>())
            .unwrap();
        assert_eq!(restore.cause().to_string(), "injected failure at call 6");
        let after = snapshot(dir.path());
        match undo_call {
            7 => {
                // Everything is as before; one copy of the index is left, named.
                assert!(restore.not_restored().is_empty());
                let left = marked(&after);
                assert_eq!(left.len(), 1);
                assert!(left[0].starts_with(".m.index"), "{left:?}");
                assert_eq!(after[left[0]], before["m.index"]);
            }
            8 => {
                assert_eq!(restore.not_restored(), [(paths[2].as_path(), None)]);
                assert_eq!(after["m-3.bin"], Some(new_bytes(2)));
                assert!(marked(&after).is_empty());
            }
            _ => {
                let i = undo_call - 9;
                let name = ["m-2.bin", "m-1.bin"][i];
                let not_restored = restore.not_restored();
                assert_eq!(not_restored.len(), 1);
                let (destination, kept) = not_restored[0];
                assert_eq!(destination, dir.path().join(name));
                let kept = kept.unwrap();
                assert!(message.contains(&kept.display().to_string()));
                assert_eq!(Some(std::fs::read(kept).unwrap()), before[name]);
                assert_eq!(marked(&after).len(), 1);
            }
        }
        // Every other destination is as before.
        for name in FILES {
            let touched = match undo_call {
                8 => name == "m-3.bin",
                9 => name == "m-2.bin",
                10 => name == "m-1.bin",
                _ => false,
            };
            if !touched {
                assert_eq!(after.get(name), before.get(name), "{name}");
            }
        }
    }
}

/// No injection: a destination that is a folder with something in it, which no rename of a
/// file replaces, at each position in turn. The previous set stays as it was.
#[test]
fn a_folder_in_the_way_anywhere_leaves_the_previous_set() {
    for blocked in 0..FILES.len() {
        for staged_api in [false, true] {
            let (dir, paths) = previous_set();
            let _ = std::fs::remove_file(&paths[blocked]);
            std::fs::create_dir_all(paths[blocked].join("inside")).unwrap();
            let before = snapshot(dir.path());
            let (failed, error) =
                install(&paths, staged_api, &Faulty::new(Vec::new(), false)).unwrap_err();
            assert_eq!(failed, paths[blocked], "{error}");
            assert!(error.get_ref().is_none_or(|e| !e.is::<RestoreError>()));
            assert_eq!(snapshot(dir.path()), before, "blocked {blocked}");
            assert!(paths[blocked].join("inside").is_dir());
        }
    }
}
