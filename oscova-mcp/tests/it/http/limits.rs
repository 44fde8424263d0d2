//! What is bounded: request bodies, calls in flight, idle sessions, and
//! the grace calls get at shutdown.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_and_calls_in_flight_are_bounded() {
    let (served, gate) = host();
    let server = Running::start(
        McpHttpServer::new(served)
            .max_body_bytes(4096)
            .max_in_flight(1)
            .max_in_flight_total(2),
    )
    .await;

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    assert_eq!(post(&server.url, &big, &[]).await.status(), 413);

    // One session: its second call past the bound of 1 is refused at once.
    let one = Arc::new(connect(&server.url, None).await);
    let first = {
        let one = one.clone();
        tokio::spawn(async move { call(&one, "test_post__post__nap", json!({"ms": 400})).await })
    };
    gate.entered.notified().await;
    let busy = call(&one, "test_post__post__echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    match busy {
        rmcp::ServiceError::McpError(e) => {
            assert_eq!(e.code, SERVER_BUSY, "{e:?}");
            assert_eq!(e.data, Some(json!({"max_in_flight": 1})));
        }
        other => panic!("{other:?}"),
    }

    // Across sessions: two calls run, the third is refused by the server's bound.
    let two = Arc::new(connect(&server.url, None).await);
    let second = {
        let two = two.clone();
        tokio::spawn(async move { call(&two, "test_post__post__nap", json!({"ms": 400})).await })
    };
    gate.entered.notified().await;
    let three = connect(&server.url, None).await;
    match call(&three, "test_post__post__echo", json!({"text": "x"})).await {
        Err(rmcp::ServiceError::McpError(e)) => {
            assert_eq!(e.code, SERVER_BUSY, "{e:?}");
            assert_eq!(e.data, Some(json!({"max_in_flight_total": 2})));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(text(&first.await.unwrap().unwrap()), "rested");
    assert_eq!(text(&second.await.unwrap().unwrap()), "rested");
    // With the calls done, the same session is served again.
    assert_eq!(
        text(
            &call(&three, "test_post__post__echo", json!({"text": "y"}))
                .await
                .unwrap()
        ),
        "y"
    );

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_left_idle_past_the_timeout_are_closed() {
    let server =
        Running::start(McpHttpServer::new(host().0).idle_timeout(Duration::from_millis(300))).await;
    let opened = post(&server.url, INITIALIZE, &[]).await;
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let response = post(
        &server.url,
        list,
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-06-18"),
        ],
    )
    .await;
    assert_eq!(response.status(), 404, "the idle session expired");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_calls_finish_then_cancels_what_outlives_the_grace() {
    // A call shorter than the grace finishes with its result.
    let (served, gate) = host();
    let server =
        Running::start(McpHttpServer::new(served).shutdown_grace(Duration::from_secs(10))).await;
    let client = Arc::new(connect(&server.url, None).await);
    let napping = {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "test_post__post__nap", json!({"ms": 300})).await })
    };
    gate.entered.notified().await;
    let (addr, url) = (server.addr, server.url.clone());
    server.shutdown().await;
    assert_eq!(text(&napping.await.unwrap().unwrap()), "rested");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
    drop(url);

    // A call that outlives the grace is cancelled, and the server stops.
    let (served, gate) = host();
    let server =
        Running::start(McpHttpServer::new(served).shutdown_grace(Duration::from_millis(200))).await;
    let client = Arc::new(connect(&server.url, None).await);
    let holding = {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "test_post__post__hold", json!({})).await })
    };
    gate.entered.notified().await;
    server.shutdown().await;
    // The call ends in its own task, as soon as it hears of the cancel.
    let ended = timeout(PATIENCE, async {
        while !gate.cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the call still running after the grace was cancelled"
    );
    holding.abort();
}
