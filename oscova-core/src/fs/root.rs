//! [`UserRoot`] and the handles it gives out: the path rules of the module
//! docs, applied.
//!
//! Rules: a model-given path is checked lexically first, so a refused
//! path touches nothing; then the root is opened (and created) afresh, so
//! a root that is itself a link, or was moved, is followed anew, and the
//! path is walked beneath the root's handle (see `beneath`). What a caller
//! gets back is an open handle ([`RootFile`], [`RootDir`]), never a path
//! to open later, so nothing can change between the check and the use.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use super::{FileError, RootDir, RootPathError, read_capped};

/// One user's root directory, as configured; opened (and created when
/// missing) on each call, so nothing about it is cached.
///
/// ```
/// use oscova_core::fs::UserRoot;
///
/// let root = UserRoot::new("/srv/oscova-files/alice");
/// assert_eq!(root.configured(), std::path::Path::new("/srv/oscova-files/alice"));
/// assert!(!root.hard_links_allowed());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRoot {
    configured: PathBuf,
    hard_links: bool,
}

/// How [`UserRoot::create_file`] treats a file that is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CreateMode {
    /// Create a new file; anything already at the path is
    /// [`AlreadyExists`](RootPathError::AlreadyExists).
    New,
    /// Empty an existing regular file (after its handle is checked), or
    /// create it.
    Truncate,
    /// Write at the end of an existing regular file, or create it.
    Append,
}

/// An open regular file inside a root.
///
/// Read and write it through [`as_file`](Self::as_file) (`&File` is
/// `Read`, `Write` and `Seek`).
#[derive(Debug)]
pub struct RootFile {
    file: File,
    rel: String,
    size: u64,
    existed: bool,
}

impl RootFile {
    pub(super) fn new(file: File, rel: String, size: u64, existed: bool) -> Self {
        Self {
            file,
            rel,
            size,
            existed,
        }
    }

    /// The file's path relative to the root, with `/` separators, after
    /// following links inside the root. Safe to show to a model.
    pub fn rel(&self) -> &str {
        &self.rel
    }

    /// Its size in bytes when it was opened (0 for a file just created).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether the file was there before ([`UserRoot::open_file`]: always).
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The open file.
    pub fn as_file(&self) -> &File {
        &self.file
    }

    /// The open file, owned.
    pub fn into_file(self) -> File {
        self.file
    }

    /// Reads the rest of the file, refusing more than `cap` bytes (counted
    /// while reading, whatever the size said).
    ///
    /// # Errors
    ///
    /// [`TooLarge`](RootPathError::TooLarge), or [`Io`](RootPathError::Io).
    pub fn read_capped(&self, cap: u64) -> Result<Vec<u8>, RootPathError> {
        read_capped(&self.file, cap).map_err(|e| match e {
            FileError::TooLarge { limit } => RootPathError::TooLarge {
                path: self.rel.clone(),
                limit,
            },
            FileError::Io(source) => RootPathError::io("read", &self.rel)(source),
            other => RootPathError::io("read", &self.rel)(std::io::Error::other(other)),
        })
    }
}

/// What [`UserRoot::check_write`] found at a path to write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteCheck {
    /// The path relative to the root, after following links inside it.
    pub rel: String,
    /// A regular file is there now.
    pub exists: bool,
}

impl WriteCheck {
    pub(super) fn new(rel: String, exists: bool) -> Self {
        Self { rel, exists }
    }
}

impl UserRoot {
    /// The root at `dir`. Nothing is touched until a path is used.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            configured: dir.into(),
            hard_links: false,
        }
    }

    /// The directory as configured (not canonicalised).
    pub fn configured(&self) -> &Path {
        &self.configured
    }

    /// Whether files with more than one hard link may be opened (default:
    /// refused with [`HardLinked`](RootPathError::HardLinked), since
    /// another name of such a file may be outside the root and no check
    /// can tell). Allow them only for a root nobody else can link into.
    #[must_use]
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
    }

    /// Whether [`allow_hard_links`](Self::allow_hard_links) is set.
    pub fn hard_links_allowed(&self) -> bool {
        self.hard_links
    }

    /// The existing directory at `path` (`""` or `.` is the root itself),
    /// after following links inside the root.
    ///
    /// ```
    /// use oscova_core::fs::{RootPathError, UserRoot};
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-dir-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// std::fs::create_dir_all(dir.join("music"))?;
    /// assert_eq!(root.open_dir("./music")?.rel(), "music");
    /// assert_eq!(root.open_dir("")?.rel(), "");
    /// assert!(matches!(root.open_dir("gone"), Err(RootPathError::NotFound { .. })));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Absolute`](RootPathError::Absolute),
    /// [`ParentDir`](RootPathError::ParentDir) and
    /// [`NulByte`](RootPathError::NulByte) for a path refused as written;
    /// [`NotFound`](RootPathError::NotFound),
    /// [`NotADirectory`](RootPathError::NotADirectory),
    /// [`DanglingSymlink`](RootPathError::DanglingSymlink),
    /// [`Escapes`](RootPathError::Escapes) (a link leading out), and
    /// [`RootUnavailable`](RootPathError::RootUnavailable) or
    /// [`Io`](RootPathError::Io) from the file system.
    pub fn open_dir(&self, path: &str) -> Result<RootDir, RootPathError> {
        let lexical = lexical(path)?;
        #[cfg(unix)]
        {
            super::beneath::open_dir(self.walk(path, &lexical)?)
        }
        #[cfg(not(unix))]
        {
            let _ = lexical;
            Err(unsupported())
        }
    }

    /// The existing regular file at `path`, open for reading, after
    /// following links inside the root.
    ///
    /// ```
    /// use std::io::Read;
    /// use oscova_core::fs::{RootPathError, UserRoot};
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-file-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// # std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("todo.txt"), "milk\n")?;
    /// let file = root.open_file("todo.txt")?;
    /// assert_eq!((file.rel(), file.size()), ("todo.txt", 5));
    /// let mut text = String::new();
    /// file.as_file().read_to_string(&mut text)?;
    /// assert_eq!(text, "milk\n");
    /// assert!(matches!(root.open_file(""), Err(RootPathError::IsADirectory { .. })));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`open_dir`](Self::open_dir), and
    /// [`IsADirectory`](RootPathError::IsADirectory),
    /// [`NotRegular`](RootPathError::NotRegular) (a FIFO, device or
    /// socket, which is never opened) and
    /// [`HardLinked`](RootPathError::HardLinked).
    pub fn open_file(&self, path: &str) -> Result<RootFile, RootPathError> {
        let lexical = lexical(path)?;
        #[cfg(unix)]
        {
            super::beneath::open_file(self.walk(path, &lexical)?)
        }
        #[cfg(not(unix))]
        {
            let _ = lexical;
            Err(unsupported())
        }
    }

    /// The regular file `path`, open for writing as `mode` says, created
    /// if missing. Its parent directories must exist or, when
    /// `create_dirs`, are created inside their (held) parents. A link in
    /// the way is followed when it leads to something inside the root; a
    /// dangling one is refused, since writing through it would create its
    /// target.
    ///
    /// ```
    /// use std::io::Write;
    /// use oscova_core::fs::{CreateMode, RootPathError, UserRoot};
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-create-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// assert!(matches!(
    ///     root.create_file("audio/hello.wav", CreateMode::New, false),
    ///     Err(RootPathError::MissingParent { ref path }) if path == "audio"
    /// ));
    /// let file = root.create_file("notes/todo.txt", CreateMode::New, true)?;
    /// file.as_file().write_all(b"milk\n")?;
    /// assert_eq!((file.rel(), file.existed()), ("notes/todo.txt", false));
    /// assert!(matches!(
    ///     root.create_file("notes/todo.txt", CreateMode::New, false),
    ///     Err(RootPathError::AlreadyExists { .. })
    /// ));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`open_file`](Self::open_file) except `NotFound`, and
    /// [`NoFileName`](RootPathError::NoFileName),
    /// [`MissingParent`](RootPathError::MissingParent) and
    /// [`AlreadyExists`](RootPathError::AlreadyExists) (for
    /// [`CreateMode::New`]).
    pub fn create_file(
        &self,
        path: &str,
        mode: CreateMode,
        create_dirs: bool,
    ) -> Result<RootFile, RootPathError> {
        let lexical = named(path)?;
        #[cfg(unix)]
        {
            super::beneath::create_file(self.walk(path, &lexical)?, mode, create_dirs)
        }
        #[cfg(not(unix))]
        {
            let _ = (lexical, mode, create_dirs);
            Err(unsupported())
        }
    }

    /// Checks that `path` could be written, as [`create_file`](Self::create_file)
    /// would, without opening or creating the file itself (its missing
    /// parents are created when `create_dirs`): for a refusal that must
    /// come before costly work. The write itself checks everything again.
    ///
    /// ```
    /// use oscova_core::fs::UserRoot;
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-check-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// let check = root.check_write("audio/hello.wav", true)?;
    /// assert_eq!((check.rel.as_str(), check.exists), ("audio/hello.wav", false));
    /// assert!(dir.join("audio").is_dir() && !dir.join("audio/hello.wav").exists());
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`create_file`](Self::create_file) except `AlreadyExists`
    /// and `HardLinked`.
    pub fn check_write(&self, path: &str, create_dirs: bool) -> Result<WriteCheck, RootPathError> {
        let lexical = named(path)?;
        #[cfg(unix)]
        {
            super::beneath::check_write(self.walk(path, &lexical)?, create_dirs)
        }
        #[cfg(not(unix))]
        {
            let _ = (lexical, create_dirs);
            Err(unsupported())
        }
    }

    #[cfg(unix)]
    fn walk<'a>(
        &self,
        given: &'a str,
        lexical: &Path,
    ) -> Result<super::beneath::Walk<'a>, RootPathError> {
        super::beneath::Walk::new(&self.configured, given, lexical, self.hard_links)
    }
}

/// The root rules need `openat`; without it every path is refused rather
/// than resolved with a gap between the check and the use.
#[cfg(not(unix))]
fn unsupported() -> RootPathError {
    RootPathError::RootUnavailable {
        source: std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "files roots need a Unix file system API (openat)",
        ),
    }
}

/// The relative path, or why it is refused. Only normal components survive.
pub(super) fn lexical(path: &str) -> Result<PathBuf, RootPathError> {
    if path.contains('\0') {
        return Err(RootPathError::NulByte {
            path: path.to_owned(),
        });
    }
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(RootPathError::Absolute {
                    path: path.to_owned(),
                });
            }
            Component::ParentDir => {
                return Err(RootPathError::ParentDir {
                    path: path.to_owned(),
                });
            }
            Component::CurDir => {}
            Component::Normal(part) => out.push(part),
        }
    }
    Ok(out)
}

/// [`lexical`], for a path that must name a file.
fn named(path: &str) -> Result<PathBuf, RootPathError> {
    let lexical = lexical(path)?;
    if lexical.file_name().is_none() {
        return Err(RootPathError::NoFileName {
            path: path.to_owned(),
        });
    }
    Ok(lexical)
}
