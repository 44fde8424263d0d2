//! Publication: composing and checking every wire name once, for all
//! users, and building the shared providers.
//!
//! Owner and tool segments arrive normalised from the macro, so they are
//! only checked here, not recomputed: publication runs at every start and
//! must stay cheap (10,000 tools in well under 10 ms). A tool whose name is
//! taken is reported and dropped; the earlier one is never replaced.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;

use super::diagnostic::panic_message;
use super::{Diagnostic, DiagnosticKind, LoadedPlugin, Severity, ShutdownFn, ToolsetSlot};
use crate::builder::ProviderRegistration;
use crate::context::ProviderContext;
use crate::http::HttpClient;
use crate::process::ProcessSpawnPolicy;
use crate::provider::BoxFuture;
use crate::provider::model::ModelProvider;
use crate::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use crate::tool::{NetworkScope, ToolApprovalMode, ToolInfo};
use crate::wire::{MAX_WIRE_NAME_LEN, SEGMENT_SEPARATOR, WireName};

/// A tool in the host's catalog.
#[derive(Debug)]
pub struct PublishedTool {
    wire_name: WireName,
    plugin_id: &'static str,
    toolset_type: &'static str,
    pub(crate) slot: usize,
    pub(crate) index: usize,
    info: &'static ToolInfo,
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

    /// The Rust type of its toolset.
    pub fn toolset_type(&self) -> &'static str {
        self.toolset_type
    }

    /// The description for the model.
    pub fn description(&self) -> &'static str {
        self.info.description()
    }

    /// The approval mode.
    pub fn approval(&self) -> ToolApprovalMode {
        self.info.approval()
    }

    /// The network scope.
    pub fn network_scope(&self) -> NetworkScope {
        self.info.network_scope()
    }

    /// The input JSON Schema (built once, then cached).
    pub fn input_schema(&self) -> &Value {
        self.info.input_schema()
    }

    /// The static metadata.
    pub fn info(&self) -> &'static ToolInfo {
        self.info
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

/// Whether `segment` is already in normal form (what the macro emits).
fn check_segment(part: &str, segment: &str) -> Result<(), String> {
    let ok = !segment.is_empty()
        && !segment.starts_with('_')
        && !segment.ends_with('_')
        && !segment.contains(SEGMENT_SEPARATOR)
        && segment
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the {part} segment {segment:?} is not a normalised name ([a-z0-9] runs joined by single `_`)"
        ))
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
    let mut name = String::with_capacity(MAX_WIRE_NAME_LEN * 2);

    for (slot_index, slot) in slots.iter().enumerate() {
        let Some(plugin) = plugins.get(slot.plugin) else {
            continue;
        };
        let toolset = slot.registration.info();
        for (index, info) in toolset.tools().iter().enumerate() {
            let invalid = |reason: String| PublicationError::InvalidMetadata {
                plugin: plugin.manifest.id.to_owned(),
                toolset: toolset.type_name().to_owned(),
                method: info.method().to_owned(),
                reason,
            };
            if let Err(reason) = check_segment("owner", toolset.owner())
                .and_then(|()| check_segment("tool", info.name()))
            {
                errors.push(invalid(reason));
                continue;
            }
            name.clear();
            name.push_str(&plugin.segment);
            name.push_str(SEGMENT_SEPARATOR);
            name.push_str(toolset.owner());
            name.push_str(SEGMENT_SEPARATOR);
            name.push_str(info.name());
            if name.len() > MAX_WIRE_NAME_LEN {
                errors.push(invalid(format!(
                    "wire name `{name}` is {} characters long; model APIs accept at most {MAX_WIRE_NAME_LEN}",
                    name.len()
                )));
                continue;
            }
            match by_name.entry(name.as_str().into()) {
                Entry::Occupied(kept) => {
                    let kept = &tools[*kept.get()];
                    errors.push(PublicationError::DuplicateWireName {
                        wire_name: name.clone(),
                        plugin: plugin.manifest.id.to_owned(),
                        toolset: toolset.type_name().to_owned(),
                        method: info.method().to_owned(),
                        kept_plugin: kept.plugin_id.to_owned(),
                        kept_toolset: kept.toolset_type.to_owned(),
                        kept_method: kept.info.method().to_owned(),
                    });
                }
                Entry::Vacant(slot_entry) => {
                    let wire_name = WireName::from_checked(slot_entry.key().clone());
                    slot_entry.insert(tools.len());
                    tools.push(PublishedTool {
                        wire_name,
                        plugin_id: plugin.manifest.id,
                        toolset_type: toolset.type_name(),
                        slot: slot_index,
                        index,
                        info,
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

/// A provider built at start-up, shared by every user.
pub struct PublishedProvider<P: ?Sized> {
    plugin_id: &'static str,
    type_name: &'static str,
    provider: Arc<P>,
}

impl<P: ?Sized> PublishedProvider<P> {
    /// The id of the plugin that registered it.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin_id
    }

    /// The Rust type of the provider.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The provider.
    pub fn provider(&self) -> &Arc<P> {
        &self.provider
    }
}

impl<P: ?Sized> Clone for PublishedProvider<P> {
    fn clone(&self) -> Self {
        Self {
            plugin_id: self.plugin_id,
            type_name: self.type_name,
            provider: self.provider.clone(),
        }
    }
}

impl<P: ?Sized> fmt::Debug for PublishedProvider<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublishedProvider")
            .field("plugin_id", &self.plugin_id)
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

pub(crate) type ProviderParts = (
    &'static str,
    Vec<ProviderRegistration<dyn ModelProvider>>,
    Vec<ProviderRegistration<dyn SpeechRecognitionProvider>>,
    Vec<ProviderRegistration<dyn SpeechSynthesisProvider>>,
);

pub(crate) struct Providers {
    pub(crate) model: Vec<PublishedProvider<dyn ModelProvider>>,
    pub(crate) recognition: Vec<PublishedProvider<dyn SpeechRecognitionProvider>>,
    pub(crate) synthesis: Vec<PublishedProvider<dyn SpeechSynthesisProvider>>,
    pub(crate) shutdown: Vec<ShutdownFn>,
}

/// Runs one provider factory with panics caught; `None` (and a diagnostic)
/// when it fails.
fn build_one<P: ?Sized>(
    registration: &ProviderRegistration<P>,
    ctx: &ProviderContext,
    what: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<PublishedProvider<P>> {
    let outcome = catch_unwind(AssertUnwindSafe(|| (registration.factory)(ctx)));
    let reason = match outcome {
        Ok(Ok(provider)) => {
            return Some(PublishedProvider {
                plugin_id: ctx.plugin_id(),
                type_name: registration.type_name(),
                provider,
            });
        }
        Ok(Err(e)) => format!("failed: {e}"),
        Err(payload) => format!("panicked: {}", panic_message(&*payload)),
    };
    diagnostics.push(Diagnostic::new(
        Severity::Warning,
        DiagnosticKind::ProviderFailed,
        Some(ctx.plugin_id()),
        format!(
            "{what} provider `{}` of plugin `{}` skipped: its factory {reason}",
            registration.type_name(),
            ctx.plugin_id()
        ),
    ));
    None
}

/// How one kind of provider is shut down.
type StopFn<P> = for<'p> fn(&'p P) -> BoxFuture<'p, ()>;

fn stop_model(p: &dyn ModelProvider) -> BoxFuture<'_, ()> {
    p.shutdown()
}

fn stop_recognition(p: &dyn SpeechRecognitionProvider) -> BoxFuture<'_, ()> {
    p.shutdown()
}

fn stop_synthesis(p: &dyn SpeechSynthesisProvider) -> BoxFuture<'_, ()> {
    p.shutdown()
}

/// Builds every provider of one kind, recording each built one's shutdown
/// in creation order (the host runs them in reverse).
fn build_all<P: ?Sized + Send + Sync + 'static>(
    registrations: &[ProviderRegistration<P>],
    ctx: &ProviderContext,
    what: &str,
    stop: StopFn<P>,
    built: &mut Vec<PublishedProvider<P>>,
    shutdown: &mut Vec<ShutdownFn>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for reg in registrations {
        if let Some(p) = build_one(reg, ctx, what, diagnostics) {
            let provider = p.provider.clone();
            shutdown.push(Box::new(move || {
                let provider = provider.clone();
                Box::pin(async move { stop(&provider).await })
            }));
            built.push(p);
        }
    }
}

pub(crate) fn build_providers(
    parts: Vec<ProviderParts>,
    http: &HttpClient,
    spawn: &ProcessSpawnPolicy,
    diagnostics: &mut Vec<Diagnostic>,
) -> Providers {
    let mut out = Providers {
        model: Vec::new(),
        recognition: Vec::new(),
        synthesis: Vec::new(),
        shutdown: Vec::new(),
    };
    let unscoped = http.unrestricted();
    for (plugin_id, model, recognition, synthesis) in parts {
        // One context per plugin, shared by all its provider factories.
        let ctx = ProviderContext::new(plugin_id, unscoped.clone(), spawn.clone());
        build_all(
            &model,
            &ctx,
            "model",
            stop_model,
            &mut out.model,
            &mut out.shutdown,
            diagnostics,
        );
        build_all(
            &recognition,
            &ctx,
            "speech recognition",
            stop_recognition,
            &mut out.recognition,
            &mut out.shutdown,
            diagnostics,
        );
        build_all(
            &synthesis,
            &ctx,
            "speech synthesis",
            stop_synthesis,
            &mut out.synthesis,
            &mut out.shutdown,
            diagnostics,
        );
    }
    out
}
