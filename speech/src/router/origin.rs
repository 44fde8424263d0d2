//! Where a routed provider came from, and the warning for one that lost
//! its type key.
//!
//! Rules: a warning names the dropped implementation, the one that kept
//! the key and the rule that decided (built-in before plugin, else first
//! registration); it is kind [`PROVIDER_DROPPED`] and names the plugin
//! whose provider was dropped.

use std::fmt;

use oscova_core::provider::ProviderTypeKey;
use oscova_core::{Diagnostic, diagnostic::DiagnosticKind};

use super::Routed;

/// The kind of the warning a router gives when a provider loses a type-key
/// collision and is dropped: code `provider_dropped`. The speech routers'
/// own kind, so not a variant of core's [`DiagnosticKind`].
pub const PROVIDER_DROPPED: DiagnosticKind = DiagnosticKind::Other("provider_dropped");

/// Where a routed provider came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderOrigin {
    /// Added by the host as a built-in provider.
    BuiltIn {
        /// The provider's Rust type.
        type_name: String,
    },
    /// Registered by a plugin through its builder.
    Plugin {
        /// The plugin's id.
        plugin_id: String,
        /// The provider's Rust type.
        type_name: String,
    },
}

impl ProviderOrigin {
    /// The provider's Rust type.
    pub fn type_name(&self) -> &str {
        match self {
            Self::BuiltIn { type_name } | Self::Plugin { type_name, .. } => type_name,
        }
    }

    /// The plugin's id, for a plugin provider.
    pub fn plugin_id(&self) -> Option<&str> {
        match self {
            Self::BuiltIn { .. } => None,
            Self::Plugin { plugin_id, .. } => Some(plugin_id),
        }
    }

    pub(super) fn is_builtin(&self) -> bool {
        matches!(self, Self::BuiltIn { .. })
    }
}

impl fmt::Display for ProviderOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BuiltIn { type_name } => write!(f, "built-in `{type_name}`"),
            Self::Plugin {
                plugin_id,
                type_name,
            } => write!(f, "`{type_name}` from plugin `{plugin_id}`"),
        }
    }
}

/// The warning for a candidate that lost its key to an earlier one.
pub(super) fn dropped<P: ?Sized + Routed>(
    key: &ProviderTypeKey,
    loser: &ProviderOrigin,
    winner: &ProviderOrigin,
) -> Diagnostic {
    let rule = if winner.is_builtin() && !loser.is_builtin() {
        "built-in providers take precedence over plugin providers"
    } else {
        "the first registration of a type key is kept"
    };
    let dropped = match loser {
        ProviderOrigin::BuiltIn { type_name } => {
            format!("built-in {} provider `{type_name}`", P::NAME)
        }
        ProviderOrigin::Plugin { .. } => format!("{} provider {loser}", P::NAME),
    };
    let message =
        format!("{dropped} was dropped: type key `{key}` is already taken by {winner} ({rule})");
    Diagnostic::warning(PROVIDER_DROPPED, loser.plugin_id(), message)
}
