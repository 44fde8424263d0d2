//! What is bounded: request bodies, calls in flight (per session, per
//! user, for the server), calls waiting between rounds (per user), idle
//! sessions, the grace calls get at shutdown, and the settings
//! themselves (issue 24, findings 7 and 12).

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

/// Sends a stateless 2026-07-28 `tools/call` of `tool` as `token`'s user,
/// with `extra` params: the JSON-RPC answer.
async fn stateless(url: &str, token: &str, tool: &str, args: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": args,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let auth = format!("Bearer {token}");
    let response = post(
        url,
        &body.to_string(),
        &[
            ("authorization", &auth),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ],
    )
    .await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let data = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str(data).unwrap()
}

/// Parks a call of `twice` as `token`'s user: its request state.
async fn park(url: &str, token: &str) -> Value {
    let asked = stateless(url, token, "test_post__post__twice", json!({}), json!({})).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    asked["result"]["requestState"].clone()
}

/// Answers the parked call `state` as `token`'s user.
async fn answer(url: &str, token: &str, state: &Value) -> Value {
    let extra = json!({
        "requestState": state,
        "inputResponses": {"oscova.ask": {"action": "accept", "content": {}}},
    });
    stateless(url, token, "test_post__post__twice", json!({}), extra).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_user_parking_calls_never_drops_another_users() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let url = server.url.as_str();
    let bobs = park(url, BOB).await;
    // Alice parks more calls than the whole table holds.
    let alices_first = park(url, ALICE).await;
    let mut parking = Vec::new();
    for _ in 0..8 {
        let url = url.to_owned();
        parking.push(tokio::spawn(async move {
            for _ in 0..oscova_mcp::MAX_PARKED / 8 {
                park(&url, ALICE).await;
            }
        }));
    }
    for task in parking {
        task.await.unwrap();
    }
    let kept = answer(url, BOB, &bobs).await;
    assert_eq!(kept["result"]["resultType"], "input_required", "{kept}");
    let dropped = answer(url, ALICE, &alices_first).await;
    assert_eq!(dropped["error"]["code"], -32602, "{dropped}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_own_oldest_parked_call_gives_way_past_their_bound() {
    let server =
        Running::start(with_tokens(McpHttpServer::new(host().0)).max_parked_per_user(2)).await;
    let url = server.url.as_str();
    let bobs = park(url, BOB).await;
    let states = [
        park(url, ALICE).await,
        park(url, ALICE).await,
        park(url, ALICE).await,
    ];
    let dropped = answer(url, ALICE, &states[0]).await;
    assert_eq!(dropped["error"]["code"], -32602, "{dropped}");
    for state in [&states[1], &states[2]] {
        let kept = answer(url, ALICE, state).await;
        assert_eq!(kept["result"]["resultType"], "input_required", "{kept}");
    }
    let kept = answer(url, BOB, &bobs).await;
    assert_eq!(kept["result"]["resultType"], "input_required", "{kept}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_are_bounded_per_user_across_stateless_requests() {
    let (served, gate) = host();
    let server = Running::start(
        with_tokens(McpHttpServer::new(served))
            .max_in_flight(1)
            .max_in_flight_per_user(2),
    )
    .await;
    let url = server.url.clone();
    // On 2026-07-28 each request is a handler of its own, so only the
    // user's bound holds Alice to two calls at once.
    let mut naps = Vec::new();
    for _ in 0..2 {
        let url = url.clone();
        naps.push(tokio::spawn(async move {
            let nap = "test_post__post__nap";
            stateless(&url, ALICE, nap, json!({"ms": 1500}), json!({})).await
        }));
        gate.entered.notified().await;
    }
    let echo = "test_post__post__echo";
    let busy = stateless(&url, ALICE, echo, json!({"text": "x"}), json!({})).await;
    assert_eq!(busy["error"]["code"], SERVER_BUSY.0, "{busy}");
    assert_eq!(
        busy["error"]["data"],
        json!({"max_in_flight_per_user": 2}),
        "{busy}"
    );
    // Bob is not held back by Alice's calls.
    let bobs = stateless(&url, BOB, echo, json!({"text": "b"}), json!({})).await;
    assert_eq!(bobs["result"]["content"][0]["text"], "b", "{bobs}");
    for nap in naps {
        let rested = nap.await.unwrap();
        assert_eq!(rested["result"]["content"][0]["text"], "rested", "{rested}");
    }
    let after = stateless(&url, ALICE, echo, json!({"text": "y"}), json!({})).await;
    assert_eq!(after["result"]["content"][0]["text"], "y", "{after}");
    server.shutdown().await;
}

#[tokio::test]
async fn absurd_limits_are_refused_by_name_never_a_panic() {
    let huge = usize::MAX;
    type Set = fn(McpHttpServer) -> McpHttpServer;
    let settings: [(&str, Set); 11] = [
        ("max_in_flight_total", |s| s.max_in_flight_total(usize::MAX)),
        ("max_in_flight", |s| s.max_in_flight(usize::MAX)),
        ("max_in_flight_per_user", |s| s.max_in_flight_per_user(0)),
        ("max_parked_per_user", |s| s.max_parked_per_user(usize::MAX)),
        ("max_sessions_per_user", |s| s.max_sessions_per_user(0)),
        ("max_sessions", |s| s.max_sessions(usize::MAX)),
        ("max_connections", |s| s.max_connections(usize::MAX)),
        ("max_body_bytes", |s| s.max_body_bytes(0)),
        ("scope_cache", |s| s.scope_cache(usize::MAX)),
        ("body_timeout", |s| s.body_timeout(Duration::MAX)),
        ("idle_timeout", |s| s.idle_timeout(Duration::ZERO)),
    ];
    for (name, set) in settings {
        let refused = set(McpHttpServer::new(host().0))
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap_err();
        let McpHttpError::Setting(error) = &refused else {
            panic!("{name}: {refused}");
        };
        assert_eq!(error.setting(), name, "{refused}");
        let message = refused.to_string();
        assert!(
            message.contains(name) && message.contains(error.range()),
            "{message}"
        );
    }
    // The stdio server's builder and the serving pieces refuse them too.
    let scope = host().0.user_scope(UserInfo::new("alice"));
    let refused = oscova_mcp::McpServer::new(scope)
        .max_in_flight(huge)
        .unwrap_err();
    assert_eq!(refused.setting, "max_in_flight");
    assert_eq!(refused.range, oscova_mcp::MAX_IN_FLIGHT_RANGE);
    assert!(oscova_serve::CallBound::new(huge).is_err());
    let listener = oscova_serve::Listener::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut limits = oscova_serve::Limits::default();
    limits.max_connections = huge;
    let refused = listener.limits(limits).unwrap_err();
    assert_eq!(refused.setting(), "max_connections");
    // The largest values in range serve.
    let (served, _) = host();
    let server = Running::start(
        McpHttpServer::new(served)
            .max_in_flight(*oscova_mcp::MAX_IN_FLIGHT_RANGE.end())
            .max_in_flight_total(*oscova_mcp::http::MAX_IN_FLIGHT_TOTAL_RANGE.end())
            .max_in_flight_per_user(*oscova_mcp::http::MAX_IN_FLIGHT_PER_USER_RANGE.end()),
    )
    .await;
    let client = connect(&server.url, None).await;
    let echoed = call(&client, "test_post__post__echo", json!({"text": "z"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "z");
    client.cancel().await.unwrap();
    server.shutdown().await;
}
