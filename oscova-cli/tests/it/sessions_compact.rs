//! Compaction in `oscova chat --session`: `/compact` and the automatic
//! one past `[sessions] context_window`, the real binary against an
//! OpenAI-compatible model on 127.0.0.1 that records every request and
//! answers a summarising (non-streamed) request with a summary.

use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::{Value, json};

use crate::sessions::{chat, config_with, json_of, model, pairs, sent};

const SUMMARY: &str = "SUMMARY of what was said";

/// The sessions tests' model, and a summary for a summarising request
/// (the chat loop streams; compaction asks for one whole answer).
fn summarizing(request: &Request) -> Reply {
    if request.json()["stream"] == true {
        return model(request);
    }
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": SUMMARY}, "finish_reason": "stop"}],
        }),
    )
}

fn summarising_requests(server: &TestServer) -> Vec<Request> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.json()["stream"] != true)
        .collect()
}

fn entry_types(config: &std::path::Path, session: &str) -> Vec<String> {
    let (_, shown) = json_of(config, &["sessions", "show", session]);
    shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_summarises_with_the_chats_model_and_the_next_message_sees_the_summary() {
    let config = config_with("path = \"sessions.db\"\nkeep_recent_tokens = 5");
    let server = TestServer::start(summarizing).await;
    for message in ["first", "second"] {
        let (code, out, err) = chat(&config, &server, &["--session", "c", "-m", message]).await;
        assert_eq!(code, 0, "{out}\n{err}");
    }
    let (code, out, err) = chat(&config, &server, &["--session", "c", "-m", "/compact"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let done: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(done["command"], "compact");
    // The first exchange (user, call, result, answer); the second is
    // kept.
    assert_eq!(done["entries_summarized"], 4, "{done}");
    assert_eq!(done["split_turn"], false);
    assert!(done["tokens_before"].as_u64().unwrap() > done["tokens_after"].as_u64().unwrap());

    let asked = summarising_requests(&server);
    assert_eq!(asked.len(), 1);
    let prompt = sent(&asked[0]);
    assert_eq!(prompt[0].0, "system");
    assert!(
        prompt[0]
            .1
            .starts_with("You are a context summarization assistant.")
    );
    assert!(
        prompt[1].1.starts_with(
            "<conversation>\n[User]: first\n\n[Assistant tool calls]: acme_search__example__example_echo(text=\"kept\")\n\n[Tool result]: kept\n\n[Assistant]: Echoed: kept\n</conversation>"
        ),
        "{}",
        prompt[1].1
    );
    assert!(
        asked[0].json()["tools"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    assert_eq!(
        entry_types(&config, "c").last().map(String::as_str),
        Some("compaction")
    );
    let (_, shown) = json_of(&config, &["sessions", "show", "c"]);
    let last = shown["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["summary"], SUMMARY);

    // The next message: the summary in place of what it replaced.
    let (code, out, err) = chat(&config, &server, &["--session", "c", "-m", "third"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let last_chat = server
        .requests()
        .into_iter()
        .rfind(|r| r.json()["stream"] == true)
        .unwrap();
    assert_eq!(
        sent(&last_chat),
        pairs(&[
            (
                "user",
                &format!(
                    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{SUMMARY}\n</summary>"
                )
            ),
            ("user", "second"),
            ("assistant", "Answer to second"),
            ("user", "third"),
        ])
    );

    // Compacting again carries the first summary into the second.
    let (code, out, _) = chat(&config, &server, &["--session", "c", "-m", "/compact"]).await;
    assert_eq!(code, 0, "{out}");
    let asked = summarising_requests(&server);
    assert_eq!(asked.len(), 2);
    let prompt = &sent(&asked[1])[1].1;
    assert!(prompt.starts_with("<conversation>\n[User]: second\n\n[Assistant]: Answer to second\n</conversation>\n\n<previous-summary>\nSUMMARY of what was said\n</previous-summary>"), "{prompt}");
    // Nothing new since: nothing to do.
    let (code, out, _) = chat(&config, &server, &["--session", "c", "-m", "/compact"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("nothing to compact"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_past_the_window_is_compacted_after_the_message() {
    let config = config_with(
        "path = \"sessions.db\"\ncontext_window = 200\nreserve_tokens = 50\nkeep_recent_tokens = 10",
    );
    let server = TestServer::start(summarizing).await;
    let (code, out, err) = chat(&config, &server, &["--session", "a", "-m", "short"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert!(outcome.get("compaction").is_none(), "{outcome}");
    assert!(summarising_requests(&server).is_empty());

    // Past 150 tokens: compacted once the model has answered. The answer
    // alone is past the 10 tokens kept, so the cut splits the turn: the
    // history and the long question are summarised apart.
    let long = "word ".repeat(140);
    let (code, out, err) = chat(&config, &server, &["--session", "a", "-m", &long]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    let done = &outcome["compaction"];
    assert_eq!(done["automatic"], true, "{outcome}");
    assert!(done["tokens_before"].as_u64().unwrap() > 150, "{done}");
    assert_eq!(done["split_turn"], true, "{done}");
    let asked = summarising_requests(&server);
    assert_eq!(asked.len(), 2);
    assert!(sent(&asked[0])[1].1.starts_with(
        "<conversation>\n[User]: short\n\n[Assistant]: Answer to short\n</conversation>"
    ));
    assert!(
        sent(&asked[1])[1]
            .1
            .starts_with("# Conversation\n[User]: word word")
    );
    assert_eq!(outcome["leaf"], done["entry"], "the compaction is the leaf");
    assert_eq!(
        entry_types(&config, "a").last().map(String::as_str),
        Some("compaction")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_needs_a_session_and_a_reserve_below_the_window() {
    let config = config_with("path = \"sessions.db\"");
    let server = TestServer::start(summarizing).await;
    let (code, out, _) = chat(&config, &server, &["-m", "/compact"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--session"), "{out}");
    let config = config_with("context_window = 8000");
    let (code, out, _) = chat(&config, &server, &["-m", "hi"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("sessions.reserve_tokens is 16384"), "{out}");
    assert!(server.requests().is_empty());
}
