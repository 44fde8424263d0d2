//! The context a branch builds, placed as pi places it: compaction
//! summaries first with the kept entries after, branch summaries where
//! they were appended, custom entries left out, custom messages in,
//! context edits applied.

use std::sync::Arc;

use oscova_agent::session::{
    AgentMessage, ContextReplacement, EntryId, EntryKind, MemoryStore, MessageContent, ModelView,
    Session, SessionEntry, UserMessage,
};
use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;

fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
    SessionEntry {
        id: EntryId::new(id),
        parent_id: parent.map(EntryId::new),
        timestamp: "2026-01-02T03:04:05.678Z".into(),
        kind,
    }
}

fn user(text: &str) -> EntryKind {
    EntryKind::Message {
        message: AgentMessage::User(UserMessage {
            content: MessageContent::Text(text.into()),
            timestamp: 1,
        }),
    }
}

fn texts(context: &ModelView) -> Vec<String> {
    context
        .chat_messages()
        .into_iter()
        .map(|m| m.content)
        .collect()
}

#[test]
fn compaction_leads_with_its_summary_then_the_kept_entries() {
    let entries = vec![
        entry("e1", None, user("old one")),
        entry("e2", Some("e1"), user("old two")),
        entry("e3", Some("e2"), user("kept three")),
        entry(
            "c1",
            Some("e3"),
            EntryKind::Compaction {
                summary: "we talked".into(),
                first_kept_entry_id: EntryId::new("e3"),
                tokens_before: 100,
                details: None,
                usage: None,
                from_hook: None,
                system_message: None,
            },
        ),
        entry("e4", Some("c1"), user("after")),
    ];
    let context = ModelView::build(&entries, Some(&EntryId::new("e4")));
    let texts = texts(&context);
    assert_eq!(texts.len(), 3);
    assert!(
        texts[0].contains("<summary>\nwe talked\n</summary>"),
        "{}",
        texts[0]
    );
    assert_eq!(&texts[1..], ["kept three", "after"]);
    assert!(matches!(
        context.messages[0],
        AgentMessage::CompactionSummary(_)
    ));
}

#[test]
fn custom_entries_stay_out_and_custom_messages_go_in() {
    let entries = vec![
        entry("e1", None, user("hi")),
        entry(
            "x1",
            Some("e1"),
            EntryKind::Custom {
                custom_type: "counter".into(),
                data: Some(json!({"n": 1})),
            },
        ),
        entry(
            "x2",
            Some("x1"),
            EntryKind::CustomMessage {
                custom_type: "reminder".into(),
                content: MessageContent::Text("remember the milk".into()),
                details: Some(json!({"secret": "not for the model"})),
                display: false,
            },
        ),
        entry(
            "l1",
            Some("x2"),
            EntryKind::Label {
                target_id: EntryId::new("e1"),
                label: Some("start".into()),
            },
        ),
        entry(
            "i1",
            Some("l1"),
            EntryKind::SessionInfo {
                name: Some("chat".into()),
            },
        ),
        entry(
            "m1",
            Some("i1"),
            EntryKind::ModelChange {
                provider: "ollama".into(),
                model_id: "llama3.2".into(),
            },
        ),
        entry(
            "t1",
            Some("m1"),
            EntryKind::ThinkingLevelChange {
                thinking_level: "high".into(),
            },
        ),
    ];
    let context = ModelView::build(&entries, Some(&EntryId::new("t1")));
    assert_eq!(texts(&context), ["hi", "remember the milk"]);
    assert_eq!(context.chat_messages()[1].role, ChatRole::User);
    assert_eq!(context.thinking_level, "high");
    assert_eq!(context.model.as_ref().unwrap().model_id, "llama3.2");
    let debug = format!("{:?}", context.chat_messages());
    assert!(!debug.contains("not for the model") && !debug.contains("counter"));
}

#[test]
fn edits_replace_or_omit_their_target_on_their_branch_only() {
    let entries = vec![
        entry("e1", None, user("draft")),
        entry("e2", Some("e1"), user("noise")),
        entry(
            "d1",
            Some("e2"),
            EntryKind::ContextEdit {
                target_id: EntryId::new("e1"),
                replacement: Some(ContextReplacement {
                    content: MessageContent::Text("final".into()),
                }),
            },
        ),
        entry(
            "d2",
            Some("d1"),
            EntryKind::ContextEdit {
                target_id: EntryId::new("e2"),
                replacement: None,
            },
        ),
    ];
    assert_eq!(
        texts(&ModelView::build(&entries, Some(&EntryId::new("d2")))),
        ["final"]
    );
    assert_eq!(
        texts(&ModelView::build(&entries, Some(&EntryId::new("e2")))),
        ["draft", "noise"]
    );
}

#[tokio::test]
async fn a_chat_with_tool_calls_is_the_same_chat_when_read_back() {
    let store = Arc::new(MemoryStore::new());
    let alice = UserInfo::new("alice");
    let mut session = Session::create(store.clone(), alice.clone(), "s")
        .await
        .unwrap();
    session
        .append(EntryKind::ModelChange {
            provider: "ollama".into(),
            model_id: "llama3.2".into(),
        })
        .await
        .unwrap();
    let call = oscova_core::provider::model::ToolCallRequest {
        id: "call-1".into(),
        name: "time__clock__now".into(),
        arguments: json!({"zone": "Asia/Tokyo"}),
    };
    let chat = vec![
        ChatMessage::system("Be brief."),
        ChatMessage::user("Time in Tokyo?"),
        ChatMessage::assistant("", vec![call]),
        ChatMessage::tool("call-1", "12:00"),
        ChatMessage::assistant("It is noon.", vec![]),
    ];
    session.append_chat(&chat[..3]).await.unwrap();
    session.append_chat(&chat[3..]).await.unwrap();
    let resumed = Session::open(store, alice, "s").await.unwrap();
    assert_eq!(resumed.context().chat_messages(), chat);
    // The tool result names the tool that was called (from the assistant
    // message of the earlier batch), as pi's format needs.
    let EntryKind::Message {
        message: AgentMessage::ToolResult(result),
    } = &resumed.entries()[4].kind
    else {
        panic!("{:?}", resumed.entries()[4])
    };
    assert_eq!(result.tool_name, "time__clock__now");
    let EntryKind::Message {
        message: AgentMessage::Assistant(answer),
    } = &resumed.entries()[5].kind
    else {
        panic!("{:?}", resumed.entries()[5])
    };
    assert_eq!(answer.model, "llama3.2");
}

/// `Session::chat_messages` (the session agent's turn) borrows the stored
/// messages; it must send what the owned context sends, summaries, custom
/// messages and edits included.
#[tokio::test]
async fn the_borrowed_chat_messages_are_the_contexts() {
    let store = Arc::new(MemoryStore::new());
    let mut session = Session::create(store, UserInfo::new("alice"), "s")
        .await
        .unwrap();
    session.append(user("old")).await.unwrap();
    let kept = session.append(user("kept")).await.unwrap();
    session
        .append(EntryKind::Compaction {
            summary: "we talked".into(),
            first_kept_entry_id: kept,
            tokens_before: 10,
            details: None,
            usage: None,
            from_hook: None,
            system_message: None,
        })
        .await
        .unwrap();
    let edited = session.append(user("draft")).await.unwrap();
    session
        .append(EntryKind::CustomMessage {
            custom_type: "ext".into(),
            content: MessageContent::Text("injected".into()),
            details: None,
            display: true,
        })
        .await
        .unwrap();
    session
        .append(EntryKind::BranchSummary {
            from_id: EntryId::new("elsewhere"),
            summary: "went left".into(),
            details: None,
            usage: None,
            from_hook: None,
        })
        .await
        .unwrap();
    session
        .append(EntryKind::ContextEdit {
            target_id: edited,
            replacement: Some(ContextReplacement {
                content: MessageContent::Text("final".into()),
            }),
        })
        .await
        .unwrap();
    session.append(user("last")).await.unwrap();

    let borrowed = session.chat_messages();
    assert_eq!(borrowed, session.context().chat_messages());
    let texts: Vec<&str> = borrowed.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts.len(), 6, "{texts:?}");
    assert!(texts[0].contains("<summary>\nwe talked\n</summary>"));
    assert_eq!(&texts[1..3], ["kept", "final"]);
    assert_eq!(texts[3], "injected");
    assert!(texts[4].contains("went left"));
    assert_eq!(texts[5], "last");
}
