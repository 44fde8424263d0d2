//! Diagnostics: every plugin, provider or tool the host skipped, and why.
//!
//! Nothing is skipped silently: each skip is logged through `tracing` when
//! it happens and kept here, so an operator can list them after start-up.

use std::fmt;

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something was dropped but the rest works.
    Warning,
    /// Something the author must fix.
    Error,
}

/// What kind of thing went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// `configure` failed or panicked; the plugin was skipped.
    ConfigureFailed,
    /// The plugin's `framework` range excludes this framework version.
    IncompatibleFramework,
    /// The manifest is malformed (bad id, version or range).
    InvalidManifest,
    /// Another plugin already has this id, or one that normalises to the
    /// same wire-name prefix; this one, the later in load order, was skipped.
    DuplicatePluginId,
    /// A plugin the host expected is not linked into this binary.
    MissingPlugin,
    /// A provider factory failed or panicked; the provider was skipped.
    ProviderFailed,
    /// A tool's metadata is invalid; the tool was not published.
    InvalidMetadata,
    /// A wire name was already taken; the earlier tool was kept.
    DuplicateWireName,
    /// A toolset factory failed for one user.
    ToolsetFailed,
    /// A speech provider lost a type-key collision and was dropped.
    ProviderDropped,
    /// A host hook panicked.
    HookFailed,
    /// A service factory failed or panicked; the service was left out.
    ServiceFailed,
    /// A service of this type was already registered; the earlier was kept.
    DuplicateService,
    /// A saved endpoint scope of `local` makes an endpoint that does not
    /// name this machine count as local.
    EndpointScopeOverride,
    /// A source of runtime tools (an MCP server) could not be used: it did
    /// not start, could not list its tools, or its pin is not valid. Its
    /// tools are left out; everything else loads.
    ToolSourceFailed,
}

/// One thing the host skipped, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// What kind of problem.
    pub kind: DiagnosticKind,
    /// The plugin concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// The reason, for a person.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn new(
        severity: Severity,
        kind: DiagnosticKind,
        plugin: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        let d = Self {
            severity,
            kind,
            plugin: plugin.map(str::to_owned),
            message: message.into(),
        };
        match severity {
            Severity::Warning => {
                tracing::warn!(kind = ?d.kind, plugin = ?d.plugin, "{}", d.message)
            }
            Severity::Error => tracing::error!(kind = ?d.kind, plugin = ?d.plugin, "{}", d.message),
        }
        d
    }

    /// A warning; logged when created. For routers and hosts built on this crate.
    pub fn warning(kind: DiagnosticKind, plugin: Option<&str>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, kind, plugin, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match &self.plugin {
            Some(p) => write!(f, "{level}: [{p}] {}", self.message),
            None => write!(f, "{level}: {}", self.message),
        }
    }
}

/// Text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}
