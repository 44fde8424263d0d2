//! `[a2a]` in the config: its agents become the `oscova.a2a` plugin's
//! tools for the user the command runs as, with that user's credential;
//! a wrong key is a config error (exit 2); offline refuses an agent not on
//! this machine. The agent is a loopback server speaking A2A 1.0 JSON-RPC
//! (the plugin's own tests run the official Python SDK's server).

use crate::support;

use oscova_test_support::http::{Reply, TestServer};
use serde_json::json;
use support::{oscova, run_async, temp_dir};

const SEND: &str = "oscova_a2a__a2a__send";

fn config_file(text: &str) -> String {
    let path = temp_dir("a2a-config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// An agent whose card points at itself and whose every answer is `pong`.
async fn agent() -> TestServer {
    TestServer::start(|request| {
        if request.method == "GET" {
            let host = request.header("host").unwrap_or_default().to_owned();
            Reply::json(
                200,
                json!({"name": "Fake", "description": "answers pong", "supportedInterfaces": [
                    {"url": format!("http://{host}"), "protocolBinding": "JSONRPC",
                     "protocolVersion": "1.0"}], "skills": []}),
            )
        } else {
            Reply::json(
                200,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"message": {
                    "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}}}),
            )
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_agents_are_called_with_the_users_credential() {
    let server = agent().await;
    let config = config_file(&format!(
        "[credentials]\n\"peer.token\" = \"tok-1\"\n\n[a2a.agents.peer]\nurl = \"{}\"\n\
         credential_header = {{ Authorization = \"peer.token\" }}\n",
        server.url()
    ));
    let (code, out, err) = run_async(oscova(&["--config", &config, "tools", "list"]), None).await;
    assert_eq!(code, 0, "{err}");
    for tool in ["agents", "send", "status", "cancel"] {
        assert!(out.contains(&format!("oscova_a2a__a2a__{tool}")), "{out}");
    }
    let args = r#"{"agent":"peer","message":"ping"}"#;
    let cmd = oscova(&["--config", &config, "tools", "call", SEND, "--args", args]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "pong\n");
    let post = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("authorization"), Some("Bearer tok-1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_refuses_an_agent_elsewhere_and_a_wrong_key_is_exit_2() {
    let config = config_file(
        "[a2a]\noffline = true\n\n[a2a.agents.far]\nurl = \"http://agent.invalid:1\"\n",
    );
    let args = r#"{"agent":"far","message":"ping"}"#;
    let cmd = oscova(&["--config", &config, "tools", "call", SEND, "--args", args]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("offline operation is required"), "{err}");

    let wrong = config_file("[a2a.agents.x]\nurl = \"http://127.0.0.1:1\"\nurll = 1\n");
    let (code, _, err) = run_async(oscova(&["--config", &wrong, "plugins"]), None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("urll"), "{err}");

    let bad = config_file("[a2a.agents.x]\nurl = \"http://127.0.0.1:1\"\ntimeout_secs = 0\n");
    let (code, _, err) = run_async(oscova(&["--config", &bad, "plugins"]), None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a2a.agents.x.timeout_secs"), "{err}");
}
