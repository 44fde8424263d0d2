//! Pinned catalogs: with a pin, start-up does not contact the server; a
//! tool whose live definition differs from its pin is refused until it is
//! re-pinned; a pin edited by hand is refused.

use crate::support;

use oscova_core::prelude::*;
use oscova_plugin_mcp::McpPlugin;
use serde_json::json;
use support::{Kind, host, plugin, server, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_catalog_is_refused_against_its_pin_until_re_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("oscova.mcp.lock");
    let pinner = McpPlugin::builder()
        .server("notes", server(Kind::Rmcp))
        .lock_file(&lock)
        .spawn_policy(support::spawn_policy());
    let hash = pinner.pin("notes").await.unwrap();
    assert!(hash.starts_with("sha256:") && hash.len() == 71, "{hash}");

    // With the pin, start-up does not start the server: one that cannot
    // start still publishes its pinned tools.
    let unstartable = plugin(
        McpPlugin::builder()
            .server("notes", server(Kind::Rmcp).env("FAIL_AT_START", "1"))
            .lock_file(&lock),
    )
    .await;
    assert!(unstartable.start_diagnostics().is_empty());
    let summary = unstartable
        .status()
        .servers()
        .next()
        .unwrap()
        .summary()
        .to_owned();
    assert!(summary.contains(&hash), "{summary}");
    let h = host(unstartable);
    assert!(h.tool(&tool("shout_text")).is_some());

    // The server changed Shout-Text's description after it was pinned.
    let changed = host(
        plugin(
            McpPlugin::builder()
                .server("notes", server(Kind::Rmcp).env("CHANGED", "1"))
                .lock_file(&lock),
        )
        .await,
    );
    let published = changed.tool(&tool("shout_text")).unwrap();
    assert_eq!(
        published.description(),
        "Shouts the text.",
        "the pin is published"
    );
    let scope = changed.user_scope(UserInfo::new("alice"));
    let refused = scope
        .invoke(&tool("shout_text"), json!({"text": "x"}))
        .await;
    assert!(refused.is_error);
    assert!(
        refused
            .content
            .contains("differs from its pinned definition"),
        "{}",
        refused.content
    );
    assert!(
        refused.content.contains("oscova mcp pin notes"),
        "{}",
        refused.content
    );
    let sum = scope.invoke(&tool("add"), json!({"a": 1, "b": 1})).await;
    assert_eq!(sum.details, json!({"sum": 2}), "unchanged tools still run");
    changed.shutdown().await;

    // Reviewed and re-pinned: accepted.
    let repinner = McpPlugin::builder()
        .server("notes", server(Kind::Rmcp).env("CHANGED", "1"))
        .lock_file(&lock)
        .spawn_policy(support::spawn_policy());
    assert_ne!(repinner.pin("notes").await.unwrap(), hash);
    let repinned = host(
        plugin(
            McpPlugin::builder()
                .server("notes", server(Kind::Rmcp).env("CHANGED", "1"))
                .lock_file(&lock),
        )
        .await,
    );
    let scope = repinned.user_scope(UserInfo::new("alice"));
    assert_eq!(
        scope
            .invoke(&tool("shout_text"), json!({"text": "x"}))
            .await
            .content,
        "X"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_edited_by_hand_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("oscova.mcp.lock");
    McpPlugin::builder()
        .server("notes", server(Kind::Python))
        .lock_file(&lock)
        .spawn_policy(support::spawn_policy())
        .pin("notes")
        .await
        .unwrap();
    let text = std::fs::read_to_string(&lock).unwrap();
    std::fs::write(&lock, text.replace("Shouts the text.", "Shouts, and more.")).unwrap();
    let mcp = plugin(
        McpPlugin::builder()
            .server("notes", server(Kind::Python))
            .lock_file(&lock),
    )
    .await;
    assert!(
        mcp.start_diagnostics()[0].contains("does not match its hash"),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = host(mcp);
    assert!(host.tool(&tool("shout_text")).is_none());
    assert!(
        host.diagnostics()
            .iter()
            .any(|d| d.message.contains("does not match its hash"))
    );
}
