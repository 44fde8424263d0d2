//! OAuth access tokens at the A2A endpoints, from a real authorization
//! server on loopback (npm `oidc-provider`, `oscova_test_support::oidc`),
//! checked by the MCP server's `oscova_serve::Authenticator`.

use oscova_serve::OAuthConfig;
use oscova_test_support::oidc::OidcProvider;
use serde_json::{Value, json};

use crate::support::{ALICE, Server};

/// This server's resource identifier (RFC 8707): tokens must name it.
const RESOURCE: &str = "http://a2a.test/";

fn token(provider: &OidcProvider, resource: &str, scope: &str) -> String {
    // `OidcProvider::token` blocks: keep the runtime's other tasks going.
    tokio::task::block_in_place(|| provider.token(resource, scope))
}

/// The status and challenge of a `ListTasks` with `token`.
async fn refused(server: &Server, token: &str) -> (u16, String) {
    let answer = reqwest::Client::new()
        .post(format!("{}/", server.base))
        .bearer_auth(token)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (answer.status().as_u16(), challenge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_token_for_this_resource_is_its_subjects_and_others_are_refused() {
    let provider = OidcProvider::start();
    let config = OAuthConfig::new(provider.issuer()).scopes(["mcp"]);
    let server = Server::start_oauth(config, RESOURCE.to_owned()).await;

    // A real token for this resource: its subject's tasks, apart from
    // the static-token users'.
    let good = token(&provider, RESOURCE, "mcp");
    let sent = server
        .rpc(
            &good,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        )
        .await;
    let id = sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let mine = server.rpc(&good, "ListTasks", json!({})).await;
    assert_eq!(mine["result"]["totalSize"], 1, "{mine}");
    let alices = server.rpc(ALICE, "GetTask", json!({"id": id})).await;
    assert_eq!(
        alices["error"]["code"], -32001,
        "another user's task: {alices}"
    );
    assert_eq!(
        server.rpc(ALICE, "ListTasks", json!({})).await["result"]["totalSize"],
        0
    );

    // A token for another resource, or not a token: 401 with the challenge.
    let elsewhere = token(&provider, "http://elsewhere.test/", "mcp");
    for bad in [elsewhere.as_str(), "not-a-token"] {
        let (status, challenge) = refused(&server, bad).await;
        assert_eq!(status, 401);
        assert!(
            challenge.starts_with("Bearer resource_metadata=")
                && challenge.ends_with("error=\"invalid_token\""),
            "{challenge}"
        );
    }
    // A token without the scope: 403 insufficient_scope.
    let narrow = token(&provider, RESOURCE, "other");
    let (status, challenge) = refused(&server, &narrow).await;
    assert_eq!(status, 403);
    assert!(
        challenge.ends_with("error=\"insufficient_scope\""),
        "{challenge}"
    );
    server.stop().await;
}

/// A genuine token of the provider with `sub` for this resource.
fn signed(provider: &OidcProvider, sub: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": provider.issuer(), "aud": RESOURCE, "sub": sub,
                        "scope": "mcp", "iat": now, "exp": now + 300});
    tokio::task::block_in_place(|| provider.sign(&claims))
}

// Issue 36, finding 6: a token whose claim is a static user's id, or a
// mapping's target, is not that user: it neither sees nor reaches their
// tasks and contexts (sessions). The operator's explicit mapping still
// makes a claim that user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_naming_a_static_user_is_not_that_user_unless_mapped() {
    let provider = OidcProvider::start();
    let config = OAuthConfig::new(provider.issuer())
        .scopes(["mcp"])
        .users([("carol", "alice"), ("mcp-client", "robot")]);
    let server = Server::start_oauth(config, RESOURCE.to_owned()).await;
    let send = async |token: &str, context: &str| {
        let message = json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                                         "contextId": context, "parts": [{"text": "hi"}]}});
        server.rpc(token, "SendMessage", message).await
    };
    let task_of = |sent: Value| sent["result"]["task"]["id"].as_str().unwrap().to_owned();
    let alices = task_of(send(ALICE, "alice-context").await);
    let robots = task_of(send(&token(&provider, RESOURCE, "mcp"), "robot-context").await);

    for sub in ["alice", "robot"] {
        let claimed = signed(&provider, sub);
        for theirs in [&alices, &robots] {
            let got = server.rpc(&claimed, "GetTask", json!({"id": theirs})).await;
            assert_eq!(got["error"]["code"], -32001, "{sub}: {got}");
        }
        let listed = server.rpc(&claimed, "ListTasks", json!({})).await;
        assert_eq!(listed["result"]["totalSize"], 0, "{sub}: {listed}");
        // The user's context id names a context (a session) of the
        // token's own user: the user's tasks in it stay theirs alone.
        let context = format!("{sub}-context");
        let mine = task_of(send(&claimed, &context).await);
        let filter = json!({"contextId": context});
        let listed = server.rpc(&claimed, "ListTasks", filter.clone()).await;
        assert_eq!(
            listed["result"]["tasks"][0]["id"],
            mine.as_str(),
            "{listed}"
        );
        assert_eq!(listed["result"]["totalSize"], 1, "{sub}: {listed}");
        let theirs = if sub == "alice" {
            ALICE.to_owned()
        } else {
            token(&provider, RESOURCE, "mcp")
        };
        let listed = server.rpc(&theirs, "ListTasks", filter).await;
        assert_eq!(listed["result"]["totalSize"], 1, "{sub}: {listed}");
        assert_ne!(
            listed["result"]["tasks"][0]["id"],
            mine.as_str(),
            "{listed}"
        );
    }

    // Mapped explicitly, a claim is the user it names.
    let carol = signed(&provider, "carol");
    let got = server.rpc(&carol, "GetTask", json!({"id": alices})).await;
    assert_eq!(got["result"]["id"], alices.as_str(), "{got}");
    let again = token(&provider, RESOURCE, "mcp");
    let got = server.rpc(&again, "GetTask", json!({"id": robots})).await;
    assert_eq!(got["result"]["id"], robots.as_str(), "{got}");
    server.stop().await;
}
