//! One guard, written once as a host layer (`oscova_core::host::layer`)
//! and registered once on the plugin host, refuses a dangerous call on
//! every front end: `oscova chat --session` (the session agent), `oscova
//! serve`'s MCP route driven by the official Python MCP SDK's client
//! (`scripts/ensure-python-mcp.sh`), its A2A route driven by the official
//! Python A2A SDK's client (`scripts/ensure-python-a2a.sh`) with a message
//! the scripted model answers with the call, and `oscova tools call`.
//!
//! The tool writes a marker file: after a refused call it must not exist,
//! and the same tool with a harmless command writes it, on the same front
//! end (a guard that refused everything, or a tool that never ran, fails).
//!
//! The guarded host: a test cannot link a layer into the `oscova` binary,
//! so the host is this test binary, running `oscova_cli::Launcher` (the
//! library the binary's `main` is, over the plugins it names) with the
//! guard. [`tools_call_is_guarded_and_this_test_is_the_guarded_host`]
//! checks `oscova tools call` in-process; run with `GUARD_HOST_ARGS` set
//! (a JSON list of arguments), it runs that command line instead and exits
//! with its status. The other tests start it as a child process
//! (`current_exe() guard::… --exact --nocapture`) with a clean
//! environment, on 127.0.0.1 with a port the system picks, and stop it
//! with SIGTERM; the model is a scripted OpenAI-compatible server on
//! loopback.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oscova_cli::{ExitStatus, Launcher};
use oscova_core::host::layer::{CallOutcome, Next, ToolCall, ToolLayer};
use oscova_core::prelude::*;
use oscova_core::provider::BoxFuture;
use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::{Value, json};

use crate::sessions::{call_reply, text_reply};

const TOOL: &str = "test_guard__shell__run";
const REASON: &str = "destructive shell commands are not allowed";
const HOST_ARGS: &str = "GUARD_HOST_ARGS";
const HOST_TEST: &str = "guard::tools_call_is_guarded_and_this_test_is_the_guarded_host";
const TOKEN: &str = "alice-token";
/// `printf %s alice-token | sha256sum`
const TOKEN_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
const KEY: &str = "sk-guard-test-0123456789abcdef";
const MCP_CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oscova-mcp/tests/python/mcp_http_client.py"
);
const A2A_CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/a2a/client.py");

// ------------------------------------------------------ the tool, the guard

/// A shell that does not run anything: it records the call by writing the
/// command to `marker`, the side effect a refused call must not have.
pub struct ShellToolset;

#[toolset]
impl ShellToolset {
    /// Runs a shell command.
    pub fn run(command: String, marker: String) -> Result<String, String> {
        std::fs::write(&marker, &command).map_err(|e| format!("{marker}: {e}"))?;
        Ok(format!("ran {command}"))
    }
}

/// The shell plugin.
#[plugin(id = "test.guard")]
pub struct ShellPlugin;

impl AgentPlugin for ShellPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| ShellToolset);
    }
}

/// The guard, written once: no `rm -rf`, whoever asks.
pub struct NoRmRf;

impl ToolLayer for NoRmRf {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            let command = call.arguments["command"].as_str().unwrap_or_default();
            if command.contains("rm -rf") {
                return Err(call.refuse(REASON));
            }
            next.run(call).await
        })
    }
}

/// The guarded host, registered once: the shell, the OpenAI-compatible
/// provider the scripted model speaks, and the guard.
fn guarded_launcher() -> Launcher {
    Launcher::new().host_builder(|b| {
        b.plugins(oscova_core::linked_plugins![
            ShellPlugin,
            oscova_plugin_openai::OpenAiPlugin
        ])
        .layer(NoRmRf)
    })
}

/// The arguments of a call of the shell tool.
fn shell_args(command: &str, marker: &Path) -> String {
    json!({"command": command, "marker": marker}).to_string()
}

#[test]
fn tools_call_is_guarded_and_this_test_is_the_guarded_host() {
    if let Some(args) = std::env::var_os(HOST_ARGS) {
        let args: Vec<String> = serde_json::from_str(args.to_str().unwrap()).unwrap();
        let status = guarded_launcher().run_from(std::iter::once("oscova".to_owned()).chain(args));
        std::process::exit(if status == ExitStatus::Success { 0 } else { 1 });
    }
    let dir = support::temp_dir("guard-tools-call");
    let config = dir.join("config.toml");
    std::fs::write(&config, "").unwrap();
    let config = config.to_str().unwrap();
    let (danger, safe) = (dir.join("danger"), dir.join("safe"));
    let call = |args: &str| {
        guarded_launcher().run_from([
            "oscova", "--config", config, "tools", "call", TOOL, "--args", args,
        ])
    };
    assert_eq!(call(&shell_args("rm -rf /", &danger)), ExitStatus::Refused);
    assert!(!danger.exists(), "the refused call ran");
    assert_eq!(call(&shell_args("ls", &safe)), ExitStatus::Success);
    assert_eq!(std::fs::read_to_string(&safe).unwrap(), "ls");
}

// ------------------------------------------------------------ the processes

/// The guarded host running `args`, as a child process with a clean
/// environment and the model's key.
fn host_command(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([HOST_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .stdin(Stdio::null());
    support::clean_env(&mut command);
    command
        .env(HOST_ARGS, serde_json::to_string(args).unwrap())
        .env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY)
        // The harness must not run the host's test a second way.
        .env_remove("RUST_TEST_THREADS");
    command
}

/// The scripted model: a user message is the shell tool's arguments, and
/// the answer calls the tool with them; a tool message is answered with
/// `Tool said: <its text>`.
fn model(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let text = last["content"].as_str().unwrap_or_default();
    if last["role"] == "tool" {
        return text_reply(&format!("Tool said: {text}"));
    }
    call_reply(TOOL, text)
}

/// What the model was told each tool call gave, in order.
fn tool_messages(model: &TestServer) -> Vec<String> {
    model
        .requests()
        .iter()
        .filter_map(|r| {
            let last = r.json()["messages"].as_array()?.last()?.clone();
            (last["role"] == "tool")
                .then(|| last["content"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

/// A config for the guarded host in `dir`: alice's token, the model at
/// `model_url`, sessions beside it, and the served A2A agent on that model.
fn write_config(dir: &Path, model_url: &str) -> String {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [providers.openai]\nendpoint = \"{model_url}\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [a2a]\nprovider = \"openai\"\n\n\
             [[a2a.skills]]\nid = \"shell\"\nname = \"Shell\"\n",
            dir.join("sessions.db").display()
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// The guarded host's `serve` (MCP at `/mcp`, A2A), with its base URL.
fn serve(config: &str) -> (Child, String) {
    let (child, base) = support::listening(
        &mut host_command(&["--config", config, "serve", "--listen", "127.0.0.1:0"]),
        "guarded host",
    );
    (child, base)
}

fn terminate(child: &mut Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the host did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the host when dropped, even when an assertion failed.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            terminate(&mut self.0);
        }
    }
}

// --------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_refuses_the_dangerous_call() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("guard-chat");
    let config = write_config(&dir, &model.url());
    let (danger, safe) = (dir.join("danger"), dir.join("safe"));
    let url = model.url();
    let chat = |message: String| {
        let command = host_command(&[
            "--config",
            &config,
            "chat",
            "--provider",
            "openai",
            "--endpoint",
            &url,
            "--model",
            "gpt-test",
            "--session",
            "guarded",
            "-m",
            &message,
        ]);
        support::run_async(command, None)
    };
    let (code, out, err) = chat(shell_args("rm -rf /", &danger)).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!danger.exists(), "the refused call ran");
    let (code, out, err) = chat(shell_args("ls", &safe)).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(std::fs::read_to_string(&safe).unwrap(), "ls");

    let told = tool_messages(&model);
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].contains(REASON), "{}", told[0]);
    assert!(told[0].contains("did not run"), "{}", told[0]);
    assert_eq!(told[1], "ran ls");
}

/// The official Python MCP SDK's client calls `tool` with `args` at `url`:
/// its one line of JSON.
fn mcp_call(url: &str, args: &str) -> Value {
    let output = Command::new(oscova_test_support::python::mcp_python())
        .args([MCP_CLIENT, url, TOKEN, TOOL, args])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or("null");
    serde_json::from_str(last)
        .unwrap_or_else(|_| panic!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr)))
}

/// The official Python A2A SDK's client sends `text` (JSON-RPC binding):
/// its one line of JSON.
fn a2a_send(base: &str, text: &str) -> Value {
    let output = Command::new(oscova_test_support::python::a2a_python())
        .args([
            A2A_CLIENT,
            "--url",
            base,
            "--token",
            TOKEN,
            "--binding",
            "JSONRPC",
            "send",
            text,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_the_dangerous_call_over_mcp_and_over_a2a() {
    let model = TestServer::start(model).await;
    let dir = support::temp_dir("guard-serve");
    let config = write_config(&dir, &model.url());
    let (child, base) = tokio::task::spawn_blocking(move || serve(&config))
        .await
        .unwrap();
    let _host = Running(child);
    let marker = |name: &str| -> PathBuf { dir.join(name) };

    // MCP: the client's own call, straight to the tool.
    let (danger, safe) = (marker("mcp-danger"), marker("mcp-safe"));
    let mcp = format!("{base}/mcp");
    let refused = tokio::task::spawn_blocking({
        let (mcp, args) = (mcp.clone(), shell_args("rm -rf /", &danger));
        move || mcp_call(&mcp, &args)
    })
    .await
    .unwrap();
    assert_eq!(refused["is_error"], true, "{refused}");
    assert!(
        refused["text"].as_str().unwrap().contains(REASON),
        "{refused}"
    );
    assert!(!danger.exists(), "the refused call ran over MCP");
    let ran = tokio::task::spawn_blocking({
        let args = shell_args("ls", &safe);
        move || mcp_call(&mcp, &args)
    })
    .await
    .unwrap();
    assert_eq!(ran["text"], "ran ls", "{ran}");
    assert_eq!(std::fs::read_to_string(&safe).unwrap(), "ls");

    // A2A: a message the model answers with the call, in a session.
    let (danger, safe) = (marker("a2a-danger"), marker("a2a-safe"));
    let sent = tokio::task::spawn_blocking({
        let (base, text) = (base.clone(), shell_args("rm -rf /", &danger));
        move || a2a_send(&base, &text)
    })
    .await
    .unwrap();
    let task = &sent["ok"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    let answer = task["artifacts"][0]["parts"][0]["text"].as_str().unwrap();
    assert!(
        answer.starts_with("Tool said: ") && answer.contains(REASON),
        "{answer}"
    );
    assert!(!danger.exists(), "the refused call ran over A2A");
    let sent = tokio::task::spawn_blocking({
        let text = shell_args("ls", &safe);
        move || a2a_send(&base, &text)
    })
    .await
    .unwrap();
    let task = &sent["ok"]["task"];
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "Tool said: ran ls",
        "{sent}"
    );
    assert_eq!(std::fs::read_to_string(&safe).unwrap(), "ls");
}
