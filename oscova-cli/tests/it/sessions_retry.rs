//! `/retry` in `oscova chat --session`: a message whose model call failed
//! is kept, the error says so and names `/retry`, and `/retry` asks the
//! model again without sending the message twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_test_support::http::{Reply, TestServer};
use serde_json::{Value, json};

use crate::sessions::{chat, json_of, pairs, sent, sqlite_config, text_reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_answer_is_retried_without_sending_the_message_twice() {
    let config = sqlite_config();
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    // The first request fails as a provider's outage does; later ones answer.
    let server = TestServer::start(move |_request: &oscova_test_support::http::Request| {
        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::json(503, json!({"error": {"message": "overloaded, try later"}}));
        }
        text_reply("Three days in Lisbon.")
    })
    .await;

    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "trip", "-m", "Plan a trip"],
    )
    .await;
    assert_ne!(code, 0, "the failed answer fails the command: {out}\n{err}");
    let error: Value = serde_json::from_str(out.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not a JSON error ({e}): {out}\n{err}"));
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("overloaded"), "the cause: {out}");
    assert!(
        message.contains("kept in the session") && message.contains("/retry"),
        "what was kept and how to retry: {out}"
    );
    assert_eq!(
        error["error"]["kind"], "http_status",
        "the model error's kind: {out}"
    );

    let (code, out, err) = chat(&config, &server, &["--session", "trip", "-m", "/retry"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["answer"], "Three days in Lisbon.", "{out}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent(&requests[1]),
        pairs(&[("user", "Plan a trip")]),
        "the retry sends the kept message once"
    );

    // The session holds the message once, then the answer.
    let (code, shown) = json_of(&config, &["sessions", "show", "trip"]);
    assert_eq!(code, 0, "{shown}");
    let roles: Vec<&str> = shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{shown}");

    // Nothing waits for the model now: a usage error, no request.
    let (code, out, err) = chat(&config, &server, &["--session", "trip", "-m", "/retry"]).await;
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.contains("nothing to retry"), "{out}\n{err}");
    assert_eq!(server.requests().len(), 2);
}
