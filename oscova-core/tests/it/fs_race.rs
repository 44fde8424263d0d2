//! The symlink-swap race of issue 13: one thread swaps a directory inside a
//! root for a link to a directory outside it, in a tight loop, while
//! another reads, writes, creates and lists through that directory. With a
//! check-then-open resolution 14,646 of 78,250 reads returned the outside
//! file and an overwrite replaced it; every escape is counted here, and
//! there must be none.

#![allow(missing_docs)]
#![cfg(unix)]

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oscova_core::fs::{CreateMode, UserRoot};

const RUN_FOR: Duration = Duration::from_secs(4);

#[derive(Default)]
struct Counts {
    swaps: AtomicU64,
    operations: AtomicU64,
    inside: AtomicU64,
    escapes: AtomicU64,
}

/// Swaps `root/d` between a directory and a link to `outside` until
/// `stop`: on Linux by exchanging it with `root/swap` atomically (so `d`
/// always exists, as the one or the other), elsewhere by four renames.
fn swap(root: &Path, stop: &AtomicBool, counts: &Counts) {
    let (d, other) = (root.join("d"), root.join("swap"));
    while !stop.load(Ordering::Relaxed) {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            renameat_with(CWD, &d, CWD, &other, RenameFlags::EXCHANGE).unwrap();
        }
        #[cfg(not(target_os = "linux"))]
        {
            let parked = root.join("parked");
            let _ = std::fs::rename(&d, &parked);
            let _ = std::fs::rename(&other, &d);
            let _ = std::fs::rename(&parked, &other);
        }
        counts.swaps.fetch_add(1, Ordering::Relaxed);
        std::thread::yield_now();
    }
}

/// One round of every operation through `d`, counting what reached `outside`.
fn operate(root: &UserRoot, outside: &Path, counts: &Counts) {
    let mut escaped = 0;
    if let Ok(file) = root.open_file("d/f.txt")
        && let Ok(bytes) = file.read_capped(64)
    {
        if bytes == b"OUTSIDE" {
            escaped += 1;
        } else if bytes == b"inside" {
            counts.inside.fetch_add(1, Ordering::Relaxed);
        }
    }
    if let Ok(file) = root.create_file("d/w.txt", CreateMode::Truncate, false) {
        let _ = file.as_file().write_all(b"written");
    }
    if let Ok(dir) = root.open_dir("d")
        && let Ok(entries) = dir.entries()
    {
        escaped += entries
            .flatten()
            .filter(|e| e.name() == "outside-only.txt")
            .count() as u64;
    }
    let _ = root.create_file("d/new/n.txt", CreateMode::New, true);
    // Whatever a write did outside is found there, and undone for the next round.
    for made in ["w.txt", "new"] {
        let path = outside.join(made);
        if path.exists() {
            escaped += 1;
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
    if std::fs::read(outside.join("f.txt")).is_ok_and(|b| b != b"OUTSIDE") {
        escaped += 1;
        std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
    }
    counts.escapes.fetch_add(escaped, Ordering::Relaxed);
    counts.operations.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn swapping_a_directory_for_a_link_never_escapes_the_root() {
    let base = tempfile_dir();
    let (root_dir, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir_all(root_dir.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root_dir.join("d/f.txt"), "inside").unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
    std::fs::write(outside.join("outside-only.txt"), "OUTSIDE").unwrap();
    std::os::unix::fs::symlink(&outside, root_dir.join("swap")).unwrap();

    let root = UserRoot::new(&root_dir);
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let swapper = {
        let (root_dir, stop, counts) = (root_dir.clone(), stop.clone(), counts.clone());
        std::thread::spawn(move || swap(&root_dir, &stop, &counts))
    };
    let started = Instant::now();
    while started.elapsed() < RUN_FOR {
        operate(&root, &outside, &counts);
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let _ = std::fs::remove_dir_all(&base);

    let (swaps, operations) = (
        counts.swaps.load(Ordering::Relaxed),
        counts.operations.load(Ordering::Relaxed),
    );
    assert!(
        swaps > 100 && operations > 100,
        "{swaps} swaps, {operations} rounds: the race did not run"
    );
    assert!(
        counts.inside.load(Ordering::Relaxed) > 0,
        "no read ever succeeded"
    );
    assert_eq!(
        counts.escapes.load(Ordering::Relaxed),
        0,
        "{operations} rounds against {swaps} swaps"
    );
}

/// A fresh directory under the system temp dir, canonical (the root's
/// absolute links must compare with it).
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("oscova-fs-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}
