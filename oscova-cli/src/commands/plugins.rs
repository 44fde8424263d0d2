//! `oscova plugins`: what loaded, and what was skipped and why.
//!
//! Rules: every diagnostic the host recorded at start-up is shown; the
//! command succeeds even when plugins were skipped, since listing them is
//! its job.

use serde_json::{Value, json};

use super::Env;
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_text};

pub(super) fn run(env: &Env) -> Result<ExitStatus, CliError> {
    let host = &env.host;
    let plugins: Vec<Value> = host
        .plugins()
        .map(|m| {
            let tools = host
                .tools()
                .iter()
                .filter(|t| t.plugin_id() == m.id)
                .count();
            json!({
                "id": m.id,
                "name": m.name,
                "version": m.version,
                "description": m.description,
                "framework": m.framework,
                "tools": tools,
            })
        })
        .collect();
    #[cfg(feature = "mcp-servers")]
    let servers: Vec<Value> = host
        .service::<oscova_plugin_mcp::McpStatus>()
        .map(|status| {
            status
                .servers()
                .map(|s| json!({"name": s.name(), "status": s.summary(), "events": s.events()}))
                .collect()
        })
        .unwrap_or_default();
    #[cfg(not(feature = "mcp-servers"))]
    let servers: Vec<Value> = Vec::new();
    if env.json {
        print_json(&json!({
            "plugins": plugins,
            "mcp_servers": servers,
            "diagnostics": host.diagnostics(),
        }))?;
        return Ok(ExitStatus::Success);
    }
    let mut text = String::new();
    if plugins.is_empty() {
        text.push_str("no plugins loaded\n");
    }
    for p in &plugins {
        let tools = p["tools"].as_u64().unwrap_or(0);
        text.push_str(&format!(
            "{} {}  {}  ({tools} tool{})\n",
            p["id"].as_str().unwrap_or_default(),
            p["version"].as_str().unwrap_or_default(),
            p["name"].as_str().unwrap_or_default(),
            if tools == 1 { "" } else { "s" },
        ));
    }
    if !servers.is_empty() {
        text.push_str("\nMCP servers:\n");
        for s in &servers {
            text.push_str(&format!(
                "  {}: {}\n",
                s["name"].as_str().unwrap_or_default(),
                s["status"].as_str().unwrap_or_default()
            ));
        }
    }
    if !host.diagnostics().is_empty() {
        text.push_str("\nskipped at start-up:\n");
        for d in host.diagnostics() {
            text.push_str(&format!("  {d}\n"));
        }
    }
    print_text(text.trim_end())?;
    Ok(ExitStatus::Success)
}
