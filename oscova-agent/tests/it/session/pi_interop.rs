//! pi's session files both ways, judged by the real pi package
//! (`scripts/ensure-pi.sh`): pi's `parseSessionEntries` and
//! `buildSessionContext` rebuild from our export the context our session
//! builds, and a file pi's own `SessionManager` wrote imports with the
//! context pi builds from it.

use std::sync::Arc;

use oscova_agent::session::{
    ContextReplacement, EntryKind, MemoryStore, MessageContent, Session, SessionContext,
    SessionStore, SqliteStore, pi,
};
use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest};
use serde_json::{Value, json};

/// Our context as pi writes its own: `{messages, thinkingLevel, model}`.
fn as_pi(context: &SessionContext) -> Value {
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
