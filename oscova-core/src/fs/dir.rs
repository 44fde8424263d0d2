//! [`RootDir`]: an open directory inside a root, for listing and walking.
//!
//! Rules: entries are read from the directory's handle and looked at
//! without following links; a child is opened relative to the same
//! handle with `O_NOFOLLOW`, so a walk that goes down through
//! [`RootDir::open_dir`] never leaves the root and never loops, whatever
//! is swapped meanwhile. A child name is one plain entry name: never
//! empty, `.`, `..`, or with a `/`.

use std::ffi::{OsStr, OsString};

use super::{FileKind, RootFile, RootPathError};

#[cfg(unix)]
type Handle = std::os::fd::OwnedFd;
/// No root directory can be opened without `openat`.
#[cfg(not(unix))]
type Handle = std::convert::Infallible;

/// An open directory inside a root, from [`UserRoot::open_dir`](super::UserRoot::open_dir).
///
/// ```
/// use oscova_core::fs::{FileKind, UserRoot};
///
/// # let dir = std::env::temp_dir().join(format!("oscova-fs-rootdir-doc-{}", std::process::id()));
/// let root = UserRoot::new(&dir);
/// std::fs::create_dir_all(dir.join("notes"))?;
/// std::fs::write(dir.join("notes/todo.txt"), "milk\n")?;
/// let notes = root.open_dir("notes")?;
/// let entries: Vec<_> = notes.entries()?.collect::<Result<_, _>>()?;
/// assert_eq!(entries.len(), 1);
/// assert_eq!((entries[0].rel(), entries[0].kind(), entries[0].size()), ("notes/todo.txt", FileKind::File, 5));
/// assert_eq!(notes.open_file(entries[0].name())?.size(), 5);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RootDir {
    handle: Handle,
    rel: String,
    hard_links: bool,
}

/// One entry of a [`RootDir`], as it was when read (links not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootEntry {
    name: OsString,
    rel: String,
    kind: FileKind,
    size: u64,
}

impl RootEntry {
    /// The entry's name in its directory.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// Its path relative to the root, with `/` separators.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// What it is (a link is [`FileKind::Symlink`], whatever it points at).
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Its size in bytes as the directory reported it (meaningful for files).
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl RootDir {
    #[cfg(unix)]
    pub(super) fn new(handle: Handle, rel: String, hard_links: bool) -> Self {
        Self {
            handle,
            rel,
            hard_links,
        }
    }

    /// The directory's path relative to the root (`""` for the root).
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// The path of `name` in this directory, relative to the root.
    fn child(&self, name: &OsStr) -> Result<String, RootPathError> {
        let text = name.to_string_lossy();
        let rel = if self.rel.is_empty() {
            text.to_string()
        } else {
            format!("{}/{text}", self.rel)
        };
        if name.is_empty() || name == "." || name == ".." || text.contains('/') {
            return Err(RootPathError::io("open", &rel)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a plain entry name",
            )));
        }
        Ok(rel)
    }

    /// The entries, in the order the file system gives them (`.` and `..`
    /// left out). An entry removed while reading is skipped.
    ///
    /// # Errors
    ///
    /// [`Io`](RootPathError::Io) when the directory cannot be read; each
    /// item may be one too.
    pub fn entries(&self) -> Result<Entries<'_>, RootPathError> {
        #[cfg(unix)]
        {
            let reader = rustix::fs::Dir::read_from(&self.handle)
                .map_err(|e| RootPathError::io("list", &self.rel)(e.into()))?;
            Ok(Entries { dir: self, reader })
        }
        #[cfg(not(unix))]
        match self.handle {}
    }

    /// The subdirectory `name`; a link is not followed (it is
    /// [`NotADirectory`](RootPathError::NotADirectory)).
    ///
    /// # Errors
    ///
    /// [`NotFound`](RootPathError::NotFound), `NotADirectory`, or
    /// [`Io`](RootPathError::Io).
    pub fn open_dir(&self, name: &OsStr) -> Result<RootDir, RootPathError> {
        let rel = self.child(name)?;
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            use rustix::io::Errno;
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(&self.handle, name, flags, Mode::empty()) {
                Ok(handle) => Ok(RootDir::new(handle, rel, self.hard_links)),
                Err(Errno::NOENT) => Err(RootPathError::NotFound { path: rel }),
                Err(Errno::LOOP | Errno::MLINK | Errno::NOTDIR) => {
                    Err(RootPathError::NotADirectory { path: rel })
                }
                Err(e) => Err(RootPathError::io("open", &rel)(e.into())),
            }
        }
        #[cfg(not(unix))]
        match self.handle {}
    }

    /// The regular file `name`, open for reading; a link is not followed
    /// (it is [`NotRegular`](RootPathError::NotRegular)), and the rules of
    /// [`UserRoot::open_file`](super::UserRoot::open_file) apply to what
    /// is opened.
    ///
    /// # Errors
    ///
    /// Those of [`UserRoot::open_file`](super::UserRoot::open_file).
    pub fn open_file(&self, name: &OsStr) -> Result<RootFile, RootPathError> {
        let rel = self.child(name)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;

            use rustix::fs::{Mode, OFlags};
            use rustix::io::Errno;
            let flags = OFlags::RDONLY
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::CLOEXEC;
            let handle = match rustix::fs::openat(&self.handle, name, flags, Mode::empty()) {
                Ok(handle) => handle,
                Err(Errno::NOENT) => return Err(RootPathError::NotFound { path: rel }),
                Err(Errno::LOOP | Errno::MLINK) => {
                    return Err(RootPathError::NotRegular {
                        path: rel,
                        kind: FileKind::Symlink,
                    });
                }
                Err(e) => return Err(RootPathError::io("open", &rel)(e.into())),
            };
            let file = std::fs::File::from(handle);
            let meta = file.metadata().map_err(RootPathError::io("open", &rel))?;
            match super::file::kind_of(&meta) {
                FileKind::File => {}
                FileKind::Directory => return Err(RootPathError::IsADirectory { path: rel }),
                kind => return Err(RootPathError::NotRegular { path: rel, kind }),
            }
            if meta.nlink() > 1 && !self.hard_links {
                return Err(RootPathError::HardLinked {
                    path: rel,
                    links: meta.nlink(),
                });
            }
            Ok(RootFile::new(file, rel, meta.len(), true))
        }
        #[cfg(not(unix))]
        match self.handle {}
    }
}

/// The entries of a [`RootDir`], from [`RootDir::entries`].
pub struct Entries<'a> {
    dir: &'a RootDir,
    #[cfg(unix)]
    reader: rustix::fs::Dir,
}

impl std::fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entries")
            .field("dir", &self.dir.rel)
            .finish_non_exhaustive()
    }
}

impl Iterator for Entries<'_> {
    type Item = Result<RootEntry, RootPathError>;

    fn next(&mut self) -> Option<Self::Item> {
        #[cfg(unix)]
        loop {
            use std::os::unix::ffi::OsStrExt;

            use rustix::fs::{AtFlags, FileType};
            use rustix::io::Errno;
            let entry = match self.reader.read()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(RootPathError::io("list", &self.dir.rel)(e.into()))),
            };
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let rel = match self.dir.child(name) {
                Ok(rel) => rel,
                Err(e) => return Some(Err(e)),
            };
            let stat = match rustix::fs::statat(&self.dir.handle, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) => continue,
                Err(e) => return Some(Err(RootPathError::io("list", &rel)(e.into()))),
            };
            let kind = super::beneath::kind_of_type(FileType::from_raw_mode(stat.st_mode));
            return Some(Ok(RootEntry {
                name: name.to_owned(),
                rel,
                kind,
                size: u64::try_from(stat.st_size).unwrap_or(0),
            }));
        }
        #[cfg(not(unix))]
        match self.dir.handle {}
    }
}
