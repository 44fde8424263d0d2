//! The conformance plugin: the fixture tools the official MCP conformance
//! suite (npm package `@modelcontextprotocol/conformance`) calls, each
//! doing what the suite's scenario description asks, built only on the
//! public API. Served with short names, so each tool's wire-name tool
//! segment is the fixture's name.

use std::time::Duration;

use oscova_core::prelude::*;

/// The fixture tools.
pub struct ConformanceToolset;

#[toolset]
impl ConformanceToolset {
    /// Returns a simple text response.
    pub fn test_simple_text() -> String {
        "This is a simple text response for testing.".to_owned()
    }

    /// Always fails, with a message.
    pub fn test_error_handling() -> Result<String, String> {
        Err("This tool intentionally returns an error for testing".to_owned())
    }

    /// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
    pub async fn test_tool_with_progress(invocation: &ToolInvocation) -> String {
        for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            invocation.report(ToolProgress::ratio(
                format!("{progress}/100"),
                progress,
                Some(100.0),
            ));
        }
        "Progress test completed".to_owned()
    }
}

/// The plugin that contributes [`ConformanceToolset`].
#[plugin(
    id = "mcp.conformance",
    name = "MCP conformance fixtures",
    framework = ">=0.1"
)]
pub struct ConformancePlugin;

impl AgentPlugin for ConformancePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| ConformanceToolset);
    }
}
