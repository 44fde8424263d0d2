//! Run with: `cargo run -p example-embedding-host`
//!
//! A whole host in under 60 lines: link plugin crates, approve what needs
//! approval, build a scope for one user, list the catalog, call a tool.

use example_hello_plugin::ExampleAgentPlugin;
use oscova_core::{ApprovalDecision, ApprovalRequest, PluginHost, UserInfo, linked_plugins};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Every linked plugin loads; naming the crates keeps the linker from
    // dropping them, and the check fails start-up if one is missing.
    let host = PluginHost::builder()
        .also_load(linked_plugins![ExampleAgentPlugin])
        .require_plugin_ids(["acme.search"])
        .approval_handler(|req: &ApprovalRequest<'_>| {
            println!("approving {} for {}", req.wire_name, req.user.id());
            ApprovalDecision::Approve
        })
        .build()?;
    for diagnostic in host.diagnostics() {
        eprintln!("{diagnostic}");
    }

    let scope = host.user_scope(UserInfo::new("alice").with_time_zone("Europe/Berlin"));
    for tool in scope.tools() {
        println!(
            "{} ({}): {}",
            tool.wire_name(),
            tool.approval(),
            tool.description()
        );
    }

    let echo = scope
        .invoke("acme_search__example__example_echo", json!({"text": "hi"}))
        .await;
    println!("echo -> {}", echo.content);

    let search = scope
        .invoke(
            "acme_search__example__search_records",
            json!({"query": "quarterly", "limit": 2}),
        )
        .await;
    println!("search -> {} (error: {})", search.content, search.is_error);

    let bad = scope
        .invoke("acme_search__example__search_records", json!({"query": 42}))
        .await;
    println!("bad arguments -> {}", bad.content);

    host.shutdown().await;
    Ok(())
}
