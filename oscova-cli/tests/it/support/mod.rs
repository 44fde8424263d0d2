//! Shared helpers: run the real `oscova` binary with a clean environment.
//!
//! Every run gets an empty config directory, an empty data directory and
//! no `OSCOVA_*` variables, so a developer's own
//! `~/.config/oscova/config.toml` (or files root) never leaks in.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_oscova");

/// A fresh directory under the target's test temp dir, unique to this
/// call (tests run in parallel).
pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("oscova-cli")
        .join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `oscova` with a clean environment, stdin closed.
pub fn oscova(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    clean_env(&mut cmd);
    cmd
}

/// Removes every `OSCOVA_*` variable and points the config and data
/// dirs at an empty directory.
pub fn clean_env(cmd: &mut Command) {
    // `vars_os`: `vars` panics on a variable that is not UTF-8.
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"OSCOVA_") {
            cmd.env_remove(name);
        }
    }
    let home = temp_dir("home");
    // The real cache stays visible: the Whisper models that
    // scripts/ensure-whisper-model.sh installed there are read-only assets.
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")));
    if let Some(cache) = cache {
        cmd.env("XDG_CACHE_HOME", cache);
    }
    cmd.env("XDG_CONFIG_HOME", home.join("config"));
    cmd.env("XDG_DATA_HOME", home.join("data"));
    cmd.env("HOME", &home);
}

/// Runs and returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

/// Runs with `--json` and parses stdout.
pub fn run_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = run(&mut oscova(&all));
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout:?}\nstderr: {stderr}"));
    (code, value)
}

/// Runs `cmd` without blocking the test's runtime (a loopback server in the
/// same test keeps serving), with `input` on stdin, and returns
/// (exit code, stdout, stderr).
pub async fn run_async(cmd: Command, input: Option<&str>) -> (i32, String, String) {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = input {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        // A command may end before it reads its input (a refusal does), so
        // a closed pipe is not a failure of the test.
        if let Err(e) = stdin.write_all(input.as_bytes()).await {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        drop(stdin);
    }
    let output = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("oscova finished within a minute")
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Sends SIGINT (Ctrl-C) to process `pid`.
#[cfg(unix)]
pub fn interrupt(pid: u32) {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -INT {pid}");
}

/// Starts a server command (`oscova serve` or `oscova mcp --listen` on
/// `127.0.0.1:0`) and waits until it says where it listens: the child and
/// its base URL (`http://127.0.0.1:PORT`). What it says later goes to the
/// test's stderr, prefixed with `label`.
///
/// # Panics
///
/// When it exits before saying where it listens.
pub fn listening(cmd: &mut Command, label: &'static str) -> (Child, String) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    break url.to_owned();
                }
            }
            _ => panic!("{label} exited before saying where it listens"),
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("{label}: {line}");
        }
    });
    (child, base)
}
