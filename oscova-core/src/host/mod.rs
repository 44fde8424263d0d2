//! The host: loads plugins, publishes their tools once for all users,
//! builds shared providers and services, and hands out per-user scopes.
//!
//! The stages run one way, each owning its data: `load` (manifests,
//! `configure`) → `publish` (the catalog) → `provision` (providers and
//! services, built once) → `scope` (one user's toolsets) → `invoke` (the
//! pipeline). A stage imports only the stages before it; the policies the
//! pipeline applies (`approval`, `layer`, `hooks`) and the data the stages share
//! (`Catalog`, `CallPolicy`, `ScopeEnv`, each tool's `pace`) are declared
//! before every stage, here and in those three files. `start` (the
//! builder) runs the stages in order. This file is the handle over what
//! they built. Start-up follows the order of ARCHITECTURE.md "The flow":
//! nothing a plugin does can stop the host from starting; it only shows up
//! in [`PluginHost::diagnostics`].

mod approval;
mod hooks;
mod pace;

pub mod invoke;
pub mod layer;
mod load;
mod provision;
mod publish;
mod scope;

mod start;

use rustc_hash::FxHashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use approval::{ApprovalDecision, ApprovalHandler, ApprovalRequest, DefaultApproval};
pub use hooks::{AfterToolCall, AfterToolCallHook, BeforeToolCall, BeforeToolCallHook};
pub use publish::{PublicationError, PublishedTool};
pub use scope::UserScope;
pub use start::PluginHostBuilder;

use crate::context::{CredentialResolver, ServiceContext, UserInfo};
use crate::diagnostic::Diagnostic;
use crate::http::HttpClient;
use crate::plugin::PluginManifest;
use crate::process::ProcessSpawnPolicy;
use crate::provider::ProviderKind;
use crate::provider::PublishedProvider;
use crate::provider::provisions::{Provisions, ShutdownFn};
use crate::redact::Redactor;
use approval::ApprovalPolicy;
use load::{LoadedPlugin, ToolsetSlot};

/// The version of this framework, which plugin `framework` ranges are
/// checked against.
pub const FRAMEWORK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Why a host could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Publication found errors and the host was built with `strict`.
    #[error("publication failed with {} error(s): {}", .0.len(), join(.0))]
    Publication(Vec<PublicationError>),
    /// A plugin required with `require_plugin_ids` is missing.
    #[error("required plugin(s) not loaded: {}", .0.join(", "))]
    MissingPlugins(Vec<String>),
}

fn join(errors: &[PublicationError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where a user's files root comes from when the user has none.
pub(crate) type FilesRoots = Arc<dyn Fn(&UserInfo) -> Option<PathBuf> + Send + Sync>;

/// The catalog: owned by loading and publication, read by scopes.
pub(crate) struct Catalog {
    pub(crate) plugins: Vec<LoadedPlugin>,
    pub(crate) slots: Vec<ToolsetSlot>,
    pub(crate) tools: Vec<PublishedTool>,
    pub(crate) by_name: FxHashMap<Box<str>, usize>,
    pub(crate) publication_errors: Vec<PublicationError>,
}

impl Catalog {
    /// A published tool by wire name.
    #[inline]
    pub(crate) fn tool(&self, wire_name: &str) -> Option<&PublishedTool> {
        self.tools.get(*self.by_name.get(wire_name)?)
    }
}

/// What the invoke pipeline applies to every call.
pub(crate) struct CallPolicy {
    pub(crate) approval: ApprovalPolicy,
    /// Every call's layers, outermost first: the hooks' layer (when the
    /// host has hooks), then the host's layers in registration order.
    pub(crate) layers: Vec<Arc<dyn layer::ToolLayer>>,
    /// Secrets every scope hides.
    pub(crate) redactor: Redactor,
    pub(crate) max_argument_bytes: usize,
    /// Bounds synchronous bodies run off the runtime's workers, when the
    /// host asked for that.
    pub(crate) blocking: Option<Arc<tokio::sync::Semaphore>>,
    /// Answers tools' questions when a call brings no handler of its own.
    pub(crate) interaction: Option<Arc<dyn crate::interaction::InteractionHandler>>,
}

/// What every user scope's contexts are built from.
pub(crate) struct ScopeEnv {
    pub(crate) credentials: Arc<dyn CredentialResolver>,
    /// The toolsets' client: it enforces the running tool's network scope.
    pub(crate) http: HttpClient,
    /// The same pools, for providers and the host itself.
    pub(crate) unscoped: HttpClient,
    pub(crate) spawn: ProcessSpawnPolicy,
    pub(crate) files_roots: Option<FilesRoots>,
}

/// Shutdown, once.
struct Lifecycle {
    shutdown: Vec<ShutdownFn>,
    shut_down: AtomicBool,
}

pub(crate) struct HostInner {
    pub(crate) catalog: Catalog,
    pub(crate) provisions: Arc<Provisions>,
    pub(crate) policy: CallPolicy,
    pub(crate) env: ScopeEnv,
    diagnostics: Vec<Diagnostic>,
    lifecycle: Lifecycle,
}

/// A running host. Cheap to clone; every clone is the same host.
///
/// ```
/// use oscova_core::prelude::*;
/// use serde_json::json;
///
/// pub struct EchoToolset;
/// #[toolset]
/// impl EchoToolset {
///     /// Returns the text unchanged.
///     pub fn echo(text: String) -> String { text }
/// }
///
/// #[plugin(id = "demo.echo")]
/// pub struct EchoPlugin;
/// impl AgentPlugin for EchoPlugin {
///     fn configure(&self, b: &mut AgentPluginBuilder) {
///         b.add_toolset(|_: &AgentPluginContext| EchoToolset);
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let host = PluginHost::builder().plugins(oscova_core::linked_plugins![EchoPlugin]).build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// let result = scope.invoke("demo_echo__echo__echo", json!({"text": "hi"})).await;
/// assert_eq!(result.content, "hi");
/// host.shutdown().await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct PluginHost {
    pub(crate) inner: Arc<HostInner>,
}

impl fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginHost")
            .field("plugins", &self.inner.catalog.plugins.len())
            .field("tools", &self.inner.catalog.tools.len())
            .field("diagnostics", &self.inner.diagnostics.len())
            .finish_non_exhaustive()
    }
}

impl PluginHost {
    /// A builder that loads every linked plugin by default.
    pub fn builder() -> PluginHostBuilder {
        PluginHostBuilder::default()
    }

    /// Manifests of the plugins that loaded, in load order (see
    /// [`PluginHostBuilder::build`]).
    pub fn plugins(&self) -> impl ExactSizeIterator<Item = &'static PluginManifest> + '_ {
        self.inner.catalog.plugins.iter().map(|p| p.manifest)
    }

    /// Everything that was skipped at start-up, with reasons. Each one was
    /// also logged through `tracing` when it happened.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.inner.diagnostics
    }

    /// The publication errors (also among the diagnostics).
    pub fn publication_errors(&self) -> &[PublicationError] {
        &self.inner.catalog.publication_errors
    }

    /// Every published tool, in publication order.
    pub fn tools(&self) -> &[PublishedTool] {
        &self.inner.catalog.tools
    }

    /// A published tool by wire name.
    pub fn tool(&self, wire_name: &str) -> Option<&PublishedTool> {
        self.inner.catalog.tool(wire_name)
    }

    /// The providers of kind `K` built at start-up, in creation order: for
    /// example `host.providers::<dyn ModelProvider>()`.
    pub fn providers<K: ProviderKind + ?Sized>(&self) -> &[PublishedProvider<K>] {
        self.inner.provisions.providers::<K>()
    }

    /// The service of type `T`, when the host registered one.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.provisions.service::<T>()
    }

    /// The host's view as a service factory sees it: its providers,
    /// services, HTTP client and spawn policy, for building things over
    /// them after start-up.
    pub fn service_context(&self) -> ServiceContext<'_> {
        ServiceContext::new(
            &self.inner.provisions,
            &self.inner.env.unscoped,
            &self.inner.env.spawn,
            None,
        )
    }

    /// The host's redactor: secrets known to every scope (API keys passed to
    /// providers). Hosts add values they hand out themselves.
    pub fn redactor(&self) -> &Redactor {
        &self.inner.policy.redactor
    }

    /// The approval handler the host was built with
    /// ([`PluginHostBuilder::approval_handler`]), if any: what a caller
    /// that asks on the host's behalf (an agent session recording the
    /// wait before the person is asked) delegates to.
    pub fn approval_handler(&self) -> Option<Arc<dyn ApprovalHandler>> {
        self.inner.policy.approval.handler.clone()
    }

    /// The host's process spawn policy.
    pub fn spawn_policy(&self) -> &ProcessSpawnPolicy {
        &self.inner.env.spawn
    }

    /// The host's HTTP client (unrestricted, for providers and the host itself).
    #[cfg(feature = "http")]
    pub fn http_client(&self) -> HttpClient {
        self.inner.env.unscoped.clone()
    }

    /// Builds a scope for one user: every toolset factory runs once with
    /// that user's context. A factory that fails or panics drops that
    /// toolset for this user only (see [`UserScope::diagnostics`]).
    pub fn user_scope(&self, user: UserInfo) -> UserScope {
        UserScope::build(self.inner.clone(), user)
    }

    /// Shuts providers down once, in reverse order of creation. Later calls
    /// do nothing.
    pub async fn shutdown(&self) {
        let lifecycle = &self.inner.lifecycle;
        if lifecycle.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        for shutdown in lifecycle.shutdown.iter().rev() {
            shutdown().await;
        }
    }
}
