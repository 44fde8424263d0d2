//! Resolving a path beneath the root's directory handle, one component at
//! a time, with no gap between the check and the use (Unix).
//!
//! Rules: the walk holds an open handle for the root and for every
//! directory it has entered, and never names anything by a path from `/`:
//! each step is an `openat`, `fstatat` or `mkdirat` relative to the handle
//! of the directory it is in, with `O_NOFOLLOW`, so the kernel follows no
//! link at all. A link is read (`readlinkat`) and its target spliced into
//! the components still to walk; a `..` pops a handle the walk holds (it
//! can never go above the root: that is [`Escapes`](RootPathError::Escapes)),
//! and an absolute target must start with the root's own path, after which
//! the rest is walked from the root's handle again. A component that changes
//! between the look and the open (a directory swapped for a link) makes the
//! open fail instead of following it, and the step is looked at again;
//! looks again and links followed share a budget of [`MAX_STEPS`], so a
//! walk always ends. The final component is opened by the caller's rule
//! (read, create, or look only), again relative to a held handle and with
//! `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`, and what was opened is checked on
//! the handle: a regular file, with one link unless the root allows more.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::RootDir;
use super::file::kind_of;
use super::root::{CreateMode, RootFile, WriteCheck};
use super::{FileKind, RootPathError};

/// How many links one resolution follows plus how many times it looks at
/// a step again after it changed (the kernel allows 40 links).
const MAX_STEPS: u32 = 40;

const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
/// For files: a FIFO opened with `O_NONBLOCK` returns at once.
const FILE: OFlags = OFlags::NOFOLLOW
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// One component still to walk; `from_link` is the link (relative to the
/// root) whose target it came from.
#[derive(Debug)]
pub(super) struct Part {
    name: OsString,
    from_link: Option<String>,
}

/// What to do when a directory on the way does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Missing {
    /// Create it (inside the held parent).
    Create,
    /// [`MissingParent`](RootPathError::MissingParent).
    Refuse,
    /// [`NotFound`](RootPathError::NotFound).
    NotFound,
}

/// A resolution in progress.
pub(super) struct Walk<'a> {
    given: &'a str,
    root_path: PathBuf,
    root: OwnedFd,
    /// The directories entered below the root, with their names.
    dirs: Vec<(OwnedFd, String)>,
    pending: VecDeque<Part>,
    steps: u32,
    hard_links: bool,
}

impl<'a> Walk<'a> {
    /// A walk of `lexical` (normal components only) from the root `dir`,
    /// opened and created here; `given` is the path as the caller wrote it.
    pub(super) fn new(
        dir: &Path,
        given: &'a str,
        lexical: &Path,
        hard_links: bool,
    ) -> Result<Self, RootPathError> {
        let unavailable = |source| RootPathError::RootUnavailable { source };
        std::fs::create_dir_all(dir).map_err(unavailable)?;
        // The root's own path is the host's choice, so links in it are followed.
        let root = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| unavailable(e.into()))?;
        let root_path = std::fs::canonicalize(dir).map_err(unavailable)?;
        let pending = lexical
            .components()
            .map(|c| Part {
                name: c.as_os_str().to_owned(),
                from_link: None,
            })
            .collect();
        Ok(Self {
            given,
            root_path,
            root,
            dirs: Vec::new(),
            pending,
            steps: MAX_STEPS,
            hard_links,
        })
    }

    fn current(&self) -> BorrowedFd<'_> {
        self.dirs
            .last()
            .map_or(self.root.as_fd(), |(fd, _)| fd.as_fd())
    }

    /// The path of `name` in the current directory, relative to the root.
    fn rel(&self, name: Option<&OsStr>) -> String {
        let mut parts: Vec<String> = self.dirs.iter().map(|(_, n)| n.clone()).collect();
        parts.extend(name.map(|n| n.to_string_lossy().into_owned()));
        parts.join("/")
    }

    fn given(&self) -> String {
        self.given.to_owned()
    }

    fn io(&self, action: &'static str, errno: Errno) -> RootPathError {
        RootPathError::io(action, self.given)(io::Error::from(errno))
    }

    /// Spends one step, or fails once the budget is gone.
    fn step(&mut self) -> Result<(), RootPathError> {
        self.steps = self
            .steps
            .checked_sub(1)
            .ok_or_else(|| self.io("resolve", Errno::LOOP))?;
        Ok(())
    }

    /// Walks the directories on the way, following links, and returns the
    /// last component; `None` when the path names the directory reached.
    pub(super) fn descend_to_last(
        &mut self,
        missing: Missing,
    ) -> Result<Option<Part>, RootPathError> {
        while let Some(part) = self.pending.pop_front() {
            if part.name == "." {
                continue;
            }
            if part.name == ".." {
                if self.dirs.pop().is_none() {
                    return Err(RootPathError::Escapes { path: self.given() });
                }
                continue;
            }
            if self.pending.is_empty() {
                return Ok(Some(part));
            }
            self.enter(part, missing)?;
        }
        Ok(None)
    }

    /// Enters the directory `part` of the current one, or follows it when
    /// it is a link (its target is then walked next).
    pub(super) fn enter(&mut self, part: Part, missing: Missing) -> Result<(), RootPathError> {
        loop {
            match self.lookup(&part)? {
                Some(FileKind::Symlink) => return self.follow(part),
                Some(FileKind::Directory) => {
                    match rustix::fs::openat(self.current(), &part.name, DIR, Mode::empty()) {
                        Ok(fd) => {
                            let name = part.name.to_string_lossy().into_owned();
                            self.dirs.push((fd, name));
                            return Ok(());
                        }
                        // Swapped for a link or removed since the look: look again.
                        Err(Errno::LOOP | Errno::MLINK | Errno::NOTDIR | Errno::NOENT) => {
                            self.step()?;
                        }
                        Err(e) => return Err(self.io("open", e)),
                    }
                }
                Some(_) => {
                    return Err(RootPathError::NotADirectory {
                        path: self.rel(Some(&part.name)),
                    });
                }
                None => match missing {
                    _ if part.from_link.is_some() => return Err(self.missing(&part)),
                    Missing::Create => {
                        match rustix::fs::mkdirat(
                            self.current(),
                            &part.name,
                            Mode::from_raw_mode(0o777),
                        ) {
                            Ok(()) => {}
                            // Another call made it meanwhile; it is looked at all the same.
                            Err(Errno::EXIST) => self.step()?,
                            Err(e) => return Err(self.io("create the directory", e)),
                        }
                    }
                    Missing::Refuse => {
                        return Err(RootPathError::MissingParent {
                            path: self.rel(Some(&part.name)),
                        });
                    }
                    Missing::NotFound => return Err(self.missing(&part)),
                },
            }
        }
    }

    /// Reads the link `part` of the current directory and puts its target
    /// first among the components to walk.
    pub(super) fn follow(&mut self, part: Part) -> Result<(), RootPathError> {
        self.step()?;
        let link = self.rel(Some(&part.name));
        let target = rustix::fs::readlinkat(self.current(), &part.name, Vec::new())
            .map_err(|e| self.io("read the link", e))?;
        let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
        let rest = if target.is_absolute() {
            let inside = target
                .strip_prefix(&self.root_path)
                .map_err(|_| RootPathError::Escapes { path: self.given() })?;
            self.dirs.clear();
            inside.to_path_buf()
        } else {
            target
        };
        let parts: Vec<Part> = rest
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_owned()),
                Component::ParentDir => Some(OsString::from("..")),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
            })
            .map(|name| Part {
                name,
                from_link: Some(link.clone()),
            })
            .collect();
        for part in parts.into_iter().rev() {
            self.pending.push_front(part);
        }
        Ok(())
    }

    /// What `part` of the current directory is, without following it;
    /// `None` when nothing is there.
    fn lookup(&self, part: &Part) -> Result<Option<FileKind>, RootPathError> {
        match rustix::fs::statat(self.current(), &part.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(kind_of_type(FileType::from_raw_mode(stat.st_mode)))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.io("open", e)),
        }
    }

    /// The error for a missing `part`: its link dangles, or the path does
    /// not exist.
    fn missing(&self, part: &Part) -> RootPathError {
        match &part.from_link {
            Some(link) => RootPathError::DanglingSymlink { path: link.clone() },
            None => RootPathError::NotFound { path: self.given() },
        }
    }

    /// Puts `part` back to be looked at again, spending a step.
    fn again(&mut self, part: Part) -> Result<(), RootPathError> {
        self.step()?;
        self.pending.push_front(part);
        Ok(())
    }

    /// The file just opened as `part`, after checking the handle.
    fn opened(&self, fd: OwnedFd, part: &Part, existed: bool) -> Result<RootFile, RootPathError> {
        let file = File::from(fd);
        let meta = file
            .metadata()
            .map_err(RootPathError::io("open", self.given))?;
        match kind_of(&meta) {
            FileKind::File => {}
            FileKind::Directory => return Err(RootPathError::IsADirectory { path: self.given() }),
            kind => {
                return Err(RootPathError::NotRegular {
                    path: self.given(),
                    kind,
                });
            }
        }
        if meta.nlink() > 1 && !self.hard_links {
            return Err(RootPathError::HardLinked {
                path: self.given(),
                links: meta.nlink(),
            });
        }
        Ok(RootFile::new(
            file,
            self.rel(Some(&part.name)),
            meta.len(),
            existed,
        ))
    }
}

/// [`UserRoot::open_dir`](super::UserRoot::open_dir).
pub(super) fn open_dir(mut walk: Walk<'_>) -> Result<RootDir, RootPathError> {
    while let Some(last) = walk.descend_to_last(Missing::NotFound)? {
        walk.enter(last, Missing::NotFound)?;
    }
    let rel = walk.rel(None);
    let hard_links = walk.hard_links;
    let fd = match walk.dirs.pop() {
        Some((fd, _)) => fd,
        None => walk.root,
    };
    Ok(RootDir::new(fd, rel, hard_links))
}

/// [`UserRoot::open_file`](super::UserRoot::open_file).
pub(super) fn open_file(mut walk: Walk<'_>) -> Result<RootFile, RootPathError> {
    loop {
        let Some(last) = walk.descend_to_last(Missing::NotFound)? else {
            return Err(RootPathError::IsADirectory { path: walk.given() });
        };
        match walk.lookup(&last)? {
            None => return Err(walk.missing(&last)),
            Some(FileKind::Symlink) => walk.follow(last)?,
            Some(FileKind::File) => {
                match rustix::fs::openat(
                    walk.current(),
                    &last.name,
                    FILE | OFlags::RDONLY,
                    Mode::empty(),
                ) {
                    Ok(fd) => return walk.opened(fd, &last, true),
                    Err(Errno::LOOP | Errno::MLINK | Errno::NOENT) => walk.again(last)?,
                    Err(e) => return Err(walk.io("open", e)),
                }
            }
            Some(FileKind::Directory) => {
                return Err(RootPathError::IsADirectory { path: walk.given() });
            }
            Some(kind) => {
                return Err(RootPathError::NotRegular {
                    path: walk.given(),
                    kind,
                });
            }
        }
    }
}

/// [`UserRoot::create_file`](super::UserRoot::create_file).
pub(super) fn create_file(
    mut walk: Walk<'_>,
    mode: CreateMode,
    create_dirs: bool,
) -> Result<RootFile, RootPathError> {
    let missing = if create_dirs {
        Missing::Create
    } else {
        Missing::Refuse
    };
    let append = match mode {
        CreateMode::Append => OFlags::APPEND,
        CreateMode::New | CreateMode::Truncate => OFlags::empty(),
    };
    loop {
        let Some(last) = walk.descend_to_last(missing)? else {
            return Err(RootPathError::IsADirectory { path: walk.given() });
        };
        match walk.lookup(&last)? {
            None if last.from_link.is_some() => return Err(walk.missing(&last)),
            None => {
                let flags = FILE | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | append;
                match rustix::fs::openat(
                    walk.current(),
                    &last.name,
                    flags,
                    Mode::from_raw_mode(0o666),
                ) {
                    Ok(fd) => return walk.opened(fd, &last, false),
                    Err(Errno::EXIST) => walk.again(last)?,
                    Err(e) => return Err(walk.io("create", e)),
                }
            }
            Some(FileKind::Symlink) => walk.follow(last)?,
            Some(FileKind::File) if mode == CreateMode::New => {
                return Err(RootPathError::AlreadyExists { path: walk.given() });
            }
            Some(FileKind::File) => {
                // Not `O_TRUNC`: the handle is checked (one link, a regular
                // file) before anything in the file changes.
                match rustix::fs::openat(
                    walk.current(),
                    &last.name,
                    FILE | OFlags::WRONLY | append,
                    Mode::empty(),
                ) {
                    Ok(fd) => {
                        let file = walk.opened(fd, &last, true)?;
                        if mode == CreateMode::Truncate {
                            file.as_file()
                                .set_len(0)
                                .map_err(RootPathError::io("write", walk.given))?;
                        }
                        return Ok(file);
                    }
                    // Swapped since the look (for a link, a FIFO without a
                    // reader, or nothing): look again.
                    Err(Errno::LOOP | Errno::MLINK | Errno::NOENT | Errno::NXIO) => {
                        walk.again(last)?
                    }
                    Err(e) => return Err(walk.io("open", e)),
                }
            }
            Some(FileKind::Directory) => {
                return Err(RootPathError::IsADirectory { path: walk.given() });
            }
            Some(kind) => {
                return Err(RootPathError::NotRegular {
                    path: walk.given(),
                    kind,
                });
            }
        }
    }
}

/// [`UserRoot::check_write`](super::UserRoot::check_write).
pub(super) fn check_write(
    mut walk: Walk<'_>,
    create_dirs: bool,
) -> Result<WriteCheck, RootPathError> {
    let missing = if create_dirs {
        Missing::Create
    } else {
        Missing::Refuse
    };
    loop {
        let Some(last) = walk.descend_to_last(missing)? else {
            return Err(RootPathError::IsADirectory { path: walk.given() });
        };
        match walk.lookup(&last)? {
            None if last.from_link.is_some() => return Err(walk.missing(&last)),
            None => return Ok(WriteCheck::new(walk.rel(Some(&last.name)), false)),
            Some(FileKind::Symlink) => walk.follow(last)?,
            Some(FileKind::File) => return Ok(WriteCheck::new(walk.rel(Some(&last.name)), true)),
            Some(FileKind::Directory) => {
                return Err(RootPathError::IsADirectory { path: walk.given() });
            }
            Some(kind) => {
                return Err(RootPathError::NotRegular {
                    path: walk.given(),
                    kind,
                });
            }
        }
    }
}

/// The kind a no-follow lookup reports.
pub(super) fn kind_of_type(file_type: FileType) -> FileKind {
    match file_type {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Directory,
        FileType::Symlink => FileKind::Symlink,
        FileType::Fifo => FileKind::Fifo,
        FileType::Socket => FileKind::Socket,
        FileType::CharacterDevice => FileKind::CharDevice,
        FileType::BlockDevice => FileKind::BlockDevice,
        _ => FileKind::Unknown,
    }
}
