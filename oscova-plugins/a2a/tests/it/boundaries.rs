//! The boundaries, each refused before any connection and shown so by a
//! server that counts the connections it gets: offline (a non-loopback
//! agent, inside a network namespace where the address exists), the hop
//! limit, a card naming an interface elsewhere, an unknown agent.

use crate::support::scope;

use oscova_plugin_a2a::hops::with_inbound_hops;
use oscova_plugin_a2a::{A2aConfig, AgentConfig};
use oscova_test_kit::TestUser;
use oscova_test_kit::http::{Reply, TestServer};
use serde_json::json;

/// A server answering every request with an agent card whose one
/// JSON-RPC interface is `interface` (or its own URL when `None`), and
/// an echo-like JSON-RPC answer to any POST.
async fn card_server(interface: Option<String>) -> TestServer {
    let interface = std::sync::Arc::new(std::sync::Mutex::new(interface));
    let slot = interface.clone();
    let server = TestServer::start(move |request| {
        if request.method == "GET" {
            let url = slot.lock().unwrap().clone().unwrap_or_default();
            Reply::json(
                200,
                json!({"name": "Fake", "description": "d", "supportedInterfaces": [
                    {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                ], "skills": []}),
            )
        } else {
            Reply::json(
                200,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"message": {
                    "messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}}}),
            )
        }
    })
    .await;
    let mut guard = interface.lock().unwrap();
    if guard.is_none() {
        *guard = Some(server.url());
    }
    drop(guard);
    server
}

fn one_agent(url: &str) -> A2aConfig {
    let mut config = A2aConfig::default();
    config
        .agents
        .insert("peer".to_owned(), AgentConfig::new(url));
    config
}

#[tokio::test]
async fn the_fake_peer_is_reached_when_nothing_refuses() {
    // The control for the refusals below: the same server, reached.
    let server = card_server(None).await;
    let s = scope(one_agent(&server.url()), TestUser::new("alice"));
    let call = s
        .call("send", json!({"agent": "peer", "message": "ping"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "pong");
    let post = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(post.header("A2A-Version"), Some("1.0"));
    let body = post.json();
    assert_eq!(body["method"], "SendMessage");
    assert_eq!(body["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(body["params"]["message"]["metadata"]["oscova.hops"], 1);
}

#[tokio::test]
async fn past_the_hop_limit_a_send_is_refused_before_any_connection() {
    let server = card_server(None).await;
    let mut config = one_agent(&server.url());
    config.max_hops = 2;
    let s = scope(config, TestUser::new("alice"));
    // Handling a message that made one hop: this send is the second.
    let call = with_inbound_hops(1, s.call("send", json!({"agent": "peer", "message": "a"})))
        .await
        .assert_ok();
    assert_eq!(call.text(), "pong");
    let sent = server
        .requests()
        .into_iter()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(
        sent.json()["params"]["message"]["metadata"]["oscova.hops"],
        2
    );
    let before = server.connections();
    with_inbound_hops(2, s.call("send", json!({"agent": "peer", "message": "b"})))
        .await
        .assert_error("hop");
    assert_eq!(server.connections(), before, "a refused send connected");
}

#[tokio::test]
async fn a_card_naming_an_interface_elsewhere_is_refused_and_that_place_never_reached() {
    let elsewhere = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let server = card_server(Some(elsewhere.url())).await;
    let mut config = one_agent(&server.url());
    config.agents.insert(
        "peer".to_owned(),
        AgentConfig::new(server.url()).credential_header("Authorization", "peer.token"),
    );
    let s = scope(
        config,
        TestUser::new("alice").with_credential("peer.token", "secret-1"),
    );
    let call = s
        .call("send", json!({"agent": "peer", "message": "a"}))
        .await
        .assert_error("not on the configured URL's scheme, host and port");
    assert!(!call.text().contains("secret-1"));
    assert_eq!(elsewhere.connections(), 0);
    // The card itself is fetched without the credential.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
}

#[tokio::test]
async fn an_unknown_agent_is_an_error_naming_the_known_ones() {
    let s = scope(one_agent("http://127.0.0.1:9"), TestUser::new("alice"));
    s.call("status", json!({"agent": "nobody", "task_id": "t"}))
        .await
        .assert_error("the configured agents are: `peer`");
}

#[test]
fn offline_refuses_an_agent_not_on_this_machine_before_connecting() {
    oscova_test_support::netns::run_async(
        "boundaries::offline_refuses_an_agent_not_on_this_machine_before_connecting",
        &["10.0.0.5"],
        || async {
            let server =
                TestServer::start_on([10, 0, 0, 5].into(), |_| Reply::json(200, json!({}))).await;
            let url = server.url();
            assert!(url.contains("10.0.0.5"), "{url}");
            let mut config = one_agent(&url);
            config.offline = true;
            let s = scope(config, TestUser::new("alice"));
            for (tool, args) in [
                ("send", json!({"agent": "peer", "message": "a"})),
                ("status", json!({"agent": "peer", "task_id": "t"})),
                ("cancel", json!({"agent": "peer", "task_id": "t"})),
            ] {
                s.call(tool, args)
                    .await
                    .assert_error("offline operation is required");
            }
            let listed = s.call("agents", json!({})).await.assert_ok();
            assert!(
                listed.text().contains("not on this machine"),
                "{}",
                listed.text()
            );
            assert_eq!(server.connections(), 0);

            // The control: not offline, the same agent is reached.
            let s = scope(one_agent(&url), TestUser::new("alice"));
            let _ = s.call("agents", json!({})).await;
            assert!(server.connections() > 0);
        },
    );
}
