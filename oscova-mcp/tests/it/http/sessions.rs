//! Sessions: bound to the user who opened it whatever the request's
//! headers said, and bounded per user and in total, the longest idle
//! closed first (issue 24, findings 1 and 5).

use super::*;

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Opens a session as `token`'s user: its id, or the refusal's status
/// and text.
async fn open(url: &str, token: &str) -> Result<String, (u16, String)> {
    let opened = post(url, INITIALIZE, &[("authorization", &bearer(token))]).await;
    if opened.status() != 200 {
        let status = opened.status().as_u16();
        return Err((status, opened.text().await.unwrap()));
    }
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    let headers = [
        ("authorization", bearer(token)),
        ("mcp-session-id", session.clone()),
        ("mcp-protocol-version", "2025-06-18".to_owned()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post(url, INITIALIZED, &headers).await.status(), 202);
    Ok(session)
}

/// POSTs `body` in `session` as `token`'s user.
async fn in_session(url: &str, token: &str, session: &str, body: &str) -> reqwest::Response {
    let auth = bearer(token);
    post(
        url,
        body,
        &[
            ("authorization", &auth),
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-06-18"),
        ],
    )
    .await
}

/// The status of a `tools/list` in `session`.
async fn list(url: &str, token: &str, session: &str) -> u16 {
    in_session(url, token, session, LIST)
        .await
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_session_id_is_refused_and_opens_no_session_for_another_user() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    // Not visible ASCII: rmcp would read it as no session at all, and
    // open one the owner check never saw.
    for bad in [&b"\xffsession"[..], b"two words", b"tab\there", b""] {
        let response = reqwest::Client::new()
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", bearer(ALICE))
            .header(
                "mcp-session-id",
                reqwest::header::HeaderValue::from_bytes(bad).unwrap(),
            )
            .body(INITIALIZE)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{bad:?}");
        let opened = response.headers().get("mcp-session-id").cloned();
        let text = response.text().await.unwrap();
        assert!(text.contains("Mcp-Session-Id"), "{text}");
        // Had a session been opened, it must not serve Bob as Alice.
        if let Some(opened) = opened {
            let session = opened.to_str().unwrap();
            let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_post__post__whoami","arguments":{}}}"#;
            let stolen = in_session(&server.url, BOB, session, call).await;
            let body = stolen.text().await.unwrap();
            assert!(!body.contains("alice"), "Bob was served as Alice: {body}");
            panic!("a malformed session id opened session {session}");
        }
    }
    // Two session headers are refused as well, whichever rmcp would read.
    let mine = open(&server.url, ALICE).await.unwrap();
    let twice = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", bearer(BOB))
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", "unknown")
        .header("mcp-session-id", mine.as_str())
        .body(LIST)
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 400);
    // Every session opened is its opener's alone.
    assert_eq!(list(&server.url, ALICE, &mine).await, 200);
    assert_eq!(list(&server.url, BOB, &mine).await, 404);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_bounded_per_user_and_in_total_the_longest_idle_closed_first() {
    let (served, gate) = host();
    let server = Running::start(
        with_tokens(McpHttpServer::new(served))
            .max_sessions_per_user(2)
            .max_sessions(3)
            .shutdown_grace(Duration::from_millis(200)),
    )
    .await;
    let url = server.url.as_str();

    // One user opening session after session keeps two: the longest idle goes.
    let first = open(url, ALICE).await.unwrap();
    let second = open(url, ALICE).await.unwrap();
    assert_eq!(list(url, ALICE, &first).await, 200, "first used last");
    let third = open(url, ALICE).await.unwrap();
    assert_eq!(
        list(url, ALICE, &second).await,
        404,
        "the longest idle closed"
    );
    assert_eq!(list(url, ALICE, &first).await, 200);
    assert_eq!(list(url, ALICE, &third).await, 200);
    for _ in 0..20 {
        open(url, ALICE).await.unwrap();
    }
    assert_eq!(
        list(url, ALICE, &first).await,
        404,
        "{first} outlived 20 more"
    );

    // Sessions with a call in flight are never closed for room.
    let (a, b) = (
        open(url, ALICE).await.unwrap(),
        open(url, ALICE).await.unwrap(),
    );
    let hold = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_post__post__hold","arguments":{}}}"#;
    let mut held = Vec::new();
    for session in [&a, &b] {
        let response = in_session(url, ALICE, session, hold).await;
        assert_eq!(response.status(), 200);
        gate.entered.notified().await;
        held.push(response);
    }
    let (status, text) = open(url, ALICE).await.unwrap_err();
    assert_eq!(status, 429, "{text}");
    assert!(
        text.contains("too many sessions") && text.contains('2'),
        "{text}"
    );
    assert_eq!(list(url, ALICE, &a).await, 200);

    // Another user still opens one, up to the server's bound; past it,
    // with every session busy, the server refuses.
    let bobs = open(url, BOB).await.unwrap();
    let response = in_session(url, BOB, &bobs, hold).await;
    gate.entered.notified().await;
    held.push(response);
    let (status, text) = open(url, BOB).await.unwrap_err();
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains("too many sessions") && text.contains('3'),
        "{text}"
    );
    drop(held);
    server.shutdown().await;
}

// Finding 1, from the other side: the owner is recorded where the session
// is created, so another user's token on its id is 404 from the moment
// the id exists: here Bob's requests race Alice's first response (sent
// as soon as its headers name the session, before she has read its body
// or said `initialized`), with every method, and a refused DELETE leaves
// the session hers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_token_on_a_session_is_refused_from_its_first_response_on() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let first = post(
        &server.url,
        INITIALIZE,
        &[("authorization", &bearer(ALICE))],
    )
    .await;
    assert_eq!(first.status(), 200);
    let session = first.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let client = reqwest::Client::new();
    let as_bob = |request: reqwest::RequestBuilder| {
        request
            .header("authorization", bearer(BOB))
            .header("mcp-session-id", session.as_str())
            .header("mcp-protocol-version", "2025-06-18")
            .header("accept", "application/json, text/event-stream")
    };
    let (listed, streamed, deleted) = tokio::join!(
        as_bob(client.post(&server.url))
            .header("content-type", "application/json")
            .body(LIST)
            .send(),
        as_bob(client.get(&server.url)).send(),
        as_bob(client.delete(&server.url)).send(),
    );
    for (what, response) in [("POST", listed), ("GET", streamed), ("DELETE", deleted)] {
        assert_eq!(
            response.unwrap().status(),
            404,
            "Bob's {what} on Alice's session"
        );
    }
    // Alice's first response ends, and her session is whole and hers.
    let body = first.text().await.unwrap();
    assert!(body.contains("protocolVersion"), "{body}");
    let auth = bearer(ALICE);
    let headers = [
        ("authorization", auth.as_str()),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    assert_eq!(post(&server.url, INITIALIZED, &headers).await.status(), 202);
    assert_eq!(list(&server.url, ALICE, &session).await, 200);
    assert_eq!(list(&server.url, BOB, &session).await, 404);
    server.shutdown().await;
}

// Issue 27, §3: a session's DELETE is 204 (rmcp's own answer is 202, which
// the Python SDK logs as a failed termination), and the session is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_answers_204_and_ends_it() {
    let (host, _) = host();
    let server = Running::start(with_tokens(McpHttpServer::new(host))).await;
    let session = open(&server.url, ALICE).await.unwrap();
    assert_eq!(list(&server.url, ALICE, &session).await, 200);
    let deleted = reqwest::Client::new()
        .delete(&server.url)
        .header("authorization", bearer(ALICE))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert_eq!(list(&server.url, ALICE, &session).await, 404);
    server.shutdown().await;
}
