//! Files the host keeps for its users and for nobody else: the sessions
//! database (conversations, and the A2A tasks and webhook credentials
//! stored beside them), the A2A plugin's pending lists (push tokens), a
//! session exported to a file.
//!
//! Rules:
//!
//! - A folder made for such a file is made mode 0700
//!   ([`create_private_dir`]), and so is every missing folder on its way:
//!   the mode is given to `mkdir` itself, and a umask can only narrow it.
//!   A folder that exists already is left as it is (it may be the
//!   operator's: the config file's folder, a home directory); the file's
//!   own mode is what keeps its content from others.
//! - A file is created mode 0600 by the call that creates it (`O_CREAT`
//!   with that mode), so it is never more open, not even for an instant,
//!   whatever the umask ([`ensure_private`], [`create_private`]).
//! - An existing file that its group or others have any permission on
//!   (mode `& 0o077`) is refused with [`FileError::Exposed`], which names
//!   it and `chmod go-rwx`; it is not repaired. That is ssh's rule for a
//!   private key others can read, and the host's rule for a config others
//!   can write ([`read_trusted`](super::read_trusted)): what was open may
//!   have been read already, so the operator is the one to know and to
//!   decide whether a token or credential in it must be replaced, and a
//!   program that quietly changed the mode would hide that it ever was
//!   open. The one exception is a file the host is about to replace whole
//!   ([`create_private`]: a session export over an older one): nothing of
//!   what it held is kept, so it is made 0600 on its handle before it is
//!   emptied and written.
//! - Files are opened as [`open_regular`](super::open_regular) opens
//!   them: non-blocking (a FIFO cannot hang the open) and checked on the
//!   opened handle; only a regular file passes. [`check_private`] looks
//!   without opening (`stat`), for files another library opens (SQLite's
//!   `-wal`, `-shm` and `-journal` files); a missing file passes it.
//!
//! Not covered: access control lists (a file of mode 0600 with an ACL
//! granting someone else passes), and the file's owner (a file of mode
//! 0600 owned by someone else is theirs, and opening it fails unless the
//! process is root). On platforms without Unix permissions files are
//! created and checked as regular files only.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

use super::file::{create_checked, kind_of, open_regular};
use super::{FileError, FileKind, read_capped};

/// The permission bits a private file may not have: any of its group's
/// or others'.
#[cfg(unix)]
const GROUP_OR_OTHERS: u32 = 0o077;

/// The mode a private file is created with.
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;

/// The mode a private folder is created with.
#[cfg(unix)]
const DIR_MODE: u32 = 0o700;

/// Creates the folder `path` and every missing folder on its way, each of
/// mode 0700; an existing folder is left as it is (see the module rules).
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::fs::PermissionsExt;
///
/// # let base = std::env::temp_dir().join(format!("oscova-private-dir-doc-{}", std::process::id()));
/// let dir = base.join("data").join("oscova");
/// oscova_core::fs::create_private_dir(&dir)?;
/// assert_eq!(std::fs::metadata(&dir)?.permissions().mode() & 0o777, 0o700);
/// assert_eq!(std::fs::metadata(base.join("data"))?.permissions().mode() & 0o777, 0o700);
/// # std::fs::remove_dir_all(&base)?;
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
///
/// When a folder cannot be made, or `path` is something else.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    builder.create(path)
}

/// Creates the file `path` (mode 0600) when it is missing, without
/// writing to it, and refuses it when it exists and is not a regular file
/// or is open to its group or others: for a file another library opens
/// next (SQLite), so that it never creates it with the umask's mode.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::fs::PermissionsExt;
/// use oscova_core::fs::{FileError, ensure_private};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-ensure-private-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("sessions.db");
/// ensure_private(&path)?;
/// assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
///
/// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
/// let err = ensure_private(&path).unwrap_err();
/// assert!(matches!(err, FileError::Exposed { mode: 0o644, .. }));
/// assert!(err.to_string().contains("chmod go-rwx"));
/// # std::fs::remove_dir_all(&dir)?;
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::Exposed`], [`FileError::NotRegular`], and
/// [`FileError::Io`] when it cannot be opened or created.
pub fn ensure_private(path: &Path) -> Result<(), FileError> {
    let file = open_or_create(path)?;
    let meta = file.metadata()?;
    match kind_of(&meta) {
        FileKind::File => check_mode(path, &meta),
        kind => Err(FileError::NotRegular { kind }),
    }
}

#[cfg(unix)]
fn open_or_create(path: &Path) -> Result<File, FileError> {
    use rustix::fs::{Mode, OFlags};
    // Read-only: an existing file the process may not write is still
    // looked at (and refused for its mode rather than for the open).
    let flags =
        OFlags::RDONLY | OFlags::CREATE | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(FILE_MODE))
        .map_err(|e| FileError::Io(e.into()))?;
    Ok(File::from(fd))
}

#[cfg(not(unix))]
fn open_or_create(path: &Path) -> Result<File, FileError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    Ok(file)
}

/// Looks at `path` without opening it: passes when it is missing, or a
/// regular file its group and others have no permission on.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::unix::fs::PermissionsExt;
/// use oscova_core::fs::{FileError, check_private};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-check-private-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let wal = dir.join("sessions.db-wal");
/// check_private(&wal)?; // missing
/// std::fs::write(&wal, "")?;
/// std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o640))?;
/// assert!(matches!(check_private(&wal), Err(FileError::Exposed { mode: 0o640, .. })));
/// # std::fs::remove_dir_all(&dir)?;
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::Exposed`], [`FileError::NotRegular`], and
/// [`FileError::Io`] when it cannot be looked at.
pub fn check_private(path: &Path) -> Result<(), FileError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    match kind_of(&meta) {
        FileKind::File => check_mode(path, &meta),
        kind => Err(FileError::NotRegular { kind }),
    }
}

/// Reads the private file `path` whole as
/// [`read_regular`](super::read_regular) does (a regular file, opened
/// non-blocking, at most `cap` bytes), refusing it when its group or
/// others have any permission on it (checked on the opened handle).
///
/// # Errors
///
/// Those of [`read_regular`](super::read_regular), and
/// [`FileError::Exposed`].
pub fn read_private(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    check_mode(path, &meta)?;
    if meta.len() > cap {
        return Err(FileError::TooLarge { limit: cap });
    }
    read_capped(file, cap)
}

/// Opens `path` for writing as [`create_regular`](super::create_regular)
/// does (a regular file only, never blocking on a FIFO, emptied only once
/// its handle was checked), a missing file created mode 0600 and an
/// existing one made 0600 on its handle before it is emptied: what the
/// caller writes is the file's whole content, for its owner alone.
///
/// ```
/// # #[cfg(unix)] {
/// use std::io::Write;
/// use std::os::unix::fs::PermissionsExt;
///
/// # let dir = std::env::temp_dir().join(format!("oscova-create-private-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("trip.jsonl");
/// std::fs::write(&path, "an older export")?;
/// std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
/// oscova_core::fs::create_private(&path)?.write_all(b"{}\n")?;
/// assert_eq!(std::fs::read(&path)?, b"{}\n");
/// assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
/// # std::fs::remove_dir_all(&dir)?;
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::NotRegular`] for anything but a regular file,
/// [`FileError::Io`] when it cannot be opened, made private or emptied.
pub fn create_private(path: &Path) -> Result<File, FileError> {
    #[cfg(unix)]
    let (file, meta) = create_checked(path, Some(FILE_MODE))?;
    #[cfg(not(unix))]
    let (file, meta) = create_checked(path, None)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & GROUP_OR_OTHERS != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mode & !GROUP_OR_OTHERS))?;
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    file.set_len(0)?;
    Ok(file)
}

/// The mode rule for the file `path` whose metadata is `meta`.
#[cfg(unix)]
fn check_mode(path: &Path, meta: &Metadata) -> Result<(), FileError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & GROUP_OR_OTHERS != 0 {
        return Err(FileError::Exposed {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
#[allow(clippy::unnecessary_wraps)]
fn check_mode(_path: &Path, _meta: &Metadata) -> Result<(), FileError> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Self {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("oscova-private-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    /// Runs `f` on a thread and fails the test if it has not returned
    /// within 30 s (a hang detector, not a timing).
    fn without_hanging<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the call hung")
    }

    /// The umask is the process's: set for the whole test binary, which
    /// runs tests on threads, so the tests here set none and rely on the
    /// mode given at creation instead; `tests/it` of the stores run the
    /// same checks in a child process under umask 022 and 000.
    #[test]
    fn folders_are_made_0700_and_an_existing_one_is_left_alone() {
        let scratch = Scratch::new();
        let deep = scratch.0.join("a/b/c");
        create_private_dir(&deep).unwrap();
        for dir in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&scratch.0.join(dir)), 0o700, "{dir}");
        }
        let theirs = scratch.0.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chmod(&theirs, 0o755);
        create_private_dir(&theirs).unwrap();
        assert_eq!(mode(&theirs), 0o755);
        let file = scratch.0.join("file");
        std::fs::write(&file, "").unwrap();
        assert!(create_private_dir(&file).is_err());
    }

    #[test]
    fn a_new_file_is_0600_and_an_open_one_is_refused_not_repaired() {
        let scratch = Scratch::new();
        let path = scratch.0.join("sessions.db");
        ensure_private(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        std::fs::write(&path, "kept").unwrap();
        ensure_private(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"kept", "never emptied");
        for open in [0o644, 0o640, 0o604, 0o660, 0o606, 0o610, 0o601, 0o666] {
            chmod(&path, open);
            for result in [
                ensure_private(&path),
                check_private(&path),
                read_private(&path, 1024).map(drop),
            ] {
                match result {
                    Err(FileError::Exposed { path: at, mode }) => {
                        assert_eq!((at.as_path(), mode), (path.as_path(), open));
                    }
                    other => panic!("{open:o}: {other:?}"),
                }
            }
            assert_eq!(mode(&path), open, "refused, not repaired");
        }
        // The owner's own bits are the owner's business.
        for private in [0o600, 0o400, 0o700] {
            chmod(&path, private);
            ensure_private(&path).unwrap();
            check_private(&path).unwrap();
            assert_eq!(read_private(&path, 1024).unwrap(), b"kept");
        }
        let text = FileError::Exposed {
            path: path.clone(),
            mode: 0o644,
        }
        .to_string();
        assert!(
            text.starts_with(&path.display().to_string())
                && text.contains("its group and others (mode 0644)")
                && text.contains("chmod go-rwx"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_file_passes_the_look_and_special_files_are_refused_at_once() {
        let scratch = Scratch::new();
        check_private(&scratch.0.join("missing")).unwrap();
        let fifo = scratch.0.join("fifo");
        mkfifo(&fifo);
        chmod(&fifo, 0o600);
        let at = fifo.clone();
        let results = without_hanging(move || {
            [
                ensure_private(&at),
                check_private(&at),
                read_private(&at, 1024).map(drop),
                create_private(&at).map(drop),
            ]
        });
        for result in results {
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
        for result in [
            check_private(Path::new("/dev/zero")),
            read_private(Path::new("/dev/zero"), 1024).map(drop),
        ] {
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
        assert!(matches!(
            read_private(&scratch.0, 1024),
            Err(FileError::NotRegular {
                kind: FileKind::Directory
            })
        ));
    }

    #[test]
    fn a_file_written_whole_is_0600_whatever_it_was() {
        use std::io::Write;
        let scratch = Scratch::new();
        let new = scratch.0.join("new.jsonl");
        create_private(&new).unwrap().write_all(b"one").unwrap();
        assert_eq!(mode(&new), 0o600);
        let old = scratch.0.join("old.jsonl");
        std::fs::write(&old, "older and longer").unwrap();
        chmod(&old, 0o666);
        create_private(&old).unwrap().write_all(b"two").unwrap();
        assert_eq!(mode(&old), 0o600);
        assert_eq!(std::fs::read(&old).unwrap(), b"two");
        assert!(matches!(
            read_private(&old, 2),
            Err(FileError::TooLarge { limit: 2 })
        ));
    }
}
