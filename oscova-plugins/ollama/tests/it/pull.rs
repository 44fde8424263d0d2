//! Model downloads over real HTTP on 127.0.0.1: the catalog, a pull of
//! several layers with progress, a cancellation in the middle, errors, and
//! the offline refusal with zero connections.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::provider::model::{
    DownloadProgress, EndpointScope, ModelError, ModelInfo, ModelProvider, ModelProviderConfig,
    check_offline,
};
use oscova_core::{CancellationToken, SecretString};
use oscova_plugin_ollama::OllamaProvider;
use oscova_test_support::http::{Framing, Reply, TestServer, awkward, closed_port_url};
use oscova_test_support::ollama::{self, LAYERS, ndjson, tags};
use serde_json::{Value, json};

fn config(server: &TestServer) -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("ollama");
    config.endpoint = Some(server.url());
    config
}

fn pull_lines() -> Vec<Value> {
    ollama::pull_lines(&LAYERS)
}

fn expected(line: &Value) -> DownloadProgress {
    DownloadProgress {
        status: line["status"].as_str().unwrap().to_owned(),
        completed: line["completed"].as_u64(),
        total: line["total"].as_u64(),
    }
}

type Seen = Arc<Mutex<Vec<DownloadProgress>>>;

async fn pull(
    config: &ModelProviderConfig,
    model: &str,
    cancel_after: Option<usize>,
) -> (Result<(), ModelError>, Seen) {
    let provider = OllamaProvider::default();
    let downloads = provider.downloads().unwrap();
    let seen: Seen = Arc::default();
    let cancel = CancellationToken::new();
    let record = seen.clone();
    let trigger = cancel.clone();
    let progress = move |p: DownloadProgress| {
        let mut seen = record.lock().unwrap();
        seen.push(p);
        if cancel_after == Some(seen.len()) {
            trigger.cancel();
        }
    };
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        downloads.download(config, None, model, &progress, cancel),
    )
    .await
    .expect("the pull ends");
    (result, seen)
}

#[tokio::test]
async fn a_pull_reports_every_step_of_every_layer() {
    let lines = pull_lines();
    let body = ndjson(&lines);
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Chunked, awkward(&body))
    })
    .await;
    let (result, seen) = pull(&config(&server), "llama3.2", None).await;
    result.unwrap();
    let seen = seen.lock().unwrap();
    let want: Vec<DownloadProgress> = lines.iter().map(expected).collect();
    assert_eq!(*seen, want);
    let layers: std::collections::BTreeSet<_> = seen
        .iter()
        .filter(|p| p.status.starts_with("pulling ") && p.status != "pulling manifest")
        .map(|p| p.status.clone())
        .collect();
    assert_eq!(layers.len(), 3);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", "/api/pull")
    );
    let body = requests[0].json();
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["stream"], true);
}

#[tokio::test]
async fn a_close_delimited_pull_works_too() {
    let body = ndjson(&pull_lines());
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Close, awkward(&body))
    })
    .await;
    let (result, seen) = pull(&config(&server), "llama3.2", None).await;
    result.unwrap();
    assert_eq!(seen.lock().unwrap().last().unwrap().status, "success");
}

#[tokio::test]
async fn cancelling_mid_pull_stops_the_transfer() {
    // The manifest and the first layer's start, then the server stalls as
    // a long download would.
    let lines = pull_lines();
    let body = ndjson(&lines[..4]);
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Chunked, awkward(&body)).hanging()
    })
    .await;
    let (result, seen) = pull(&config(&server), "llama3.2", Some(3)).await;
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "no progress after the cancel"
    );
    assert!(
        server.wait_dropped(Duration::from_secs(10)).await,
        "the server saw the connection dropped"
    );
}

#[tokio::test]
async fn pulling_an_unknown_model_lists_the_installed_ones() {
    let server = TestServer::start(|request| {
        if request.path == "/api/tags" {
            tags()
        } else {
            Reply::stream(
                "application/x-ndjson",
                Framing::Chunked,
                vec![ndjson(&[
                    json!({"status": "pulling manifest"}),
                    json!({"error": "pull model manifest: file does not exist"}),
                ])],
            )
        }
    })
    .await;
    let (result, _) = pull(&config(&server), "no-such-model", None).await;
    match result {
        Err(ModelError::ModelNotFound { model, available }) => {
            assert_eq!(model, "no-such-model");
            assert_eq!(available, ["llama3.2:latest"]);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn other_pull_errors_and_short_streams_are_reported() {
    let server = TestServer::start(|request| {
        let model = request.json()["model"].as_str().unwrap().to_owned();
        let lines = if model == "full-disk" {
            vec![json!({"error": "write /models/blobs: no space left on device"})]
        } else {
            vec![json!({"status": "pulling manifest"})]
        };
        Reply::stream(
            "application/x-ndjson",
            Framing::Chunked,
            vec![ndjson(&lines)],
        )
    })
    .await;
    let (result, _) = pull(&config(&server), "full-disk", None).await;
    let err = result.unwrap_err();
    assert!(err.to_string().contains("no space left on device"), "{err}");
    let (result, _) = pull(&config(&server), "cut-short", None).await;
    assert!(
        matches!(&result, Err(ModelError::Malformed { line, .. }) if line.contains("pulling manifest")),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_catalog_is_the_installed_models_plus_the_listed_ones() {
    let server = TestServer::start(|_| tags()).await;
    let mut config = config(&server);
    config.model = Some("qwen3:8b".into());
    config
        .options
        .insert("catalog".into(), json!(["llama3.2", "phi4-mini"]));
    let provider = OllamaProvider::default();
    let key = SecretString::from("not-needed-but-sent");
    let catalog = provider
        .downloads()
        .unwrap()
        .catalog(&config, Some(&key), CancellationToken::new())
        .await
        .unwrap();
    let want = [
        ("llama3.2:latest", Some(2019393189), true),
        ("phi4-mini", None, false),
        ("qwen3:8b", None, false),
    ];
    let got: Vec<_> = catalog
        .iter()
        .map(
            |ModelInfo {
                 name,
                 size,
                 installed,
                 ..
             }| (name.as_str(), *size, *installed),
        )
        .collect();
    assert_eq!(got, want);
    assert_eq!(server.requests()[0].path, "/api/tags");
}

#[tokio::test]
async fn an_unreachable_server_is_named() {
    let url = closed_port_url().await;
    let mut config = ModelProviderConfig::new("ollama");
    config.endpoint = Some(url.clone());
    let (result, _) = pull(&config, "llama3.2", None).await;
    assert!(
        matches!(&result, Err(ModelError::Unreachable { url: tried, .. }) if tried == &format!("{url}/api/pull")),
        "{result:?}"
    );
}

#[tokio::test]
async fn offline_refusal_comes_before_any_connection() {
    let server = TestServer::start(|_| tags()).await;
    let provider = OllamaProvider::default();
    let mut config = config(&server);
    config.endpoint_scope = Some(EndpointScope::Remote);
    // What a host does before a download: check, and stop on refusal.
    let err = check_offline(&config, &provider, true).unwrap_err();
    assert!(matches!(err, ModelError::NotLocal { .. }), "{err:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.connections(), 0);
    // Without a saved scope the loopback endpoint is local and allowed.
    config.endpoint_scope = None;
    check_offline(&config, &provider, true).unwrap();
}
