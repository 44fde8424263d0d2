//! Files a host trusts: a configuration that holds credentials and the
//! commands the host starts, a lock file of reviewed catalogs. What such
//! a file says, the host does; so who can write it matters as much as
//! what it holds.
//!
//! Rules, ssh's for `~/.ssh/config` and `authorized_keys`, followed by
//! [`read_trusted`]:
//!
//! - The path is made absolute (from the working directory) and walked
//!   from `/` one name at a time, as the kernel would. Every directory a
//!   name is looked up in must be owned by the process's user (its
//!   effective uid) or by root, and must not be writable by its group or
//!   by others, unless it has the sticky bit (`/tmp`): there nobody can
//!   rename or delete an entry they do not own, and an entry someone else
//!   planted fails the owner checks. The walk goes up to `/`, not only to
//!   the home directory: what is above it decides what is in it.
//! - A symbolic link is followed (the operator may keep the file
//!   elsewhere), but the link must be owned by the user or root (a link
//!   someone planted in a sticky directory is refused, as Linux's
//!   `protected_symlinks` does), and its target is walked by the same
//!   rules, so every directory on the way to the file is checked, the
//!   link's own and the target's.
//! - The file itself is opened as [`read_regular`](super::read_regular)
//!   opens a file (non-blocking, so a FIFO cannot hang the open, and
//!   without following a link swapped in after the walk), checked on the
//!   opened handle (a regular file only: not a FIFO, not `/dev/zero`),
//!   and must be owned by the user or root and writable by nobody else
//!   (no group or other write bit; the sticky exception is for
//!   directories only). The read stops one byte past the cap.
//! - When the process runs as root, "the user" is root: files and
//!   directories owned by root pass, those owned by anyone else do not,
//!   and the write bits are checked the same way.
//!
//! What it does not cover: a user who is root, or who owns the file or a
//! directory on its path, can change it; that is the point of owning it.
//! Access control lists are not read (ssh does not either). On platforms
//! without Unix permissions the file is only read as `read_regular` reads.

use std::path::Path;

use super::FileError;

/// The most symbolic links followed on the way to a trusted file, as
/// Linux's own limit.
#[cfg(unix)]
const MAX_LINKS: usize = 40;

/// Reads the file `path`, which decides what the host does, refusing it
/// unless nobody but its owner and root could have written it (the rules
/// are the module's: ssh's, on the file and on every directory on its
/// way), and unless it is a regular file of at most `cap` bytes.
///
/// ```
/// use std::os::unix::fs::PermissionsExt;
/// use oscova_core::fs::{FileError, Untrusted, read_trusted};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-trusted-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// # std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
/// let path = dir.join("config.toml");
/// std::fs::write(&path, "a = 1\n")?;
/// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
/// assert_eq!(read_trusted(&path, 1024)?, b"a = 1\n");
///
/// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))?;
/// let err = read_trusted(&path, 1024).unwrap_err();
/// assert!(matches!(err, FileError::Untrusted { why: Untrusted::Writable { mode: 0o666 }, .. }));
/// assert!(err.to_string().contains("chmod go-w"));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::Untrusted`] naming the file, directory or link at fault
/// and why; those of [`read_regular`](super::read_regular)
/// ([`FileError::NotRegular`], [`FileError::TooLarge`]); and
/// [`FileError::Io`], whose kind is `NotFound` when the file (or a
/// directory on its way) does not exist.
pub fn read_trusted(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    #[cfg(unix)]
    {
        unix::read(path, cap)
    }
    #[cfg(not(unix))]
    {
        super::read_regular(path, cap)
    }
}

#[cfg(unix)]
mod unix {
    use std::ffi::OsString;
    use std::fs::{Metadata, OpenOptions};
    use std::io;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::path::{Component, Path, PathBuf};

    use super::super::file::kind_of;
    use super::super::{FileError, FileKind, Untrusted, read_capped};
    use super::MAX_LINKS;

    /// The group and other write bits.
    const WRITE_BY_OTHERS: u32 = 0o022;
    /// The sticky bit: only an entry's owner may rename or delete it.
    const STICKY: u32 = 0o1000;

    pub(super) fn read(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
        let user = rustix::process::geteuid().as_raw();
        let file_path = walk(path, user)?;
        let mut options = OpenOptions::new();
        options.read(true);
        let flags = rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::NOCTTY
            | rustix::fs::OFlags::NOFOLLOW;
        options.custom_flags(flags.bits().cast_signed());
        let file = options.open(&file_path)?;
        let meta = file.metadata()?;
        match kind_of(&meta) {
            FileKind::File => {}
            kind => return Err(FileError::NotRegular { kind }),
        }
        check(&file_path, &meta, user, false)?;
        if meta.len() > cap {
            return Err(FileError::TooLarge { limit: cap });
        }
        read_capped(file, cap)
    }

    /// Walks `path` from `/`, checking every directory a name is looked up
    /// in and every link followed; returns the file's path with no link
    /// left in it.
    fn walk(path: &Path, user: u32) -> Result<PathBuf, FileError> {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()?.join(path)
        };
        // Names still to look up, the next one last.
        let mut pending: Vec<OsString> = Vec::new();
        push(&mut pending, &absolute);
        let mut current = PathBuf::from("/");
        let mut links = 0;
        let mut checked_dir: Option<PathBuf> = None;
        while let Some(name) = pending.pop() {
            if name == "/" {
                current = PathBuf::from("/");
                continue;
            }
            if name == ".." {
                // `current` holds no link, so its parent is what `..` is.
                current.pop();
                continue;
            }
            if checked_dir.as_deref() != Some(current.as_path()) {
                let meta = std::fs::metadata(&current)?;
                check(&current, &meta, user, true)?;
                checked_dir = Some(current.clone());
            }
            let next = current.join(&name);
            let meta = std::fs::symlink_metadata(&next)?;
            if meta.file_type().is_symlink() {
                links += 1;
                if links > MAX_LINKS {
                    return Err(FileError::Io(io::Error::other(format!(
                        "more than {MAX_LINKS} symbolic links on the way to {}",
                        path.display()
                    ))));
                }
                check_owner(&next, &meta, user, true)?;
                let target = std::fs::read_link(&next)?;
                push(&mut pending, &target);
                continue;
            }
            if pending.is_empty() {
                return Ok(next);
            }
            current = next;
        }
        // The path named a directory (`/`, `a/..`): opening it refuses it.
        Ok(current)
    }

    /// Queues `path`'s names so the first is popped first; `.` is dropped
    /// and `/` starts again from the root.
    fn push(pending: &mut Vec<OsString>, path: &Path) {
        let names: Vec<OsString> = path
            .components()
            .filter_map(|c| match c {
                Component::RootDir => Some(OsString::from("/")),
                Component::ParentDir => Some(OsString::from("..")),
                Component::Normal(name) => Some(name.to_os_string()),
                Component::CurDir | Component::Prefix(_) => None,
            })
            .collect();
        pending.extend(names.into_iter().rev());
    }

    /// The owner and write-bit rules for the file (`dir` false) or a
    /// directory on its way.
    fn check(path: &Path, meta: &Metadata, user: u32, dir: bool) -> Result<(), FileError> {
        check_owner(path, meta, user, false)?;
        let mode = meta.mode() & 0o7777;
        let sticky = dir && mode & STICKY != 0;
        if mode & WRITE_BY_OTHERS != 0 && !sticky {
            return Err(FileError::Untrusted {
                path: path.to_path_buf(),
                why: Untrusted::Writable { mode },
            });
        }
        Ok(())
    }

    fn check_owner(path: &Path, meta: &Metadata, user: u32, link: bool) -> Result<(), FileError> {
        let owner = meta.uid();
        if owner == user || owner == 0 {
            return Ok(());
        }
        Err(FileError::Untrusted {
            path: path.to_path_buf(),
            why: if link {
                Untrusted::LinkOwner { uid: owner, user }
            } else {
                Untrusted::Owner { uid: owner, user }
            },
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::super::{FileKind, Untrusted};
    use super::*;

    /// A directory of mode 0700 under the system temp dir (root-owned and
    /// sticky, as `/tmp` is), removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Self {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("oscova-trusted-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            chmod(&dir, 0o700);
            Self(dir.canonicalize().unwrap())
        }

        /// A file of mode 0644 holding `text`.
        fn file(&self, name: &str, text: &str) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            chmod(&path, 0o644);
            path
        }

        /// A directory of mode `mode`.
        fn dir(&self, name: &str, mode: u32) -> PathBuf {
            let path = self.0.join(name);
            std::fs::create_dir(&path).unwrap();
            chmod(&path, mode);
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// The refusal's path and reason.
    fn refusal(path: &Path) -> (PathBuf, Untrusted) {
        match read_trusted(path, 1024) {
            Err(FileError::Untrusted { path, why }) => (path, why),
            other => panic!("{}: {other:?}", path.display()),
        }
    }

    #[test]
    fn a_private_file_is_read_capped() {
        let scratch = Scratch::new();
        let path = scratch.file("config.toml", "a = 1\n");
        assert_eq!(read_trusted(&path, 6).unwrap(), b"a = 1\n");
        assert!(matches!(
            read_trusted(&path, 5),
            Err(FileError::TooLarge { limit: 5 })
        ));
        let missing = read_trusted(&scratch.0.join("missing.toml"), 6).unwrap_err();
        assert!(
            matches!(missing, FileError::Io(ref e) if e.kind() == std::io::ErrorKind::NotFound)
        );
    }

    /// Issue 24: a FIFO as the lock file hung start-up.
    #[test]
    fn a_fifo_is_refused_at_once() {
        let scratch = Scratch::new();
        let path = scratch.0.join("oscova.mcp.lock");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        chmod(&path, 0o600);
        let (tx, rx) = std::sync::mpsc::channel();
        let fifo = path.clone();
        std::thread::spawn(move || tx.send(read_trusted(&fifo, 1024)));
        // A hang detector, not a timing: the open never waits for a writer.
        let result = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("reading a FIFO hung");
        assert!(
            matches!(
                result,
                Err(FileError::NotRegular {
                    kind: FileKind::Fifo
                })
            ),
            "{result:?}"
        );
    }

    /// Issue 24: a lock file linked to `/dev/zero` ate memory.
    #[test]
    fn a_link_to_dev_zero_is_refused() {
        let scratch = Scratch::new();
        let path = scratch.0.join("oscova.mcp.lock");
        symlink("/dev/zero", &path).unwrap();
        let result = read_trusted(&path, 1024);
        assert!(
            matches!(
                result,
                Err(FileError::NotRegular {
                    kind: FileKind::CharDevice
                })
            ),
            "{result:?}"
        );
    }

    /// Issue 24: a config writable by others loaded without a word.
    #[test]
    fn a_file_writable_by_group_or_others_is_refused() {
        let scratch = Scratch::new();
        let path = scratch.file("config.toml", "a = 1\n");
        for mode in [0o666, 0o646, 0o664, 0o620, 0o602] {
            chmod(&path, mode);
            assert_eq!(
                refusal(&path),
                (path.clone(), Untrusted::Writable { mode }),
                "{mode:o}"
            );
        }
        // Sticky or not, a file others may write is refused.
        chmod(&path, 0o1666);
        assert!(matches!(refusal(&path).1, Untrusted::Writable { .. }));
        let text = FileError::Untrusted {
            path: path.clone(),
            why: Untrusted::Writable { mode: 0o666 },
        }
        .to_string();
        assert!(text.starts_with(&path.display().to_string()), "{text}");
        assert!(
            text.contains("group and others") && text.contains("chmod go-w"),
            "{text}"
        );
    }

    /// Issue 24: a config in a world-writable directory, where anyone can
    /// replace it, loaded without a word.
    #[test]
    fn a_directory_on_the_way_writable_by_others_is_refused() {
        let scratch = Scratch::new();
        for mode in [0o777, 0o770, 0o757] {
            let name = format!("d{mode:o}");
            let dir = scratch.dir(&name, mode);
            let path = scratch.file(&format!("{name}/config.toml"), "a = 1\n");
            assert_eq!(refusal(&path), (dir.clone(), Untrusted::Writable { mode }));
            // Further up counts too: the file's own directory is fine.
            let inner = scratch.dir(&format!("{name}/inner"), 0o700);
            let deep = scratch.file(&format!("{name}/inner/config.toml"), "a = 1\n");
            assert_eq!(refusal(&deep), (dir, Untrusted::Writable { mode }));
            assert!(inner.exists());
        }
        // A sticky directory (`/tmp`) is not: nobody else may rename or
        // delete what is in it.
        let sticky = scratch.dir("sticky", 0o1777);
        let path = scratch.file("sticky/config.toml", "a = 1\n");
        assert_eq!(read_trusted(&path, 1024).unwrap(), b"a = 1\n");
        assert!(sticky.exists());
    }

    /// A link is followed; the directories of the link and of its target
    /// are both checked, and so is the target.
    #[test]
    fn links_are_followed_and_every_step_checked() {
        let scratch = Scratch::new();
        let safe = scratch.dir("safe", 0o700);
        let open = scratch.dir("open", 0o777);
        let target = scratch.file("safe/real.toml", "a = 1\n");
        // A relative link, through `..`, in a safe directory: read.
        let link = safe.join("link.toml");
        symlink("../safe/./real.toml", &link).unwrap();
        assert_eq!(read_trusted(&link, 1024).unwrap(), b"a = 1\n");
        // A link in a directory anyone may write: refused there.
        let planted = open.join("link.toml");
        symlink(&target, &planted).unwrap();
        assert_eq!(
            refusal(&planted),
            (open.clone(), Untrusted::Writable { mode: 0o777 })
        );
        // A safe link to a file in a directory anyone may write: refused there.
        let exposed = scratch.file("open/real.toml", "a = 1\n");
        let to_open = safe.join("to-open.toml");
        symlink(&exposed, &to_open).unwrap();
        assert_eq!(
            refusal(&to_open),
            (open, Untrusted::Writable { mode: 0o777 })
        );
        // A safe link to a file others may write: refused on the file.
        let loose = scratch.file("safe/loose.toml", "a = 1\n");
        chmod(&loose, 0o666);
        let to_loose = safe.join("to-loose.toml");
        symlink("loose.toml", &to_loose).unwrap();
        assert_eq!(
            refusal(&to_loose),
            (loose, Untrusted::Writable { mode: 0o666 })
        );
        // A link loop ends.
        symlink("loop-b", safe.join("loop-a")).unwrap();
        symlink("loop-a", safe.join("loop-b")).unwrap();
        assert!(matches!(
            read_trusted(&safe.join("loop-a"), 1024),
            Err(FileError::Io(_))
        ));
    }

    /// Owned by someone else: refused, file or link. Changing an owner
    /// takes root, so as another user this test checks only that the
    /// caller's own files pass (CI runs as root).
    #[test]
    fn files_and_links_of_other_users_are_refused() {
        let scratch = Scratch::new();
        let path = scratch.file("config.toml", "a = 1\n");
        assert!(read_trusted(&path, 1024).is_ok());
        let user = rustix::process::geteuid().as_raw();
        if user != 0 {
            return;
        }
        let other = 54_321;
        std::os::unix::fs::chown(&path, Some(other), None).unwrap();
        assert_eq!(
            refusal(&path),
            (path.clone(), Untrusted::Owner { uid: other, user })
        );
        std::os::unix::fs::chown(&path, Some(0), None).unwrap();
        let link = scratch.0.join("link.toml");
        symlink(&path, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(other), None).unwrap();
        assert_eq!(
            refusal(&link),
            (link.clone(), Untrusted::LinkOwner { uid: other, user })
        );
        let dir = scratch.dir("theirs", 0o755);
        let inside = scratch.file("theirs/config.toml", "a = 1\n");
        std::os::unix::fs::chown(&dir, Some(other), None).unwrap();
        assert_eq!(
            refusal(&inside),
            (dir, Untrusted::Owner { uid: other, user })
        );
    }
}
