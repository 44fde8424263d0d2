//! [`PluginHostBuilder`]: the host's settings and its start-up sequence.
//!
//! Rules: start-up runs in a fixed order — load (manifests, `configure`),
//! publish (wire names, once for all users), build providers, build
//! services — and only a missing required plugin or, with `strict`, a
//! publication error stops it. Every other failure is a diagnostic.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::approval::{ApprovalHandler, ApprovalPolicy, DefaultApproval};
use super::hooks::{AfterToolCall, AfterToolCallHook, BeforeToolCall, BeforeToolCallHook, Hooks};
use super::layer::ToolLayer;
use super::provision::{self, ServiceRegistration};
use super::{
    CallPolicy, Catalog, FilesRoots, HostError, HostInner, Lifecycle, PluginHost, ScopeEnv, load,
    publish,
};
use crate::context::{CredentialResolver, NoCredentials, ServiceContext, UserInfo};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
use crate::http::HttpClient;
use crate::interaction::InteractionHandler;
use crate::plugin::{AgentPlugin, PluginRegistration, RegisteredPlugin};
use crate::process::ProcessSpawnPolicy;
use crate::provider::BoxError;
use crate::redact::Redactor;

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
    layers: Vec<Arc<dyn ToolLayer>>,
    max_argument_bytes: usize,
    services: Vec<ServiceRegistration>,
    files_roots: Option<FilesRoots>,
    blocking: Option<usize>,
    interaction: Option<Arc<dyn InteractionHandler>>,
}

impl fmt::Debug for PluginHostBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginHostBuilder")
            .field("explicit", &self.explicit.as_ref().map(Vec::len))
            .field("strict", &self.strict)
            .field("services", &self.services.len())
            .finish_non_exhaustive()
    }
}

impl Default for PluginHostBuilder {
    fn default() -> Self {
        Self {
            explicit: None,
            extra: Vec::new(),
            instances: Vec::new(),
            required: Vec::new(),
            strict: false,
            approval: ApprovalPolicy {
                handler: None,
                default: DefaultApproval::default(),
                read_only_unasked: false,
            },
            credentials: Arc::new(NoCredentials),
            http: None,
            spawn: ProcessSpawnPolicy::new(),
            before: Vec::new(),
            after: Vec::new(),
            layers: Vec::new(),
            max_argument_bytes: crate::args::DEFAULT_MAX_ARGUMENT_BYTES,
            services: Vec::new(),
            files_roots: None,
            blocking: None,
            interaction: None,
        }
    }
}

impl PluginHostBuilder {
    /// Loads exactly these plugins instead of every linked one, in this
    /// order (then any named with [`also_load`](Self::also_load)
    /// or [`plugin_instance`](Self::plugin_instance)); see
    /// [`build`](Self::build) for what the order decides.
    pub fn plugins(mut self, plugins: impl IntoIterator<Item = PluginRegistration>) -> Self {
        self.explicit = Some(plugins.into_iter().collect());
        self
    }

    /// Loads none of the linked plugins: only those named with
    /// [`also_load`](Self::also_load) or
    /// [`plugin_instance`](Self::plugin_instance), for a host that names
    /// every plugin it runs.
    ///
    /// ```
    /// use oscova_core::PluginHost;
    /// let host = PluginHost::builder().no_linked_plugins().build()?;
    /// assert_eq!(host.plugins().len(), 0);
    /// # Ok::<(), oscova_core::HostError>(())
    /// ```
    pub fn no_linked_plugins(mut self) -> Self {
        self.explicit = Some(Vec::new());
        self
    }

    /// Also loads these plugins, even if the linker dropped their
    /// registration (the list references each crate), besides every linked
    /// one (or those of [`plugins`](Self::plugins)). A plugin both linked
    /// and listed loads once.
    ///
    /// These load first, in this order (several calls append), and then
    /// every other linked plugin in the order of
    /// [`PluginRegistration::linked`]: sorted by normalised id, then type
    /// name, never by how the linker laid the crates out. See
    /// [`build`](Self::build) for what the order decides.
    pub fn also_load(mut self, plugins: impl IntoIterator<Item = PluginRegistration>) -> Self {
        self.extra.extend(plugins);
        self
    }

    /// Loads plugin `P` from this value instead of creating it with
    /// `Default`: how a host configures a plugin (a root directory, a
    /// clock) before it starts. `P` is loaded as with
    /// [`also_load`](Self::also_load); a later value for the same
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
    ///     .no_linked_plugins()
    ///     .plugin_instance(GreetPlugin { greeting: "hej".into() })
    ///     .build()?;
    /// assert_eq!(host.plugins().len(), 1);
    /// # Ok::<(), oscova_core::HostError>(())
    /// ```
    pub fn plugin_instance<P: RegisteredPlugin>(mut self, plugin: P) -> Self {
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
    pub fn approval_handler(self, handler: impl ApprovalHandler) -> Self {
        self.approval_handler_arc(Arc::new(handler) as Arc<dyn ApprovalHandler>)
    }

    /// [`approval_handler`](Self::approval_handler) with a handler the
    /// host already holds, or none (`None`: tools that need approval are
    /// denied).
    pub fn approval_handler_arc(
        mut self,
        handler: impl Into<Option<Arc<dyn ApprovalHandler>>>,
    ) -> Self {
        self.approval.handler = handler.into();
        self
    }

    /// What `ToolApprovalMode::Default` means here.
    pub fn default_approval(mut self, policy: DefaultApproval) -> Self {
        self.approval.default = policy;
        self
    }

    /// Lets `ToolApprovalMode::Default` tools annotated `read_only` run
    /// unasked even when [`default_approval`](Self::default_approval) is
    /// `Required`. Off by default: the annotation is the author's word,
    /// and a host must choose to trust it. `Required` tools are always
    /// asked about.
    pub fn auto_approve_read_only(mut self, auto: bool) -> Self {
        self.approval.read_only_unasked = auto;
        self
    }

    /// The handler that answers tools' questions
    /// ([`ToolInvocation::ask`](crate::ToolInvocation::ask) and its forms)
    /// when the call has none of its own
    /// ([`Invoke::interaction_handler`](crate::host::invoke::Invoke::interaction_handler)).
    /// Without one, tools are told nobody can be asked.
    pub fn interaction_handler(self, handler: impl InteractionHandler) -> Self {
        self.interaction_handler_arc(Arc::new(handler) as Arc<dyn InteractionHandler>)
    }

    /// [`interaction_handler`](Self::interaction_handler) with a handler
    /// the host already holds, or none.
    pub fn interaction_handler_arc(
        mut self,
        handler: impl Into<Option<Arc<dyn InteractionHandler>>>,
    ) -> Self {
        self.interaction = handler.into();
        self
    }

    /// Where user credentials come from.
    pub fn credentials(mut self, resolver: impl CredentialResolver) -> Self {
        self.credentials = Arc::new(resolver);
        self
    }

    /// The HTTP pools shared by toolsets and providers.
    #[cfg(feature = "http")]
    pub fn http_client(mut self, client: HttpClient) -> Self {
        self.http = Some(client);
        self
    }

    /// The process spawn policy for tools and providers.
    pub fn spawn_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.spawn = policy;
        self
    }

    /// The largest argument text [`Arguments::json`](crate::host::invoke::Arguments::json)
    /// may carry, in bytes (default
    /// [`DEFAULT_MAX_ARGUMENT_BYTES`](crate::args::DEFAULT_MAX_ARGUMENT_BYTES)).
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }

    /// Adds a layer around every tool call (see
    /// [`layer`](crate::host::layer)): it may refuse the call, rewrite its
    /// arguments, and observe or replace its outcome, on every path a call
    /// takes through [`UserScope::invoke`](crate::UserScope::invoke) (chat,
    /// MCP, A2A) and for a session extension's tools. Layers run in the
    /// order added, the first seeing the call first; a guard that must see
    /// the arguments as other layers rewrite them is added after them.
    pub fn layer(mut self, layer: impl ToolLayer) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Adds a hook run before every tool call: the synchronous thin form
    /// of a [`layer`](Self::layer) that looks at the call, patches its
    /// arguments or blocks it. Hooks run before every layer, in the order
    /// added.
    pub fn before_tool_call(
        mut self,
        hook: impl Fn(&mut BeforeToolCall<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.before.push(Arc::new(hook));
        self
    }

    /// Adds a hook run after every tool call whose tool gave a result: the
    /// synchronous thin form of a [`layer`](Self::layer) that edits the
    /// result. Hooks run after every layer, in the order added.
    pub fn after_tool_call(
        mut self,
        hook: impl Fn(&mut AfterToolCall<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.after.push(Arc::new(hook));
        self
    }

    /// Adds a service every toolset context can reach by type
    /// ([`AgentPluginContext::service`](crate::AgentPluginContext::service)).
    /// Services are the host's alone: the plugin contract has no service
    /// registration. One per type: a later one of a type already added is
    /// dropped with a diagnostic.
    ///
    /// ```
    /// use oscova_core::prelude::*;
    ///
    /// struct Clock(&'static str);
    ///
    /// let host = PluginHost::builder().no_linked_plugins().service(Clock("utc")).build()?;
    /// assert_eq!(host.service::<Clock>().map(|c| c.0), Some("utc"));
    /// # Ok::<(), oscova_core::HostError>(())
    /// ```
    pub fn service<T: Send + Sync + 'static>(mut self, service: T) -> Self {
        self.services.push(ServiceRegistration::value(service));
        self
    }

    /// Adds a service built at start-up, once every provider is built: the
    /// factory sees them (for example to build routers over them).
    pub fn service_with<T, F>(self, factory: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(&ServiceContext<'_>) -> T + Send + Sync + 'static,
    {
        self.try_service_with(move |ctx| Ok::<T, std::convert::Infallible>(factory(ctx)))
    }

    /// [`service_with`](Self::service_with) for a factory that can fail: an
    /// `Err` leaves the service out, with a diagnostic.
    pub fn try_service_with<T, F, E>(mut self, factory: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(&ServiceContext<'_>) -> Result<T, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        self.services.push(ServiceRegistration::new(factory));
        self
    }

    /// Runs slow synchronous tool bodies off the runtime's worker threads,
    /// at most `limit` at once (later ones wait their turn; a cancelled
    /// call stops waiting): for hosts that serve many calls at once, such
    /// as an MCP server, so a slow synchronous tool stalls neither other
    /// calls nor the server.
    ///
    /// Which bodies are slow is learnt per tool: each synchronous body is
    /// timed, and while a tool's recent bodies took under a millisecond (a
    /// moving average) its next one runs in place, on the worker polling
    /// the call, since handing a worker's tasks to another thread costs
    /// more than such a body. A tool's first body, and every body of a tool
    /// whose bodies have been slow, runs off the workers. What this cannot
    /// prevent: a tool whose bodies were quick blocks one worker once, on
    /// the body that turns slow. A tool that may block at any call (a
    /// network file system, a child process) is better written `async`.
    ///
    /// It uses tokio's `block_in_place`, so it applies on a multi-threaded
    /// runtime; on a current-thread runtime bodies run in place as before.
    /// Off by default: then a synchronous tool with nothing to ask runs
    /// inside the call's first poll, untimed.
    pub fn blocking_sync_tools(mut self, limit: usize) -> Self {
        self.blocking = Some(limit.max(1));
        self
    }

    /// Where each user's files live, when the user has none of its own
    /// ([`UserInfo::with_files_root`]): `roots` is asked once per user
    /// scope; `None` leaves that user without a files root.
    pub fn files_roots(
        mut self,
        roots: impl Fn(&UserInfo) -> Option<PathBuf> + Send + Sync + 'static,
    ) -> Self {
        self.files_roots = Some(Arc::new(roots));
        self
    }

    /// One files root per user under `base`, named by
    /// [`fs::user_dir_name`](crate::fs::user_dir_name): the common case of
    /// [`files_roots`](Self::files_roots).
    pub fn files_roots_under(self, base: impl Into<PathBuf>) -> Self {
        let roots = crate::fs::per_user_roots(base);
        self.files_roots(move |user| roots(user))
    }

    /// Loads, configures and publishes, then builds the providers and the
    /// services.
    ///
    /// # Load order
    ///
    /// Plugins load in one deterministic order:
    ///
    /// 1. the list given to [`plugins`](Self::plugins), in its order;
    /// 2. the plugins named with [`also_load`](Self::also_load) and
    ///    [`plugin_instance`](Self::plugin_instance), in call order, each
    ///    unless already listed;
    /// 3. unless [`plugins`](Self::plugins) was called, every other linked
    ///    plugin, sorted by normalised id, then type name
    ///    ([`PluginRegistration::linked`]), so the same plugins load in the
    ///    same order whatever the linker did.
    ///
    /// "First" always means first in this order: of two plugins with one id
    /// or with ids that normalise to the same wire-name prefix, the first
    /// loads and the other is skipped with a
    /// [`DiagnosticKind::DuplicatePluginId`] diagnostic; of two tools with
    /// one wire name the first is published; providers are built in this
    /// order (each plugin's in registration order), which is the order
    /// [`PluginHost::providers`] lists them in, and so which plugin wins a
    /// speech provider type key; services likewise, after the host's own.
    ///
    /// # Errors
    ///
    /// [`HostError::MissingPlugins`] when a plugin named in
    /// [`require_plugin_ids`](Self::require_plugin_ids) did not load, and
    /// with [`strict`](Self::strict), [`HostError::Publication`] for any
    /// publication error. Everything else a plugin does wrong is a
    /// diagnostic, not an error.
    pub fn build(self) -> Result<PluginHost, HostError> {
        let mut diagnostics = Vec::new();
        let registrations = load::registrations(self.explicit.as_deref(), &self.extra);
        let http = self.http.unwrap_or_else(HttpClient::shared_default);
        let loaded = load::load(registrations, self.instances, &mut diagnostics);

        let missing: Vec<String> = self
            .required
            .iter()
            .filter(|id| !loaded.plugins.iter().any(|p| p.manifest.id == id.as_str()))
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

        let published = publish::publish(&loaded.plugins, &loaded.slots);
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

        // Providers are not tools: their client is not held to a tool's scope.
        let unscoped = http.unrestricted();
        // Children never inherit a value the host knows to be secret.
        let redactor = Redactor::new();
        let spawn = self.spawn.redacting(&redactor);
        let built = provision::build(
            loaded.providers,
            self.services,
            &unscoped,
            &spawn,
            &mut diagnostics,
        );

        Ok(PluginHost {
            inner: Arc::new(HostInner {
                catalog: Catalog {
                    plugins: loaded.plugins,
                    slots: loaded.slots,
                    tools: published.tools,
                    by_name: published.by_name,
                    publication_errors: published.errors,
                },
                provisions: built.provisions,
                policy: CallPolicy {
                    approval: self.approval,
                    layers: {
                        let hooks =
                            (!self.before.is_empty() || !self.after.is_empty()).then(|| {
                                Arc::new(Hooks {
                                    before: self.before,
                                    after: self.after,
                                }) as Arc<dyn ToolLayer>
                            });
                        hooks.into_iter().chain(self.layers).collect()
                    },
                    redactor,
                    max_argument_bytes: self.max_argument_bytes,
                    blocking: self
                        .blocking
                        .map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
                    interaction: self.interaction,
                },
                env: ScopeEnv {
                    credentials: self.credentials,
                    http,
                    unscoped,
                    spawn,
                    files_roots: self.files_roots,
                },
                diagnostics,
                lifecycle: Lifecycle {
                    shutdown: built.shutdown,
                    shut_down: AtomicBool::new(false),
                },
            }),
        })
    }
}
