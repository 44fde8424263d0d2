//! The `oscova` binary against hostile inputs: environments, special
//! files, argument files, numbers that do not fit (issue 13).

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
