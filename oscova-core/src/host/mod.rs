//! The host: loads plugins, publishes their tools once for all users,
//! builds shared providers, and hands out per-user scopes.
//!
//! Start-up follows DESIGN.md "The flow": manifests are checked, each
//! `configure` runs with panics caught, wire names are composed and
//! validated once (every publication error reported, the earlier tool
//! kept), and provider factories run once with failures isolated. Nothing
//! a plugin does can stop the host from starting; it only shows up in
//! [`PluginHost::diagnostics`].

mod approval;
mod call;
mod diagnostic;
mod hooks;
mod publish;
mod scope;

use rustc_hash::FxHashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use approval::{ApprovalDecision, ApprovalHandler, ApprovalRequest, DefaultApproval};
pub use call::{CallOptions, InvokeError};
pub use diagnostic::{Diagnostic, DiagnosticKind, Severity};
pub use hooks::{AfterToolCallHook, BeforeToolCallHook, ToolCallEvent, ToolResultEvent};
pub use publish::{PublicationError, PublishedProvider, PublishedTool};
pub use scope::UserScope;

use crate::builder::{AgentPluginBuilder, ToolsetRegistration};
use crate::context::{CredentialResolver, NoCredentials};
use crate::http::HttpClient;
use crate::plugin::{AgentPlugin, PluginInfo, PluginManifest, PluginRegistration};
use crate::process::ProcessSpawnPolicy;
use crate::provider::BoxFuture;
use crate::provider::model::ModelProvider;
use crate::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use crate::redact::Redactor;
use approval::ApprovalPolicy;
use diagnostic::panic_message;

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

/// A plugin that loaded.
pub(crate) struct LoadedPlugin {
    pub(crate) manifest: &'static PluginManifest,
    pub(crate) type_name: &'static str,
    pub(crate) segment: String,
    /// Index of this plugin's first toolset slot.
    pub(crate) first_slot: usize,
    pub(crate) slots: usize,
}

/// A toolset factory with the plugin it belongs to.
pub(crate) struct ToolsetSlot {
    pub(crate) plugin: usize,
    pub(crate) registration: ToolsetRegistration,
}

type ShutdownFn = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

pub(crate) struct HostInner {
    pub(crate) plugins: Vec<LoadedPlugin>,
    pub(crate) slots: Vec<ToolsetSlot>,
    pub(crate) tools: Vec<PublishedTool>,
    pub(crate) by_name: FxHashMap<Box<str>, usize>,
    pub(crate) publication_errors: Vec<PublicationError>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) model_providers: Vec<PublishedProvider<dyn ModelProvider>>,
    pub(crate) recognition: Vec<PublishedProvider<dyn SpeechRecognitionProvider>>,
    pub(crate) synthesis: Vec<PublishedProvider<dyn SpeechSynthesisProvider>>,
    pub(crate) shutdown: Vec<ShutdownFn>,
    pub(crate) shut_down: AtomicBool,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) credentials: Arc<dyn CredentialResolver>,
    pub(crate) http: HttpClient,
    pub(crate) spawn: ProcessSpawnPolicy,
    pub(crate) redactor: Redactor,
    pub(crate) before: Vec<BeforeToolCallHook>,
    pub(crate) after: Vec<AfterToolCallHook>,
    pub(crate) max_argument_bytes: usize,
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
/// let scope = host.user_scope(UserInfo::new("alice"))?;
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
            .field("plugins", &self.inner.plugins.len())
            .field("tools", &self.inner.tools.len())
            .field("diagnostics", &self.inner.diagnostics.len())
            .finish_non_exhaustive()
    }
}

/// Configures and builds a [`PluginHost`].
pub struct PluginHostBuilder {
    explicit: Option<Vec<PluginRegistration>>,
    extra: Vec<PluginRegistration>,
    instances: Vec<(PluginRegistration, Box<dyn AgentPlugin>)>,
    required: Vec<String>,
    strict: bool,
    approval: ApprovalPolicy,
    credentials: Arc<dyn CredentialResolver>,
    http: Option<HttpClient>,
    spawn: ProcessSpawnPolicy,
    before: Vec<BeforeToolCallHook>,
    after: Vec<AfterToolCallHook>,
    max_argument_bytes: usize,
}

impl fmt::Debug for PluginHostBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginHostBuilder")
            .field("explicit", &self.explicit.as_ref().map(Vec::len))
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

impl PluginHost {
    /// A builder that loads every linked plugin by default.
    pub fn builder() -> PluginHostBuilder {
        PluginHostBuilder {
            explicit: None,
            extra: Vec::new(),
            instances: Vec::new(),
            required: Vec::new(),
            strict: false,
            approval: ApprovalPolicy {
                handler: None,
                default: DefaultApproval::default(),
            },
            credentials: Arc::new(NoCredentials),
            http: None,
            spawn: ProcessSpawnPolicy::new(),
            before: Vec::new(),
            after: Vec::new(),
            max_argument_bytes: crate::args::DEFAULT_MAX_ARGUMENT_BYTES,
        }
    }

    /// Manifests of the plugins that loaded, in load order.
    pub fn plugins(&self) -> impl ExactSizeIterator<Item = &'static PluginManifest> + '_ {
        self.inner.plugins.iter().map(|p| p.manifest)
    }

    /// Everything that was skipped at start-up, with reasons.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.inner.diagnostics
    }

    /// The publication errors (also among the diagnostics).
    pub fn publication_errors(&self) -> &[PublicationError] {
        &self.inner.publication_errors
    }

    /// Every published tool, in publication order.
    pub fn tools(&self) -> &[PublishedTool] {
        &self.inner.tools
    }

    /// A published tool by wire name.
    pub fn tool(&self, wire_name: &str) -> Option<&PublishedTool> {
        let i = *self.inner.by_name.get(wire_name)?;
        self.inner.tools.get(i)
    }

    /// The model providers built at start-up, in creation order.
    pub fn model_providers(&self) -> &[PublishedProvider<dyn ModelProvider>] {
        &self.inner.model_providers
    }

    /// The speech recognition providers built at start-up.
    pub fn speech_recognition_providers(
        &self,
    ) -> &[PublishedProvider<dyn SpeechRecognitionProvider>] {
        &self.inner.recognition
    }

    /// The speech synthesis providers built at start-up.
    pub fn speech_synthesis_providers(&self) -> &[PublishedProvider<dyn SpeechSynthesisProvider>] {
        &self.inner.synthesis
    }

    /// The host's redactor: secrets known to every scope (API keys passed to
    /// providers). Hosts add values they hand out themselves.
    pub fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// The host's process spawn policy.
    pub fn spawn_policy(&self) -> &ProcessSpawnPolicy {
        &self.inner.spawn
    }

    /// The host's HTTP client (unscoped, for providers and the host itself).
    pub fn http_client(&self) -> HttpClient {
        self.inner
            .http
            .with_fixed_scope(crate::tool::NetworkScope::Internet)
    }

    /// Builds a scope for one user: every toolset factory runs once with
    /// that user's context. A factory that fails or panics drops that
    /// toolset for this user only (see [`UserScope::diagnostics`]).
    pub fn user_scope(&self, user: crate::context::UserInfo) -> Result<UserScope, HostError> {
        Ok(UserScope::build(self.inner.clone(), user))
    }

    /// Shuts providers down once, in reverse order of creation. Later calls
    /// do nothing.
    pub async fn shutdown(&self) {
        if self.inner.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        for shutdown in self.inner.shutdown.iter().rev() {
            shutdown().await;
        }
    }
}

impl PluginHostBuilder {
    /// Loads exactly these plugins instead of every linked one.
    pub fn plugins(mut self, plugins: impl IntoIterator<Item = PluginRegistration>) -> Self {
        self.explicit = Some(plugins.into_iter().collect());
        self
    }

    /// Loads every linked plugin and these too, even if the linker dropped
    /// their registration (the list references each crate). A plugin both
    /// linked and listed loads once.
    pub fn expect_linked(mut self, plugins: impl IntoIterator<Item = PluginRegistration>) -> Self {
        self.extra.extend(plugins);
        self
    }

    /// Loads plugin `P` from this value instead of creating it with
    /// `Default`: how a host configures a plugin (a root directory, a
    /// clock) before it starts. `P` is loaded as with
    /// [`expect_linked`](Self::expect_linked); a later value for the same
    /// type replaces an earlier one.
    ///
    /// ```
    /// use oscova_core::prelude::*;
    ///
    /// #[plugin(id = "demo.greet")]
    /// #[derive(Default)]
    /// pub struct GreetPlugin { greeting: String }
    /// impl AgentPlugin for GreetPlugin {
    ///     fn configure(&self, _: &mut AgentPluginBuilder) { assert_eq!(self.greeting, "hej"); }
    /// }
    ///
    /// let host = PluginHost::builder()
    ///     .plugins([])
    ///     .plugin_instance(GreetPlugin { greeting: "hej".into() })
    ///     .build()?;
    /// assert_eq!(host.plugins().len(), 1);
    /// # Ok::<(), oscova_core::HostError>(())
    /// ```
    pub fn plugin_instance<P: PluginInfo>(mut self, plugin: P) -> Self {
        let registration = P::registration();
        self.instances
            .retain(|(r, _)| r.type_name() != registration.type_name());
        self.instances.push((registration, Box::new(plugin)));
        self.extra.push(registration);
        self
    }

    /// Fails `build` unless plugins with these ids loaded.
    pub fn require_plugin_ids<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Fails `build` on any publication error instead of recording it.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The handler asked before tools that need approval run.
    pub fn approval_handler(mut self, handler: impl ApprovalHandler) -> Self {
        self.approval.handler = Some(Box::new(handler));
        self
    }

    /// What `ToolApprovalMode::Default` means here.
    pub fn default_approval(mut self, policy: DefaultApproval) -> Self {
        self.approval.default = policy;
        self
    }

    /// Where user credentials come from.
    pub fn credentials(mut self, resolver: impl CredentialResolver) -> Self {
        self.credentials = Arc::new(resolver);
        self
    }

    /// The HTTP pools shared by toolsets and providers.
    pub fn http_client(mut self, client: HttpClient) -> Self {
        self.http = Some(client);
        self
    }

    /// The process spawn policy for tools and providers.
    pub fn spawn_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.spawn = policy;
        self
    }

    /// The largest argument text [`UserScope::call_json`] accepts, in bytes
    /// (default [`DEFAULT_MAX_ARGUMENT_BYTES`](crate::DEFAULT_MAX_ARGUMENT_BYTES)).
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }

    /// Adds a hook run before every tool call.
    pub fn before_tool_call(
        mut self,
        hook: impl Fn(&mut ToolCallEvent<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.before.push(Arc::new(hook));
        self
    }

    /// Adds a hook run after every tool call.
    pub fn after_tool_call(
        mut self,
        hook: impl Fn(&mut ToolResultEvent<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.after.push(Arc::new(hook));
        self
    }

    /// Loads, configures and publishes, then builds the providers.
    pub fn build(self) -> Result<PluginHost, HostError> {
        let mut diagnostics = Vec::new();
        let registrations = self.collect_registrations();
        let mut instances = self.instances;
        let http = self.http.unwrap_or_else(HttpClient::shared_default);

        let mut plugins = Vec::new();
        let mut slots = Vec::new();
        let mut provider_parts = Vec::new();
        for reg in registrations {
            let manifest = reg.manifest();
            let Some(segment) = check_manifest(manifest, &plugins, &mut diagnostics) else {
                continue;
            };
            let instance = instances
                .iter()
                .position(|(r, _)| {
                    r.manifest().id == manifest.id && r.type_name() == reg.type_name()
                })
                .map(|i| instances.swap_remove(i).1);
            let configured = catch_unwind(AssertUnwindSafe(|| {
                let plugin = instance.unwrap_or_else(|| reg.create());
                let mut builder = AgentPluginBuilder::new();
                plugin.try_configure(&mut builder).map(|()| builder)
            }));
            let reason = match configured {
                Ok(Ok(builder)) => Ok(builder),
                Ok(Err(e)) => Err(format!("configure failed: {e}")),
                Err(payload) => Err(format!("configure panicked: {}", panic_message(&*payload))),
            };
            let builder = match reason {
                Ok(builder) => builder,
                Err(reason) => {
                    diagnostics.push(Diagnostic::new(
                        Severity::Error,
                        DiagnosticKind::ConfigureFailed,
                        Some(manifest.id),
                        format!("plugin `{}` skipped: {reason}", manifest.id),
                    ));
                    continue;
                }
            };
            let parts = builder.into_parts();
            let index = plugins.len();
            let first_slot = slots.len();
            let count = parts.toolsets.len();
            slots.extend(parts.toolsets.into_iter().map(|registration| ToolsetSlot {
                plugin: index,
                registration,
            }));
            plugins.push(LoadedPlugin {
                manifest,
                type_name: reg.type_name(),
                segment,
                first_slot,
                slots: count,
            });
            provider_parts.push((
                manifest.id,
                parts.model_providers,
                parts.recognition,
                parts.synthesis,
            ));
        }

        let missing: Vec<String> = self
            .required
            .iter()
            .filter(|id| !plugins.iter().any(|p| p.manifest.id == id.as_str()))
            .cloned()
            .collect();
        for id in &missing {
            diagnostics.push(Diagnostic::new(
                Severity::Error,
                DiagnosticKind::MissingPlugin,
                Some(id),
                format!(
                    "plugin `{id}` is required but not loaded: link its crate and name it in `linked_plugins!`"
                ),
            ));
        }
        if !missing.is_empty() {
            return Err(HostError::MissingPlugins(missing));
        }

        let published = publish::publish(&plugins, &slots);
        for err in &published.errors {
            diagnostics.push(Diagnostic::new(
                Severity::Error,
                err.kind(),
                Some(err.plugin()),
                err.to_string(),
            ));
        }
        if self.strict && !published.errors.is_empty() {
            return Err(HostError::Publication(published.errors));
        }

        // Children never inherit a value the host knows to be secret.
        let redactor = Redactor::new();
        let spawn = self.spawn.redacting(&redactor);
        let providers = publish::build_providers(provider_parts, &http, &spawn, &mut diagnostics);

        Ok(PluginHost {
            inner: Arc::new(HostInner {
                plugins,
                slots,
                tools: published.tools,
                by_name: published.by_name,
                publication_errors: published.errors,
                diagnostics,
                model_providers: providers.model,
                recognition: providers.recognition,
                synthesis: providers.synthesis,
                shutdown: providers.shutdown,
                shut_down: AtomicBool::new(false),
                approval: self.approval,
                credentials: self.credentials,
                http,
                spawn,
                redactor,
                before: self.before,
                after: self.after,
                max_argument_bytes: self.max_argument_bytes,
            }),
        })
    }

    fn collect_registrations(&self) -> Vec<PluginRegistration> {
        let mut regs: Vec<PluginRegistration> = match &self.explicit {
            Some(list) => list.clone(),
            None => PluginRegistration::linked().copied().collect(),
        };
        for extra in &self.extra {
            let same = |r: &PluginRegistration| {
                r.manifest().id == extra.manifest().id && r.type_name() == extra.type_name()
            };
            if !regs.iter().any(same) {
                regs.push(*extra);
            }
        }
        regs
    }
}

/// Checks a manifest against the framework and earlier plugins; returns the
/// normalised plugin segment, or `None` (with a diagnostic) to skip it.
fn check_manifest(
    manifest: &PluginManifest,
    loaded: &[LoadedPlugin],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let id = manifest.id;
    let mut skip = |kind, message: String| {
        diagnostics.push(Diagnostic::new(Severity::Error, kind, Some(id), message));
        None
    };
    let segment = crate::wire::normalize_segment(id);
    if segment.is_empty() {
        return skip(
            DiagnosticKind::InvalidManifest,
            format!("plugin id {id:?} is empty once normalised; plugin skipped"),
        );
    }
    if let Some(first) = loaded.iter().find(|p| p.manifest.id == id) {
        return skip(
            DiagnosticKind::DuplicatePluginId,
            format!(
                "plugin id `{id}` is already used by `{}`; a second plugin with that id was skipped",
                first.type_name
            ),
        );
    }
    if let Some(first) = loaded.iter().find(|p| p.segment == segment) {
        return skip(
            DiagnosticKind::DuplicatePluginId,
            format!(
                "plugin id `{id}` has the same wire prefix `{segment}` as `{}`; plugin skipped",
                first.manifest.id
            ),
        );
    }
    if let Err(e) = semver::Version::parse(manifest.version) {
        return skip(
            DiagnosticKind::InvalidManifest,
            format!(
                "plugin `{id}` has version {:?}, which is not semver ({e}); plugin skipped",
                manifest.version
            ),
        );
    }
    if !manifest.framework.trim().is_empty() {
        let req = match semver::VersionReq::parse(manifest.framework) {
            Ok(req) => req,
            Err(e) => {
                return skip(
                    DiagnosticKind::InvalidManifest,
                    format!(
                        "plugin `{id}` has framework range {:?}, which is not a semver requirement ({e}); plugin skipped",
                        manifest.framework
                    ),
                );
            }
        };
        let ours =
            semver::Version::parse(FRAMEWORK_VERSION).unwrap_or(semver::Version::new(0, 0, 0));
        if !req.matches(&ours) {
            return skip(
                DiagnosticKind::IncompatibleFramework,
                format!(
                    "plugin `{id}` needs framework `{}`, but this is {FRAMEWORK_VERSION}; plugin skipped",
                    manifest.framework
                ),
            );
        }
    }
    Some(segment)
}
