//! The files tools through a real host and user scope, on temporary roots.

use std::fs;

use oscova_core::ApprovalRequest;
use oscova_core::prelude::*;
use oscova_plugin_files::{FileLimits, FilesPlugin};
use serde_json::{Value, json};
use tempfile::TempDir;

mod support;

use support::Fixture;

/// A directory outside every root holding `secret.txt`.
fn outside() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("secret.txt"), "TOPSECRET\n").unwrap();
    dir
}

#[test]
fn catalog_marks_write_as_needing_approval() {
    let f = Fixture::new();
    let tools: Vec<_> = f
        .scope
        .tools()
        .map(|t| (t.wire_name().to_owned(), t.info().approval()))
        .collect();
    assert_eq!(
        tools,
        [
            (
                "oscova_files__files__list".to_owned(),
                ToolApprovalMode::NotRequired
            ),
            (
                "oscova_files__files__read".to_owned(),
                ToolApprovalMode::NotRequired
            ),
            (
                "oscova_files__files__search".to_owned(),
                ToolApprovalMode::NotRequired
            ),
            (
                "oscova_files__files__write".to_owned(),
                ToolApprovalMode::Required
            ),
        ]
    );
    assert!(
        f.scope
            .tools()
            .all(|t| t.info().network_scope() == NetworkScope::None)
    );
}

#[tokio::test]
async fn write_needs_an_approval_and_a_denied_write_does_nothing() {
    let base = tempfile::tempdir().unwrap();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(FilesPlugin::per_user(base.path()))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let r = scope
        .invoke(
            "oscova_files__files__write",
            json!({"path": "a.txt", "content": "x"}),
        )
        .await;
    assert!(r.is_error);
    assert!(r.content.contains("not approved"), "{}", r.content);
    assert!(!base.path().join("alice/a.txt").exists());
}

#[tokio::test]
async fn write_read_and_list_round_trip() {
    let f = Fixture::new();
    let w = f
        .ok(
            "write",
            json!({"path": "notes/day/one.md", "content": "# One\nhello\n", "create_dirs": true}),
        )
        .await;
    assert_eq!(w.details["path"], "notes/day/one.md");
    assert_eq!(w.details["created"], true);
    assert_eq!(
        fs::read_to_string(f.root().join("notes/day/one.md")).unwrap(),
        "# One\nhello\n"
    );

    let r = f.ok("read", json!({"path": "notes/day/one.md"})).await;
    assert_eq!(r.content, "# One\nhello\n");
    assert_eq!(r.details["truncated"], false);

    let l = f.ok("list", json!({})).await;
    assert_eq!(l.content, "`.` (1 entries):\nnotes/");
    let l = f.ok("list", json!({"recursive": true})).await;
    assert_eq!(
        l.details["entries"],
        json!([
            {"path": "notes", "kind": "dir"},
            {"path": "notes/day", "kind": "dir"},
            {"path": "notes/day/one.md", "kind": "file", "size": 12},
        ])
    );
}

#[tokio::test]
async fn write_modes() {
    let f = Fixture::new();
    f.ok("write", json!({"path": "log.txt", "content": "a\n"}))
        .await;
    f.refused(
        "write",
        json!({"path": "log.txt", "content": "b\n"}),
        "already exists",
    )
    .await;
    f.ok(
        "write",
        json!({"path": "log.txt", "content": "b\n", "mode": "append"}),
    )
    .await;
    assert_eq!(
        fs::read_to_string(f.root().join("log.txt")).unwrap(),
        "a\nb\n"
    );
    let r = f
        .ok(
            "write",
            json!({"path": "log.txt", "content": "c\n", "mode": "overwrite"}),
        )
        .await;
    assert!(r.content.contains("replaced"), "{}", r.content);
    assert_eq!(fs::read_to_string(f.root().join("log.txt")).unwrap(), "c\n");
    f.refused(
        "write",
        json!({"path": "x/y.txt", "content": ""}),
        "create_dirs: true",
    )
    .await;
    f.refused(
        "write",
        json!({"path": "log.txt/z", "content": "", "create_dirs": true}),
        "`log.txt` is not a directory",
    )
    .await;
    f.refused(
        "write",
        json!({"path": ".", "content": ""}),
        "names no file",
    )
    .await;
}

#[tokio::test]
async fn writes_over_the_cap_are_refused() {
    let mut limits = FileLimits::default();
    limits.max_write_bytes = 8;
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base).limits(limits));
    f.refused(
        "write",
        json!({"path": "big.txt", "content": "123456789"}),
        "at most 8 bytes",
    )
    .await;
    assert!(!f.root().join("big.txt").exists());
}

#[tokio::test]
async fn reads_are_capped_and_ranged() {
    let mut limits = FileLimits::default();
    limits.max_read_bytes = 10;
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base).limits(limits));
    fs::write(f.root().join("abc.txt"), "0123456789abcdefghij").unwrap();

    let r = f.ok("read", json!({"path": "abc.txt"})).await;
    assert!(
        r.content.starts_with("0123456789\n\n[bytes 0..10 of 20"),
        "{}",
        r.content
    );
    assert!(r.content.contains("offset 10"), "{}", r.content);
    assert_eq!(r.details["next_offset"], 10);

    let r = f.ok("read", json!({"path": "abc.txt", "offset": 10})).await;
    assert!(
        r.content.starts_with("abcdefghij\n\n[bytes 10..20 of 20]"),
        "{}",
        r.content
    );
    assert_eq!(r.details["next_offset"], Value::Null);

    let r = f
        .ok("read", json!({"path": "abc.txt", "offset": 3, "length": 4}))
        .await;
    assert!(r.content.starts_with("3456\n"), "{}", r.content);
    f.refused(
        "read",
        json!({"path": "abc.txt", "offset": 21}),
        "past the end",
    )
    .await;
}

#[tokio::test]
async fn ranges_never_split_a_character() {
    let f = Fixture::new();
    fs::write(f.root().join("u.txt"), "aé€b").unwrap(); // 1 + 2 + 3 + 1 bytes
    let r = f
        .ok("read", json!({"path": "u.txt", "offset": 2, "length": 4}))
        .await;
    assert!(r.content.starts_with("€\n"), "{:?}", r.content);
    assert_eq!(r.details["offset"], 3);
    assert_eq!(r.details["end"], 6);
}

#[tokio::test]
async fn binary_files_directories_and_missing_paths_are_explained() {
    let f = Fixture::new();
    fs::write(f.root().join("img.bin"), [0x89, b'P', b'N', b'G', 0, 0, 1]).unwrap();
    fs::create_dir(f.root().join("dir")).unwrap();
    f.refused("read", json!({"path": "img.bin"}), "looks binary")
        .await;
    f.refused("read", json!({"path": "dir"}), "is a directory")
        .await;
    f.refused("read", json!({"path": "nope.txt"}), "does not exist")
        .await;
    f.refused("list", json!({"path": "img.bin"}), "not a directory")
        .await;
    fs::write(f.root().join("latin1.txt"), b"caf\xe9\n").unwrap();
    let r = f.ok("read", json!({"path": "latin1.txt"})).await;
    assert!(r.content.contains("not valid UTF-8"), "{}", r.content);
}

#[tokio::test]
async fn search_by_glob_and_text() {
    let f = Fixture::new();
    let root = f.root();
    fs::create_dir_all(root.join("docs/deep")).unwrap();
    fs::write(root.join("README.md"), "Intro\nSee the Guide\n").unwrap();
    fs::write(root.join("docs/guide.md"), "guide line\nnothing\n").unwrap();
    fs::write(root.join("docs/deep/more.md"), "GUIDE again\n").unwrap();
    fs::write(root.join("docs/notes.txt"), "guide in text\n").unwrap();
    fs::write(root.join("docs/blob.bin"), b"guide\0\0").unwrap();

    let r = f.ok("search", json!({"pattern": "*.md"})).await;
    let paths: Vec<_> = r.details["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths, ["README.md", "docs/deep/more.md", "docs/guide.md"]);

    let r = f.ok("search", json!({"pattern": "docs/*.md"})).await;
    assert_eq!(
        r.details["results"],
        json!([{"path": "docs/guide.md", "size": 19}])
    );

    let r = f.ok("search", json!({"text": "guide"})).await;
    assert_eq!(
        r.details["results"].as_array().unwrap().len(),
        4,
        "{}",
        r.content
    );
    assert_eq!(r.details["skipped"]["binary"], 1);
    assert!(
        r.content.contains("docs/deep/more.md:1: GUIDE again"),
        "{}",
        r.content
    );

    let r = f
        .ok(
            "search",
            json!({"text": "Guide", "case_sensitive": true, "pattern": "*.md"}),
        )
        .await;
    assert_eq!(
        r.details["results"],
        json!([{"path": "README.md", "line": 2, "text": "See the Guide"}])
    );

    let r = f
        .ok(
            "search",
            json!({"text": "guide", "path": "docs", "max_results": 1}),
        )
        .await;
    assert_eq!(r.details["truncated"], true);
    assert!(r.content.contains("stopped at 1 results"), "{}", r.content);

    f.refused("search", json!({}), "give `pattern`").await;
    f.refused("search", json!({"pattern": "[z-a"}), "not a valid glob")
        .await;
}

#[tokio::test]
async fn parent_components_are_refused() {
    let f = Fixture::new();
    let _outside = outside();
    for tool_args in [
        ("read", json!({"path": "../secret.txt"})),
        ("read", json!({"path": "a/../../secret.txt"})),
        ("list", json!({"path": ".."})),
        ("search", json!({"text": "TOP", "path": "../.."})),
        ("write", json!({"path": "../evil.txt", "content": "x"})),
    ] {
        f.refused(tool_args.0, tool_args.1, "contains `..`").await;
    }
    assert!(!f.base.path().join("evil.txt").exists());
}

#[tokio::test]
async fn absolute_paths_are_refused() {
    let f = Fixture::new();
    let out = outside();
    let secret = out.path().join("secret.txt");
    let secret = secret.to_str().unwrap();
    f.refused("read", json!({"path": secret}), "absolute path")
        .await;
    f.refused("read", json!({"path": "/etc/passwd"}), "absolute path")
        .await;
    f.refused("list", json!({"path": "/"}), "absolute path")
        .await;
    let target = out.path().join("new.txt");
    f.refused(
        "write",
        json!({"path": target.to_str().unwrap(), "content": "x"}),
        "absolute path",
    )
    .await;
    assert!(!target.exists());
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_file_pointing_outside_is_refused() {
    use std::os::unix::fs::symlink;
    let f = Fixture::new();
    let out = outside();
    symlink(out.path().join("secret.txt"), f.root().join("link.txt")).unwrap();
    f.refused(
        "read",
        json!({"path": "link.txt"}),
        "outside your files root",
    )
    .await;
    f.refused(
        "write",
        json!({"path": "link.txt", "content": "pwned", "mode": "overwrite"}),
        "outside your files root",
    )
    .await;
    assert_eq!(
        fs::read_to_string(out.path().join("secret.txt")).unwrap(),
        "TOPSECRET\n"
    );
    let r = f.ok("search", json!({"text": "TOPSECRET"})).await;
    assert_eq!(r.details["results"], json!([]));
    let l = f.ok("list", json!({})).await;
    assert_eq!(
        l.details["entries"],
        json!([{"path": "link.txt", "kind": "symlink"}])
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_directory_pointing_outside_is_refused() {
    use std::os::unix::fs::symlink;
    let f = Fixture::new();
    let out = outside();
    symlink(out.path(), f.root().join("escape")).unwrap();
    f.refused("list", json!({"path": "escape"}), "outside your files root")
        .await;
    f.refused(
        "read",
        json!({"path": "escape/secret.txt"}),
        "outside your files root",
    )
    .await;
    f.refused(
        "search",
        json!({"text": "TOP", "path": "escape"}),
        "outside your files root",
    )
    .await;
    f.refused(
        "write",
        json!({"path": "escape/new.txt", "content": "x"}),
        "outside your files root",
    )
    .await;
    f.refused(
        "write",
        json!({"path": "escape/sub/new.txt", "content": "x", "create_dirs": true}),
        "outside your files root",
    )
    .await;
    assert!(!out.path().join("new.txt").exists());
    assert!(!out.path().join("sub").exists());
    let r = f.ok("search", json!({"pattern": "*.txt"})).await;
    assert_eq!(r.details["results"], json!([]));
    let l = f.ok("list", json!({"recursive": true})).await;
    assert_eq!(
        l.details["entries"],
        json!([{"path": "escape", "kind": "symlink"}])
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_dangling_symlink_is_not_written_through() {
    use std::os::unix::fs::symlink;
    let f = Fixture::new();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("created-by-link.txt");
    symlink(&target, f.root().join("dangling.txt")).unwrap();
    symlink("not-yet.txt", f.root().join("inside.txt")).unwrap();
    for mode in ["create", "overwrite", "append"] {
        // Leading out of the root is refused before the target is looked at.
        f.refused(
            "write",
            json!({"path": "dangling.txt", "content": "x", "mode": mode}),
            "leads outside",
        )
        .await;
        f.refused(
            "write",
            json!({"path": "inside.txt", "content": "x", "mode": mode}),
            "symbolic link to something that does not exist",
        )
        .await;
    }
    f.refused("read", json!({"path": "inside.txt"}), "does not exist")
        .await;
    assert!(!target.exists() && !f.root().join("not-yet.txt").exists());
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_that_stay_inside_the_root_work() {
    use std::os::unix::fs::symlink;
    let f = Fixture::new();
    fs::create_dir(f.root().join("real")).unwrap();
    fs::write(f.root().join("real/a.txt"), "inside\n").unwrap();
    symlink(f.root().join("real"), f.root().join("alias")).unwrap();
    let r = f.ok("read", json!({"path": "alias/a.txt"})).await;
    assert_eq!(r.content, "inside\n");
    assert_eq!(r.details["path"], "real/a.txt");
    f.ok(
        "write",
        json!({"path": "alias/b.txt", "content": "via alias"}),
    )
    .await;
    assert!(f.root().join("real/b.txt").exists());
}

#[tokio::test]
async fn users_are_isolated_and_odd_ids_stay_inside_the_base() {
    let base = tempfile::tempdir().unwrap();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(FilesPlugin::per_user(base.path()))
        .approval_handler(|_: &ApprovalRequest<'_>| true)
        .build()
        .unwrap();
    let alice = host.user_scope(UserInfo::new("alice"));
    let bob = host.user_scope(UserInfo::new("bob"));
    let evil = host.user_scope(UserInfo::new("../.."));
    let write = json!({"path": "mine.txt", "content": "alice's"});
    assert!(
        !alice
            .invoke("oscova_files__files__write", write.clone())
            .await
            .is_error
    );
    let r = bob
        .invoke("oscova_files__files__read", json!({"path": "mine.txt"}))
        .await;
    assert!(
        r.is_error && r.content.contains("does not exist"),
        "{}",
        r.content
    );
    assert!(
        !evil
            .invoke("oscova_files__files__write", write)
            .await
            .is_error
    );
    let mut names: Vec<_> = fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["%2E.%2F..", "alice", "bob"]);
}

#[tokio::test]
async fn a_user_without_a_root_gets_no_files_tools() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().to_owned();
    let plugin =
        FilesPlugin::with_resolver(move |user| (user.id() == "alice").then(|| dir.join("a")));
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .build()
        .unwrap();
    let guest = host.user_scope(UserInfo::new("guest"));
    assert_eq!(guest.tools().count(), 0);
    assert!(
        guest.diagnostics()[0]
            .message
            .contains("no files root is configured for user `guest`")
    );
    let r = guest.invoke("oscova_files__files__list", json!({})).await;
    assert!(
        r.is_error && r.content.contains("not available"),
        "{}",
        r.content
    );
    let alice = host.user_scope(UserInfo::new("alice"));
    assert_eq!(alice.tools().count(), 4);
}
