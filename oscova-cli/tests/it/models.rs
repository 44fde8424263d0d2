//! `oscova models list|pull` end to end: the real binary against real HTTP
//! servers on 127.0.0.1 speaking Ollama's `/api/tags` and `/api/pull`
//! (NDJSON progress of several layers) and OpenAI's `/v1/models`. Nothing
//! here connects anywhere but 127.0.0.1.

use crate::support;

use std::time::Duration;

use oscova_test_support::http::{Framing, Reply, TestServer, awkward, closed_port_url};
use oscova_test_support::ollama::{self, LAYERS, ndjson, tags};
use serde_json::{Value, json};
use support::{oscova, run_async, temp_dir};

fn pull_lines() -> Vec<Value> {
    ollama::pull_lines(&LAYERS[..2])
}

async fn ollama() -> TestServer {
    TestServer::start(
        |request| match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/api/tags") => tags(),
            ("POST", "/api/pull") => {
                if request.json()["model"] == "broken" {
                    let lines = [
                        json!({"status": "pulling manifest"}),
                        json!({"error": "disk full while writing layer"}),
                    ];
                    Reply::stream(
                        "application/x-ndjson",
                        Framing::Chunked,
                        vec![ndjson(&lines)],
                    )
                } else {
                    Reply::stream(
                        "application/x-ndjson",
                        Framing::Chunked,
                        awkward(&ndjson(&pull_lines())),
                    )
                }
            }
            _ => Reply::json(404, json!({"error": "not found"})),
        },
    )
    .await
}

fn config_file(text: &str) -> String {
    let path = temp_dir("models-config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_installed_and_configured_models() {
    let server = ollama().await;
    let config = config_file(&format!(
        "[providers.ollama]\nendpoint = \"{}\"\noptions = {{ catalog = [\"qwen3\"] }}\n",
        server.url()
    ));
    let (code, out, err) = run_async(
        oscova(&[
            "--json",
            "--config",
            &config,
            "models",
            "list",
            "--provider",
            "ollama",
        ]),
        None,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["provider"], "ollama");
    assert_eq!(
        doc["models"],
        json!([
            {"name": "llama3.2:latest", "size": 2_019_393_189u64, "installed": true},
            {"name": "qwen3", "installed": false},
        ])
    );

    let (code, out, _) = run_async(
        oscova(&[
            "--config",
            &config,
            "models",
            "list",
            "--provider",
            "ollama",
        ]),
        None,
    )
    .await;
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("llama3.2:latest") && lines[0].ends_with("  installed"),
        "{out}"
    );
    assert!(lines[0].contains("GiB"), "{out}");
    assert!(
        lines[1].starts_with("qwen3") && lines[1].ends_with("not installed"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_asks_an_openai_server_for_its_models() {
    let server = TestServer::start(|request| {
        assert_eq!(request.path, "/v1/models");
        assert_eq!(
            request.header("authorization"),
            Some("Bearer sk-models-0123456789")
        );
        Reply::json(
            200,
            json!({"object": "list", "data": [
                {"id": "gpt-b", "object": "model"}, {"id": "gpt-a", "object": "model"},
            ]}),
        )
    })
    .await;
    let mut cmd = oscova(&[
        "--json",
        "models",
        "list",
        "--provider",
        "openai",
        "--endpoint",
        &server.url(),
    ]);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-models-0123456789");
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gpt-a", "gpt-b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_prints_plain_progress_lines_off_a_terminal() {
    let server = ollama().await;
    let cmd = oscova(&[
        "models",
        "pull",
        "llama3.2",
        "--endpoint",
        &server.url(),
        "--offline",
        "--provider",
        "ollama",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "pulled llama3.2\n");
    let lines: Vec<&str> = err.lines().collect();
    for expected in [
        "pulling manifest",
        "pulling dde5aa3fc5ff: 1.88 GiB",
        "pulling dde5aa3fc5ff: 1.88 GiB of 1.88 GiB, done",
        "pulling 966de95ca8a6: 1.40 KiB of 1.40 KiB, done",
        "verifying sha256 digest",
        "writing manifest",
        "success",
    ] {
        assert!(lines.contains(&expected), "missing {expected:?} in\n{err}");
    }
    assert!(
        !err.contains('\r') && !err.contains('\x1b'),
        "no terminal codes off a terminal"
    );
    let sent = server.requests()[0].json();
    assert_eq!(
        (&sent["model"], &sent["stream"]),
        (&json!("llama3.2"), &json!(true))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_with_json_prints_every_step_as_a_json_line() {
    let server = ollama().await;
    let cmd = oscova(&[
        "--json",
        "models",
        "pull",
        "llama3.2",
        "--endpoint",
        &server.url(),
        "--provider",
        "ollama",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{err}");
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (done, progress) = docs.split_last().unwrap();
    assert_eq!(
        *done,
        json!({"event": "done", "provider": "ollama", "model": "llama3.2"})
    );
    let expected: Vec<Value> = pull_lines()
        .iter()
        .map(|l| json!({"event": "progress", "status": l["status"], "completed": l["completed"], "total": l["total"]}))
        .collect();
    assert_eq!(progress, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_error_from_the_server_fails_with_its_words() {
    let server = ollama().await;
    let cmd = oscova(&[
        "models",
        "pull",
        "broken",
        "--endpoint",
        &server.url(),
        "--provider",
        "ollama",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("disk full while writing layer"), "{err}");
    assert!(!out.contains("pulled"), "{out}");

    let cmd = oscova(&[
        "--json",
        "models",
        "pull",
        "broken",
        "--endpoint",
        &server.url(),
        "--provider",
        "ollama",
    ]);
    let (code, out, _) = run_async(cmd, None).await;
    assert_eq!(code, 1);
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["error"]["exit_code"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_refuses_a_remote_scope_with_zero_connections() {
    let server = ollama().await;
    let config = config_file(&format!(
        "[providers.ollama]\nendpoint = \"{}\"\nendpoint_scope = \"remote\"\n",
        server.url()
    ));
    for args in [
        &["models", "list", "--provider", "ollama"][..],
        &["models", "pull", "llama3.2", "--provider", "ollama"],
    ] {
        let mut all = vec!["--json", "--config", &config];
        all.extend_from_slice(args);
        all.push("--offline");
        let (code, out, _) = run_async(oscova(&all), None).await;
        assert_eq!(code, 3, "{args:?}: {out}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["error"]["kind"], "not_local");
    }
    assert_eq!(server.connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_endpoint_fails_naming_the_url() {
    let url = closed_port_url().await;
    for args in [
        &["models", "list", "--provider", "ollama"][..],
        &["models", "pull", "llama3.2", "--provider", "ollama"],
    ] {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--endpoint", &url]);
        let (code, _, err) = run_async(oscova(&all), None).await;
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(&url) && err.contains("cannot reach"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulling_needs_a_provider_that_downloads() {
    let url = closed_port_url().await;
    let cmd = oscova(&[
        "models",
        "pull",
        "gpt-4o",
        "--provider",
        "openai",
        "--endpoint",
        &url,
    ]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot download models"), "{err}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_pull_and_drops_the_connection() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let server = TestServer::start(|_| {
        let lines = &pull_lines()[..4];
        Reply::stream(
            "application/x-ndjson",
            Framing::Chunked,
            vec![ndjson(lines)],
        )
        .hanging()
    })
    .await;
    let cmd = oscova(&[
        "--json",
        "models",
        "pull",
        "llama3.2",
        "--endpoint",
        &server.url(),
        "--provider",
        "ollama",
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(std::process::Stdio::piped()).kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(first.contains("pulling manifest"), "{first}");
    support::interrupt(child.id().unwrap());
    let mut rest = Vec::new();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await
    {
        rest.push(line);
    }
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["error"]["kind"], "cancelled");
    assert!(server.wait_dropped(Duration::from_secs(10)).await);
}
