//! Compaction (`session::compaction`): where it cuts built branches, what
//! the model is asked (a real OpenAI-compatible provider against a
//! scripted server on 127.0.0.1 that records every request), the entry it
//! writes and the context built after it, and pi's own compaction judging
//! ours on the exported file.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_agent::session::compaction::{
    CompactionError, CompactionSettings, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT,
    Summarizer, Summary, TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT, compact,
    compact_now, context_tokens, prepare_compaction, should_compact,
};
use oscova_agent::session::{
    AgentMessage, COMPACTION_SUMMARY_PREFIX, ContentPart, EntryKind, MemoryStore, Session,
    SessionStore,
};
use oscova_core::provider::model::{ChatMessage, ModelProviderConfig, ToolCallRequest};
use oscova_core::redact::{Redact, Redactor};
use oscova_core::{HttpClient, UserInfo};
use oscova_plugin_openai::OpenAiProvider;
use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::{Value, json};

/// A model that answers summary number n with "SUMMARY n", reporting
/// usage.
pub(super) async fn summarizing_server() -> TestServer {
    let count = Arc::new(AtomicUsize::new(0));
    TestServer::start(move |_| {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        Reply::json(
            200,
            json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("SUMMARY {n}")}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100 * n, "completion_tokens": 10},
            }),
        )
    })
    .await
}

pub(super) fn config(server: &TestServer) -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("openai");
    config.endpoint = Some(server.url());
    config.model = Some("gpt-test".into());
    config
}

pub(super) fn provider() -> OpenAiProvider {
    OpenAiProvider::new(HttpClient::shared_default())
}

/// The user message a summarising request carried (after pi's system
/// prompt).
fn prompt_of(request: &Request) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{body}");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[0]["content"], SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(messages[1]["role"], "user");
    assert!(
        body.get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty))
    );
    messages[1]["content"].as_str().unwrap().to_owned()
}

pub(super) fn call(id: &str, name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

async fn session() -> Session {
    session_in(Arc::new(MemoryStore::new())).await
}

async fn session_in(store: Arc<dyn SessionStore>) -> Session {
    Session::create(store, UserInfo::new("alice"), "long")
        .await
        .unwrap()
}

/// A system prompt, a short first turn, then a turn of two tool calls:
/// `U2, A2(read a.txt), T2 (large), A3(read b.txt), T3, A4`.
pub(super) async fn two_turns() -> Session {
    let mut s = session().await;
    s.append_chat(&[
        ChatMessage::system("Be brief."),
        ChatMessage::user("first question"),
        ChatMessage::assistant("first answer", vec![]),
        ChatMessage::user("second question: read two files"),
        ChatMessage::assistant("", vec![call("c2", "read", json!({"path": "a.txt"}))]),
        ChatMessage::tool("c2", "A".repeat(800)),
        ChatMessage::assistant("", vec![call("c3", "read", json!({"path": "b.txt"}))]),
        ChatMessage::tool("c3", "B".repeat(160)),
        ChatMessage::assistant("The answer is 42.", vec![]),
    ])
    .await
    .unwrap();
    s
}

fn text_of(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(m) => m.content.text(),
        AgentMessage::Assistant(m) => m
            .content
            .iter()
            .map(|p| match p {
                ContentPart::Text { text, .. } => text.clone(),
                ContentPart::ToolCall { name, .. } => format!("call {name}"),
                _ => String::new(),
            })
            .collect(),
        AgentMessage::ToolResult(m) => format!("result {}", m.tool_call_id),
        AgentMessage::CompactionSummary(m) => format!("summary {}", m.summary),
        AgentMessage::System(m) => format!("system {}", m.content.text()),
        other => format!("{other:?}"),
    }
}

fn call_ids(messages: &[AgentMessage]) -> (Vec<String>, Vec<String>) {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for m in messages {
        match m {
            AgentMessage::Assistant(a) => calls.extend(a.content.iter().filter_map(|p| match p {
                ContentPart::ToolCall { id, .. } => Some(id.clone()),
                _ => None,
            })),
            AgentMessage::ToolResult(r) => results.push(r.tool_call_id.clone()),
            _ => {}
        }
    }
    (calls, results)
}

#[tokio::test]
async fn no_budget_cuts_between_a_tool_call_and_its_result() {
    let s = two_turns().await;
    let branch = s.branch();
    let mut seen_cuts = std::collections::BTreeSet::new();
    for keep in 1..400 {
        let settings = CompactionSettings::new(1000).with_keep_recent_tokens(keep);
        let Some(prep) = prepare_compaction(&branch, &settings) else {
            continue;
        };
        let first = s.entry(&prep.first_kept_entry_id).unwrap();
        assert!(
            !matches!(
                &first.kind,
                EntryKind::Message {
                    message: AgentMessage::ToolResult(_)
                }
            ),
            "keep {keep}: the cut is on a tool result"
        );
        // Every call summarised has its result summarised with it.
        for part in [&prep.messages_to_summarize, &prep.turn_prefix_messages] {
            let (calls, results) = call_ids(part);
            assert_eq!(calls, results, "keep {keep}");
        }
        seen_cuts.insert(prep.first_kept_entry_id.to_string());
    }
    // The budgets covered several cut points, inside the turn too.
    assert!(seen_cuts.len() >= 3, "{seen_cuts:?}");
}

#[tokio::test]
async fn a_split_turn_is_summarised_in_two_requests() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = two_turns().await;
    // 50 tokens reach back to A3 (the second call): inside the turn.
    let settings = CompactionSettings::new(1000).with_keep_recent_tokens(50);
    let prep = prepare_compaction(&s.branch(), &settings).unwrap();
    assert!(prep.is_split_turn);
    let texts = |m: &[AgentMessage]| m.iter().map(text_of).collect::<Vec<_>>();
    assert_eq!(
        texts(&prep.messages_to_summarize),
        ["first question", "first answer"]
    );
    assert_eq!(
        texts(&prep.turn_prefix_messages),
        ["second question: read two files", "call read", "result c2"]
    );
    // b.txt was read in the part kept.
    assert_eq!(prep.read_files, ["a.txt"]);
    let summarizer = Summarizer::new(&provider, &config);
    let outcome = compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    assert!(outcome.split_turn);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the history, then the turn's prefix");
    let history = prompt_of(&requests[0]);
    assert!(history.starts_with(
        "<conversation>\n[User]: first question\n\n[Assistant]: first answer\n</conversation>\n\n"
    ));
    assert!(history.ends_with(SUMMARIZATION_PROMPT), "{history}");
    let prefix = prompt_of(&requests[1]);
    assert!(prefix.starts_with("# Conversation\n[User]: second question: read two files\n\n[Assistant tool calls]: read(path=\"a.txt\")\n\n[Tool result]: AAAA"));
    assert!(prefix.ends_with(TURN_PREFIX_SUMMARIZATION_PROMPT));
    assert_eq!(
        outcome.summary,
        "SUMMARY 1\n\n---\n\n**Turn Context (split turn):**\n\nSUMMARY 2\n\n<read-files>\na.txt\n</read-files>"
    );
    // The context now: the system prompt replayed, the summary, then the
    // kept part of the turn, call and result together.
    let context = s.context();
    assert_eq!(
        texts(&context.messages),
        [
            "system Be brief.".to_owned(),
            format!("summary {}", outcome.summary),
            "call read".into(),
            "result c3".into(),
            "The answer is 42.".into(),
        ]
    );
    // The usage of both calls is recorded.
    let entry = s.entry(&outcome.entry).unwrap();
    let EntryKind::Compaction { usage, details, .. } = &entry.kind else {
        panic!("not a compaction: {entry:?}");
    };
    assert_eq!(usage.as_ref().unwrap()["input"], 300);
    assert_eq!(
        details.as_ref().unwrap(),
        &json!({"readFiles": ["a.txt"], "modifiedFiles": []})
    );
}

/// Four short turns.
pub(super) async fn four_turns() -> Session {
    four_turns_in(Arc::new(MemoryStore::new())).await
}

async fn four_turns_in(store: Arc<dyn SessionStore>) -> Session {
    let mut s = session_in(store).await;
    for n in 1..=4 {
        s.append_chat(&[
            ChatMessage::user(format!("question {n} {}", "q".repeat(40))),
            ChatMessage::assistant(format!("answer {n} {}", "a".repeat(40)), vec![]),
        ])
        .await
        .unwrap();
    }
    s
}

#[tokio::test]
async fn the_entry_records_the_cut_and_the_context_has_the_summary_in_place() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = four_turns().await;
    let before = context_tokens(&s.branch());
    // Each message is 13 tokens: 40 keeps the last two turns' messages
    // from the user message of turn 3.
    let settings = CompactionSettings::new(100)
        .with_reserve_tokens(20)
        .with_keep_recent_tokens(40);
    assert!(should_compact(before, &settings), "{before}");
    let kept = s.entries()[4].id.clone();
    let summarizer = Summarizer::new(&provider, &config);
    let outcome = compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    assert_eq!(
        (
            outcome.first_kept_entry_id.clone(),
            outcome.tokens_before,
            outcome.entries_summarized
        ),
        (kept.clone(), before, 4)
    );
    assert!(!outcome.split_turn);
    assert!(outcome.tokens_after < before);
    let prompt = prompt_of(&server.only_request());
    assert!(prompt.contains("[User]: question 1 "));
    assert!(prompt.contains("[Assistant]: answer 2 "));
    assert!(!prompt.contains("question 3"), "kept, not summarised");
    assert!(!prompt.contains("<previous-summary>"));
    let entry = s.entry(&outcome.entry).unwrap();
    match &entry.kind {
        EntryKind::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            from_hook,
            system_message,
            ..
        } => {
            assert_eq!(summary, "SUMMARY 1");
            assert_eq!(first_kept_entry_id, &kept);
            assert_eq!(*tokens_before, before);
            assert_eq!(*from_hook, Some(false));
            assert!(system_message.is_none(), "no system prompt to replay");
        }
        other => panic!("not a compaction: {other:?}"),
    }
    let chat = s.context().chat_messages();
    let contents: Vec<&str> = chat.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents.len(), 5);
    assert_eq!(
        contents[0],
        format!("{COMPACTION_SUMMARY_PREFIX}SUMMARY 1\n</summary>")
    );
    assert!(contents[1].starts_with("question 3"));
    assert!(contents[4].starts_with("answer 4"));
    // Compacting again straight away: nothing new to summarise.
    assert!(matches!(
        compact_now(&mut s, &summarizer, &settings, None).await,
        Err(CompactionError::NothingToCompact)
    ));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_second_compaction_carries_the_first_summary() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = four_turns().await;
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    let summarizer = Summarizer::new(&provider, &config);
    compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    s.append_chat(&[
        ChatMessage::user(format!("question 5 {}", "q".repeat(40))),
        ChatMessage::assistant(format!("answer 5 {}", "a".repeat(40)), vec![]),
    ])
    .await
    .unwrap();
    let second = compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let prompt = prompt_of(&requests[1]);
    assert!(
        prompt.starts_with("<conversation>\n[User]: question 3 "),
        "{prompt}"
    );
    assert!(!prompt.contains("question 1"));
    assert!(
        prompt.contains(
            "\n</conversation>\n\n<previous-summary>\nSUMMARY 1\n</previous-summary>\n\n"
        )
    );
    assert!(prompt.ends_with(UPDATE_SUMMARIZATION_PROMPT));
    let context = s.context();
    assert_eq!(text_of(&context.messages[0]), "summary SUMMARY 2");
    assert_eq!(context.messages.len(), 5, "the summary and two turns");
    assert_eq!(second.entries_summarized, 2);
}

#[tokio::test]
async fn a_supplied_summary_calls_no_model() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = four_turns().await;
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    let summarizer = Summarizer::new(&provider, &config);
    let outcome = compact_now(&mut s, &summarizer, &settings, Some("by hand".into()))
        .await
        .unwrap();
    assert!(server.requests().is_empty());
    assert_eq!(outcome.summary, "by hand");
    match &s.entry(&outcome.entry).unwrap().kind {
        EntryKind::Compaction {
            from_hook, details, ..
        } => assert_eq!((*from_hook, details.is_none()), (Some(true), true)),
        other => panic!("{other:?}"),
    }
    assert_eq!(text_of(&s.context().messages[0]), "summary by hand");

    // A handler's own details and cut; a cut off the branch is refused.
    let mut s = four_turns().await;
    let mut prep = prepare_compaction(&s.branch(), &settings).unwrap();
    prep.first_kept_entry_id = s.entries()[6].id.clone();
    let entry = compact(
        &mut s,
        &prep,
        Summary::supplied("mine").with_details(json!({"by": "extension"})),
    )
    .await
    .unwrap();
    match &s.entry(&entry).unwrap().kind {
        EntryKind::Compaction {
            details,
            first_kept_entry_id,
            ..
        } => {
            assert_eq!(details, &Some(json!({"by": "extension"})));
            assert_eq!(first_kept_entry_id, &s.entries()[6].id);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.context().messages.len(),
        3,
        "the summary and the last turn"
    );
    let mut prep = prepare_compaction(&four_turns().await.branch(), &settings).unwrap();
    let mut other = four_turns().await;
    prep.leaf = other.leaf().cloned();
    let error = compact(&mut other, &prep, Summary::supplied("x"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("no entry"), "{error}");
}

#[tokio::test]
async fn offline_refuses_a_remote_model_before_any_request() {
    let mut s = four_turns().await;
    let mut config = ModelProviderConfig::new("openai");
    // Refused on the text of the URL: no connection is attempted.
    config.endpoint = Some("https://models.example.com".into());
    config.model = Some("gpt-test".into());
    let provider = provider();
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    let summarizer = Summarizer::new(&provider, &config).offline(true);
    let error = compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("offline operation is required"),
        "{error}"
    );
    assert_eq!(s.entries().len(), 8, "nothing written");
}

#[tokio::test]
async fn known_secrets_never_reach_the_summarising_model() {
    let server = summarizing_server().await;
    let config = config(&server);
    let provider = provider();
    let mut s = session().await;
    s.append_chat(&[
        ChatMessage::user(format!("my token is sk-secret-123 {}", "x".repeat(200))),
        ChatMessage::assistant("noted", vec![]),
        ChatMessage::user("y".repeat(200)),
        ChatMessage::assistant("ok", vec![]),
    ])
    .await
    .unwrap();
    let redactor = Redactor::new();
    redactor.add("sk-secret-123");
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    let summarizer = Summarizer::new(&provider, &config).redactor(Some(&redactor as &dyn Redact));
    compact_now(&mut s, &summarizer, &settings, None)
        .await
        .unwrap();
    let prompt = prompt_of(&server.only_request());
    assert!(!prompt.contains("sk-secret-123"));
    assert!(prompt.contains("[REDACTED]"), "{prompt}");
}

#[tokio::test]
async fn a_session_that_moved_on_is_not_compacted() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let mut s = four_turns_in(store.clone()).await;
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    // This handle moved on after preparing.
    let prep = prepare_compaction(&s.branch(), &settings).unwrap();
    s.append_chat(&[ChatMessage::user("one more")])
        .await
        .unwrap();
    let error = compact(&mut s, &prep, Summary::supplied("late"))
        .await
        .unwrap_err();
    assert!(error.is_conflict(), "{error}");
    // Another writer moved it in the store.
    let mut other = Session::open(store, UserInfo::new("alice"), "long")
        .await
        .unwrap();
    let prep = prepare_compaction(&s.branch(), &settings).unwrap();
    other
        .append_chat(&[ChatMessage::user("from elsewhere")])
        .await
        .unwrap();
    let error = compact(&mut s, &prep, Summary::supplied("late"))
        .await
        .unwrap_err();
    assert!(error.is_conflict(), "{error}");
    assert!(
        !s.entries()
            .iter()
            .any(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    );
}

/// A model whose every answer is `answer`, `finish_reason` `finish`.
async fn answering(answer: Value, finish: &'static str) -> TestServer {
    TestServer::start(move |_| {
        Reply::json(
            200,
            json!({"choices": [{"index": 0, "message": answer.clone(), "finish_reason": finish}]}),
        )
    })
    .await
}

#[tokio::test]
async fn a_cut_short_or_tool_calling_answer_is_never_stored() {
    let provider = provider();
    let settings = CompactionSettings::new(100).with_keep_recent_tokens(40);
    let cut = answering(
        json!({"role": "assistant", "content": "## Goal\nHalf a"}),
        "length",
    )
    .await;
    let calling = answering(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "x", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}),
        "tool_calls",
    )
    .await;
    for (server, expected) in [
        (&cut, "generation hit the token cap"),
        (&calling, "attempted to call a tool"),
    ] {
        let mut s = four_turns().await;
        let config = config(server);
        let summarizer = Summarizer::new(&provider, &config);
        let error = compact_now(&mut s, &summarizer, &settings, None)
            .await
            .unwrap_err();
        assert!(error.to_string().contains(expected), "{error}");
        assert_eq!(server.requests().len(), 1);
        assert_eq!(s.entries().len(), 8, "nothing written");
    }
}
