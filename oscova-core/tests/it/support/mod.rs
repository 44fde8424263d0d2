//! The fixture the toolset tests share: a `#[toolset]` with a tool for
//! each behaviour under test, a plugin that counts calls per user, and
//! helpers to reach the tools by name. Each module of the test binary uses part of it.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_core::{UserScope, args::ArgError, tool::ToolInfo};
use serde_json::Value;

/// One condition on a row.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Filter {
    /// The field to look at.
    pub field: String,
    /// The smallest value it may have.
    pub min: u32,
}

/// The toolset under test. `calls` counts every method body that ran.
pub struct SearchToolset {
    pub calls: Arc<AtomicUsize>,
}

impl SearchToolset {
    fn called(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

#[toolset]
impl SearchToolset {
    /// Searches the records index.
    #[tool(name = "search_records")]
    pub fn search(
        &self,
        /// Words to look for.
        query: String,
        /// At most this many rows.
        limit: Option<u32>,
        /// Conditions every row must meet.
        filters: Option<Vec<Filter>>,
    ) -> String {
        self.called();
        format!(
            "{query}:{}:{}",
            limit.unwrap_or(10),
            filters.map_or(0, |f| f.len())
        )
    }

    /// Counts up to a limit.
    pub fn count(&self, limit: u32) -> u32 {
        self.called();
        limit
    }

    /// Echoes after yielding once, so concurrent calls interleave.
    pub async fn echo(&self, text: String) -> String {
        tokio::task::yield_now().await;
        self.called();
        text
    }

    /// Panics at once.
    pub fn explode(&self) -> String {
        self.called();
        panic!("sync boom")
    }

    /// Panics after a suspension point.
    pub async fn explode_later(&self) -> String {
        self.called();
        tokio::task::yield_now().await;
        panic!("async boom")
    }

    /// Sleeps for 30 seconds and ignores cancellation.
    pub async fn sleepy(&self) -> String {
        self.called();
        tokio::time::sleep(Duration::from_secs(30)).await;
        "woke up".to_owned()
    }

    /// Cancels the token it was handed and says who called.
    pub fn cancel_own(&self, token: CancellationToken, invocation: &ToolInvocation) -> String {
        self.called();
        token.cancel();
        invocation.user_id().to_owned()
    }

    /// Reports one progress update per step.
    pub async fn progress(&self, steps: u32, invocation: &ToolInvocation) -> u32 {
        self.called();
        for step in 1..=steps {
            invocation.report(ToolProgress::ratio(
                format!("step {step}"),
                f64::from(step),
                Some(f64::from(steps)),
            ));
            tokio::task::yield_now().await;
        }
        steps
    }

    /// This doc comment loses to the attribute.
    #[tool(description = "Described by the attribute.")]
    pub fn described() {}
}

/// Plugin `test.toolsets` contributes `SearchToolset`; each user gets the
/// counter registered under their id.
#[plugin(id = "test.toolsets")]
pub struct TestPlugin;

impl AgentPlugin for TestPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| SearchToolset {
            calls: counter_for(ctx.user_id()),
        });
    }
}

pub fn counter_for(user: &str) -> Arc<AtomicUsize> {
    static COUNTERS: OnceLock<Mutex<HashMap<String, Arc<AtomicUsize>>>> = OnceLock::new();
    let mut map = COUNTERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    map.entry(user.to_owned()).or_default().clone()
}

/// A fresh host and a scope for `user` (unique per test), with its counter.
pub fn scope(user: &str) -> (PluginHost, UserScope, Arc<AtomicUsize>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![TestPlugin])
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new(user));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    (host, scope, counter_for(user))
}

pub fn wire(tool: &str) -> String {
    format!("test_toolsets__search__{tool}")
}

pub fn info(name: &str) -> (usize, &'static ToolInfo) {
    SearchToolset::toolset_info()
        .tools()
        .iter()
        .enumerate()
        .find(|(_, t)| t.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

/// Calls tool `name` directly through the contract.
pub async fn call_direct(
    toolset: &SearchToolset,
    name: &str,
    args: Value,
    invocation: &ToolInvocation<'_>,
) -> Result<ToolResult, ArgError> {
    let (index, _) = info(name);
    Ok(toolset.dispatch(index, args, invocation)?.finish().await)
}

pub fn invocation() -> ToolInvocation<'static> {
    ToolInvocation::new(Arc::new(UserInfo::new("direct")))
}
