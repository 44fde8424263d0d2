//! Diagnostics: every plugin, provider or tool the host skipped, and why.
//!
//! Nothing is skipped silently: each skip is logged through `tracing` when
//! it happens and kept here, so an operator can list them after start-up.
//!
//! Rules: [`DiagnosticKind`] has a variant for each kind of skip this crate
//! itself reports; a kind that only one crate built on this one reports is
//! that crate's own [`DiagnosticKind::Other`] code, so core never grows a
//! variant for one downstream crate. Every kind serializes as its
//! [`code`](DiagnosticKind::code), one snake_case string.

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
///
/// Serialized (and shown) as its [`code`](Self::code): `configure_failed`,
/// `toolset_failed`, ... or an [`Other`](Self::Other)'s own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// A host hook panicked.
    HookFailed,
    /// A service factory failed or panicked; the service was left out.
    ServiceFailed,
    /// A service of this type was already registered; the earlier was kept.
    DuplicateService,
    /// A saved endpoint scope of `local` makes an endpoint that does not
    /// name this machine count as local.
    EndpointScopeOverride,
    /// A kind that a crate built on this one names itself: a stable
    /// snake_case code, not one of the codes above. This crate never makes
    /// one. A router, host or plugin that reports a kind no other crate
    /// reports uses this rather than a new variant here, and exports its
    /// kind as a constant so its callers can match on it:
    ///
    /// ```
    /// use oscova_core::diagnostic::{Diagnostic, DiagnosticKind};
    ///
    /// /// A cache entry was too old to use.
    /// pub const STALE_ENTRY: DiagnosticKind = DiagnosticKind::Other("stale_entry");
    ///
    /// let warning = Diagnostic::warning(STALE_ENTRY, None, "entry `a` is a day old");
    /// assert_eq!(warning.kind, STALE_ENTRY);
    /// assert_eq!(serde_json::to_value(&warning).unwrap()["kind"], "stale_entry");
    /// ```
    Other(&'static str),
}

impl DiagnosticKind {
    /// The kind's stable snake_case code, as it is serialized and logged:
    /// the variant's name (`toolset_failed` for
    /// [`ToolsetFailed`](Self::ToolsetFailed)), or an
    /// [`Other`](Self::Other)'s own code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ConfigureFailed => "configure_failed",
            Self::IncompatibleFramework => "incompatible_framework",
            Self::InvalidManifest => "invalid_manifest",
            Self::DuplicatePluginId => "duplicate_plugin_id",
            Self::MissingPlugin => "missing_plugin",
            Self::ProviderFailed => "provider_failed",
            Self::InvalidMetadata => "invalid_metadata",
            Self::DuplicateWireName => "duplicate_wire_name",
            Self::ToolsetFailed => "toolset_failed",
            Self::HookFailed => "hook_failed",
            Self::ServiceFailed => "service_failed",
            Self::DuplicateService => "duplicate_service",
            Self::EndpointScopeOverride => "endpoint_scope_override",
            Self::Other(code) => code,
        }
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for DiagnosticKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
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
                tracing::warn!(kind = %d.kind, plugin = ?d.plugin, "{}", d.message)
            }
            Severity::Error => tracing::error!(kind = %d.kind, plugin = ?d.plugin, "{}", d.message),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_serialize_as_their_codes() {
        let code = |kind: DiagnosticKind| serde_json::to_value(kind).ok();
        assert_eq!(
            code(DiagnosticKind::ToolsetFailed),
            Some(serde_json::json!("toolset_failed"))
        );
        assert_eq!(
            code(DiagnosticKind::EndpointScopeOverride),
            Some(serde_json::json!("endpoint_scope_override"))
        );
        assert_eq!(
            code(DiagnosticKind::Other("provider_dropped")),
            Some(serde_json::json!("provider_dropped"))
        );
        assert_eq!(DiagnosticKind::Other("x").to_string(), "x");
    }
}
