//! `network = "none"` for a stdio server: it starts in an empty network
//! namespace, so it cannot reach even a loopback listener of the host. A
//! server declared `internet` reaches the same listener.

use crate::support;

use oscova_core::prelude::*;
use oscova_plugin_mcp::{McpPlugin, network_isolation_available};
use serde_json::json;
use support::{Kind, host, plugin, server, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_none_server_cannot_reach_a_loopback_listener() {
    assert!(
        network_isolation_available(),
        "this test needs `unshare -rn` (Linux user namespaces)"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mcp = plugin(
        McpPlugin::builder()
            .server("notes", server(Kind::Rmcp).network(NetworkScope::None))
            .server("open", server(Kind::Rmcp).network(NetworkScope::Internet)),
    )
    .await;
    let summaries: Vec<String> = mcp
        .status()
        .servers()
        .map(|s| s.summary().to_owned())
        .collect();
    assert!(
        summaries[0].contains("network none: enforced"),
        "{summaries:?}"
    );
    assert!(
        summaries[1].contains("network internet: declared"),
        "{summaries:?}"
    );
    let host = host(mcp);
    assert_eq!(
        host.tool(&tool("connect")).unwrap().network_scope(),
        NetworkScope::None
    );
    let scope = host.user_scope(UserInfo::new("alice"));

    let isolated = scope.invoke(&tool("connect"), json!({"port": port})).await;
    assert!(isolated.is_error, "{isolated:?}");
    assert!(
        isolated.content.contains("cannot connect"),
        "{}",
        isolated.content
    );

    let open = scope
        .invoke("oscova_mcp__open__connect", json!({"port": port}))
        .await;
    assert_eq!(open.content, "connected", "{open:?}");
    drop(listener);
}
