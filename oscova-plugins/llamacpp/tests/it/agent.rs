//! The agent layer on the real model: a stored session that calls a tool,
//! survives a restart and is compacted by the model's own summary.

use std::path::Path;
use std::sync::Arc;

use oscova_agent::session::SqliteStore;
use oscova_agent::session::agent::{AgentHost, AgentSession, AgentSessionOptions};
use oscova_agent::session::compaction::CompactionSettings;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatRole, ModelProviderConfig};
use serde_json::json;

use crate::support::{config, host};

/// Alice's session `trip` in the store at `path`, as a process opens it.
async fn open(path: &Path, config: &ModelProviderConfig) -> AgentSession {
    let store = Arc::new(SqliteStore::open(path).await.unwrap());
    let agents = AgentHost::builder(host(), store)
        .model(config.clone())
        .offline(true)
        .build()
        .unwrap();
    let options = AgentSessionOptions::new().model("llamacpp", None);
    agents
        .session(UserInfo::new("alice"), "trip", options)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_calls_a_tool_survives_a_restart_and_is_compacted_by_the_model() {
    let mut config = config().await;
    config.options.insert("max_tokens".into(), json!(200));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");

    // First process: a prompt that needs the time tool, stored as it runs.
    {
        let mut session = open(&path, &config).await;
        let outcome = session.prompt("What time is it in Tokyo?").await.unwrap();
        assert_eq!(outcome.tool_calls, 1, "{outcome:?}");
        assert!(outcome.text.contains("12:15"), "{}", outcome.text);
        session.shutdown().await;
    }

    // Second process: the session resumes from the store; the model sees
    // the earlier turn and answers a question about it.
    let mut session = open(&path, &config).await;
    let before = session.context().await.chat_messages();
    assert!(
        before
            .iter()
            .any(|m| m.role == ChatRole::Tool && m.content.contains("12:15"))
    );
    let outcome = session
        .prompt("Which city did I ask about? Answer with its name only.")
        .await
        .unwrap();
    assert!(outcome.text.contains("Tokyo"), "{}", outcome.text);
    let messages = session.context().await.chat_messages();
    let users = messages.iter().filter(|m| m.role == ChatRole::User).count();
    assert_eq!(users, 2, "{messages:?}");

    // Compaction: the model writes the summary of the older part.
    let settings = CompactionSettings::new(4_000)
        .with_reserve_tokens(100)
        .with_keep_recent_tokens(40);
    let done = session
        .compact(&settings, None)
        .await
        .unwrap()
        .expect("compacted");
    assert!(done.entries_summarized > 0);
    assert!(done.summary.len() > 40, "{}", done.summary);
    assert!(done.tokens_after < done.tokens_before, "{done:?}");
    let after = session
        .prompt("Thanks! Say goodbye in one word.")
        .await
        .unwrap();
    assert!(!after.text.trim().is_empty());
    session.shutdown().await;
}
