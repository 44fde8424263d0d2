//! Who is served: tokens choose the user and the scope, Origin checks,
//! loopback only without tokens, and short tool names.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_choose_the_user_and_each_user_is_served_from_their_own_scope() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;

    let alice = connect(&server.url, Some(ALICE)).await;
    let bob = connect(&server.url, Some(BOB)).await;
    let whoami = "test_post__post__whoami";
    assert_eq!(
        text(&call(&alice, whoami, json!({})).await.unwrap()),
        "alice"
    );
    assert_eq!(text(&call(&bob, whoami, json!({})).await.unwrap()), "bob");
    assert_eq!(
        text(&call(&alice, whoami, json!({})).await.unwrap()),
        "alice"
    );

    // The official Python SDK's client, in the same process's server.
    let url = server.url.clone();
    let py = tokio::task::spawn_blocking(move || python_client(&url, Some(BOB), whoami, json!({})))
        .await
        .unwrap();
    assert_eq!(py["text"], "bob", "{py}");
    assert_eq!(py["is_error"], false, "{py}");

    // No token, an unknown one, another scheme: 401 with the challenge.
    for auth in [None, Some("Bearer nope"), Some("Basic YWxpY2U6eA==")] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", *a)).collect();
        let response = post(&server.url, INITIALIZE, &headers).await;
        assert_eq!(response.status(), 401, "{auth:?}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
    }
    let python_401 = std::process::Command::new(oscova_test_support::python::mcp_python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/python/mcp_http_client.py"
        ))
        .args([server.url.as_str(), "wrong", whoami])
        .output()
        .unwrap();
    let refusal = String::from_utf8_lossy(&python_401.stdout);
    assert_eq!(
        python_401.status.code(),
        Some(3),
        "the SDK was refused: {refusal}"
    );
    assert!(refusal.contains("refused"), "{refusal}");

    // A session belongs to the user who opened it.
    let opened = post(
        &server.url,
        INITIALIZE,
        &[("authorization", &format!("Bearer {ALICE}"))],
    )
    .await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let as_bob = [
        ("authorization", format!("Bearer {BOB}")),
        ("mcp-session-id", session.clone()),
        ("mcp-protocol-version", "2025-06-18".to_owned()),
    ];
    let as_bob: Vec<(&str, &str)> = as_bob.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(post(&server.url, list, &as_bob).await.status(), 404);

    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_other_than_loopback_and_the_allowed_ones_are_forbidden() {
    let server = Running::start(
        McpHttpServer::new(host().0)
            .default_user("carol")
            .allowed_origins(["https://app.example.com"]),
    )
    .await;
    for (origin, status) in [
        ("http://evil.example", 403),
        ("null", 403),
        ("http://localhost:3000", 200),
        ("http://127.0.0.1:9", 200),
        ("https://app.example.com", 200),
    ] {
        let response = post(&server.url, INITIALIZE, &[("origin", origin)]).await;
        assert_eq!(response.status(), status, "{origin}");
    }
    // Bound to loopback, a foreign Host is DNS rebinding.
    let response = post(&server.url, INITIALIZE, &[("host", "evil.example")]).await;
    assert_eq!(response.status(), 403);
    let elsewhere = format!("http://{}/other", server.addr);
    assert_eq!(post(&elsewhere, INITIALIZE, &[]).await.status(), 404);

    // Without tokens every request is the default user's.
    let url = server.url.clone();
    let py = tokio::task::spawn_blocking(move || {
        python_client(&url, None, "test_post__post__whoami", json!({}))
    })
    .await
    .unwrap();
    assert_eq!(py["text"], "carol", "{py}");
    server.shutdown().await;
}

#[tokio::test]
async fn without_tokens_only_loopback_addresses_are_served() {
    let refused = McpHttpServer::new(host().0)
        .bind("0.0.0.0:0".parse().unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, McpHttpError::NoTokens { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("[[mcp.tokens]]"), "{refused}");
    let with_tokens = with_tokens(McpHttpServer::new(host().0))
        .bind("0.0.0.0:0".parse().unwrap())
        .await;
    assert!(with_tokens.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_names_serve_tool_segments_and_refuse_clashes() {
    let server = Running::start(
        McpHttpServer::new(host().0)
            .tool_names(ToolNames::Short)
            .unwrap(),
    )
    .await;
    let client = connect(&server.url, None).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["whoami", "echo", "nap", "twice", "hold"]);
    assert_eq!(
        text(
            &call(&client, "echo", json!({"text": "short"}))
                .await
                .unwrap()
        ),
        "short"
    );
    match call(&client, "test_post__post__echo", json!({"text": "x"})).await {
        Err(rmcp::ServiceError::McpError(e)) => assert_eq!(e.code.0, -32602, "{e:?}"),
        other => panic!("wire names are not served beside short ones: {other:?}"),
    }
    client.cancel().await.unwrap();
    server.shutdown().await;

    let clashing = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin, OtherPlugin])
        .build()
        .unwrap();
    // Refused when asked for, as by the stdio server, before anything binds.
    let refused = McpHttpServer::new(clashing)
        .tool_names(ToolNames::Short)
        .unwrap_err();
    let message = refused.to_string();
    assert!(
        message.contains("`echo`")
            && message.contains("test_post__post__echo")
            && message.contains("test_other__other__echo"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_2026_07_28_requests_are_each_served_from_their_users_scope() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_post__post__whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    for (token, user) in [(ALICE, "alice"), (BOB, "bob"), (ALICE, "alice")] {
        let auth = format!("Bearer {token}");
        let response = post(
            &server.url,
            body,
            &[
                ("authorization", &auth),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "test_post__post__whoami"),
            ],
        )
        .await;
        assert_eq!(response.status(), 200);
        assert!(
            response.headers().get("mcp-session-id").is_none(),
            "no session in 2026-07-28"
        );
        let text = response.text().await.unwrap();
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        let answer: Value = serde_json::from_str(data).unwrap();
        assert_eq!(answer["id"], 7, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], user, "{answer}");
    }
    let anonymous = post(&server.url, body, &[("mcp-protocol-version", "2026-07-28")]).await;
    assert_eq!(anonymous.status(), 401);
    server.shutdown().await;
}

/// One stateless 2026-07-28 `tools/call` of `twice` by `token`'s user, with
/// `extra` params (the answer and the state of an earlier round): the
/// JSON-RPC answer.
async fn round(url: &str, token: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "test_post__post__twice",
        "arguments": {},
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
            ("mcp-name", "test_post__post__twice"),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_question_waits_between_stateless_requests_for_its_own_user() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0))).await;
    let accept = |state: &Value| {
        json!({
            "requestState": state,
            "inputResponses": {"oscova.ask": {"action": "accept", "content": {}}},
        })
    };

    let first = round(&server.url, ALICE, json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let ask = &result["inputRequests"]["oscova.ask"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_eq!(ask["params"]["message"], "First?", "{first}");
    let state = result["requestState"].clone();

    // Bob cannot answer Alice's call, even with its state.
    let stolen = round(&server.url, BOB, accept(&state)).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");

    // Each round is a request of its own; the call waits between them.
    let second = round(&server.url, ALICE, accept(&state)).await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert_eq!(
        second["result"]["inputRequests"]["oscova.ask"]["params"]["message"],
        "Second?"
    );
    let next = second["result"]["requestState"].clone();
    assert_ne!(next, state, "a new handle for each round");
    let done = round(&server.url, ALICE, accept(&next)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "yes yes for alice",
        "{done}"
    );

    // Each handle was good once.
    let replayed = round(&server.url, ALICE, accept(&state)).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    server.shutdown().await;
}

#[tokio::test]
async fn each_user_reads_their_own_files_root_as_resources_over_http() {
    let base = std::env::temp_dir().join(format!(
        "oscova-mcp-http-files-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    for user in ["alice", "bob"] {
        std::fs::create_dir_all(base.join(user)).unwrap();
        std::fs::write(base.join(user).join("mine.txt"), format!("{user}'s")).unwrap();
    }
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin])
        .service(Gate::default())
        .files_roots_under(&base)
        .build()
        .unwrap();
    let server = McpHttpServer::new(host).resources(oscova_mcp::resource::FilesResources::new());
    let server = Running::start(with_tokens(server)).await;
    let read = |client: &RunningService<RoleClient, ()>, uri: &'static str| {
        let request = rmcp::model::ReadResourceRequestParams::new(uri);
        let peer = client.peer().clone();
        async move { peer.read_resource(request).await }
    };
    let alice = connect(&server.url, Some(ALICE)).await;
    let bob = connect(&server.url, Some(BOB)).await;
    for (client, user) in [(&alice, "alice"), (&bob, "bob")] {
        let got = read(client, "file:///mine.txt").await.unwrap();
        let got = serde_json::to_value(&got.contents).unwrap();
        assert_eq!(got[0]["text"], format!("{user}'s"));
        let listed = client.list_all_resources().await.unwrap();
        assert_eq!(listed.len(), 1, "only their own: {listed:?}");
    }
    // The other user's root is outside this one.
    let refused = read(&bob, "file:///../alice/mine.txt").await.unwrap_err();
    let rmcp::ServiceError::McpError(e) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(e.code.0, -32602, "{e:?}");
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&base);
}

/// Receives resource updates over HTTP.
#[derive(Clone)]
struct Updated(tokio::sync::mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for Updated {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

#[tokio::test]
async fn a_subscribed_file_that_changes_is_an_update_on_the_http_session() {
    let base = std::env::temp_dir().join(format!(
        "oscova-mcp-http-watch-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    std::fs::create_dir_all(base.join("alice")).unwrap();
    std::fs::write(base.join("alice/a.txt"), "one").unwrap();
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin])
        .service(Gate::default())
        .files_roots_under(&base)
        .build()
        .unwrap();
    let server = McpHttpServer::new(host).resources(oscova_mcp::resource::FilesResources::new());
    let server = Running::start(with_tokens(server)).await;
    super::tls_provider();
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).auth_header(ALICE);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = timeout(
        PATIENCE,
        Updated(tx).serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .unwrap()
    .unwrap();
    #[allow(deprecated)]
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new("file:///a.txt"))
        .await
        .unwrap();
    std::fs::write(base.join("alice/a.txt"), "two, longer").unwrap();
    let uri = timeout(PATIENCE, rx.recv()).await.unwrap().unwrap();
    assert_eq!(uri, "file:///a.txt");
    client.cancel().await.unwrap();
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&base);
}

/// Subscribes `client` to `uri` (the legacy `resources/subscribe`).
#[allow(deprecated)]
async fn subscribe(
    client: &RunningService<RoleClient, ()>,
    uri: &str,
) -> Result<(), rmcp::ServiceError> {
    let request = rmcp::model::SubscribeRequestParams::new(uri);
    timeout(PATIENCE, client.subscribe(request))
        .await
        .expect("the subscribe answers")
}

/// The code of a refused request and the bound its `data` names.
fn bound_of(refused: rmcp::ServiceError) -> (i32, Value) {
    let rmcp::ServiceError::McpError(e) = refused else {
        panic!("{refused:?}")
    };
    (e.code.0, e.data.unwrap_or_default())
}

// Issue 36, finding 3: subscriptions were bounded per session only, so one
// user with many sessions held thousands, each polled on its own. Now one
// user's sessions together stay within the user's bound and all users
// within the server's, each refusal naming its bound; a session closed
// gives its subscriptions back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_bounded_per_user_across_sessions_and_in_total() {
    let base = std::env::temp_dir().join(format!(
        "oscova-mcp-http-bounds-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    ));
    for user in ["alice", "bob"] {
        std::fs::create_dir_all(base.join(user)).unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(base.join(user).join(name), "one").unwrap();
        }
    }
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![PostPlugin])
        .service(Gate::default())
        .files_roots_under(&base)
        .build()
        .unwrap();
    let server = McpHttpServer::new(host)
        .resources(oscova_mcp::resource::FilesResources::new())
        .max_subscriptions_per_user(2)
        .max_subscriptions_total(3);
    let bound = with_tokens(server)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let stats = bound.subscription_stats();
    let url = format!("http://{}/mcp", bound.local_addr());
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));

    let alice: Vec<_> = [
        connect(&url, Some(ALICE)).await,
        connect(&url, Some(ALICE)).await,
        connect(&url, Some(ALICE)).await,
    ]
    .into();
    subscribe(&alice[0], "file:///a").await.unwrap();
    subscribe(&alice[1], "file:///b").await.unwrap();
    // Another session of the same user, with none of its own yet.
    let refused = subscribe(&alice[2], "file:///c").await.unwrap_err();
    assert_eq!(
        bound_of(refused),
        (SERVER_BUSY.0, json!({ "max_subscriptions_per_user": 2 }))
    );
    // Subscribing again to what a session holds takes no more room.
    subscribe(&alice[1], "file:///b").await.unwrap();
    let bob = connect(&url, Some(BOB)).await;
    subscribe(&bob, "file:///a").await.unwrap();
    let refused = subscribe(&bob, "file:///b").await.unwrap_err();
    assert_eq!(
        bound_of(refused),
        (SERVER_BUSY.0, json!({ "max_subscriptions_total": 3 }))
    );
    assert_eq!((stats.subscriptions(), stats.watched()), (3, 3));

    // The first session ends (the client's DELETE): its subscription goes
    // with it, and the user's third session has room again.
    let mut alice = alice.into_iter();
    alice.next().unwrap().cancel().await.unwrap();
    let mut waited = 0;
    while stats.subscriptions() != 2 {
        assert!(
            waited < 400,
            "the closed session's subscription is still held"
        );
        waited += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (second, third) = (alice.next().unwrap(), alice.next().unwrap());
    subscribe(&third, "file:///c").await.unwrap();
    assert_eq!((stats.subscriptions(), stats.watched()), (3, 3));
    for client in [second, third, bob] {
        client.cancel().await.unwrap();
    }
    let _ = stop.send(());
    timeout(PATIENCE, serving).await.unwrap().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&base);
}
