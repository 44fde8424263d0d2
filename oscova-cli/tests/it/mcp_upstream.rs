//! `oscova mcp` as a gateway for the prompts and resources of
//! `[mcp.servers]` (issue 27 §1): a real upstream server written with the
//! official Python SDK (`oscova-plugins/mcp/tests/servers/prompts_server.py`)
//! whose prompt `summarize` is served as `notes__summarize` and whose
//! resources as `mcp://notes/<upstream uri>`. Over stdio rmcp's client
//! lists, gets, reads, completes and hears `notifications/prompts/list_changed`
//! when the upstream's list changes; a config prompt of the same name
//! keeps it (the upstream one is `notes__summarize:2`). Over HTTP the
//! Python SDK's client does the same for two users, each answered by
//! their own `per_user` upstream process with their own credential
//! (redacted where it shows), through `oscova mcp --listen` and `oscova
//! serve` alike; bob's open session is not told of a change of alice's
//! own upstream process.

use crate::support;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use rmcp::model::{
    CompleteRequestParams, GetPromptRequestParams, JsonObject, ReadResourceRequestParams,
    ResourceContents,
};
use rmcp::service::NotificationContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(60);

/// `printf %s alice-token | sha256sum`
const ALICE_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
/// `printf %s bob-token | sha256sum`
const BOB_SHA256: &str = "97dd3707015dcf069cf73022ed7173b1165db6eff24b441cb57fd069a8c4e525";

/// A config over the upstream server, one process per user; `extra` is
/// appended.
fn config(name: &str, extra: &str) -> PathBuf {
    let dir = support::temp_dir(name);
    let python = oscova_test_support::python::mcp_python();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../oscova-plugins/mcp/tests/servers/prompts_server.py");
    let text = format!(
        r#"
default_user = "alice"

[users.alice]
credentials = {{ "notes.token" = "ALICE-TOKEN-1" }}

[users.bob]
credentials = {{ "notes.token" = "BOB-TOKEN-2" }}

[mcp.servers.notes]
command = {python:?}
args = [{script:?}]
per_user = true
credential_env = {{ NOTES_TOKEN = "notes.token" }}
approval = "not_required"
{extra}
"#,
        python = python.display().to_string(),
        script = script.display().to_string(),
    );
    let path = dir.join("oscova.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// rmcp's client, telling the test of each prompt list change.
#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let _ = self.0.send(());
        std::future::ready(())
    }
}

fn object(value: Value) -> JsonObject {
    let Value::Object(map) = value else {
        panic!("not an object")
    };
    map
}

fn texts(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_upstream_prompts_resources_completion_and_changes() {
    let config = config(
        "mcp-upstream-stdio",
        "[prompts.notes__summarize]\ndescription = \"The config's own\"\n\n\
         [[prompts.notes__summarize.messages]]\ntext = \"From the config.\"\n",
    );
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("--config").arg(&config).arg("mcp");
    support::clean_env(cmd.as_std_mut());
    let (tx, mut changes) = mpsc::unbounded_channel();
    let client = timeout(
        WAIT,
        Listener(tx).serve(TokioChildProcess::new(cmd).unwrap()),
    )
    .await
    .unwrap()
    .unwrap();
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert_eq!(
        caps.prompts.as_ref().and_then(|p| p.list_changed),
        Some(true),
        "{caps:?}"
    );

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"notes__summarize") && names.contains(&"notes__summarize:2"),
        "the config's prompt keeps its name, the upstream one is renamed: {names:?}"
    );
    let got = client
        .get_prompt(from::<GetPromptRequestParams>(json!({
            "name": "notes__summarize:2",
            "arguments": {"topic": "alpha", "style": "lively"},
        })))
        .await
        .unwrap();
    let message = serde_json::to_value(&got.messages[0]).unwrap();
    assert_eq!(
        message["content"]["text"], "Summarize alpha in a lively way.",
        "{message}"
    );
    // A resource the prompt embeds is under its served URI.
    let cite = client
        .get_prompt(from::<GetPromptRequestParams>(json!({
            "name": "notes__cite",
            "arguments": {"id": "3"},
        })))
        .await
        .unwrap();
    let message = serde_json::to_value(&cite.messages[0]).unwrap();
    assert_eq!(
        message["content"]["resource"]["uri"], "mcp://notes/notes://note/3",
        "{message}"
    );
    let refused = client
        .get_prompt(from::<GetPromptRequestParams>(
            json!({"name": "notes__summarize:2"}),
        ))
        .await
        .unwrap_err();
    // The upstream's refusal, its code kept (the Python SDK says -32603
    // for a missing argument) and its words passed on, naming the server.
    let refused = refused.to_string();
    assert!(
        refused.contains("-32603")
            && refused.contains("MCP server `notes` refused the request")
            && refused.contains("topic"),
        "{refused}"
    );

    let completion = client
        .complete(from::<CompleteRequestParams>(json!({
            "ref": {"type": "ref/prompt", "name": "notes__summarize:2"},
            "argument": {"name": "style", "value": "l"},
        })))
        .await
        .unwrap();
    assert_eq!(completion.completion.values, ["long", "lively"]);

    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"mcp://notes/notes://readme"), "{uris:?}");
    let templates = client.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        templates.contains(&"mcp://notes/notes://note/{id}"),
        "{templates:?}"
    );
    let read = |uri: &str| from::<ReadResourceRequestParams>(json!({ "uri": uri }));
    let whoami = client
        .read_resource(read("mcp://notes/notes://whoami"))
        .await
        .unwrap();
    let text = texts(&whoami.contents);
    assert!(text.contains("token_reversed=1-NEKOT-ECILA"), "{text}");
    assert!(text.contains("token=[REDACTED]"), "redacted: {text}");
    let ResourceContents::TextResourceContents { uri, .. } = &whoami.contents[0] else {
        panic!("{whoami:?}")
    };
    assert_eq!(uri, "mcp://notes/notes://whoami");
    let note = client
        .read_resource(read("mcp://notes/notes://note/7"))
        .await
        .unwrap();
    assert_eq!(texts(&note.contents), "Note number 7.");
    let missing = client.read_resource(read("mcp://other/x://y")).await;
    assert!(missing.is_err(), "an unknown server's URI: {missing:?}");
    let ids = client
        .complete(from::<CompleteRequestParams>(json!({
            "ref": {"type": "ref/resource", "uri": "mcp://notes/notes://note/{id}"},
            "argument": {"name": "id", "value": "1"},
        })))
        .await
        .unwrap();
    assert_eq!(ids.completion.values, ["1", "10"]);

    // The upstream's list changes: the client is told, and lists again.
    let added = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("oscova_mcp__notes__add_prompt")
                .with_arguments(object(json!({"name": "late"}))),
        )
        .await
        .unwrap();
    assert_ne!(added.is_error, Some(true), "{added:?}");
    timeout(Duration::from_secs(30), changes.recv())
        .await
        .expect("notifications/prompts/list_changed within 30 s")
        .unwrap();
    let names: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(names.contains(&"notes__late".to_owned()), "{names:?}");
    client.cancel().await.unwrap();
}

/// Starts `oscova mcp --listen` (or `oscova serve --listen`) and returns
/// it with its MCP URL.
fn serve(config: &str, command: &str) -> (Child, String) {
    use std::io::{BufRead, BufReader};
    let mut command = support::oscova(&["--config", config, command, "--listen", "127.0.0.1:0"]);
    // `serve`'s A2A side needs a model; no test here reaches it.
    command.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-unused-0123456789");
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    let url = url.trim_end_matches('/');
                    break if url.ends_with("/mcp") {
                        url.to_owned()
                    } else {
                        format!("{url}/mcp")
                    };
                }
            }
            _ => panic!("the server exited before saying where it listens"),
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

const WATCH_CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/python/mcp_upstream_client.py"
);

fn python(url: &str, token: &str, change: Option<&str>) -> Value {
    let script = WATCH_CLIENT;
    let mut command = std::process::Command::new(oscova_test_support::python::mcp_python());
    command.args([script, url, token]);
    command.args(change);
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap()
}

#[test]
fn http_serves_each_user_from_their_own_upstream_process() {
    for command in ["mcp", "serve"] {
        http_gateway(command);
    }
}

/// `oscova COMMAND --listen` (`mcp` or `serve`) as the gateway for alice
/// and bob.
fn http_gateway(command: &str) {
    eprintln!("oscova {command} --listen");
    let dir = support::temp_dir("mcp-upstream-http");
    let config = config(
        "mcp-upstream-http",
        &format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{ALICE_SHA256}\"\n\n\
             [[mcp.tokens]]\nuser = \"bob\"\nsha256 = \"{BOB_SHA256}\"\n\n\
             [providers.openai]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [serve.a2a]\nprovider = \"openai\"\nname = \"Served agent\"\n",
            dir.join("sessions.db").display()
        ),
    );
    let (mut child, url) = serve(config.to_str().unwrap(), command);
    // Bob's session is open while alice's upstream list changes.
    let mut watcher = std::process::Command::new(oscova_test_support::python::mcp_python())
        .args([WATCH_CLIENT, &url, "bob-token", "--watch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut watched = std::io::BufReader::new(watcher.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut watched, &mut line).unwrap();
    assert!(line.contains("ready"), "bob's session: {line}");
    let alice = python(&url, "alice-token", Some("late"));
    drop(watcher.stdin.take());
    line.clear();
    std::io::BufRead::read_line(&mut watched, &mut line).unwrap();
    let _ = watcher.wait();
    let bob_watch: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        bob_watch["changed"], false,
        "bob is not told of a change of alice's own upstream process: {line}"
    );
    let bob = python(&url, "bob-token", None);
    let _ = child.kill();
    let _ = child.wait();

    for seen in [&alice, &bob] {
        assert!(
            seen["prompts"]
                .as_array()
                .unwrap()
                .contains(&"notes__summarize".into()),
            "{seen}"
        );
        assert_eq!(seen["prompt_text"], "Summarize alpha in a lively way.");
        assert_eq!(seen["styles"], json!(["long", "lively"]));
        assert!(
            seen["resources"]
                .as_array()
                .unwrap()
                .contains(&"mcp://notes/notes://readme".into()),
            "{seen}"
        );
        assert!(
            seen["templates"]
                .as_array()
                .unwrap()
                .contains(&"mcp://notes/notes://note/{id}".into()),
            "{seen}"
        );
        assert_eq!(seen["whoami_uri"], "mcp://notes/notes://whoami");
        assert_eq!(seen["note"], "Note number 7.");
        assert_eq!(seen["ids"], json!(["1", "10"]));
        assert!(
            seen["whoami"]
                .as_str()
                .unwrap()
                .contains("token=[REDACTED]"),
            "{seen}"
        );
    }
    // Each user read their own process, with their own credential.
    let field = |seen: &Value, name: &str| {
        seen["whoami"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name).map(str::to_owned))
            .unwrap()
    };
    assert_eq!(field(&alice, "token_reversed="), "1-NEKOT-ECILA");
    assert_eq!(field(&bob, "token_reversed="), "2-NEKOT-BOB");
    assert_ne!(field(&alice, "pid="), field(&bob, "pid="));
    // Alice's upstream list changed; she was told and sees the new prompt.
    assert_eq!(alice["list_changed"], true, "{alice}");
    assert_eq!(alice["changed"], true, "{alice}");
    assert!(
        alice["prompts_after"]
            .as_array()
            .unwrap()
            .contains(&"notes__late".into()),
        "{alice}"
    );
    // Bob's process never had alice's prompt.
    assert!(
        !bob["prompts"]
            .as_array()
            .unwrap()
            .contains(&"notes__late".into()),
        "{bob}"
    );
}
