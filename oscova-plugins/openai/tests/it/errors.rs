//! Every error a user can act on, over real HTTP on 127.0.0.1, and the
//! offline refusal that makes no connection at all.

use std::time::Duration;

use oscova_agent::chat::{ChatError, ChatLoopOptions, run_chat};
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatStreamEvent, EndpointScope, ModelError, ModelProvider,
    ModelProviderConfig,
};
use oscova_core::{CancellationToken, SecretString};
use oscova_plugin_openai::OpenAiProvider;
use oscova_test_kit::http::{Framing, Reply, TestServer, awkward, closed_port_url};
use serde_json::json;

const KEY: &str = "sk-test-secret-key-42";

fn provider() -> OpenAiProvider {
    OpenAiProvider::new(HttpClient::shared_default())
}

fn config(endpoint: &str, model: &str) -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("openai");
    config.endpoint = Some(endpoint.to_owned());
    config.model = Some(model.to_owned());
    config
}

/// One chat call with the key, streamed through `sink` when given.
async fn chat(
    config: &ModelProviderConfig,
    sink: Option<&(dyn Fn(ChatStreamEvent) + Send + Sync)>,
    cancel: CancellationToken,
) -> Result<String, ModelError> {
    let key = SecretString::from(KEY);
    let messages = [ChatMessage::user("hi")];
    let request = ChatRequest {
        config,
        api_key: Some(&key),
        model: config.model.as_deref().unwrap(),
        messages: &messages,
        tools: &[],
        stream: sink,
        cancel,
    };
    let answer = provider().chat(request).await?;
    Ok(answer.message.content)
}

fn no_sink(_: ChatStreamEvent) {}

fn assert_no_key(error: &ModelError) {
    assert!(!error.to_string().contains(KEY), "{error}");
    assert!(!format!("{error:?}").contains(KEY), "{error:?}");
}

#[tokio::test]
async fn unreachable_server_names_the_url() {
    let url = closed_port_url().await;
    let err = chat(&config(&url, "m"), None, CancellationToken::new())
        .await
        .unwrap_err();
    match &err {
        ModelError::Unreachable { url: tried, .. } => {
            assert_eq!(tried, &format!("{url}/v1/chat/completions"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(&url), "{err}");
    assert_no_key(&err);
}

#[tokio::test]
async fn a_401_points_at_the_key_without_showing_it() {
    let server = TestServer::start(|_| {
        Reply::json(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}."),
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
        )
    })
    .await;
    let err = chat(&config(&server.url(), "m"), None, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Unauthorized { .. }), "{err:?}");
    assert!(err.to_string().contains("API key"), "{err}");
    assert_no_key(&err);
}

#[tokio::test]
async fn an_unknown_model_lists_the_models_the_server_has() {
    let server = TestServer::start(|request| {
        if request.method == "GET" && request.path == "/v1/models" {
            Reply::json(
                200,
                json!({"object": "list", "data": [
                    {"id": "gpt-4o-mini", "object": "model", "owned_by": "system"},
                    {"id": "gpt-4o", "object": "model", "owned_by": "system"},
                ]}),
            )
        } else {
            Reply::json(
                404,
                json!({"error": {
                    "message": "The model `gpt-9` does not exist or you do not have access to it.",
                    "type": "invalid_request_error", "param": null, "code": "model_not_found"}}),
            )
        }
    })
    .await;
    let err = chat(
        &config(&server.url(), "gpt-9"),
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    match &err {
        ModelError::ModelNotFound { model, available } => {
            assert_eq!(model, "gpt-9");
            assert_eq!(available, &["gpt-4o", "gpt-4o-mini"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("gpt-4o, gpt-4o-mini"), "{err}");
    let auth = server.requests()[1]
        .header("authorization")
        .map(str::to_owned);
    assert_eq!(
        auth,
        Some(format!("Bearer {KEY}")),
        "the list is asked with the key"
    );
}

#[tokio::test]
async fn a_404_that_is_not_about_the_model_is_a_status() {
    let server = TestServer::start(|_| Reply::json(404, json!({"detail": "Not Found"}))).await;
    let err = chat(&config(&server.url(), "m"), None, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Status { status: 404, body } if body.contains("Not Found")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_malformed_stream_names_the_offending_line() {
    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n\
               data: {\"choices\": [ broken\n\n";
    let server = TestServer::start(move |_| {
        Reply::stream(
            "text/event-stream",
            Framing::Chunked,
            awkward(sse.as_bytes()),
        )
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    match &err {
        ModelError::Malformed { line, .. } => assert_eq!(line, "data: {\"choices\": [ broken"),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("data: {\"choices\": [ broken"),
        "{err}"
    );
}

#[tokio::test]
async fn a_stream_cut_short_is_malformed() {
    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n";
    let server = TestServer::start(move |_| {
        Reply::stream("text/event-stream", Framing::Close, awkward(sse.as_bytes()))
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ModelError::Malformed { message, .. } if message.contains("[DONE]")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported() {
    let sse =
        "data: {\"error\":{\"message\":\"overloaded, retry later\",\"type\":\"server_error\"}}\n\n";
    let server = TestServer::start(move |_| {
        Reply::stream("text/event-stream", Framing::Chunked, vec![sse.into()])
    })
    .await;
    let err = chat(
        &config(&server.url(), "m"),
        Some(&no_sink),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("overloaded, retry later"), "{err}");
}

#[tokio::test]
async fn other_statuses_keep_the_body_without_the_key() {
    let server = TestServer::start(|_| {
        Reply::json(
            500,
            json!({"error": {"message": format!("boom with {KEY}")}}),
        )
    })
    .await;
    let err = chat(&config(&server.url(), "m"), None, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Status { status: 500, body } if body.contains("boom with [REDACTED]")),
        "{err:?}"
    );
    assert_no_key(&err);
}

#[tokio::test]
async fn cancelling_mid_stream_drops_the_connection() {
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Once upon\"}}]}\n\n";
    let server = TestServer::start(move |_| {
        Reply::stream("text/event-stream", Framing::Chunked, vec![first.into()]).hanging()
    })
    .await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let sink = move |event: ChatStreamEvent| {
        if matches!(event, ChatStreamEvent::Text(_)) {
            trigger.cancel();
        }
    };
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        chat(&config(&server.url(), "m"), Some(&sink), cancel),
    )
    .await
    .expect("the cancel ends the call")
    .unwrap_err();
    assert!(matches!(err, ModelError::Cancelled), "{err:?}");
    assert!(
        server.wait_dropped(Duration::from_secs(10)).await,
        "the server saw the connection dropped"
    );
}

#[tokio::test]
async fn offline_refusal_makes_no_connection() {
    let server = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![
            oscova_plugin_openai::OpenAiPlugin
        ])
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = oscova_agent::chat::model_provider(&host, "openai").unwrap();
    let mut config = config(&server.url(), "m");
    config.endpoint_scope = Some(EndpointScope::Remote); // the saved choice wins
    let mut messages = vec![ChatMessage::user("hi")];
    let key = SecretString::from(KEY);
    let options = ChatLoopOptions::new().offline(true);
    let err = run_chat(&scope, &*provider, &config, &mut messages)
        .api_key(&key)
        .options(options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ChatError::Model(ModelError::NotLocal { endpoint }) if endpoint == &server.url()),
        "{err:?}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.connections(), 0);

    // The default endpoint is remote, so offline refuses it too.
    let mut config = ModelProviderConfig::new("openai");
    config.model = Some("m".into());
    let options = ChatLoopOptions::new().offline(true);
    let err = run_chat(&scope, &*provider, &config, &mut messages)
        .options(options)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("offline"), "{err}");
}

#[test]
fn debug_output_never_shows_the_key() {
    let config = config("http://127.0.0.1:1", "m");
    let key = SecretString::from(KEY);
    let messages = [ChatMessage::user("hi")];
    let request = ChatRequest {
        config: &config,
        api_key: Some(&key),
        model: "m",
        messages: &messages,
        tools: &[],
        stream: None,
        cancel: CancellationToken::new(),
    };
    assert!(!format!("{request:?}").contains(KEY));
    assert!(!format!("{:?}", provider()).contains(KEY));
}
