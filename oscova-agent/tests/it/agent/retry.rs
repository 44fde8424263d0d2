//! A failed model call keeps what was sent, and `retry` asks again
//! without sending the person's message twice.

use oscova_agent::session::agent::*;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;

use super::*;

#[tokio::test]
async fn a_failed_model_call_says_what_was_kept_and_retry_sends_the_message_once() {
    // The script is empty: the first call fails.
    let script = Script::new([]);
    let (builder, _store) = agents(&script);
    let agents = builder.build().unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "retry", AgentSessionOptions::new())
        .await
        .unwrap();

    let error = session.prompt("Plan a trip to Lisbon").await.unwrap_err();
    assert!(
        matches!(error, AgentError::ModelCall { .. }),
        "a provider failure is a model call error: {error:?}"
    );
    assert_eq!(error.kind(), "model");
    let said = error.to_string();
    assert!(said.contains("script ended"), "the cause: {said}");
    assert!(
        said.contains("keeps everything before the model call") && said.contains("retry"),
        "what was kept and how to retry: {said}"
    );
    let kept = session.session().await.chat_messages();
    assert_eq!(kept.len(), 1, "the message is kept: {kept:?}");
    assert_eq!(kept[0].content, "Plan a trip to Lisbon");

    script
        .replies
        .lock()
        .unwrap()
        .push_back(ChatMessage::assistant("Three days in Lisbon.", vec![]));
    let outcome = session.retry().await.unwrap();
    assert_eq!(outcome.text, "Three days in Lisbon.");
    let (sent, _) = script.seen(1);
    let users: Vec<&ChatMessage> = sent.iter().filter(|m| m.role == ChatRole::User).collect();
    assert_eq!(users.len(), 1, "the message went once: {sent:?}");
    let kept = session.session().await.chat_messages();
    assert_eq!(kept.len(), 2, "{kept:?}");

    // Nothing waits for the model now.
    assert!(matches!(
        session.retry().await,
        Err(AgentError::NothingToRetry)
    ));
    assert_eq!(
        script.calls(),
        2,
        "nothing was asked for a retry with nothing to do"
    );
}

#[tokio::test]
async fn retry_after_a_tool_round_asks_again_with_the_results() {
    let script = Script::new([ChatMessage::assistant(
        "",
        vec![call("c1", ECHO, json!({"text": "hi"}))],
    )]);
    let (builder, _store) = agents(&script);
    let agents = builder.build().unwrap();
    let mut session = agents
        .session(
            UserInfo::new("alice"),
            "retry-tools",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    // The tool ran; the model call after it fails (the script ended).
    let error = session.prompt("Echo hi").await.unwrap_err();
    assert!(matches!(error, AgentError::ModelCall { .. }), "{error:?}");
    script
        .replies
        .lock()
        .unwrap()
        .push_back(ChatMessage::assistant("It said hi.", vec![]));
    let outcome = session.retry().await.unwrap();
    assert_eq!(outcome.text, "It said hi.");
    let (sent, _) = script.seen(2);
    assert!(
        sent.iter()
            .any(|m| m.role == ChatRole::Tool && m.content.contains("hi")),
        "the tool's result is in the retried context: {sent:?}"
    );
    assert_eq!(
        sent.iter().filter(|m| m.role == ChatRole::User).count(),
        1,
        "{sent:?}"
    );
}
