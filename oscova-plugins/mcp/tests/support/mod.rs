//! What the plugin's integration tests share: the two real servers (one
//! written with rmcp, one with the official Python SDK), started as child
//! processes, and a host over the plugin.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::OnceLock;

use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::{PluginHost, SecretString, UserInfo};
use oscova_plugin_mcp::{McpPlugin, McpPluginBuilder, ServerConfig};

/// Which real server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Rmcp,
    Python,
}

pub const KINDS: [Kind; 2] = [Kind::Rmcp, Kind::Python];

/// The rmcp test server (this crate's example), built once per test run.
pub fn rmcp_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // target/<profile>/deps/<this test> → target/<profile>/
        let exe = std::env::current_exe().expect("test binary");
        let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
        oscova_test_support::build_example("rmcp_test_server", dir)
    })
    .clone()
}

/// The Python SDK server's script.
pub fn python_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/notes_server.py")
}

/// A stdio server of `kind`.
pub fn server(kind: Kind) -> ServerConfig {
    match kind {
        Kind::Rmcp => ServerConfig::command(rmcp_server().display().to_string()),
        Kind::Python => ServerConfig::command(
            oscova_test_support::python::mcp_python()
                .display()
                .to_string(),
        )
        .arg(python_script().display().to_string()),
    }
}

/// A spawn policy over a fixed environment holding a host secret, so a
/// test can see it never reaches a server.
pub fn spawn_policy() -> ProcessSpawnPolicy {
    let path = std::env::var("PATH").unwrap_or_default();
    let home = std::env::var("HOME").unwrap_or_default();
    ProcessSpawnPolicy::with_base_env([
        ("PATH", path),
        ("HOME", home),
        ("HOST_SECRET_TOKEN", "host-secret-value".to_owned()),
    ])
}

/// The plugin over these servers, started.
pub async fn plugin(builder: McpPluginBuilder) -> McpPlugin {
    builder.spawn_policy(spawn_policy()).start().await
}

/// A host over the plugin only; users' `notes.token` is `<user>-token-1`.
pub fn host(plugin: McpPlugin) -> PluginHost {
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .spawn_policy(spawn_policy())
        .credentials(|user: &UserInfo, key: &str| {
            (key == "notes.token").then(|| SecretString::from(format!("{}-token-1", user.id())))
        })
        .build()
        .expect("host")
}

/// The wire name of server `notes`'s tool.
pub fn tool(name: &str) -> String {
    format!("oscova_mcp__notes__{name}")
}
