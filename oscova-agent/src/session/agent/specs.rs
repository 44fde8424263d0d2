//! The host's tools as the model is offered them, exported once.
//!
//! Rules: a tool's input schema is exported to the host's
//! [`SchemaProfile`] the first time a session offers it, and that
//! [`ToolSpec`] is reused by every later model call of every session of the
//! host, instead of converting every tool's schema again on each call (the
//! conversion and its allocations were the largest share of an A2A
//! message's CPU time in `examples/a2a-load`'s profile). This holds because
//! the plugin host's catalog is built once and never changes: a published
//! tool keeps its place and its schema for the host's life, and the agent
//! host keeps its plugin host alive. A tool of a scope built from another
//! plugin host is exported on each call, as before. A schema the profile
//! cannot express leaves its tool out, with one tracing warning.

use std::sync::OnceLock;

use oscova_core::host::PublishedTool;
use oscova_core::provider::model::ToolSpec;
use oscova_core::{PluginHost, UserScope};

use crate::chat::export_tool;
use crate::profile::SchemaProfile;

/// One exported spec per published tool of the host, in catalog order.
pub(crate) struct ExportedSpecs {
    profile: SchemaProfile,
    specs: Box<[OnceLock<Option<ToolSpec>>]>,
}

impl ExportedSpecs {
    pub(crate) fn new(plugins: &PluginHost, profile: SchemaProfile) -> Self {
        Self {
            profile,
            specs: plugins.tools().iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// The names of the tools [`of`](Self::of) gives, without copying
    /// their schemas (for the system prompt's tools section).
    pub(crate) fn names(
        &self,
        plugins: &PluginHost,
        scope: &UserScope,
        profile: SchemaProfile,
    ) -> Vec<String> {
        let catalog = plugins.tools();
        scope
            .tools()
            .filter_map(|tool| {
                let exported = match self.slot(catalog, tool, profile) {
                    Some(slot) => slot.get_or_init(|| export_tool(tool, profile)).is_some(),
                    None => export_tool(tool, profile).is_some(),
                };
                exported.then(|| tool.wire_name().to_owned())
            })
            .collect()
    }

    fn slot(
        &self,
        catalog: &[PublishedTool],
        tool: &PublishedTool,
        profile: SchemaProfile,
    ) -> Option<&OnceLock<Option<ToolSpec>>> {
        (profile == self.profile)
            .then(|| place(catalog, tool))
            .flatten()
            .and_then(|index| self.specs.get(index))
    }

    /// The tools of `scope` in `profile`, in publication order.
    pub(crate) fn of(
        &self,
        plugins: &PluginHost,
        scope: &UserScope,
        profile: SchemaProfile,
    ) -> Vec<ToolSpec> {
        let catalog = plugins.tools();
        scope
            .tools()
            .filter_map(|tool| match self.slot(catalog, tool, profile) {
                Some(slot) => slot.get_or_init(|| export_tool(tool, profile)).clone(),
                None => export_tool(tool, profile),
            })
            .collect()
    }
}

/// Where `tool` is in `catalog`, when it is one of its tools (by address:
/// the catalog is one slice for the host's life).
fn place(catalog: &[PublishedTool], tool: &PublishedTool) -> Option<usize> {
    let size = std::mem::size_of::<PublishedTool>().max(1);
    let start = catalog.as_ptr() as usize;
    let at = tool as *const PublishedTool as usize;
    let index = at.checked_sub(start)? / size;
    catalog
        .get(index)
        .filter(|own| std::ptr::eq(*own, tool))
        .map(|_| index)
}
