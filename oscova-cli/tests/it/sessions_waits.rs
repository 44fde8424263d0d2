//! An approval asked by `oscova chat --session` outlives its process
//! (issue 38): the chat runs on a pseudo-terminal (util-linux `script`),
//! the model calls the files plugin's `write` (approval required,
//! appending a line per run, so the file counts the runs), the call's wait
//! is in the session's SQLite file before the question shows, the process
//! is killed with SIGKILL at the question, and the next `chat --session`
//! on the session asks again; its yes runs the tool exactly once. While
//! the first waits, a second chat on the session is refused: the first
//! holds the session's lease; once killed, the next takes its lease over
//! at once (a process of this machine that no longer runs).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::sessions::{call_reply, config_with, text_reply};
use crate::support;

const WRITE: &str = "oscova_files__files__write";
const KEY: &str = "sk-sessions-waits-0123456789abcdef";
const PATIENCE: Duration = Duration::from_secs(60);

/// "write paid" calls `write`; after a tool message, "Told: <it>".
fn model(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let said = last["content"].as_str().unwrap_or_default();
    if last["role"] == "tool" {
        return text_reply(&format!("Told: {said}"));
    }
    if said == "write paid" {
        return call_reply(
            WRITE,
            r#"{"path": "paid.txt", "content": "paid\n", "mode": "append"}"#,
        );
    }
    text_reply(&format!("Answer to {said}"))
}

/// `oscova chat --session s -m MESSAGE` on a pseudo-terminal: `script`,
/// whose child is the chat itself (`exec`).
struct OnTerminal {
    script: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    seen: Arc<Mutex<String>>,
}

impl OnTerminal {
    fn start(config: &Path, url: &str, files: &Path, message: &str) -> Self {
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let line = [
            support::BIN,
            "--config",
            config.to_str().unwrap(),
            "chat",
            "--provider",
            "openai",
            "--endpoint",
            url,
            "--model",
            "gpt-test",
            "--session",
            "s",
            "-m",
            message,
        ]
        .map(quote)
        .join(" ");
        let mut cmd = tokio::process::Command::new("script");
        cmd.args(["-qfec", &format!("exec {line}"), "/dev/null"]);
        support::clean_env(cmd.as_std_mut());
        cmd.env("SHELL", "/bin/sh")
            .env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY)
            .env("OSCOVA_FILES_ROOT", files)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut script = cmd
            .spawn()
            .expect("this test needs util-linux `script` for a pseudo-terminal");
        let stdin = script.stdin.take().unwrap();
        let mut stdout = script.stdout.take().unwrap();
        let seen = Arc::new(Mutex::new(String::new()));
        let into = seen.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            script,
            stdin,
            seen,
        }
    }

    /// Waits until the terminal shows `text`.
    async fn until(&self, text: &str) {
        let shown = async {
            while !self.seen.lock().unwrap().contains(text) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(PATIENCE, shown)
            .await
            .unwrap_or_else(|_| panic!("{text:?} not shown: {:?}", self.seen.lock().unwrap()));
    }

    /// The chat's process id: `script`'s one child.
    fn chat_pid(&self) -> String {
        let pid = self.script.id().unwrap();
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap()
            .split_whitespace()
            .next()
            .expect("script runs the chat")
            .to_owned()
    }
}

/// How many times `write` ran: the lines of `paid.txt` under the root.
fn runs(files: &Path) -> usize {
    std::fs::read_dir(files)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path().join("paid.txt")).ok())
        .map(|t| t.lines().count())
        .sum()
}

/// The session's kept waits (`oscova.call_waiting` entries).
fn waits(db: &Path) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut statement = conn
        .prepare("SELECT body FROM oscova_session_entries")
        .unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .filter(|b| b.as_ref().unwrap().contains("oscova.call_waiting"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_by_a_killed_chat_is_asked_again_by_the_next_and_runs_once() {
    let config = config_with("path = \"sessions.db\"");
    let dir = config.parent().unwrap().to_owned();
    let db = dir.join("sessions.db");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let server = TestServer::start(model).await;
    let url = server.url();
    let question = format!("Run `{WRITE}`");

    let mut first = OnTerminal::start(&config, &url, &files, "write paid");
    first.until(&question).await;
    assert_eq!(waits(&db), 1, "the wait was kept before the question");

    // A second chat on the session while the first runs it is refused
    // (the first holds the session's lease): it asks nothing, runs nothing.
    let asked_before = server.requests().len();
    let mut second = crate::sessions::chat_process(
        &config,
        &url,
        KEY,
        &["--session", "s", "-m", "write paid", "--yes"],
    );
    second.env("OSCOVA_FILES_ROOT", &files);
    let refused = tokio::time::timeout(PATIENCE, second.output())
        .await
        .unwrap()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("is in use by another process"), "{said}");
    assert_eq!(
        server.requests().len(),
        asked_before,
        "the model was not asked"
    );
    assert_eq!((runs(&files), waits(&db)), (0, 1));
    let killed = std::process::Command::new("kill")
        .args(["-9", &first.chat_pid()])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = first.script.wait().await;
    assert_eq!(runs(&files), 0, "nothing ran without a yes");

    // The next chat on the session asks again before anything else; yes.
    let mut next = OnTerminal::start(&config, &url, &files, "and then?");
    next.until(&question).await;
    assert_eq!(runs(&files), 0);
    next.stdin.write_all(b"y\n").await.unwrap();
    // The call ran, then the new message was answered.
    next.until(&format!("← {WRITE}: Wrote 5 bytes")).await;
    next.until("Answer to and then?").await;
    let status = tokio::time::timeout(PATIENCE, next.script.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "{status:?}: {:?}",
        next.seen.lock().unwrap()
    );
    assert_eq!(runs(&files), 1, "run exactly once");
}
