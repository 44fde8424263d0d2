//! The `oscova.web` plugin: fetch a URL and get readable text back.
//!
//! | wire name | does |
//! |---|---|
//! | `oscova_web__web__fetch` | GET a URL (redirects followed) within a size and time limit; HTML becomes plain text, other text comes back as is, binary is refused |
//!
//! The tool declares `NetworkScope::Internet` and sends only through the
//! host's HTTP client from the plugin context, so the host's scope checks
//! apply: it reaches the public Internet only. Loopback, private, shared,
//! link-local, unique-local and cloud metadata destinations (in any
//! spelling of the address, behind a redirect, or behind a name that
//! resolves to one) are refused before connecting, unless the host allowed
//! that destination by name (`HttpClientBuilder::allow_internal`; the
//! `oscova` CLI's `[network] allow`). The result's `details` hold the status, the final URL after
//! redirects, the content type and charset, the byte count and whether
//! the body was cut at the cap. Progress updates report the bytes
//! received so far.
//!
//! # Tutorial
//!
//! Link the plugin, open a user scope, and call `fetch`:
//!
//! ```no_run
//! use oscova_core::prelude::*;
//! use oscova_plugin_web::WebPlugin;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder()
//!     .plugins(oscova_core::linked_plugins![WebPlugin])
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let page = scope
//!     .invoke(
//!         "oscova_web__web__fetch",
//!         json!({"url": "https://example.org/", "max_bytes": 200000, "timeout_secs": 10}),
//!     )
//!     .await;
//! println!("{} ({})", page.content, page.details["status"]);
//! # Ok(()) }
//! ```
//!
//! A host that wants other caps hands a configured plugin to its builder:
//! `PluginHost::builder().plugin_instance(WebPlugin::with_limits(limits))`.
//! The tool's `max_bytes` and `timeout_secs` arguments can lower the caps
//! for one call but never raise them past [`WebLimits::max_bytes`] and
//! [`WebLimits::max_timeout`].
//!
//! Timeouts use tokio's timer, so the host's runtime needs its time driver
//! (`enable_time` or `enable_all`).

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod decode;
mod error;
mod toolset;

use std::time::Duration;

use oscova_core::prelude::*;

pub use error::WebError;
pub use toolset::WebToolset;

/// Size and time caps of `fetch`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebLimits {
    /// Body bytes read when the call does not say (default 1 MiB).
    pub default_max_bytes: u64,
    /// The most body bytes a call may ask for (default 8 MiB).
    pub max_bytes: u64,
    /// The deadline when the call does not say (default 20 s).
    pub default_timeout: Duration,
    /// The longest deadline a call may ask for (default 120 s).
    pub max_timeout: Duration,
    /// The column width HTML text is wrapped to (default 100).
    pub text_width: usize,
}

impl Default for WebLimits {
    fn default() -> Self {
        Self {
            default_max_bytes: 1024 * 1024,
            max_bytes: 8 * 1024 * 1024,
            default_timeout: Duration::from_secs(20),
            max_timeout: Duration::from_secs(120),
            text_width: 100,
        }
    }
}

/// The `oscova.web` plugin: contributes [`WebToolset`] to every user.
#[plugin(
    id = "oscova.web",
    name = "Web",
    framework = ">=0.1",
    description = "Fetch a URL as readable text, with size and time limits."
)]
#[derive(Debug, Clone, Default)]
pub struct WebPlugin {
    limits: WebLimits,
}

impl WebPlugin {
    /// A plugin with these caps.
    pub fn with_limits(limits: WebLimits) -> Self {
        Self { limits }
    }
}

impl AgentPlugin for WebPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let limits = self.limits.clone();
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            WebToolset::new(ctx.http_client(), limits.clone())
        });
    }
}
