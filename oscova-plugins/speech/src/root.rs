//! The files root and the one way paths get into it: the rules of the
//! `oscova.files` plugin (its `root.rs`), kept line for line so that a path
//! means the same thing to both plugins sharing one root.
//!
//! Rules: every path a tool receives is relative to the user's root; it is
//! refused if it is absolute or has a `..` component, before the file
//! system is touched. What remains is joined to the canonical root and
//! canonicalised, so symbolic links are resolved, and the result must
//! still start with the canonical root. A file to be written may not
//! exist yet: then its parent is the path checked this way (each missing
//! directory is created one level at a time inside a checked parent), and
//! an existing target that is a symbolic link must resolve inside the root
//! too. A dangling link is refused, since writing through it would create
//! its target wherever it points.
//!
//! Not covered: a process on the host that swaps a directory for a
//! symbolic link between the check and the open. The root is meant to be a
//! directory only Oscova's plugins write to.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::SpeechToolError;

/// The user's root: where it is configured, canonicalised on each call.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    configured: PathBuf,
}

/// An existing path inside the root.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The canonical absolute path.
    pub(crate) abs: PathBuf,
    /// The path relative to the root, with `/` separators (`""` is the root).
    pub(crate) rel: String,
}

impl Root {
    pub(crate) fn new(configured: PathBuf) -> Self {
        Self { configured }
    }

    /// The canonical root, created when missing.
    pub(crate) fn open(&self) -> Result<PathBuf, SpeechToolError> {
        fs::create_dir_all(&self.configured)
            .and_then(|()| fs::canonicalize(&self.configured))
            .map_err(|source| SpeechToolError::RootUnavailable { source })
    }

    /// An existing file or directory at `path` (relative; `""` or `.` is
    /// the root itself).
    pub(crate) fn existing(&self, path: &str) -> Result<Resolved, SpeechToolError> {
        let root = self.open()?;
        let lexical = lexical(path)?;
        let abs = match fs::canonicalize(root.join(&lexical)) {
            Ok(abs) => abs,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(if is_symlink(&root.join(&lexical)) {
                    SpeechToolError::DanglingSymlink {
                        path: path.to_owned(),
                    }
                } else {
                    SpeechToolError::NotFound {
                        path: path.to_owned(),
                    }
                });
            }
            Err(e) => return Err(SpeechToolError::io("open", path)(e)),
        };
        let rel = inside(&root, &abs).ok_or_else(|| SpeechToolError::Escapes {
            path: path.to_owned(),
        })?;
        Ok(Resolved { abs, rel })
    }

    /// Where to write the file `path`: its parent is checked (and created
    /// level by level when `create_dirs`), and an existing target must be
    /// a regular file, or a link to one, inside the root.
    pub(crate) fn for_write(
        &self,
        path: &str,
        create_dirs: bool,
    ) -> Result<Resolved, SpeechToolError> {
        let root = self.open()?;
        let lexical = lexical(path)?;
        let Some(name) = lexical.file_name().map(ToOwned::to_owned) else {
            return Err(SpeechToolError::InvalidPath {
                path: path.to_owned(),
                reason: "it names no file; give a file name such as `hello.wav`",
            });
        };
        let mut dir = root.clone();
        let mut walked = PathBuf::new();
        for part in lexical.parent().into_iter().flat_map(Path::components) {
            walked.push(part);
            let next = dir.join(part);
            match fs::symlink_metadata(&next) {
                Ok(_) => {
                    let canonical = fs::canonicalize(&next).map_err(|e| {
                        if e.kind() == io::ErrorKind::NotFound {
                            SpeechToolError::DanglingSymlink {
                                path: slash(&walked),
                            }
                        } else {
                            SpeechToolError::io("open", path)(e)
                        }
                    })?;
                    if inside(&root, &canonical).is_none() {
                        return Err(SpeechToolError::Escapes {
                            path: path.to_owned(),
                        });
                    }
                    if !canonical.is_dir() {
                        return Err(SpeechToolError::NotADirectory {
                            path: slash(&walked),
                        });
                    }
                    dir = canonical;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !create_dirs {
                        return Err(SpeechToolError::MissingParent {
                            path: slash(&walked),
                        });
                    }
                    match fs::create_dir(&next) {
                        Ok(()) => {}
                        // Another call made it meanwhile; check it as above next time round.
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && next.is_dir() => {}
                        Err(e) => return Err(SpeechToolError::io("create the directory", path)(e)),
                    }
                    dir = fs::canonicalize(&next)
                        .map_err(|e| SpeechToolError::io("create the directory", path)(e))?;
                    if inside(&root, &dir).is_none() {
                        return Err(SpeechToolError::Escapes {
                            path: path.to_owned(),
                        });
                    }
                }
                Err(e) => return Err(SpeechToolError::io("open", path)(e)),
            }
        }
        let target = dir.join(&name);
        let abs = match fs::symlink_metadata(&target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => target,
            Err(e) => return Err(SpeechToolError::io("open", path)(e)),
            Ok(meta) => {
                let abs = if meta.file_type().is_symlink() {
                    fs::canonicalize(&target).map_err(|e| {
                        if e.kind() == io::ErrorKind::NotFound {
                            SpeechToolError::DanglingSymlink {
                                path: path.to_owned(),
                            }
                        } else {
                            SpeechToolError::io("open", path)(e)
                        }
                    })?
                } else {
                    target
                };
                if abs.is_dir() {
                    return Err(SpeechToolError::IsADirectory {
                        path: path.to_owned(),
                    });
                }
                abs
            }
        };
        let rel = inside(&root, &abs).ok_or_else(|| SpeechToolError::Escapes {
            path: path.to_owned(),
        })?;
        Ok(Resolved { abs, rel })
    }
}

/// The relative path, or why it is refused. Only normal components survive.
pub(crate) fn lexical(path: &str) -> Result<PathBuf, SpeechToolError> {
    if path.contains('\0') {
        return Err(SpeechToolError::InvalidPath {
            path: path.to_owned(),
            reason: "it contains a NUL byte",
        });
    }
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(SpeechToolError::Absolute {
                    path: path.to_owned(),
                });
            }
            Component::ParentDir => {
                return Err(SpeechToolError::ParentDir {
                    path: path.to_owned(),
                });
            }
            Component::CurDir => {}
            Component::Normal(part) => out.push(part),
        }
    }
    Ok(out)
}

/// `abs` relative to `root` with `/` separators, if it is inside.
pub(crate) fn inside(root: &Path, abs: &Path) -> Option<String> {
    abs.strip_prefix(root).ok().map(slash)
}

/// A relative path with `/` separators.
pub(crate) fn slash(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_rules() {
        assert_eq!(lexical("").unwrap(), PathBuf::new());
        assert_eq!(lexical("./a/./b").unwrap(), PathBuf::from("a/b"));
        assert!(matches!(
            lexical("/etc/passwd"),
            Err(SpeechToolError::Absolute { .. })
        ));
        assert!(matches!(
            lexical("a/../b"),
            Err(SpeechToolError::ParentDir { .. })
        ));
        assert!(matches!(
            lexical(".."),
            Err(SpeechToolError::ParentDir { .. })
        ));
        assert!(matches!(
            lexical("a\0b"),
            Err(SpeechToolError::InvalidPath { .. })
        ));
    }

    #[test]
    fn inside_checks_whole_components() {
        let root = Path::new("/srv/files/alice");
        assert_eq!(
            inside(root, Path::new("/srv/files/alice/a/b")).as_deref(),
            Some("a/b")
        );
        assert_eq!(inside(root, root).as_deref(), Some(""));
        assert_eq!(inside(root, Path::new("/srv/files/alice2/x")), None);
        assert_eq!(inside(root, Path::new("/srv/files")), None);
    }
}
