//! [`UserRoot`]: the path rules of the module docs, applied.
//!
//! Rules: every resolution opens (and creates) the root first and
//! canonicalises it, so a root that is itself a link, or was moved, is
//! followed afresh; a model-given path is then checked lexically, and only
//! whole-component prefixes of the canonical root count as inside it.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::RootPathError;

/// One user's root directory, as configured; canonicalised (and created
/// when missing) on each call, so nothing about it is cached.
///
/// ```
/// use oscova_core::fs::UserRoot;
///
/// let root = UserRoot::new("/srv/oscova-files/alice");
/// assert_eq!(root.configured(), std::path::Path::new("/srv/oscova-files/alice"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRoot {
    configured: PathBuf,
}

/// A path inside a [`UserRoot`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedPath {
    /// The absolute path: canonical for an existing file, else a canonical
    /// directory joined with the new file's name.
    pub abs: PathBuf,
    /// The path relative to the canonical root, with `/` separators (`""`
    /// is the root itself). Safe to show to a model.
    pub rel: String,
}

impl UserRoot {
    /// The root at `dir`. Nothing is touched until a path is resolved.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            configured: dir.into(),
        }
    }

    /// The directory as configured (not canonicalised).
    pub fn configured(&self) -> &Path {
        &self.configured
    }

    /// The canonical root, created when missing.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-open-doc-{}", std::process::id()));
    /// let root = oscova_core::fs::UserRoot::new(dir.join("alice"));
    /// let canonical = root.open()?;
    /// assert!(canonical.is_absolute() && canonical.is_dir());
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`RootPathError::RootUnavailable`] when it cannot be created or
    /// canonicalised.
    pub fn open(&self) -> Result<PathBuf, RootPathError> {
        fs::create_dir_all(&self.configured)
            .and_then(|()| fs::canonicalize(&self.configured))
            .map_err(|source| RootPathError::RootUnavailable { source })
    }

    /// An existing file or directory at `path`, relative to the root (`""`
    /// or `.` is the root itself), after following every link in it.
    ///
    /// ```
    /// use oscova_core::fs::{RootPathError, UserRoot};
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-existing-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// std::fs::create_dir_all(dir.join("music"))?;
    /// assert_eq!(root.resolve_existing("./music")?.rel, "music");
    /// assert_eq!(root.resolve_existing("")?.rel, "");
    /// assert!(matches!(root.resolve_existing("gone.txt"), Err(RootPathError::NotFound { .. })));
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
    /// [`DanglingSymlink`](RootPathError::DanglingSymlink),
    /// [`Escapes`](RootPathError::Escapes) (a link leading out), and
    /// [`RootUnavailable`](RootPathError::RootUnavailable) or
    /// [`Io`](RootPathError::Io) from the file system.
    pub fn resolve_existing(&self, path: &str) -> Result<ResolvedPath, RootPathError> {
        let root = self.open()?;
        let lexical = lexical(path)?;
        let abs = match fs::canonicalize(root.join(&lexical)) {
            Ok(abs) => abs,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(if is_symlink(&root.join(&lexical)) {
                    RootPathError::DanglingSymlink {
                        path: path.to_owned(),
                    }
                } else {
                    RootPathError::NotFound {
                        path: path.to_owned(),
                    }
                });
            }
            Err(e) => return Err(RootPathError::io("open", path)(e)),
        };
        let rel = relative_inside(&root, &abs).ok_or_else(|| RootPathError::Escapes {
            path: path.to_owned(),
        })?;
        Ok(ResolvedPath { abs, rel })
    }

    /// Where to write the file `path` (relative to the root), which may not
    /// exist yet. Its parent directories are checked one level at a time
    /// and, when `create_dirs`, a missing one is created inside its checked
    /// parent; an existing target must not be a directory, and if it is a
    /// link it must lead to something inside the root.
    ///
    /// ```
    /// use oscova_core::fs::{RootPathError, UserRoot};
    ///
    /// # let dir = std::env::temp_dir().join(format!("oscova-fs-write-doc-{}", std::process::id()));
    /// let root = UserRoot::new(&dir);
    /// assert!(matches!(
    ///     root.resolve_for_write("audio/hello.wav", false),
    ///     Err(RootPathError::MissingParent { ref path }) if path == "audio"
    /// ));
    /// let target = root.resolve_for_write("audio/hello.wav", true)?;
    /// assert_eq!(target.rel, "audio/hello.wav");
    /// assert!(!target.abs.exists() && target.abs.parent().is_some_and(|p| p.is_dir()));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`resolve_existing`](Self::resolve_existing) except
    /// `NotFound`, and [`NoFileName`](RootPathError::NoFileName),
    /// [`MissingParent`](RootPathError::MissingParent),
    /// [`NotADirectory`](RootPathError::NotADirectory) (a parent that is a
    /// file) and [`IsADirectory`](RootPathError::IsADirectory).
    pub fn resolve_for_write(
        &self,
        path: &str,
        create_dirs: bool,
    ) -> Result<ResolvedPath, RootPathError> {
        let root = self.open()?;
        let lexical = lexical(path)?;
        let Some(name) = lexical.file_name().map(ToOwned::to_owned) else {
            return Err(RootPathError::NoFileName {
                path: path.to_owned(),
            });
        };
        let mut dir = root.clone();
        let mut walked = PathBuf::new();
        for part in lexical.parent().into_iter().flat_map(Path::components) {
            walked.push(part);
            dir = enter(&root, &dir, part, &walked, path, create_dirs)?;
        }
        let target = dir.join(&name);
        let abs = match fs::symlink_metadata(&target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => target,
            Err(e) => return Err(RootPathError::io("open", path)(e)),
            Ok(meta) => {
                let abs = if meta.file_type().is_symlink() {
                    canonical_link(&target, path, path)?
                } else {
                    target
                };
                if abs.is_dir() {
                    return Err(RootPathError::IsADirectory {
                        path: path.to_owned(),
                    });
                }
                abs
            }
        };
        let rel = relative_inside(&root, &abs).ok_or_else(|| RootPathError::Escapes {
            path: path.to_owned(),
        })?;
        Ok(ResolvedPath { abs, rel })
    }
}

/// The canonical directory `part` of the checked directory `dir`, created
/// when missing and `create_dirs`; `walked` is it relative to the root, for
/// errors.
fn enter(
    root: &Path,
    dir: &Path,
    part: Component<'_>,
    walked: &Path,
    path: &str,
    create_dirs: bool,
) -> Result<PathBuf, RootPathError> {
    let next = dir.join(part);
    let existed = match fs::symlink_metadata(&next) {
        Ok(_) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !create_dirs {
                return Err(RootPathError::MissingParent {
                    path: slash(walked),
                });
            }
            match fs::create_dir(&next) {
                Ok(()) => {}
                // Another call made it meanwhile; it is checked below all the same.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && next.is_dir() => {}
                Err(e) => return Err(RootPathError::io("create the directory", path)(e)),
            }
            false
        }
        Err(e) => return Err(RootPathError::io("open", path)(e)),
    };
    let canonical = if existed {
        canonical_link(&next, &slash(walked), path)?
    } else {
        fs::canonicalize(&next).map_err(RootPathError::io("create the directory", path))?
    };
    if relative_inside(root, &canonical).is_none() {
        return Err(RootPathError::Escapes {
            path: path.to_owned(),
        });
    }
    if existed && !canonical.is_dir() {
        return Err(RootPathError::NotADirectory {
            path: slash(walked),
        });
    }
    Ok(canonical)
}

/// The canonical form of the existing entry `entry`; a dangling link is
/// reported as `link` (relative to the root).
fn canonical_link(entry: &Path, link: &str, path: &str) -> Result<PathBuf, RootPathError> {
    fs::canonicalize(entry).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            RootPathError::DanglingSymlink {
                path: link.to_owned(),
            }
        } else {
            RootPathError::io("open", path)(e)
        }
    })
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

/// `path` relative to `base`, with `/` separators, if it is inside `base`
/// (`Some("")` for `base` itself). Whole components are compared, and
/// neither path is touched on disk, so both should already be canonical.
///
/// ```
/// use std::path::Path;
/// use oscova_core::fs::relative_inside;
///
/// let root = Path::new("/srv/files/alice");
/// assert_eq!(relative_inside(root, Path::new("/srv/files/alice/a/b")).as_deref(), Some("a/b"));
/// assert_eq!(relative_inside(root, Path::new("/srv/files/alice2/x")), None);
/// ```
pub fn relative_inside(base: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(base).ok().map(slash)
}

/// A relative path with `/` separators.
fn slash(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}
