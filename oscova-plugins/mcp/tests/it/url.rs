//! A `url` server: the official Python SDK's streamable HTTP server,
//! started as a child process on loopback, used through the plugin with
//! each user's credential sent as a bearer token.

use crate::support;

use std::time::Duration;

use oscova_core::prelude::*;
use oscova_plugin_mcp::{McpPlugin, ServerConfig};
use serde_json::json;
use support::{host, plugin, python_script, tool};

/// The Python server over HTTP on a free loopback port, and its URL.
async fn http_server() -> (tokio::process::Child, String) {
    // A port the system picks, freed for the server to bind.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = tokio::process::Command::new(oscova_test_support::python::mcp_python())
        .arg(python_script())
        .args(["http", &port.to_string()])
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the Python SDK server starts");
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, format!("http://127.0.0.1:{port}/mcp"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python SDK server did not listen on {port}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_server_is_called_with_each_users_credential_as_a_bearer_token() {
    let (_server, url) = http_server().await;
    let config = ServerConfig::url(url)
        .per_user(true)
        .network(NetworkScope::Local)
        .credential_header("Authorization", "notes.token");
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = host(mcp);
    let shout = host.tool(&tool("shout_text")).expect("listed over HTTP");
    assert_eq!(shout.network_scope(), NetworkScope::Local);

    for user in ["alice", "bob"] {
        let scope = host.user_scope(UserInfo::new(user));
        let result = scope
            .invoke(&tool("shout_text"), json!({"text": "hi"}))
            .await;
        assert_eq!(result.content, "HI", "{user}: {result:?}");
        let header = scope.invoke(&tool("authorization"), json!({})).await;
        let sent: String = header.content.chars().rev().collect();
        assert_eq!(sent, format!("Bearer {user}-token-1"), "{user}: {header:?}");
        let sum = scope.invoke(&tool("add"), json!({"a": 2, "b": 3})).await;
        assert_eq!(sum.details, json!({"sum": 5}), "{user}: {sum:?}");
    }
    host.shutdown().await;
}

#[tokio::test]
async fn a_url_server_that_does_not_answer_is_a_diagnostic() {
    // Nothing listens on this port once the listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let config = ServerConfig::url(format!("http://127.0.0.1:{port}/mcp"))
        .network(NetworkScope::Local)
        .timeout(Duration::from_secs(5));
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    let diagnostics = mcp.start_diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        format!("{:?}", diagnostics[0]).contains("notes"),
        "{diagnostics:?}"
    );
}
