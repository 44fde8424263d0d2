//! pi's session files both ways, judged by the real pi package
//! (`scripts/ensure-pi.sh`): pi's `parseSessionEntries` and
//! `buildSessionContext` rebuild from our export the context our session
//! builds, and a file pi's own `SessionManager` wrote imports with the
//! context pi builds from it; pi's `prepareCompaction` prepares the
//! compaction of our export as ours does, and rebuilds the context after
//! ours.

use std::sync::Arc;

use oscova_agent::session::{
    ContextReplacement, EntryKind, MemoryStore, MessageContent, ModelView, Session, SessionStore,
    SqliteStore, pi,
};
use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest};
use serde_json::{Value, json};

use oscova_agent::session::AgentMessage;
use oscova_agent::session::compaction::{
    CompactionSettings, Summarizer, compact_now, context_tokens, prepare_compaction,
    serialize_conversation,
};

use super::compaction::{call, config, four_turns, provider, summarizing_server, two_turns};

/// Our context as pi writes its own: `{messages, thinkingLevel, model}`.
fn as_pi(context: &ModelView) -> Value {
    json!({
        "messages": serde_json::to_value(&context.messages).unwrap(),
        "thinkingLevel": context.thinking_level,
        "model": context.model.as_ref().map(|m| json!({"provider": m.provider, "modelId": m.model_id})),
    })
}

async fn rich_session(store: Arc<dyn SessionStore>) -> Session {
    let mut s = Session::create(store, UserInfo::new("alice"), "rich")
        .await
        .unwrap();
    s.append_all(vec![
        EntryKind::ModelChange {
            provider: "ollama".into(),
            model_id: "llama3.2".into(),
        },
        EntryKind::ThinkingLevelChange {
            thinking_level: "medium".into(),
        },
    ])
    .await
    .unwrap();
    let call = ToolCallRequest {
        id: "call-1".into(),
        name: "time__clock__now".into(),
        arguments: json!({"zone": "Asia/Tokyo"}),
    };
    let ids = s
        .append_chat(&[
            ChatMessage::system("Be brief."),
            ChatMessage::user("Time in Tokyo?"),
            ChatMessage::assistant("", vec![call]),
            ChatMessage::tool("call-1", "12:00"),
            ChatMessage::assistant("It is noon.", vec![]),
        ])
        .await
        .unwrap();
    s.append_all(vec![
        EntryKind::Custom {
            custom_type: "counter".into(),
            data: Some(json!({"count": 1})),
        },
        EntryKind::CustomMessage {
            custom_type: "reminder".into(),
            content: MessageContent::Text("Remember the milk.".into()),
            details: Some(json!({"why": "not for the model"})),
            display: true,
        },
        EntryKind::Label {
            target_id: ids[1].clone(),
            label: Some("start".into()),
        },
    ])
    .await
    .unwrap();
    // Back to the question, with a summary of the branch left behind.
    let summary = s
        .fork_with_summary(Some(&ids[1]), "Asked the clock; it said noon.")
        .await
        .unwrap();
    let paris = s
        .append_chat(&[
            ChatMessage::user("And in Paris?"),
            ChatMessage::assistant("Four.", vec![]),
        ])
        .await
        .unwrap();
    s.append_all(vec![
        EntryKind::Compaction {
            summary: "Tokyo and Paris times were asked.".into(),
            first_kept_entry_id: summary,
            tokens_before: 1234,
            details: None,
            usage: None,
            from_hook: None,
            system_message: None,
        },
        EntryKind::ContextEdit {
            target_id: paris[1].clone(),
            replacement: Some(ContextReplacement {
                content: MessageContent::Text("Four in the morning.".into()),
            }),
        },
        EntryKind::SessionInfo {
            name: Some("clock questions".into()),
        },
    ])
    .await
    .unwrap();
    s.append_chat(&[ChatMessage::user("Thanks!")])
        .await
        .unwrap();
    s
}

#[tokio::test]
async fn pi_builds_the_same_context_from_our_export() {
    let session = rich_session(Arc::new(MemoryStore::new())).await;
    let ours = session.context();
    // The branch summary, the kept entries, the edit and the custom
    // message are all in play; the custom entry is not.
    let texts: Vec<String> = ours
        .chat_messages()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(texts.len(), 5, "{texts:?}");
    assert!(texts[0].contains("Tokyo and Paris times were asked."));
    assert!(texts[1].contains("Asked the clock; it said noon."));
    assert_eq!(
        &texts[2..],
        ["And in Paris?", "Four in the morning.", "Thanks!"]
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    std::fs::write(&file, pi::export(&session, "/project").unwrap()).unwrap();
    let theirs = oscova_test_support::pi::context(&file, 1);
    assert_eq!(theirs["header"]["version"], 3);
    assert_eq!(theirs["header"]["id"], session.id().as_str());
    assert_eq!(theirs["context"], as_pi(&ours));
}

#[tokio::test]
async fn a_branch_left_for_an_earlier_entry_exports_at_that_leaf() {
    let mut session = rich_session(Arc::new(MemoryStore::new())).await;
    // Back to the system message: pi must resume there too.
    let first_message = session.entries()[2].id.clone();
    session.fork(Some(&first_message)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    std::fs::write(&file, pi::export(&session, "/project").unwrap()).unwrap();
    let theirs = oscova_test_support::pi::context(&file, 1);
    assert_eq!(theirs["context"], as_pi(&session.context()));
    assert_eq!(theirs["context"]["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_pi_wrote_imports_with_the_context_pi_builds() {
    let dir = tempfile::tempdir().unwrap();
    let written = oscova_test_support::pi::write_session(dir.path());
    let text = std::fs::read_to_string(written["file"].as_str().unwrap()).unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(
        SqliteStore::open(dir.path().join("sessions.db"))
            .await
            .unwrap(),
    );
    let session = pi::import(store.clone(), UserInfo::new("alice"), "from pi", &text)
        .await
        .unwrap();
    assert_eq!(as_pi(&session.context()), written["context"]);
    assert_eq!(session.display_name(), Some("clock questions"));
    let tree = session.tree();
    assert_eq!(tree.branches().len(), 2);
    let question = session
        .entries()
        .iter()
        .find(|e| matches!(&e.kind, EntryKind::Message { message } if serde_json::to_value(message).unwrap()["content"] == "Time in Tokyo?"))
        .unwrap();
    assert_eq!(tree.label(&question.id), Some("start"));
    // And back: pi reads our export of it as it read its own file.
    let file = dir.path().join("again.jsonl");
    std::fs::write(&file, pi::export(&session, "/project").unwrap()).unwrap();
    assert_eq!(
        oscova_test_support::pi::context(&file, 1)["context"],
        written["context"]
    );
}

#[test]
fn a_line_cut_by_a_crash_is_skipped_as_pi_skips_it() {
    let text = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2024-12-03T14:00:00.000Z\",\"cwd\":\"/\"}\n\
        {\"type\":\"session_info\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2024-12-03T14:00:00.000Z\",\"name\":\"x\"}\n\
        {\"type\":\"message\",\"id\":\"a2\",\"par";
    let file = pi::parse(text).unwrap();
    assert_eq!((file.entries.len(), file.skipped_lines), (1, 1));
    assert!(pi::parse("{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"t\"}\n").is_err());
}

/// Exports `s` and runs pi's own preparation on it.
fn pis_compaction(s: &Session, keep: u64) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    std::fs::write(&file, pi::export(s, "/project").unwrap()).unwrap();
    oscova_test_support::pi::compaction(&file, keep, 16_384)
}

/// Our preparation and pi's agree, field for field, at every budget.
fn assert_same_preparation(s: &Session, budgets: &[u64]) {
    for &keep in budgets {
        let settings = CompactionSettings::new(100_000).with_keep_recent_tokens(keep);
        let ours = prepare_compaction(&s.branch(), &settings);
        let theirs = pis_compaction(s, keep);
        let Some(ours) = ours else {
            assert_eq!(theirs["preparation"], Value::Null, "keep {keep}");
            continue;
        };
        let p = &theirs["preparation"];
        assert_eq!(
            p["firstKeptEntryId"],
            ours.first_kept_entry_id.as_str(),
            "keep {keep}"
        );
        assert_eq!(p["isSplitTurn"], ours.is_split_turn, "keep {keep}");
        assert_eq!(p["tokensBefore"], ours.tokens_before, "keep {keep}");
        assert_eq!(
            p["previousSummary"].as_str(),
            ours.previous_summary.as_deref(),
            "keep {keep}"
        );
        assert_eq!(
            p["messagesToSummarize"],
            serde_json::to_value(&ours.messages_to_summarize).unwrap(),
            "keep {keep}"
        );
        assert_eq!(
            p["turnPrefixMessages"],
            serde_json::to_value(&ours.turn_prefix_messages).unwrap(),
            "keep {keep}"
        );
        assert_eq!(p["readFiles"], json!(ours.read_files), "keep {keep}");
        assert_eq!(
            p["modifiedFiles"],
            json!(ours.modified_files),
            "keep {keep}"
        );
        // The transcripts the summarising requests carry.
        assert_eq!(
            theirs["historyText"],
            serialize_conversation(&ours.messages_to_summarize),
            "keep {keep}"
        );
        assert_eq!(
            theirs["prefixText"],
            serialize_conversation(&ours.turn_prefix_messages),
            "keep {keep}"
        );
    }
}

#[tokio::test]
async fn pi_prepares_the_same_compaction_and_rebuilds_the_compacted_context() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = two_turns().await;
    s.append_chat(&[
        ChatMessage::user("now edit it"),
        ChatMessage::assistant(
            "",
            vec![call("c4", "edit", json!({"path": "a.txt", "text": "ü€😀"}))],
        ),
        ChatMessage::tool("c4", format!("done {}", "😀".repeat(1500))),
        ChatMessage::assistant("Edited.", vec![]),
    ])
    .await
    .unwrap();
    // Budgets from one message kept to everything kept: cuts on user and
    // assistant messages, split turns, a tool result past pi's 2,000
    // characters.
    assert_same_preparation(&s, &[1, 10, 30, 50, 100, 300, 900, 1200, 5000]);

    let settings = CompactionSettings::new(1000).with_keep_recent_tokens(50);
    let summarizer = Summarizer::new(&provider, &config);
    compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    std::fs::write(&file, pi::export(&s, "/project").unwrap()).unwrap();
    let theirs = oscova_test_support::pi::context(&file, 1);
    let ours = s.context();
    assert_eq!(
        theirs["context"]["messages"],
        serde_json::to_value(&ours.messages).unwrap()
    );
    assert!(
        matches!(&ours.messages[0], AgentMessage::System(m) if m.content.text() == "Be brief."),
        "the system prompt leads: {:?}",
        ours.messages[0]
    );

    // After it: pi carries our summary into its next preparation as we do.
    s.append_chat(&[
        ChatMessage::user(format!("one more {}", "m".repeat(300))),
        ChatMessage::assistant("Sure.", vec![]),
    ])
    .await
    .unwrap();
    assert_same_preparation(&s, &[1, 20, 100, 1000, 5000]);
}

#[tokio::test]
async fn the_providers_count_is_trusted_until_the_context_changes() {
    let mut s = four_turns().await;
    let estimated = context_tokens(&s.branch());
    assert_eq!(estimated, 8 * 13, "eight messages of 49 to 51 characters");
    // An answer whose provider counted the whole context.
    let mut answer = serde_json::to_value(AgentMessage::from_chat(
        &ChatMessage::assistant("counted", vec![]),
        0,
        None,
        None,
    ))
    .unwrap();
    answer["usage"] =
        json!({"input": 4000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 4010});
    s.append(EntryKind::Message {
        message: serde_json::from_value(answer).unwrap(),
    })
    .await
    .unwrap();
    s.append_chat(&[ChatMessage::user("12345678")])
        .await
        .unwrap();
    assert_eq!(
        context_tokens(&s.branch()),
        4010 + 2,
        "the count, then the estimate after it"
    );
    assert_same_preparation(&s, &[1, 30, 100]);
    // An edit after it changes what is sent: estimated again.
    let first = s.entries()[0].id.clone();
    s.append(EntryKind::ContextEdit {
        target_id: first,
        replacement: None,
    })
    .await
    .unwrap();
    assert_eq!(context_tokens(&s.branch()), 7 * 13 + 2 + 2);
    assert_same_preparation(&s, &[1, 30, 100]);
}
