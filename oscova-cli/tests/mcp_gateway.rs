//! `[mcp.servers]` in the config, end to end: `oscova plugins` shows them,
//! `oscova mcp pin` pins one, and `oscova mcp` re-serves their tools to an
//! MCP client (rmcp's) with Oscova's policy applied: per-user credentials,
//! approval, redaction. The servers are real: one written with rmcp, one
//! with the official Python SDK.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(60);

/// The rmcp test server (the MCP plugin's example).
fn rmcp_server() -> PathBuf {
    let bin = PathBuf::from(support::BIN);
    oscova_test_support::build_example("rmcp_test_server", bin.parent().unwrap())
}

fn config() -> PathBuf {
    let dir = support::temp_dir("mcp-gateway");
    let python = oscova_test_support::python::mcp_python();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../oscova-plugins/mcp/tests/servers/notes_server.py");
    let text = format!(
        r#"
default_user = "alice"

[users.alice]
credentials = {{ "notes.token" = "ALICE-TOKEN-1" }}

[mcp.servers.notes]
command = {rmcp:?}
per_user = true
credential_env = {{ NOTES_TOKEN = "notes.token" }}
network = "local"

[mcp.servers.py]
command = {python:?}
args = [{script:?}]
approval = "required"
"#,
        rmcp = rmcp_server().display().to_string(),
        python = python.display().to_string(),
        script = script.display().to_string(),
    );
    let path = dir.join("oscova.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(map) = arguments else {
        panic!("not an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(JsonObject::from_iter(map))
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn plugins_shows_the_servers_and_pin_writes_the_lock_file() {
    let config = config();
    let path = config.display().to_string();
    let (code, out) = support::run_json(&["--config", &path, "plugins"]);
    assert_eq!(code, 0, "{out}");
    let servers = out["mcp_servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2, "{out}");
    let notes = servers.iter().find(|s| s["name"] == "notes").unwrap();
    let status = notes["status"].as_str().unwrap();
    assert!(
        status.contains("one process per user") && status.contains("network local: declared"),
        "{status}"
    );
    let mcp = out["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "oscova.mcp")
        .unwrap();
    assert!(mcp["tools"].as_u64().unwrap() >= 12, "{mcp}");

    let (code, stdout, stderr) = support::run(&mut support::oscova(&[
        "--config", &path, "mcp", "pin", "py",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("pinned MCP server `py` (sha256:"),
        "{stdout}"
    );
    let lock = config.with_file_name("oscova.mcp.lock");
    let pins: Value = serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    assert!(
        pins["servers"]["py"]["hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    let (_, text, _) = support::run(&mut support::oscova(&["--config", &path, "plugins"]));
    assert!(
        text.contains("py: stdio") && text.contains("pinned sha256:"),
        "{text}"
    );

    let (code, _, stderr) = support::run(&mut support::oscova(&[
        "--config", &path, "mcp", "pin", "nope",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no MCP server `nope`"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_re_serves_mcp_servers_with_oscovas_policy() {
    let config = config();
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("--config").arg(&config).arg("mcp");
    support::clean_env(cmd.as_std_mut());
    let transport = TokioChildProcess::new(cmd).unwrap();
    let client = timeout(WAIT, ().serve(transport)).await.unwrap().unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [
        "oscova_mcp__notes__shout_text",
        "oscova_mcp__py__add",
        "oscova_mcp__py__shout_text",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
    let add = tools
        .iter()
        .find(|t| t.name == "oscova_mcp__py__add")
        .unwrap();
    assert_eq!(add.description.as_deref(), Some("Adds two integers."));

    // alice's credential reaches her own server process...
    let who = client
        .call_tool(call("oscova_mcp__notes__whoami", json!({})))
        .await
        .unwrap();
    assert!(
        text(&who).contains("token_reversed=1-NEKOT-ECILA"),
        "{}",
        text(&who)
    );
    assert!(
        text(&who).contains("host_secret_seen=false"),
        "{}",
        text(&who)
    );
    // ...and never comes back out: results are redacted.
    let echo = client
        .call_tool(call(
            "oscova_mcp__notes__shout_text",
            json!({"text": "alice-token-1"}),
        ))
        .await
        .unwrap();
    assert_eq!(text(&echo), "[REDACTED]");

    // The py server's tools require approval, and nobody can be asked here.
    let refused = client
        .call_tool(call("oscova_mcp__py__add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("approval"), "{}", text(&refused));
    client.cancel().await.unwrap();

    // With --allow-approval-required the gateway approves them itself.
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("--config")
        .arg(&config)
        .args(["mcp", "--allow-approval-required"]);
    support::clean_env(cmd.as_std_mut());
    let client = timeout(WAIT, ().serve(TokioChildProcess::new(cmd).unwrap()))
        .await
        .unwrap()
        .unwrap();
    let sum = client
        .call_tool(call("oscova_mcp__py__add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})), "{sum:?}");
    client.cancel().await.unwrap();
}

#[test]
fn a_user_without_the_credential_sees_the_tools_and_the_call_says_what_to_set() {
    let config = config();
    let path = config.display().to_string();
    // bob has no `notes.token`: the server's tools stay in his list...
    let (code, doc) = support::run_json(&["--config", &path, "tools", "list", "--user", "bob"]);
    assert_eq!(code, 0, "{doc}");
    let names: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"oscova_mcp__notes__whoami"), "{names:?}");
    assert_eq!(doc["diagnostics"], json!([]), "{doc}");
    // ...and a call is an error result naming the credential and where to
    // set it, with no server started for him.
    let args = [
        "--config",
        &path,
        "tools",
        "call",
        "oscova_mcp__notes__whoami",
        "--args",
        "{}",
        "--user",
        "bob",
    ];
    let (code, doc) = support::run_json(&args);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["is_error"], true, "{doc}");
    let content = doc["content"].as_str().unwrap();
    assert!(
        content.contains("credential `notes.token` (for `NOTES_TOKEN`)")
            && content.contains("`[users.bob.credentials]`"),
        "{content}"
    );
}
