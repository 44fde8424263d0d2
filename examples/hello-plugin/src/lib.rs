//! Run with: `cargo run -p example-hello-plugin --example call_echo`
//!
//! The seed plugin from the Oscova plugin-builder page, written with
//! `#[toolset]` and `#[plugin]`: plugin `acme.search` contributes
//! `ExampleToolset`, whose `example_echo` tool is published as
//! `acme_search__example__example_echo`.

use std::fmt;

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
        let scope = host.user_scope(UserInfo::new("alice")).unwrap();
        let names: Vec<_> = scope.tools().map(|t| t.wire_name().to_owned()).collect();
        assert_eq!(
            names,
            [
                "acme_search__example__example_echo",
                "acme_search__example__search_records"
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
}
