//! Run with: `cargo run -p example-hello-plugin --example call_echo`
//!
//! The seed plugin from the Oscova plugin-builder page, written with
//! `#[toolset]` and `#[plugin]`: plugin `acme.search` contributes
//! `ExampleToolset`, whose `example_echo` tool is published as
//! `acme_search__example__example_echo`.

use std::fmt;
use std::time::Duration;

use oscova_core::prelude::*;
use serde::Serialize;

/// A row of the records index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Record {
    /// The record's id.
    pub id: u32,
    /// The record's title.
    pub title: String,
}

/// The highest number `slow_count` counts to.
const MAX_COUNT: u32 = 10_000;
/// The longest pause `slow_count` makes between steps.
const MAX_DELAY_MS: u32 = 10_000;

/// Why a search failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchError(String);

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Echo and search tools.
pub struct ExampleToolset {
    records: Vec<Record>,
}

impl ExampleToolset {
    /// A toolset over a small built-in index.
    pub fn new() -> Self {
        let titles = ["Quarterly report", "Release notes", "Quarterly plan"];
        Self {
            records: titles
                .iter()
                .zip(1..)
                .map(|(t, id)| Record {
                    id,
                    title: (*t).to_owned(),
                })
                .collect(),
        }
    }
}

impl Default for ExampleToolset {
    fn default() -> Self {
        Self::new()
    }
}

#[toolset]
impl ExampleToolset {
    /// Returns the supplied text unchanged.
    #[tool(name = "example_echo")]
    pub fn echo(
        /// The text to return.
        text: String,
    ) -> String {
        text
    }

    /// Searches the records index for titles containing every word.
    #[tool(name = "search_records", approval = Required)]
    pub async fn search(
        &self,
        /// Words to look for.
        query: String,
        /// At most this many rows.
        limit: Option<u32>,
        invocation: &ToolInvocation,
    ) -> Result<Vec<Record>, SearchError> {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        if words.is_empty() {
            return Err(SearchError(
                "the query is empty; give at least one word".into(),
            ));
        }
        invocation.report(ToolProgress::message(format!("searching for {query:?}")));
        let limit = limit.map_or(usize::MAX, |l| l as usize);
        Ok(self
            .records
            .iter()
            .filter(|r| {
                let title = r.title.to_lowercase();
                words.iter().all(|w| title.contains(w.as_str()))
            })
            .take(limit)
            .cloned()
            .collect())
    }

    /// Counts from 1 to `to`, one step every `delay_ms` milliseconds,
    /// reporting progress at each step; stops early when the call is
    /// cancelled. A demonstration of progress and cancellation.
    #[tool(name = "slow_count")]
    pub async fn slow_count(
        /// The number to count to (at most 10000).
        to: u32,
        /// Milliseconds between steps (default 100, at most 10000).
        delay_ms: Option<u32>,
        invocation: &ToolInvocation,
    ) -> Result<u32, SearchError> {
        if to > MAX_COUNT {
            return Err(SearchError(format!(
                "`to` is {to}; count to at most {MAX_COUNT}"
            )));
        }
        let delay = Duration::from_millis(u64::from(delay_ms.unwrap_or(100).min(MAX_DELAY_MS)));
        let cancelled = invocation.cancellation_token();
        for step in 1..=to {
            // A timeout that completes means the token fired first.
            if tokio::time::timeout(delay, cancelled.cancelled())
                .await
                .is_ok()
            {
                return Err(SearchError(format!("cancelled at {}", step - 1)));
            }
            invocation.report(ToolProgress::ratio(
                format!("counted to {step}"),
                f64::from(step),
                Some(f64::from(to)),
            ));
        }
        Ok(to)
    }

    fn _helper(&self) -> usize {
        self.records.len()
    }
}

/// The seed plugin.
#[plugin(id = "acme.search", name = "Acme Search", framework = ">=0.1")]
pub struct ExampleAgentPlugin;

impl AgentPlugin for ExampleAgentPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_ctx: &AgentPluginContext| ExampleToolset::new());
    }
}

// The repository's README and plugin guide, compiled and run as doctests
// here: this crate has what their examples use (the seed plugin, the kit).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/plugin-guide.md")]
mod plugin_guide {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn echo_has_the_seed_wire_name() {
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![ExampleAgentPlugin])
            .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("alice"));
        let names: Vec<_> = scope.tools().map(|t| t.wire_name().to_owned()).collect();
        assert_eq!(
            names,
            [
                "acme_search__example__example_echo",
                "acme_search__example__search_records",
                "acme_search__example__slow_count"
            ]
        );
        let r = scope
            .invoke("acme_search__example__example_echo", json!({"text": "hi"}))
            .await;
        assert_eq!(r, ToolResult::text("hi"));
        let r = scope
            .invoke(
                "acme_search__example__search_records",
                json!({"query": "quarterly", "limit": 1}),
            )
            .await;
        assert!(!r.is_error, "{r:?}");
        assert_eq!(r.details, json!([{"id": 1, "title": "Quarterly report"}]));
    }

    #[tokio::test]
    async fn slow_count_reports_progress_and_honours_cancellation() {
        use oscova_core::InvokeError;
        use std::sync::{Arc, Mutex};

        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![ExampleAgentPlugin])
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("alice"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let r = scope
            .invoke(
                "acme_search__example__slow_count",
                json!({"to": 3, "delay_ms": 1}),
            )
            .progress(move |p: ToolProgress| sink.lock().unwrap().push(p.progress))
            .await;
        assert_eq!(r.content, "3");
        assert_eq!(*seen.lock().unwrap(), [Some(1.0), Some(2.0), Some(3.0)]);

        let too_far = scope
            .invoke("acme_search__example__slow_count", json!({"to": 10_001}))
            .await;
        assert!(too_far.is_error && too_far.content.contains("at most"));

        let token = CancellationToken::new();
        let cancel = token.clone();
        let call = scope
            .invoke(
                "acme_search__example__slow_count",
                json!({"to": 10_000, "delay_ms": 10_000}),
            )
            .cancellation(token)
            .checked();
        let (outcome, ()) = tokio::join!(call, async move { cancel.cancel() });
        assert!(
            matches!(outcome, Err(InvokeError::Cancelled(_))),
            "{outcome:?}"
        );
    }
}
