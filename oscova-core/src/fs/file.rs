//! Files the host names itself (a config file, an audio file given on the
//! command line): regular files only, read or written, and reads capped
//! while reading.
//!
//! Rules: a file is opened non-blocking, so opening a FIFO returns at once
//! instead of waiting for a writer, and without becoming the controlling
//! terminal; then the opened handle is checked (`fstat`), so what is read
//! is what was checked. Only a regular file passes: a FIFO would block or
//! never end, `/dev/zero` never ends, and both report a size of 0. A read
//! stops one byte past the cap, however large the file claims to be, so
//! the memory a read takes is bounded by the cap, not by the file.
//!
//! Links in the path are followed: the host chose it. Paths a model gives
//! go through a [`UserRoot`](super::UserRoot) instead.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::Path;

use super::{FileError, FileKind};

/// Opens `path` for reading if it is a regular file.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("oscova-open-regular-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("config.toml");
/// std::fs::write(&path, "a = 1\n")?;
/// let (file, meta) = oscova_core::fs::open_regular(&path)?;
/// assert_eq!(meta.len(), 6);
/// # drop(file);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::NotRegular`] for anything but a regular file (checked on
/// the opened handle), [`FileError::Io`] when it cannot be opened.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits().cast_signed());
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    match kind_of(&meta) {
        FileKind::File => Ok((file, meta)),
        kind => Err(FileError::NotRegular { kind }),
    }
}

/// Opens `path` for writing, creating it when missing, if it is a regular
/// file; an existing one is emptied only after its handle was checked, so
/// a FIFO or device is never truncated or written (and a FIFO without a
/// reader never blocks the open).
///
/// ```
/// use std::io::Write;
/// # let dir = std::env::temp_dir().join(format!("oscova-create-regular-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("out.wav");
/// std::fs::write(&path, "old and longer")?;
/// oscova_core::fs::create_regular(&path)?.write_all(b"new")?;
/// assert_eq!(std::fs::read(&path)?, b"new");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`FileError::NotRegular`] for anything but a regular file,
/// [`FileError::Io`] when it cannot be opened or emptied.
pub fn create_regular(path: &Path) -> Result<File, FileError> {
    let (file, _) = create_checked(path, None)?;
    file.set_len(0)?;
    Ok(file)
}

/// Opens `path` for writing without emptying it, creating it when missing
/// (with `mode` on Unix, else 0666, both narrowed by the umask), and checks
/// the handle: a regular file only, and a FIFO without a reader is refused
/// rather than waited on.
pub(super) fn create_checked(
    path: &Path,
    mode: Option<u32>,
) -> Result<(File, Metadata), FileError> {
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits().cast_signed());
        if let Some(mode) = mode {
            options.mode(mode);
        }
    }
    #[cfg(not(unix))]
    let _ = mode;
    let file = options.open(path).map_err(|e| {
        // A FIFO nobody reads: opening it to write without blocking fails so.
        #[cfg(unix)]
        if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
            return FileError::NotRegular {
                kind: FileKind::Fifo,
            };
        }
        FileError::Io(e)
    })?;
    let meta = file.metadata()?;
    match kind_of(&meta) {
        FileKind::File => Ok((file, meta)),
        kind => Err(FileError::NotRegular { kind }),
    }
}

/// Reads the regular file `path` whole, refusing one of more than `cap`
/// bytes.
///
/// ```
/// use oscova_core::fs::{FileError, read_regular};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-read-regular-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("hello.txt");
/// std::fs::write(&path, "hello")?;
/// assert_eq!(read_regular(&path, 5)?, b"hello");
/// assert!(matches!(read_regular(&path, 4), Err(FileError::TooLarge { limit: 4 })));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// Those of [`open_regular`], and [`FileError::TooLarge`].
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > cap {
        return Err(FileError::TooLarge { limit: cap });
    }
    read_capped(file, cap)
}

/// Reads `reader` to its end, refusing more than `cap` bytes: it reads at
/// most `cap + 1`, so a source that never ends costs `cap` bytes of memory
/// and one refusal.
///
/// ```
/// use oscova_core::fs::{FileError, read_capped};
///
/// assert_eq!(read_capped(&b"abc"[..], 3)?, b"abc");
/// let endless = std::io::repeat(0);
/// assert!(matches!(read_capped(endless, 1024), Err(FileError::TooLarge { limit: 1024 })));
/// # Ok::<(), FileError>(())
/// ```
///
/// # Errors
///
/// [`FileError::TooLarge`], or [`FileError::Io`] from the reader.
pub fn read_capped(reader: impl Read, cap: u64) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::new();
    reader.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge { limit: cap });
    }
    Ok(bytes)
}

/// What `meta` (from a handle or a no-follow lookup) describes.
pub(super) fn kind_of(meta: &Metadata) -> FileKind {
    let file_type = meta.file_type();
    if file_type.is_file() {
        return FileKind::File;
    }
    if file_type.is_dir() {
        return FileKind::Directory;
    }
    if file_type.is_symlink() {
        return FileKind::Symlink;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return FileKind::Fifo;
        }
        if file_type.is_socket() {
            return FileKind::Socket;
        }
        if file_type.is_char_device() {
            return FileKind::CharDevice;
        }
        if file_type.is_block_device() {
            return FileKind::BlockDevice;
        }
    }
    FileKind::Unknown
}
