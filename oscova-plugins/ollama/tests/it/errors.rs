//! Every chat error a user can act on, over real HTTP on 127.0.0.1, and the
//! offline refusal that makes no connection at all.

use std::time::Duration;

use oscova_agent::chat::{ChatError, ChatLoopOptions, model_provider, run_chat};
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatStreamEvent, EndpointScope, ModelError, ModelProvider,
    ModelProviderConfig,
};
use oscova_core::{CancellationToken, SecretString};
use oscova_plugin_ollama::{OllamaPlugin, OllamaProvider};
use oscova_test_kit::http::{Framing, Reply, TestServer, awkward, closed_port_url};
use serde_json::json;

const KEY: &str = "proxy-secret-token-77";

fn config(endpoint: &str, model: &str) -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("ollama");
    config.endpoint = Some(endpoint.to_owned());
    config.model = Some(model.to_owned());
    config
}

async fn chat(
    config: &ModelProviderConfig,
    key: Option<&SecretString>,
    sink: Option<&(dyn Fn(ChatStreamEvent) + Send + Sync)>,
    cancel: CancellationToken,
) -> Result<String, ModelError> {
    let messages = [ChatMessage::user("hi")];
    let request = ChatRequest {
        config,
        api_key: key,
        model: config.model.as_deref().unwrap(),
        messages: &messages,
        tools: &[],
        stream: sink,
        cancel,
    };
    let provider = OllamaProvider::default();
    Ok(provider.chat(request).await?.message.content)
}

fn no_sink(_: ChatStreamEvent) {}

fn tags() -> Reply {
    Reply::json(
        200,
        json!({"models": [
            {"name": "qwen3:8b", "model": "qwen3:8b", "modified_at": "2025-05-01T10:00:00Z",
             "size": 5225388164u64, "digest": "500a1f067a9f", "details": {"family": "qwen3"}},
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2025-04-01T10:00:00Z",
             "size": 2019393189u64, "digest": "a80c4f17acd5", "details": {"family": "llama"}},
        ]}),
    )
}

#[tokio::test]
async fn unreachable_server_names_the_url() {
    let url = closed_port_url().await;
    let err = chat(&config(&url, "m"), None, None, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Unreachable { url: tried, .. } if tried == &format!("{url}/api/chat")),
        "{err:?}"
    );
    assert!(err.to_string().contains(&url), "{err}");
}

#[tokio::test]
async fn a_401_points_at_the_key_without_showing_it() {
    let server = TestServer::start(|_| {
        Reply::json(
            401,
            json!({"error": format!("unauthorized: bad token {KEY}")}),
        )
    })
    .await;
    let key = SecretString::from(KEY);
    let err = chat(
        &config(&server.url(), "m"),
        Some(&key),
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ModelError::Unauthorized { .. }), "{err:?}");
    assert!(!err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY));
    let auth = server.requests()[0]
        .header("authorization")
        .map(str::to_owned);
    assert_eq!(auth, Some(format!("Bearer {KEY}")));
}

#[tokio::test]
async fn an_unknown_model_lists_the_installed_ones() {
    let server = TestServer::start(|request| {
        if request.path == "/api/tags" {
            tags()
        } else {
            Reply::json(
                404,
                json!({"error": "model \"llama9\" not found, try pulling it first"}),
            )
        }
    })
    .await;
    let err = chat(
        &config(&server.url(), "llama9"),
        None,
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    match &err {
        ModelError::ModelNotFound { model, available } => {
            assert_eq!(model, "llama9");
            assert_eq!(available, &["llama3.2:latest", "qwen3:8b"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("llama3.2:latest, qwen3:8b"),
        "{err}"
    );
    let paths: Vec<_> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/api/chat", "/api/tags"]);
}

#[tokio::test]
async fn a_malformed_line_is_named() {
    let body = "{\"message\":{\"role\":\"assistant\",\"content\":\"Hé\"},\"done\":false}\n\
                {\"message\": {\"content\": oops}\n";
    let server = TestServer::start(move |_| {
        Reply::stream(
            "application/x-ndjson",
            Framing::Chunked,
            awkward(body.as_bytes()),
        )
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        None,
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ModelError::Malformed { line, .. } if line == "{\"message\": {\"content\": oops}"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_without_done_is_malformed() {
    let body = "{\"message\":{\"role\":\"assistant\",\"content\":\"par\"},\"done\":false}\n";
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Close, vec![body.into()])
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        None,
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ModelError::Malformed { message, .. } if message.contains("done")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_error_line_mid_stream_is_reported() {
    let body = "{\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n\
                {\"error\":\"an unknown error was encountered while running the model\"}\n";
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Chunked, vec![body.into()])
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        None,
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("while running the model"), "{err}");
}

#[tokio::test]
async fn cancelling_mid_answer_drops_the_connection() {
    let first = "{\"message\":{\"role\":\"assistant\",\"content\":\"Once\"},\"done\":false}\n";
    let server = TestServer::start(move |_| {
        Reply::stream("application/x-ndjson", Framing::Chunked, vec![first.into()]).hanging()
    })
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let sink = move |_: ChatStreamEvent| trigger.cancel();
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        chat(&config(&server.url(), "m"), None, Some(&sink), cancel),
    )
    .await
    .expect("the cancel ends the call")
    .unwrap_err();
    assert!(matches!(err, ModelError::Cancelled), "{err:?}");
    assert!(server.wait_dropped(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn offline_refusal_makes_no_connection() {
    let server = TestServer::start(|_| tags()).await;
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![OllamaPlugin])
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = model_provider(&host, "ollama").unwrap();
    let mut config = config(&server.url(), "m");
    // Loopback, but the saved scope says remote, and the saved choice wins.
    config.endpoint_scope = Some(EndpointScope::Remote);
    let mut messages = vec![ChatMessage::user("hi")];
    let options = ChatLoopOptions::new().offline(true);
    let err = run_chat(&scope, &*provider, &config, &mut messages)
        .options(options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ChatError::Model(ModelError::NotLocal { .. })),
        "{err:?}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.connections(), 0);
}
