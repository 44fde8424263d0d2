//! Run with: `cargo run -p example-hello-plugin --example call_echo`
//!
//! Builds a host over the linked plugins, lists the catalog, and calls the
//! seed's `example_echo` tool.

use example_hello_plugin::ExampleAgentPlugin;
use oscova_core::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = PluginHost::builder()
        .also_load(oscova_core::linked_plugins![ExampleAgentPlugin])
        .build()?;
    let scope = host.user_scope(UserInfo::new("alice"));
    for tool in scope.tools() {
        println!("{}: {}", tool.wire_name(), tool.description());
    }
    let result = scope
        .invoke(
            "acme_search__example__example_echo",
            serde_json::json!({"text": "Hello from Oscova"}),
        )
        .await;
    println!("example_echo -> {}", result.content);
    host.shutdown().await;
    Ok(())
}
