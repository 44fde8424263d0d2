//! `oscova mcp` on stdio keeps a 2026-07-28 call waiting for the person in
//! the `[sessions]` store (`[mcp] waits`, default), as the HTTP server
//! does: rmcp's client spawns the real binary, gets the approval of the
//! files plugin's `write` (approval required, appending a line per run, so
//! the file counts the runs) asked, the server is killed with `kill -9`, and
//! the client's retry with the same `requestState` to a new process on the
//! same SQLite file runs the tool exactly once; the handle is refused after.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    ElicitationCapability, FormElicitationCapability, Implementation, InputResponses,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::time::timeout;

use crate::support;

const WRITE: &str = "oscova_files__files__write";
const WAIT: Duration = Duration::from_secs(20);

/// A client that declares form elicitation and answers nothing itself:
/// the test answers each round by hand.
struct Person;

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::default());
        caps.elicitation = Some(elicitation);
        ClientConfig::new(caps, Implementation::new("person", "1"))
    }
}

/// A fresh `oscova mcp` on `config`, the files root at `files`, spoken to
/// at 2026-07-28: the client and the server's process id.
async fn connect(config: &Path, files: &Path) -> (RunningService<RoleClient, Person>, u32) {
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("--config").arg(config).arg("mcp");
    support::clean_env(cmd.as_std_mut());
    cmd.env("OSCOVA_FILES_ROOT", files);
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pid = transport.id().expect("the server is running");
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = timeout(WAIT, Person.serve_with_lifecycle(transport, lifecycle))
        .await
        .expect("the server answers discovery")
        .unwrap();
    (client, pid)
}

fn write_call() -> CallToolRequestParams {
    let arguments = json!({"path": "paid.txt", "content": "paid\n", "mode": "append"});
    let serde_json::Value::Object(arguments) = arguments else {
        unreachable!()
    };
    CallToolRequestParams::new(WRITE).with_arguments(arguments)
}

/// How many times `write` ran: the lines of `paid.txt` anywhere under the
/// files root (the user's own directory in it).
fn runs(files: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(files).unwrap() {
        let path = entry.unwrap().path().join("paid.txt");
        if let Ok(text) = std::fs::read_to_string(path) {
            count += text.lines().count();
        }
    }
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_stdio_runs_once_in_the_next_process_after_a_kill() {
    let dir = support::temp_dir("mcp-waits-stdio");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let config = dir.join("config.toml");
    let db = dir.join("sessions.db");
    std::fs::write(
        &config,
        format!("[sessions]\npath = \"{}\"\n", db.display()),
    )
    .unwrap();

    let (first, pid) = connect(&config, &files).await;
    let asked = timeout(WAIT, first.call_tool_once(write_call()))
        .await
        .unwrap()
        .unwrap();
    let CallToolResponse::InputRequired(asked) = asked else {
        panic!("the approval asked first: {asked:?}")
    };
    let state = asked.request_state.clone().expect("a request state");
    let question = serde_json::to_value(&asked.input_requests).unwrap();
    let message = question[oscova_mcp::INPUT_KEY]["params"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.starts_with(&format!("Allow the tool `{WRITE}`")),
        "{question}"
    );

    // kill -9: no shutdown of any kind, nothing left in this process.
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    drop(first);
    assert_eq!(runs(&files), 0);

    let (next, _) = connect(&config, &files).await;
    let mut responses = InputResponses::new();
    responses.insert(
        oscova_mcp::INPUT_KEY.to_owned(),
        json!({"action": "accept", "content": {}}),
    );
    let retry = write_call()
        .with_request_state(state.clone())
        .with_input_responses(responses.clone());
    let done = timeout(WAIT, next.call_tool_once(retry.clone()))
        .await
        .unwrap()
        .unwrap();
    let CallToolResponse::Complete(done) = done else {
        panic!("the call's end: {done:?}")
    };
    assert_eq!(done.is_error, Some(false), "{done:?}");
    assert_eq!(runs(&files), 1, "{done:?}");

    // One retry per handle: the same answer again runs nothing.
    let again = timeout(WAIT, next.call_tool_once(retry)).await.unwrap();
    let refused = again.expect_err("a handle is good for one retry");
    assert!(refused.to_string().contains("requestState"), "{refused}");
    assert_eq!(runs(&files), 1);
    next.cancel().await.unwrap();
}
