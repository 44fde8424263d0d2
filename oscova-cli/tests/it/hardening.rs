//! The `oscova` binary against hostile inputs: environments, special
//! files, argument files, numbers that do not fit (issue 13); files that
//! hold conversations made private (issue 36).

use crate::support;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use support::{oscova, run, temp_dir};

/// `env $'BADVAR=\xff' oscova plugins` exited 101 with the raw value in a
/// backtrace: `std::env::vars` panics on a value that is not UTF-8.
#[test]
fn a_variable_that_is_not_utf8_is_skipped_by_name() {
    let value = OsString::from_vec(b"hunter2-\xff-value".to_vec());
    for name in ["BADVAR", "OSCOVA_USER"] {
        let mut cmd = oscova(&["plugins"]);
        cmd.env(name, &value);
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("acme.search"), "{out}");
        assert!(err.contains(name) && err.contains("not UTF-8"), "{err}");
        assert!(
            !err.contains("hunter2") && !err.contains("panicked"),
            "{err}"
        );
    }
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `oscova --config /dev/zero` and `oscova speech hear /dev/zero` read until
/// memory ran out (the size check trusted `metadata().len()`, 0 for a
/// device); a FIFO as either hung. Each is now refused at once, exit 2.
#[tokio::test]
async fn special_files_are_refused_at_once() {
    let dir = temp_dir("special");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--config", "/dev/zero", "plugins"],
            "a character device, not a regular file",
        ),
        (
            &["--config", fifo, "plugins"],
            "a FIFO (named pipe), not a regular file",
        ),
        (
            &["speech", "hear", "/dev/zero"],
            "a character device, not a regular file",
        ),
        (
            &["speech", "hear", fifo],
            "a FIFO (named pipe), not a regular file",
        ),
        (
            &["speech", "say", "hello", "-o", fifo],
            "not a regular file",
        ),
    ];
    for (args, needle) in cases {
        let (code, out, err) = support::run_async(oscova(args), None).await;
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_config_file_over_the_cap_is_refused() {
    let path = temp_dir("big-config").join("config.toml");
    let mut text = String::from("default_user = \"alice\"\n");
    text.push_str(&"# padding\n".repeat(110_000)); // just over 1 MiB
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = run(&mut oscova(&[
        "--config",
        path.to_str().unwrap(),
        "plugins",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
}

const ECHO: &str = "acme_search__example__example_echo";

#[tokio::test]
async fn arguments_come_from_a_file_or_stdin() {
    let path = temp_dir("args-file").join("args.json");
    std::fs::write(&path, r#"{"text": "from a file"}"#).unwrap();
    let path = path.to_str().unwrap();
    let (code, out, err) = run(&mut oscova(&["tools", "call", ECHO, "--args-file", path]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("from a file"), "{out}");

    let cmd = oscova(&["tools", "call", ECHO, "--args-file", "-"]);
    let (code, out, err) = support::run_async(cmd, Some(r#"{"text": "from stdin"}"#)).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("from stdin"), "{out}");

    let (code, _, err) = run(&mut oscova(&[
        "tools",
        "call",
        ECHO,
        "--args",
        "{}",
        "--args-file",
        path,
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

/// The cap is counted while reading: an endless stdin is refused after
/// 16 MiB, and `/dev/zero` as a file is refused without reading it.
#[tokio::test]
async fn an_endless_argument_source_is_refused() {
    let mut cmd = oscova(&["tools", "call", ECHO, "--args-file", "-"]);
    cmd.stdin(std::fs::File::open("/dev/zero").unwrap());
    let output = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than 16777216 bytes"), "{err}");

    let (code, _, err) = support::run_async(
        oscova(&["tools", "call", ECHO, "--args-file", "/dev/zero"]),
        None,
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("character device"), "{err}");
}

/// Issue 24: `speech say` took any amount of text (110 KB ran piper for
/// minutes, memory growing). The synthesis router refuses more than 5,000
/// characters before any provider runs: exit 2, the limit in the message,
/// no file written.
#[tokio::test]
async fn text_to_speak_is_capped() {
    let out = temp_dir("say-cap").join("long.wav");
    let text = "word ".repeat(1_001); // 5,005 characters
    let out_path = out.to_str().unwrap();
    for json in [false, true] {
        let mut args = vec!["speech", "say", text.as_str(), "-o", out_path, "--offline"];
        if json {
            args.insert(0, "--json");
        }
        let (code, stdout, err) = support::run_async(oscova(&args), None).await;
        assert_eq!(code, 2, "{stdout} {err}");
        if json {
            let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["error"]["kind"], "invalid_text", "{doc}");
        } else {
            assert!(
                err.contains(
                    "the text has 5005 characters, more than the limit of 5000 characters"
                ),
                "{err}"
            );
        }
        assert!(!out.exists());
    }
}

/// `cmd` run through `sh` under `umask`, its environment kept.
fn under_umask(umask: &str, cmd: &std::process::Command) -> std::process::Command {
    let mut wrapped = std::process::Command::new("sh");
    wrapped
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(std::process::Stdio::null());
    for (name, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    wrapped
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A pi session file of one message.
const PI_FILE: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"x1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n\
    {\"type\":\"message\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"my webhook token is t0ps3cret\",\"timestamp\":1}}\n";

/// Issue 36: under the usual umask `sessions.db` was created 0644 in a
/// 0755 folder, and another account read a conversation and a stored
/// webhook credential; an export was 0644 too. Under umask 000, the
/// worst, the default store's folders are made 0700 and the file 0600,
/// and an export is 0600, a new file or one that was open to others.
#[tokio::test]
async fn the_store_and_exports_are_private_whatever_the_umask() {
    let dir = temp_dir("private-umask");
    let data = dir.join("data");
    let file = dir.join("trip.jsonl");
    std::fs::write(&file, PI_FILE).unwrap();
    let with_data = |args: &[&str]| {
        let mut cmd = oscova(args);
        cmd.env("XDG_DATA_HOME", &data);
        under_umask("000", &cmd)
    };
    let file_arg = file.to_str().unwrap();
    let import = with_data(&["sessions", "import", file_arg, "--format", "pi"]);
    let (code, out, err) = support::run_async(import, None).await;
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("oscova")), 0o700);
    assert_eq!(mode(&data.join("oscova/sessions.db")), 0o600);

    let new = dir.join("new.jsonl");
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "an older export, longer than the new one ".repeat(20)).unwrap();
    chmod(&old, 0o666);
    for out_file in [&new, &old] {
        let out_arg = out_file.to_str().unwrap();
        let export = with_data(&[
            "sessions", "export", "trip", "--format", "pi", "-o", out_arg,
        ]);
        let (code, out, err) = support::run_async(export, None).await;
        assert_eq!(code, 0, "{out} {err}");
        assert_eq!(mode(out_file), 0o600, "{}", out_file.display());
        let text = std::fs::read_to_string(out_file).unwrap();
        assert!(
            text.contains("t0ps3cret") && !text.contains("older export"),
            "{text}"
        );
    }
}

/// A `sessions.db` open to others (an earlier version made it so) is
/// refused, exit 2, naming it and `chmod go-rwx`, and left as it was.
#[tokio::test]
async fn a_sessions_db_open_to_others_is_refused() {
    let config = crate::sessions::sqlite_config();
    let db = config.parent().unwrap().join("sessions.db");
    let file = temp_dir("open-db").join("trip.jsonl");
    std::fs::write(&file, PI_FILE).unwrap();
    let import = [
        "sessions",
        "import",
        file.to_str().unwrap(),
        "--format",
        "pi",
    ];
    let (code, _, err) = support::run_async(crate::sessions::cmd(&config, &import), None).await;
    assert_eq!(code, 0, "{err}");
    chmod(&db, 0o644);
    let list = crate::sessions::cmd(&config, &["sessions", "list"]);
    let (code, out, err) = support::run_async(list, None).await;
    assert_eq!(code, 2, "{out} {err}");
    assert!(
        err.contains(&db.display().to_string())
            && err.contains("mode 0644")
            && err.contains("chmod go-rwx"),
        "{err}"
    );
    assert_eq!(mode(&db), 0o644, "refused, not repaired");
    chmod(&db, 0o600);
    let list = crate::sessions::cmd(&config, &["sessions", "list"]);
    let (code, out, err) = support::run_async(list, None).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("trip"), "{out}");
}

/// Issue 36: `sessions import FIFO` hung, `sessions import /dev/zero` read
/// 2 GB in 3 s, and `sessions export -o FIFO` hung. Each is refused at
/// once (exit 2), as `--args-file`, `speech hear` and `speech say -o`
/// refuse them, and an import over the cap is refused without reading it.
/// (A hang would fail `run_async`'s bound, not hang the test.)
#[tokio::test]
async fn sessions_import_and_export_refuse_special_files() {
    let config = crate::sessions::sqlite_config();
    let dir = temp_dir("sessions-special");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    let file = dir.join("trip.jsonl");
    std::fs::write(&file, PI_FILE).unwrap();
    let import = [
        "sessions",
        "import",
        file.to_str().unwrap(),
        "--format",
        "pi",
    ];
    let (code, _, err) = support::run_async(crate::sessions::cmd(&config, &import), None).await;
    assert_eq!(code, 0, "{err}");
    let huge = dir.join("huge.jsonl");
    // Sparse: its size says more than the cap, and nothing is read.
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(256 * 1024 * 1024 + 1)
        .unwrap();
    let huge = huge.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["sessions", "import", fifo, "--format", "pi", "--name", "f"],
            "a FIFO (named pipe), not a regular file",
        ),
        (
            &["sessions", "import", "/dev/zero", "--format", "pi"],
            "a character device, not a regular file",
        ),
        (
            &["sessions", "import", huge, "--format", "pi"],
            "larger than 268435456 bytes",
        ),
        (
            &["sessions", "export", "trip", "--format", "pi", "-o", fifo],
            "a FIFO (named pipe), not a regular file",
        ),
    ];
    for (args, needle) in cases {
        let cmd = crate::sessions::cmd(&config, args);
        let (code, out, err) = support::run_async(cmd, None).await;
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let (code, doc) = crate::sessions::json_of(&config, &["sessions", "list"]);
    assert_eq!(code, 0);
    assert_eq!(doc["sessions"].as_array().unwrap().len(), 1, "{doc}");
}
