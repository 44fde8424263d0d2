//! `oscova serve` end to end: the real binary on 127.0.0.1 with a port the
//! system picks, MCP and A2A on that one port, the model a scripted
//! OpenAI-compatible server on loopback, A2A driven by the official Python
//! SDK's client (`scripts/a2a/client.py`, installed by
//! `scripts/ensure-python-a2a.sh`) and the official JavaScript SDK's
//! (`scripts/a2a/client.mjs`, installed by `scripts/ensure-a2a-js.sh`),
//! stopped with SIGTERM.

use crate::support;

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use oscova_test_support::a2a_js;
use oscova_test_support::http::{Framing, Reply, Request, TestServer};
use serde_json::{Value, json};

const TOKEN: &str = "alice-token";
/// `printf %s alice-token | sha256sum`
const TOKEN_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
const KEY: &str = "sk-serve-test-0123456789abcdef";

/// Answers `Served: <the last message>` as an OpenAI chat stream.
fn openai_reply(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    let text = format!("Served: {}", last["content"].as_str().unwrap_or_default());
    let chunk = |delta: Value, finish: Option<&str>| {
        let chunk = json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {chunk}\n\n")
    };
    let body = chunk(json!({"role": "assistant", "content": text}), None)
        + &chunk(json!({}), Some("stop"))
        + "data: [DONE]\n\n";
    Reply::stream(
        "text/event-stream",
        Framing::Chunked,
        vec![body.into_bytes()],
    )
}

pub(crate) fn a2a_python() -> PathBuf {
    if let Some(path) = std::env::var_os("OSCOVA_A2A_PYTHON") {
        return PathBuf::from(path);
    }
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let cache = std::env::var_os("XDG_CACHE_HOME").map_or(home.join(".cache"), PathBuf::from);
    let python = cache.join("oscova/python-a2a/bin/python");
    assert!(
        python.is_file(),
        "the A2A Python SDK is not installed: run scripts/ensure-python-a2a.sh"
    );
    python
}

/// `scripts/a2a/client.py` against `base`.
fn client(base: &str, token: &str, binding: &str, op: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/a2a/client.py");
    let output = std::process::Command::new(a2a_python())
        .args([
            script,
            "--url",
            base,
            "--token",
            token,
            "--binding",
            binding,
        ])
        .args(op)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `scripts/a2a/client.mjs` (the JavaScript SDK's client) against `base`.
fn js_client(base: &str, token: &str, binding: &str, op: &[&str]) -> Value {
    let output = std::process::Command::new(a2a_js::node())
        .arg(a2a_js::client_script())
        .arg(a2a_js::a2a_js_dir())
        .args(["--url", base, "--token", token, "--binding", binding])
        .args(op)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A config file for `oscova serve` in `dir`, the model at `model_url`:
/// the served agent's provider and skills in `[a2a]`, the card's name in
/// `[serve.a2a]`.
fn write_config(dir: &std::path::Path, model_url: &str) -> String {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [providers.openai]\nendpoint = \"{model_url}\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [a2a]\nprovider = \"openai\"\n\n\
             [[a2a.skills]]\nid = \"chat\"\nname = \"Chat\"\n\n\
             [serve.a2a]\nname = \"Served agent\"\n",
            dir.join("sessions.db").display()
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// Starts `oscova serve` and returns it with its base URL.
fn serve(config: &str) -> (Child, String) {
    let mut cmd = support::oscova(&["--config", config, "serve", "--listen", "127.0.0.1:0"]);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    let (child, base) = support::listening(&mut cmd, "serve");
    (child, base)
}

fn terminate(child: &mut Child) -> Option<i32> {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            Instant::now() < deadline,
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_mcp_and_a2a_on_one_port_and_tasks_outlive_a_restart() {
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("serve");
    let config = write_config(&dir, &model.url());
    let (mut child, base) = tokio::task::spawn_blocking({
        let config = config.clone();
        move || serve(&config)
    })
    .await
    .unwrap();

    let (task_id, context) = tokio::task::spawn_blocking({
        let base = base.clone();
        move || {
            let card = client(&base, TOKEN, "JSONRPC", &["card"]);
            assert_eq!(card["ok"]["name"], "Served agent", "{card}");
            assert_eq!(card["ok"]["skills"][0]["id"], "chat");
            let mut first = None;
            for binding in ["JSONRPC", "HTTP+JSON"] {
                let sent = client(&base, TOKEN, binding, &["send", "hello"]);
                let task = &sent["ok"]["task"];
                assert_eq!(
                    task["status"]["state"], "TASK_STATE_COMPLETED",
                    "{binding}: {sent}"
                );
                assert_eq!(task["artifacts"][0]["parts"][0]["text"], "Served: hello");
                first.get_or_insert((
                    task["id"].as_str().unwrap().to_owned(),
                    task["contextId"].as_str().unwrap().to_owned(),
                ));
            }
            let refused = client(&base, "wrong", "JSONRPC", &["list"]);
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{refused}"
            );
            first.unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        model
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(format!("Bearer {KEY}").as_str())),
        "the model was called with the provider's key"
    );

    // MCP on the same port: its token rule, its protocol.
    let http = reqwest::Client::new();
    let unauthorized = http.post(format!("{base}/mcp")).send().await.unwrap();
    assert_eq!(unauthorized.status(), 401);
    let initialize = http
        .post(format!("{base}/mcp"))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(initialize.status(), 200);
    let text = initialize.text().await.unwrap();
    assert!(text.contains("serverInfo"), "{text}");

    assert_eq!(terminate(&mut child), Some(0));

    // Restarted on the same sessions file: the task is still there.
    let (mut child, base) = tokio::task::spawn_blocking(move || serve(&config))
        .await
        .unwrap();
    let got = tokio::task::spawn_blocking({
        let base = base.clone();
        move || client(&base, TOKEN, "JSONRPC", &["get", &task_id])
    })
    .await
    .unwrap();
    assert_eq!(
        got["ok"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    assert_eq!(got["ok"]["contextId"], context.as_str());
    assert_eq!(terminate(&mut child), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_the_javascript_sdk_over_both_bindings() {
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("serve-js");
    let config = write_config(&dir, &model.url());
    let (mut child, base) = tokio::task::spawn_blocking(move || serve(&config))
        .await
        .unwrap();
    tokio::task::spawn_blocking(move || {
        let card = js_client(&base, TOKEN, "JSONRPC", &["card"]);
        assert_eq!(card["ok"]["name"], "Served agent", "{card}");
        for binding in ["JSONRPC", "HTTP+JSON"] {
            let sent = js_client(&base, TOKEN, binding, &["send", "hello"]);
            let task = &sent["ok"]["task"];
            assert_eq!(
                task["status"]["state"], "TASK_STATE_COMPLETED",
                "{binding}: {sent}"
            );
            assert_eq!(task["artifacts"][0]["parts"][0]["text"], "Served: hello");
            let id = task["id"].as_str().unwrap();
            let context = task["contextId"].as_str().unwrap();

            let got = js_client(&base, TOKEN, binding, &["get", id]);
            assert_eq!(
                got["ok"]["history"][0]["parts"][0]["text"], "hello",
                "{got}"
            );
            let listed = js_client(&base, TOKEN, binding, &["list", context]);
            assert_eq!(listed["ok"]["tasks"][0]["id"], id, "{listed}");

            let events = js_client(&base, TOKEN, binding, &["stream", "streamed", context]);
            let events = events["ok"].as_array().unwrap();
            let text: String = events
                .iter()
                .filter_map(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
                .collect();
            assert_eq!(text, "Served: streamed", "{binding}: {events:?}");
            assert_eq!(
                events.last().unwrap()["statusUpdate"]["status"]["state"],
                "TASK_STATE_COMPLETED",
                "{binding}: closed at the terminal state"
            );

            let refused = js_client(&base, "wrong", binding, &["get", id]);
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{binding}: {refused}"
            );
        }
        assert_eq!(terminate(&mut child), Some(0));
    })
    .await
    .unwrap();
}

#[test]
fn the_served_agent_named_in_both_a2a_and_serve_a2a_is_exit_2_naming_the_keys() {
    let dir = support::temp_dir("serve-both");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[a2a]\nprovider = \"openai\"\n\n[serve.a2a]\nmodel = \"gpt-test\"\n",
    )
    .unwrap();
    let output = support::oscova(&["--config", config.to_str().unwrap(), "plugins"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a2a.provider") && err.contains("serve.a2a.model"),
        "{err}"
    );
}

/// `[auth.oauth]` on `oscova serve`: one authenticator for the port, so an
/// access token from a real authorization server on loopback (npm
/// `oidc-provider`) issued for the port's `/mcp` resource serves both MCP
/// and A2A, and one for another resource is refused by both. The provider
/// is stopped after the A2A calls: MCP then accepts the token only because
/// it shares the issuer's keys that A2A's check fetched (two resource
/// servers would each fetch them, and `/mcp`'s fetch would fail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_access_token_serves_mcp_and_a2a_on_the_port() {
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("serve-oauth");
    let config = write_config(&dir, &model.url());
    let (mut child, base, provider) = tokio::task::spawn_blocking(move || {
        let provider = oscova_test_support::oidc::OidcProvider::start();
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\n[auth.oauth]\nissuer = \"{}\"\nscopes = [\"mcp\"]\n",
            provider.issuer()
        ));
        std::fs::write(&config, text).unwrap();
        let (child, base) = serve(&config);
        (child, base, provider)
    })
    .await
    .unwrap();
    let (good, other) = tokio::task::spawn_blocking({
        let base = base.clone();
        move || {
            let good = provider.token(&format!("{base}/mcp"), "mcp");
            let other = provider.token("http://127.0.0.1:1/mcp", "mcp");
            let sent = client(&base, &good, "JSONRPC", &["send", "hello"]);
            assert_eq!(
                sent["ok"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
                "{sent}"
            );
            let refused = client(&base, &other, "JSONRPC", &["list"]);
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{refused}"
            );
            (good, other)
        }
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    for (token, status) in [(&good, 200), (&other, 401)] {
        let answer = http
            .post(format!("{base}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), status);
    }
    assert_eq!(terminate(&mut child), Some(0));
}

/// `[[serve.a2a.extended_skills]]`: the public card says an extended card
/// exists and lists only the public skills; `GetExtendedAgentCard`, asked
/// by the official Python SDK's client with a token over both bindings,
/// lists the extended skills after them; without a valid token it is
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extended_card_lists_its_skills_to_callers_with_a_token() {
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("serve-extended");
    let config = write_config(&dir, &model.url());
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "\n[[serve.a2a.extended_skills]]\nid = \"expenses\"\nname = \"File expenses\"\n\
         description = \"Files receipts\"\n",
    );
    std::fs::write(&config, text).unwrap();
    tokio::task::spawn_blocking(move || {
        let (mut child, base) = serve(&config);
        let ids = |card: &Value| -> Vec<String> {
            card["skills"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let card = client(&base, TOKEN, "JSONRPC", &["card"]);
        assert_eq!(
            card["ok"]["capabilities"]["extendedAgentCard"], true,
            "{card}"
        );
        assert_eq!(ids(&card["ok"]), ["chat"]);
        for binding in ["JSONRPC", "HTTP+JSON"] {
            let extended = client(&base, TOKEN, binding, &["extended"]);
            assert_eq!(
                ids(&extended["ok"]),
                ["chat", "expenses"],
                "{binding}: {extended}"
            );
            assert_eq!(extended["ok"]["skills"][1]["description"], "Files receipts");
            let refused = client(&base, "wrong", binding, &["extended"]);
            assert!(
                refused["message"].as_str().unwrap().contains("401"),
                "{binding}: {refused}"
            );
        }
        assert_eq!(terminate(&mut child), Some(0));
    })
    .await
    .unwrap();
}

/// Issue 36, finding 1: `oscova serve` on loopback without tokens (every
/// request the default user's) answered A2A requests whose `Host` and
/// `Origin` named a foreign site, while `/mcp` on the same port refused
/// them: a web page whose name was rebound to 127.0.0.1 could run tasks
/// with the user's tools and model key, read every task and register
/// webhooks. One policy now holds every path of the port: a foreign
/// `Host` or `Origin` is 403 on MCP, both A2A bindings, the push config
/// routes and the follow-up route, and the model is never called; the
/// same requests addressed to this machine (or to `[serve] public_url`'s
/// host, which a reverse proxy may pass on) are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_page_reaches_no_path_of_the_port() {
    let model = TestServer::start(openai_reply).await;
    let dir = support::temp_dir("serve-rebinding");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.openai]\nendpoint = \"{}\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [serve]\npublic_url = \"https://agents.example.com\"\n\n\
             [serve.a2a]\nprovider = \"openai\"\n\n\
             [a2a]\npending_dir = \"{}\"\n\n\
             [a2a.agents.far]\nurl = \"http://127.0.0.1:9/far\"\n",
            model.url(),
            dir.join("sessions.db").display(),
            dir.join("a2a").display(),
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    let (mut child, base) = tokio::task::spawn_blocking(move || serve(&config))
        .await
        .unwrap();
    let here = base.trim_start_matches("http://").to_owned();
    let port = here.rsplit(':').next().unwrap().to_owned();
    let http = reqwest::Client::new();
    let message = |text: &str| {
        json!({"message": {"messageId": format!("m-{text}"), "role": "ROLE_USER",
            "parts": [{"text": text}]}})
    };
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": message("hello")});
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let push = json!({"url": "http://evil.example/hook"});
    let routes = [
        ("POST", "/mcp", &initialize),
        ("POST", "/", &rpc),
        ("POST", "/message:send", &message("hello")),
        ("GET", "/tasks", &Value::Null),
        ("POST", "/tasks/t1/pushNotificationConfigs", &push),
        ("POST", "/a2a/followups/t1", &Value::Null),
    ];
    let request = |method: &str, path: &str, body: &Value, host: &str, origin: Option<&str>| {
        let mut request = http
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .header("host", host)
            .header("A2A-Version", "1.0")
            .header("accept", "application/json, text/event-stream");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if !body.is_null() {
            request = request.json(body);
        }
        request.send()
    };
    let rebound = format!("evil.example:{port}");
    let rebound_origin = format!("http://{rebound}");
    let foreign: [(&str, Option<&str>); 3] = [
        (&rebound, Some(&rebound_origin)),
        (&rebound, None),
        (&here, Some("http://evil.example")),
    ];
    for (method, path, body) in routes {
        for (host, origin) in foreign {
            let answer = request(method, path, body, host, origin).await.unwrap();
            assert_eq!(answer.status(), 403, "{method} {path} {host} {origin:?}");
            let text = answer.text().await.unwrap();
            assert!(text.starts_with("Forbidden: the "), "{text}");
        }
    }
    assert!(model.requests().is_empty(), "no refused request ran a task");

    // Addressed to this machine, the same requests are served.
    let sent: Value = request("POST", "/", &rpc, &here, None)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = &sent["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "Served: hello");
    let local_origin = format!("http://localhost:{port}");
    for host in [here.as_str(), "agents.example.com"] {
        let listed = request("GET", "/tasks", &Value::Null, host, Some(&local_origin))
            .await
            .unwrap();
        assert_eq!(listed.status(), 200, "{host}");
        let listed: Value = listed.json().await.unwrap();
        assert_eq!(listed["tasks"][0]["id"], task["id"], "{host}: {listed}");
        // The follow-up route is served: an unknown id is the hook's 401.
        let followup = request("POST", "/a2a/followups/t1", &Value::Null, host, None)
            .await
            .unwrap();
        assert_eq!(followup.status(), 401, "{host}");
    }
    let mcp = request("POST", "/mcp", &initialize, &here, Some(&local_origin))
        .await
        .unwrap();
    assert_eq!(mcp.status(), 200);
    assert_eq!(terminate(&mut child), Some(0));
}
