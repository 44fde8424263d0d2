//! The path rules, one test each; links, special files and hard links on
//! Unix. The swap race is `tests/it/fs_race.rs`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::root::lexical;
use super::*;

/// A fresh directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("oscova-fs-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir.canonicalize().unwrap())
    }

    /// A root `root/` inside the scratch directory, and a sibling `outside/`.
    fn root(&self) -> (UserRoot, PathBuf, PathBuf) {
        let root = self.0.join("root");
        let outside = self.0.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        (UserRoot::new(&root), root, outside)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(root: &UserRoot, path: &str) -> Result<String, RootPathError> {
    let bytes = root.open_file(path)?.read_capped(1 << 20)?;
    Ok(String::from_utf8(bytes).unwrap())
}

fn write(
    root: &UserRoot,
    path: &str,
    mode: CreateMode,
    text: &str,
) -> Result<RootFile, RootPathError> {
    let file = root.create_file(path, mode, false)?;
    file.as_file().write_all(text.as_bytes()).unwrap();
    Ok(file)
}

#[test]
fn lexical_rules() {
    assert_eq!(lexical("").unwrap(), PathBuf::new());
    assert_eq!(lexical("./a/./b").unwrap(), PathBuf::from("a/b"));
    assert!(matches!(
        lexical("/etc/passwd"),
        Err(RootPathError::Absolute { .. })
    ));
    assert!(matches!(
        lexical("a/../b"),
        Err(RootPathError::ParentDir { .. })
    ));
    assert!(matches!(
        lexical(".."),
        Err(RootPathError::ParentDir { .. })
    ));
    assert!(matches!(
        lexical("a\0b"),
        Err(RootPathError::NulByte { .. })
    ));
}

#[test]
fn user_dir_names_are_distinct_and_plain() {
    assert_eq!(user_dir_name("alice").as_deref(), Some("alice"));
    assert_eq!(user_dir_name(".").as_deref(), Some("%2E"));
    assert_eq!(user_dir_name("..").as_deref(), Some("%2E."));
    assert_eq!(user_dir_name("a/b").as_deref(), Some("a%2Fb"));
    assert_eq!(user_dir_name("%41").as_deref(), Some("%2541"));
    assert_ne!(user_dir_name("%41"), user_dir_name("A"));
    assert_eq!(user_dir_name(""), None);
}

#[test]
fn per_user_roots_join_the_escaped_id() {
    let roots = per_user_roots("/base");
    assert_eq!(
        roots(&UserInfo::new("../x")),
        Some(PathBuf::from("/base/%2E.%2Fx"))
    );
}

#[test]
fn the_root_is_created_and_opens_as_itself() {
    let scratch = Scratch::new();
    let root = UserRoot::new(scratch.0.join("new/alice"));
    assert_eq!(root.open_dir(".").unwrap().rel(), "");
    assert!(scratch.0.join("new/alice").is_dir());
}

#[test]
fn refused_paths_touch_nothing() {
    let scratch = Scratch::new();
    let root = UserRoot::new(scratch.0.join("never"));
    assert!(matches!(
        root.open_file("/etc/passwd"),
        Err(RootPathError::Absolute { .. })
    ));
    assert!(!scratch.0.join("never").exists());
}

#[test]
fn missing_paths_are_not_found() {
    let scratch = Scratch::new();
    let (root, _, _) = scratch.root();
    let err = root.open_file("nope/x.txt").unwrap_err();
    assert!(matches!(err, RootPathError::NotFound { ref path } if path == "nope/x.txt"));
    assert!(matches!(
        root.open_dir("nope"),
        Err(RootPathError::NotFound { .. })
    ));
}

#[test]
fn a_file_to_write_needs_a_name_and_its_parents() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    assert!(matches!(
        root.create_file(".", CreateMode::New, true),
        Err(RootPathError::NoFileName { .. })
    ));
    assert!(matches!(
        root.create_file("a/b/c.txt", CreateMode::New, false),
        Err(RootPathError::MissingParent { ref path }) if path == "a"
    ));
    assert!(
        !dir.join("a").exists(),
        "nothing created without create_dirs"
    );
    let file = root
        .create_file("a/b/c.txt", CreateMode::New, true)
        .unwrap();
    assert_eq!((file.rel(), file.existed()), ("a/b/c.txt", false));
    assert!(dir.join("a/b/c.txt").is_file());
}

#[test]
fn create_modes() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    write(&root, "f.txt", CreateMode::New, "one").unwrap();
    assert!(matches!(
        write(&root, "f.txt", CreateMode::New, "two"),
        Err(RootPathError::AlreadyExists { .. })
    ));
    let appended = write(&root, "f.txt", CreateMode::Append, "+").unwrap();
    assert!(appended.existed());
    assert_eq!(std::fs::read_to_string(dir.join("f.txt")).unwrap(), "one+");
    write(&root, "f.txt", CreateMode::Truncate, "new").unwrap();
    assert_eq!(read(&root, "f.txt").unwrap(), "new");
}

#[test]
fn parents_must_be_directories_and_targets_files() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    std::fs::write(dir.join("f"), "x").unwrap();
    std::fs::create_dir(dir.join("d")).unwrap();
    assert!(matches!(
        root.create_file("f/x.txt", CreateMode::New, true),
        Err(RootPathError::NotADirectory { ref path }) if path == "f"
    ));
    assert!(matches!(
        root.create_file("d", CreateMode::Truncate, false),
        Err(RootPathError::IsADirectory { .. })
    ));
    assert!(matches!(
        root.open_file("d"),
        Err(RootPathError::IsADirectory { .. })
    ));
    assert!(matches!(
        root.open_dir("f"),
        Err(RootPathError::NotADirectory { .. })
    ));
    assert!(root.check_write("f", false).unwrap().exists);
}

#[test]
fn reads_are_capped_while_reading() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    std::fs::write(dir.join("big"), vec![b'x'; 10]).unwrap();
    assert_eq!(
        root.open_file("big")
            .unwrap()
            .read_capped(10)
            .unwrap()
            .len(),
        10
    );
    assert!(matches!(
        root.open_file("big").unwrap().read_capped(9),
        Err(RootPathError::TooLarge { limit: 9, .. })
    ));
}

#[test]
fn host_files_must_be_regular_and_are_read_capped() {
    let scratch = Scratch::new();
    let path = scratch.0.join("config.toml");
    std::fs::write(&path, "a = 1\n").unwrap();
    assert_eq!(read_regular(&path, 6).unwrap(), b"a = 1\n");
    assert!(matches!(
        read_regular(&path, 5),
        Err(FileError::TooLarge { limit: 5 })
    ));
    assert!(matches!(
        read_regular(&scratch.0, 5),
        Err(FileError::NotRegular {
            kind: FileKind::Directory
        })
    ));
    assert!(matches!(
        read_capped(std::io::repeat(7), 64),
        Err(FileError::TooLarge { .. })
    ));
}

#[cfg(unix)]
mod unix {
    use std::os::unix::fs::symlink;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    fn mkfifo(path: &Path) {
        let status = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(status.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn links_that_lead_out_are_refused() {
        let scratch = Scratch::new();
        let (root, dir, outside) = scratch.root();
        std::fs::write(outside.join("secret"), "x").unwrap();
        symlink(&outside, dir.join("out")).unwrap();
        symlink(outside.join("secret"), dir.join("secret")).unwrap();
        symlink("../outside/secret", dir.join("relative")).unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        symlink("../../outside", dir.join("sub/up")).unwrap();
        for path in ["out", "out/secret", "secret", "relative", "sub/up/secret"] {
            assert!(
                matches!(root.open_file(path), Err(RootPathError::Escapes { .. })),
                "{path}"
            );
        }
        assert!(matches!(
            root.open_dir("out"),
            Err(RootPathError::Escapes { .. })
        ));
        for path in ["out/new.txt", "secret", "sub/up/new.txt"] {
            assert!(
                matches!(
                    root.create_file(path, CreateMode::Truncate, true),
                    Err(RootPathError::Escapes { .. })
                ),
                "{path}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "x"
        );
        assert!(!outside.join("new.txt").exists());
    }

    #[test]
    fn links_inside_the_root_are_followed() {
        let scratch = Scratch::new();
        let (root, dir, _) = scratch.root();
        std::fs::create_dir(dir.join("real")).unwrap();
        std::fs::write(dir.join("real/a.txt"), "a").unwrap();
        symlink(dir.join("real"), dir.join("alias")).unwrap();
        symlink("real/a.txt", dir.join("rel-link")).unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        symlink("../real", dir.join("sub/back")).unwrap();
        assert_eq!(root.open_dir("alias").unwrap().rel(), "real");
        assert_eq!(root.open_file("rel-link").unwrap().rel(), "real/a.txt");
        assert_eq!(read(&root, "sub/back/a.txt").unwrap(), "a");
        let file = root
            .create_file("alias/x.txt", CreateMode::New, false)
            .unwrap();
        assert_eq!(file.rel(), "real/x.txt");
        assert!(dir.join("real/x.txt").is_file());
    }

    #[test]
    fn dangling_links_are_refused() {
        let scratch = Scratch::new();
        let (root, dir, outside) = scratch.root();
        symlink("gone", dir.join("link")).unwrap();
        symlink("gone-dir", dir.join("dirlink")).unwrap();
        symlink(outside.join("gone"), dir.join("outlink")).unwrap();
        assert!(matches!(
            root.open_file("link"),
            Err(RootPathError::DanglingSymlink { ref path }) if path == "link"
        ));
        assert!(matches!(
            root.create_file("link", CreateMode::Truncate, false),
            Err(RootPathError::DanglingSymlink { ref path }) if path == "link"
        ));
        assert!(matches!(
            root.create_file("dirlink/x.txt", CreateMode::New, true),
            Err(RootPathError::DanglingSymlink { ref path }) if path == "dirlink"
        ));
        assert!(matches!(
            root.create_file("outlink", CreateMode::Truncate, true),
            Err(RootPathError::Escapes { .. })
        ));
        assert!(!dir.join("gone").exists() && !dir.join("gone-dir").exists());
        assert!(!outside.join("gone").exists());
    }

    #[test]
    fn link_loops_end() {
        let scratch = Scratch::new();
        let (root, dir, _) = scratch.root();
        symlink("b", dir.join("a")).unwrap();
        symlink("a", dir.join("b")).unwrap();
        let err = root.open_file("a").unwrap_err();
        assert!(matches!(err, RootPathError::Io { .. }), "{err}");
    }

    #[test]
    fn fifos_are_refused_at_once() {
        let scratch = Scratch::new();
        let (root, dir, _) = scratch.root();
        mkfifo(&dir.join("pipe"));
        let started = Instant::now();
        for result in [
            root.open_file("pipe").map(drop),
            root.create_file("pipe", CreateMode::Truncate, false)
                .map(drop),
            root.create_file("pipe", CreateMode::Append, false)
                .map(drop),
            root.check_write("pipe", false).map(drop),
            root.open_dir("")
                .and_then(|d| d.open_file("pipe".as_ref()))
                .map(drop),
        ] {
            assert!(
                matches!(
                    result,
                    Err(RootPathError::NotRegular {
                        kind: FileKind::Fifo,
                        ..
                    })
                ),
                "{result:?}"
            );
        }
        // Without a writer, opening a FIFO to read blocks: nothing here waited.
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn hard_links_are_refused_unless_allowed() {
        let scratch = Scratch::new();
        let (root, dir, outside) = scratch.root();
        std::fs::write(outside.join("secret"), "TOPSECRET").unwrap();
        std::fs::hard_link(outside.join("secret"), dir.join("linked")).unwrap();
        assert!(matches!(
            root.open_file("linked"),
            Err(RootPathError::HardLinked { links: 2, .. })
        ));
        assert!(matches!(
            root.create_file("linked", CreateMode::Truncate, false),
            Err(RootPathError::HardLinked { .. })
        ));
        assert!(matches!(
            root.open_dir("").unwrap().open_file("linked".as_ref()),
            Err(RootPathError::HardLinked { .. })
        ));
        // The refused truncation did not happen.
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "TOPSECRET"
        );
        let allowing = root.clone().allow_hard_links(true);
        assert_eq!(read(&allowing, "linked").unwrap(), "TOPSECRET");
    }

    #[test]
    fn listing_reports_links_without_following_them() {
        let scratch = Scratch::new();
        let (root, dir, outside) = scratch.root();
        std::fs::write(dir.join("a.txt"), "abc").unwrap();
        std::fs::create_dir(dir.join("d")).unwrap();
        symlink(&outside, dir.join("out")).unwrap();
        mkfifo(&dir.join("pipe"));
        let top = root.open_dir("").unwrap();
        let mut entries: Vec<(String, FileKind, u64)> = top
            .entries()
            .unwrap()
            .map(|e| e.map(|e| (e.rel().to_owned(), e.kind(), e.size())).unwrap())
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let kinds: Vec<(&str, FileKind)> =
            entries.iter().map(|(r, k, _)| (r.as_str(), *k)).collect();
        assert_eq!(
            kinds,
            [
                ("a.txt", FileKind::File),
                ("d", FileKind::Directory),
                ("out", FileKind::Symlink),
                ("pipe", FileKind::Fifo)
            ]
        );
        assert_eq!(entries[0].2, 3);
        assert_eq!(top.open_dir("d".as_ref()).unwrap().rel(), "d");
        assert!(matches!(
            top.open_dir("out".as_ref()),
            Err(RootPathError::NotADirectory { .. })
        ));
        assert!(matches!(
            top.open_file("out".as_ref()),
            Err(RootPathError::NotRegular {
                kind: FileKind::Symlink,
                ..
            })
        ));
        for name in ["..", ".", "", "a/b"] {
            assert!(top.open_dir(name.as_ref()).is_err(), "{name:?}");
        }
        let mut text = String::new();
        top.open_file("a.txt".as_ref())
            .unwrap()
            .as_file()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "abc");
    }
}

#[test]
fn errors_name_the_given_path() {
    let err = lexical("/abs").unwrap_err();
    assert_eq!(err.path(), Some("/abs"));
    let unavailable = RootPathError::RootUnavailable {
        source: std::io::Error::other("x"),
    };
    assert_eq!(unavailable.path(), None);
}
