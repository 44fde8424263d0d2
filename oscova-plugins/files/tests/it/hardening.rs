//! The files tools against the attacks of issue 13: a directory swapped
//! for a link while calls run, special files, hard links to outside files.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oscova_plugin_files::FilesPlugin;
use serde_json::json;

use crate::support;

use support::Fixture;

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Writing to a FIFO inside the root hung forever (and with it the server);
/// reading one, and searching a tree holding one, must not hang either.
#[tokio::test]
async fn fifos_are_refused_without_blocking() {
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base));
    mkfifo(&f.canonical_root().join("pipe"));
    fs::write(f.canonical_root().join("note.txt"), "findme\n").unwrap();
    let started = Instant::now();
    for mode in ["overwrite", "append", "create"] {
        let r = f
            .call(
                "write",
                json!({"path": "pipe", "content": "x", "mode": mode}),
            )
            .await;
        assert!(r.is_error, "{mode}: {}", r.content);
        assert!(
            r.content.contains("not a regular file") || r.content.contains("already exists"),
            "{mode}: {}",
            r.content
        );
    }
    let r = f.call("read", json!({"path": "pipe"})).await;
    assert!(
        r.is_error && r.content.contains("not a regular file"),
        "{}",
        r.content
    );
    let r = f.call("search", json!({"text": "findme"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.details["results"][0]["path"], "note.txt");
    let r = f.call("list", json!({})).await;
    assert!(r.content.contains("pipe"), "{}", r.content);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn hard_links_to_outside_files_are_refused_unless_allowed() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, "TOPSECRET\n").unwrap();
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base));
    fs::hard_link(&secret, f.canonical_root().join("linked.txt")).unwrap();
    let r = f.call("read", json!({"path": "linked.txt"})).await;
    assert!(
        r.is_error && r.content.contains("hard link"),
        "{}",
        r.content
    );
    assert!(!r.content.contains("TOPSECRET"));
    let r = f
        .call(
            "write",
            json!({"path": "linked.txt", "content": "gone", "mode": "overwrite"}),
        )
        .await;
    assert!(r.is_error, "{}", r.content);
    assert_eq!(fs::read_to_string(&secret).unwrap(), "TOPSECRET\n");
    let r = f.call("search", json!({"text": "TOPSECRET"})).await;
    assert_eq!(r.details["results"], json!([]), "{}", r.content);
    assert_eq!(r.details["skipped"]["hard_linked"], 1);

    let allowing = Fixture::with_plugin(|base| FilesPlugin::per_user(base).allow_hard_links(true));
    fs::hard_link(&secret, allowing.canonical_root().join("linked.txt")).unwrap();
    let r = allowing.call("read", json!({"path": "linked.txt"})).await;
    assert_eq!(r.content, "TOPSECRET\n");
}

/// The race of issue 13 through the tools: 14,646 of 78,250 reads returned
/// outside content and an approved overwrite replaced an outside file.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_directory_swapped_for_a_link_never_leads_a_call_outside() {
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    fs::write(out.join("f.txt"), "OUTSIDE").unwrap();
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base));
    let root = f.canonical_root();
    fs::create_dir(root.join("d")).unwrap();
    fs::write(root.join("d/f.txt"), "inside").unwrap();
    std::os::unix::fs::symlink(&out, root.join("swap")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, stop) = (root.clone(), stop.clone());
        std::thread::spawn(move || {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                renameat_with(
                    CWD,
                    root.join("d"),
                    CWD,
                    root.join("swap"),
                    RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
                std::thread::yield_now();
            }
            swaps
        })
    };
    let (mut rounds, mut escapes, mut inside) = (0u64, 0u64, 0u64);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        let r = f.call("read", json!({"path": "d/f.txt"})).await;
        escapes += u64::from(r.content.contains("OUTSIDE"));
        inside += u64::from(r.content == "inside");
        f.call(
            "write",
            json!({"path": "d/w.txt", "content": "x", "mode": "overwrite"}),
        )
        .await;
        let r = f
            .call("search", json!({"path": "d", "text": "OUTSIDE"}))
            .await;
        escapes += u64::from(r.content.contains("f.txt:1"));
        let r = f.call("list", json!({"path": "d"})).await;
        escapes += u64::from(r.content.contains("f.txt (7 bytes)"));
        if out.join("w.txt").exists() {
            escapes += 1;
            let _ = fs::remove_file(out.join("w.txt"));
        }
        rounds += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(rounds > 50 && swaps > 50, "{rounds} rounds, {swaps} swaps");
    assert!(inside > 0, "no read ever succeeded in {rounds} rounds");
    assert_eq!(escapes, 0, "{rounds} rounds against {swaps} swaps");
    assert_eq!(fs::read_to_string(out.join("f.txt")).unwrap(), "OUTSIDE");
}

/// `**/*a*a*a*a*a*a*a*a*a*b/**/x` against a long path ran past 120 s with
/// a backtracking matcher; the search matcher is linear in each pair of
/// segments, so this takes milliseconds (the ceiling is only a guard).
#[tokio::test]
async fn a_pathological_glob_is_matched_in_bounded_time() {
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base));
    let mut dir = f.canonical_root();
    for _ in 0..12 {
        dir = dir.join("a".repeat(200));
    }
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("y"), "").unwrap();
    let started = Instant::now();
    let r = f
        .call("search", json!({"pattern": "**/*a*a*a*a*a*a*a*a*a*b/**/x"}))
        .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.details["results"], json!([]));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// A file named `a.txt\nsecret.txt (9 bytes)` went verbatim into `list`'s
/// text, where it read as two entries. Names are escaped in the text; the
/// details keep them exact.
#[tokio::test]
async fn names_with_newlines_are_escaped_in_the_text() {
    let f = Fixture::with_plugin(|base| FilesPlugin::per_user(base));
    let name = "a.txt\nsecret.txt (9 bytes)";
    fs::write(f.canonical_root().join(name), "x").unwrap();
    fs::write(f.canonical_root().join("esc\u{1b}[2J.txt"), "needle").unwrap();
    let r = f.call("list", json!({})).await;
    assert!(!r.is_error, "{}", r.content);
    let lines: Vec<&str> = r.content.lines().collect();
    assert_eq!(lines.len(), 3, "{:?}", r.content);
    assert!(
        lines.contains(&"a.txt\\nsecret.txt (9 bytes) (1 bytes)"),
        "{lines:?}"
    );
    assert!(lines.contains(&"esc\\u{1b}[2J.txt (6 bytes)"), "{lines:?}");
    let exact: Vec<&str> = r.details["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(exact.contains(&name), "{exact:?}");
    let r = f.call("search", json!({"text": "needle"})).await;
    assert!(
        r.content.contains("esc\\u{1b}[2J.txt:1: needle"),
        "{}",
        r.content
    );
    assert!(!r.content.contains('\u{1b}'), "{}", r.content);
}
