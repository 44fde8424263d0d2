//! The path rules, one test each; symbolic-link cases on Unix.

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
fn inside_checks_whole_components() {
    let root = Path::new("/srv/files/alice");
    assert_eq!(
        relative_inside(root, Path::new("/srv/files/alice/a/b")).as_deref(),
        Some("a/b")
    );
    assert_eq!(relative_inside(root, root).as_deref(), Some(""));
    assert_eq!(
        relative_inside(root, Path::new("/srv/files/alice2/x")),
        None
    );
    assert_eq!(relative_inside(root, Path::new("/srv/files")), None);
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
fn the_root_is_created_and_resolves_to_itself() {
    let scratch = Scratch::new();
    let root = UserRoot::new(scratch.0.join("new/alice"));
    let resolved = root.resolve_existing(".").unwrap();
    assert_eq!(resolved.rel, "");
    assert_eq!(resolved.abs, scratch.0.join("new/alice"));
}

#[test]
fn missing_paths_are_not_found() {
    let scratch = Scratch::new();
    let (root, _, _) = scratch.root();
    let err = root.resolve_existing("nope/x.txt").unwrap_err();
    assert!(matches!(err, RootPathError::NotFound { ref path } if path == "nope/x.txt"));
}

#[test]
fn a_file_to_write_needs_a_name_and_its_parents() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    assert!(matches!(
        root.resolve_for_write(".", true),
        Err(RootPathError::NoFileName { .. })
    ));
    assert!(matches!(
        root.resolve_for_write("a/b/c.txt", false),
        Err(RootPathError::MissingParent { ref path }) if path == "a"
    ));
    assert!(
        !dir.join("a").exists(),
        "nothing created without create_dirs"
    );
    let target = root.resolve_for_write("a/b/c.txt", true).unwrap();
    assert_eq!(target.rel, "a/b/c.txt");
    assert_eq!(target.abs, dir.join("a/b/c.txt"));
    assert!(dir.join("a/b").is_dir());
}

#[test]
fn parents_must_be_directories_and_targets_files() {
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    std::fs::write(dir.join("f"), "x").unwrap();
    std::fs::create_dir(dir.join("d")).unwrap();
    assert!(matches!(
        root.resolve_for_write("f/x.txt", true),
        Err(RootPathError::NotADirectory { ref path }) if path == "f"
    ));
    assert!(matches!(
        root.resolve_for_write("d", false),
        Err(RootPathError::IsADirectory { .. })
    ));
    let existing = root.resolve_for_write("f", false).unwrap();
    assert_eq!(existing.rel, "f");
}

#[cfg(unix)]
#[test]
fn links_that_lead_out_are_refused() {
    use std::os::unix::fs::symlink;
    let scratch = Scratch::new();
    let (root, dir, outside) = scratch.root();
    std::fs::write(outside.join("secret"), "x").unwrap();
    symlink(&outside, dir.join("out")).unwrap();
    symlink(outside.join("secret"), dir.join("secret")).unwrap();
    for path in ["out", "out/secret", "secret"] {
        assert!(
            matches!(
                root.resolve_existing(path),
                Err(RootPathError::Escapes { .. })
            ),
            "{path}"
        );
    }
    assert!(matches!(
        root.resolve_for_write("out/new.txt", false),
        Err(RootPathError::Escapes { .. })
    ));
    assert!(matches!(
        root.resolve_for_write("secret", false),
        Err(RootPathError::Escapes { .. })
    ));
    assert!(!outside.join("new.txt").exists());
}

#[cfg(unix)]
#[test]
fn links_inside_the_root_are_followed() {
    use std::os::unix::fs::symlink;
    let scratch = Scratch::new();
    let (root, dir, _) = scratch.root();
    std::fs::create_dir(dir.join("real")).unwrap();
    symlink(dir.join("real"), dir.join("alias")).unwrap();
    assert_eq!(root.resolve_existing("alias").unwrap().rel, "real");
    assert_eq!(
        root.resolve_for_write("alias/x.txt", false).unwrap().rel,
        "real/x.txt"
    );
}

#[cfg(unix)]
#[test]
fn dangling_links_are_refused() {
    use std::os::unix::fs::symlink;
    let scratch = Scratch::new();
    let (root, dir, outside) = scratch.root();
    symlink(outside.join("gone"), dir.join("link")).unwrap();
    symlink(outside.join("gone-dir"), dir.join("dirlink")).unwrap();
    assert!(matches!(
        root.resolve_existing("link"),
        Err(RootPathError::DanglingSymlink { .. })
    ));
    assert!(matches!(
        root.resolve_for_write("link", false),
        Err(RootPathError::DanglingSymlink { ref path }) if path == "link"
    ));
    assert!(matches!(
        root.resolve_for_write("dirlink/x.txt", true),
        Err(RootPathError::DanglingSymlink { ref path }) if path == "dirlink"
    ));
    assert!(!outside.join("gone").exists() && !outside.join("gone-dir").exists());
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
