//! Publication: composing and checking every wire name once, for all
//! users.
//!
//! Owner and tool segments arrive normalised from the macro, so they are
//! only checked here ([`WireName::from_segments`], the one wire-name rule
//! of `oscova-wire`), not recomputed: publication runs at every start and
//! must stay cheap (10,000 tools in well under 10 ms). A tool whose name is
//! taken is reported and dropped; the earlier one is never replaced.
//! Runtime toolsets go through the same checks; their names were
//! normalised when their metadata was built, and a runtime tool is also
//! refused when its name normalises to nothing or its input schema is not a
//! JSON object.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use serde_json::Value;

use super::load::{LoadedPlugin, ToolsetSlot};
use crate::diagnostic::DiagnosticKind;
use crate::plugin::RegisteredInfo;
use crate::tool::{NetworkScope, ToolAnnotations, ToolApprovalMode, ToolInfo, ToolList};
use crate::wire::WireName;

/// A tool in the host's catalog.
#[derive(Debug)]
pub struct PublishedTool {
    wire_name: WireName,
    plugin_id: &'static str,
    toolset_type: Cow<'static, str>,
    pub(crate) slot: usize,
    pub(crate) index: usize,
    info: ToolRef,
    /// How long its synchronous bodies take, when the host times them.
    pub(crate) pace: super::pace::BodyPace,
}

/// Where a published tool's metadata lives.
#[derive(Debug)]
enum ToolRef {
    /// A `#[toolset]` type's.
    Static(&'static ToolInfo),
    /// A runtime toolset's, at this index.
    Runtime(Arc<[ToolInfo]>, usize),
}

impl PublishedTool {
    /// The name models call it by.
    pub fn wire_name(&self) -> &str {
        self.wire_name.as_str()
    }

    /// The id of the plugin it comes from.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin_id
    }

    /// The Rust type of its toolset (a runtime toolset's owner as given).
    pub fn toolset_type(&self) -> &str {
        &self.toolset_type
    }

    /// The description for the model.
    pub fn description(&self) -> &str {
        self.info().description()
    }

    /// The approval mode.
    pub fn approval(&self) -> ToolApprovalMode {
        self.info().approval()
    }

    /// The network scope.
    pub fn network_scope(&self) -> NetworkScope {
        self.info().network_scope()
    }

    /// The input JSON Schema (built once, then cached).
    pub fn input_schema(&self) -> &Value {
        self.info().input_schema()
    }

    /// A title for people, when the tool has one.
    pub fn title(&self) -> Option<&str> {
        self.info().title()
    }

    /// Hints about what the tool does.
    pub fn annotations(&self) -> ToolAnnotations {
        self.info().annotations()
    }

    /// The output JSON Schema of its structured result, when it has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.info().output_schema()
    }

    /// Whether a batch of calls holding it runs one call at a time
    /// ([`ToolInfo::sequential`]).
    pub fn sequential(&self) -> bool {
        self.info().sequential()
    }

    /// Its line in a system prompt's tools section, when it has one
    /// ([`ToolInfo::prompt_snippet`]).
    pub fn prompt_snippet(&self) -> Option<&str> {
        self.info().prompt_snippet()
    }

    /// Its bullets for a system prompt's guidelines
    /// ([`ToolInfo::prompt_guidelines`]).
    pub fn prompt_guidelines(&self) -> &[Cow<'static, str>] {
        self.info().prompt_guidelines()
    }

    /// The tool's metadata.
    #[inline]
    pub fn info(&self) -> &ToolInfo {
        match &self.info {
            ToolRef::Static(info) => info,
            // In range: publication made the index from this list.
            ToolRef::Runtime(tools, index) => &tools[*index],
        }
    }
}

/// A tool that could not be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PublicationError {
    /// Its metadata is invalid.
    #[error("tool `{method}` of `{toolset}` in plugin `{plugin}` was not published: {reason}")]
    InvalidMetadata {
        /// The plugin id.
        plugin: String,
        /// The toolset type.
        toolset: String,
        /// The method.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// Its wire name was taken by an earlier tool, which was kept.
    #[error(
        "duplicate wire name `{wire_name}`: tool `{method}` of `{toolset}` in plugin `{plugin}` was dropped; the earlier `{kept_method}` of `{kept_toolset}` in plugin `{kept_plugin}` is kept"
    )]
    DuplicateWireName {
        /// The contested name.
        wire_name: String,
        /// The dropped tool's plugin.
        plugin: String,
        /// The dropped tool's toolset type.
        toolset: String,
        /// The dropped tool's method.
        method: String,
        /// The kept tool's plugin.
        kept_plugin: String,
        /// The kept tool's toolset type.
        kept_toolset: String,
        /// The kept tool's method.
        kept_method: String,
    },
}

impl PublicationError {
    /// The plugin of the tool that was not published.
    pub fn plugin(&self) -> &str {
        match self {
            Self::InvalidMetadata { plugin, .. } | Self::DuplicateWireName { plugin, .. } => plugin,
        }
    }

    pub(crate) fn kind(&self) -> DiagnosticKind {
        match self {
            Self::InvalidMetadata { .. } => DiagnosticKind::InvalidMetadata,
            Self::DuplicateWireName { .. } => DiagnosticKind::DuplicateWireName,
        }
    }
}

pub(crate) struct Published {
    pub(crate) tools: Vec<PublishedTool>,
    pub(crate) by_name: FxHashMap<Box<str>, usize>,
    pub(crate) errors: Vec<PublicationError>,
}

pub(crate) fn publish(plugins: &[LoadedPlugin], slots: &[ToolsetSlot]) -> Published {
    let capacity = slots
        .iter()
        .map(|s| s.registration.info().tools().len())
        .sum();
    let mut tools: Vec<PublishedTool> = Vec::with_capacity(capacity);
    let mut by_name: FxHashMap<Box<str>, usize> =
        FxHashMap::with_capacity_and_hasher(capacity, Default::default());
    let mut errors = Vec::new();

    for (slot_index, slot) in slots.iter().enumerate() {
        let Some(plugin) = plugins.get(slot.plugin) else {
            continue;
        };
        let toolset = slot.registration.info();
        let shared = match &slot.registration.info {
            RegisteredInfo::Static(_) => None,
            RegisteredInfo::Runtime(info) => match &info.tools {
                ToolList::Runtime(tools) => Some(tools),
                ToolList::Static(_) => None,
            },
        };
        let statics = match slot.registration.info {
            RegisteredInfo::Static(info) => info.tools(),
            RegisteredInfo::Runtime(_) => &[],
        };
        for (index, info) in toolset.tools().iter().enumerate() {
            let invalid = |reason: String| PublicationError::InvalidMetadata {
                plugin: plugin.manifest.id.to_owned(),
                toolset: toolset.type_name().to_owned(),
                method: info.method().to_owned(),
                reason,
            };
            if shared.is_some()
                && let Some(reason) = runtime_problem(toolset.type_name(), info)
            {
                errors.push(invalid(reason));
                continue;
            }
            let wire_name =
                match WireName::from_segments(&plugin.segment, toolset.owner(), info.name()) {
                    Ok(name) => name,
                    Err(e) => {
                        errors.push(invalid(e.to_string()));
                        continue;
                    }
                };
            match by_name.entry(wire_name.as_str().into()) {
                Entry::Occupied(kept) => {
                    let kept = &tools[*kept.get()];
                    errors.push(PublicationError::DuplicateWireName {
                        wire_name: wire_name.to_string(),
                        plugin: plugin.manifest.id.to_owned(),
                        toolset: toolset.type_name().to_owned(),
                        method: info.method().to_owned(),
                        kept_plugin: kept.plugin_id.to_owned(),
                        kept_toolset: kept.toolset_type.clone().into_owned(),
                        kept_method: kept.info().method().to_owned(),
                    });
                }
                Entry::Vacant(slot_entry) => {
                    slot_entry.insert(tools.len());
                    let info = match (statics.get(index), shared) {
                        (Some(info), _) => ToolRef::Static(info),
                        (None, Some(tools)) => ToolRef::Runtime(tools.clone(), index),
                        (None, None) => continue,
                    };
                    tools.push(PublishedTool {
                        wire_name,
                        plugin_id: plugin.manifest.id,
                        toolset_type: toolset.type_name.clone(),
                        slot: slot_index,
                        index,
                        info,
                        pace: Default::default(),
                    });
                }
            }
        }
    }
    Published {
        tools,
        by_name,
        errors,
    }
}

/// What publication refuses in a runtime tool beyond the wire-name rule,
/// which the macro checks at compile time for `#[toolset]` tools.
#[cold]
fn runtime_problem(owner: &str, info: &ToolInfo) -> Option<String> {
    if info.name().is_empty() {
        return Some(format!(
            "the tool name `{}` has no ASCII letter or digit, so it normalises to nothing",
            crate::args::shorten(info.display_name())
        ));
    }
    if normalize_owner_is_empty(owner) {
        return Some(format!(
            "the toolset name `{}` has no ASCII letter or digit, so it normalises to nothing",
            crate::args::shorten(owner)
        ));
    }
    if !info.input_schema().is_object() {
        return Some("its input schema is not a JSON object".to_owned());
    }
    None
}

fn normalize_owner_is_empty(owner: &str) -> bool {
    crate::wire::normalize_segment(owner).is_empty()
}
