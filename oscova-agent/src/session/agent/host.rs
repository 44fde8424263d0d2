//! [`AgentHost`]: what every session agent of a host shares (the plugin
//! host, the session store, the models, the extensions), and
//! [`AgentSession`]'s life: activation, switch, shutdown.
//!
//! Rules: extensions load in order, the host's first (in the order they
//! were added), then the session's own; that order is the dispatch order.
//! Activation registers; the session then binds the API and dispatches
//! `SessionStartEvent` (new, resume or switch). A switch asks
//! `SessionBeforeSwitchEvent` first (cancel keeps the current session),
//! then `SessionShutdownEvent`, then marks every API and context of the
//! old session stale and activates fresh instances on the new one.
//! The session's model is the branch's latest when this host has its
//! provider, else the host's first model.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use oscova_core::host::ApprovalHandler;
use oscova_core::interaction::InteractionHandler;
use oscova_core::provider::model::ModelProviderConfig;
use oscova_core::{CancellationToken, PluginHost, SecretString, UserInfo, UserScope};

use super::api::SessionApi;
use super::builder::AgentHostBuilder;
use super::deliver::LiveSessions;
use super::dispatch::{dispatch, panic_text};
use super::error::AgentError;
use super::events::{
    SessionBeforeSwitchEvent, SessionShutdownEvent, SessionStartEvent, SessionStartReason,
};
use super::extension::{Extension, ExtensionFactory, factory_of, factory_with};
use super::specs::ExportedSpecs;
use super::state::{ModelChoice, Queues, Shared, State};
use super::{AgentEvent, ExtensionErrorReport};
use crate::chat::model_provider;
use crate::profile::SchemaProfile;
use crate::session::compaction::CompactionSettings;
use crate::session::{Session, SessionStore};

/// What every session agent of a host shares. Cheap to clone.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use oscova_agent::session::MemoryStore;
/// use oscova_agent::session::agent::{AgentHost, AgentSessionOptions, Extension, SessionApi, AgentError};
/// use oscova_core::prelude::*;
/// use oscova_core::provider::model::ModelProviderConfig;
///
/// #[derive(Default)]
/// struct Quiet;
/// impl Extension for Quiet {
///     fn name(&self) -> &str { "quiet" }
///     fn activate(&mut self, _: &mut SessionApi) -> Result<(), AgentError> { Ok(()) }
/// }
///
/// let model = ModelProviderConfig::new("ollama").model("llama3.2");
/// let agents = AgentHost::builder(PluginHost::builder().build()?, Arc::new(MemoryStore::new()))
///     .model(model)
///     .add_extension::<Quiet>()
///     .build()?; // refused unless a linked plugin registers `ollama`
/// let mut session = agents
///     .session(UserInfo::new("alice"), "trip", AgentSessionOptions::new())
///     .await?;
/// let outcome = session.prompt("Plan a trip to Lisbon").await?;
/// println!("{}", outcome.text);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AgentHost {
    pub(crate) inner: Arc<HostParts>,
}

impl std::fmt::Debug for AgentHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentHost")
            .field("models", &self.inner.models.len())
            .field("extensions", &self.inner.extensions.len())
            .finish_non_exhaustive()
    }
}

pub(crate) struct HostParts {
    pub(crate) plugins: PluginHost,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) models: Vec<(ModelProviderConfig, Option<SecretString>)>,
    pub(crate) extensions: Vec<ExtensionFactory>,
    pub(crate) system_prompt: String,
    pub(crate) offline: bool,
    pub(crate) max_turns: usize,
    pub(crate) profile: SchemaProfile,
    pub(crate) stream: bool,
    pub(crate) compaction: Option<CompactionSettings>,
    pub(crate) live: LiveSessions,
    /// The catalog's tools exported to `profile`, filled as offered.
    pub(crate) specs: ExportedSpecs,
}

impl HostParts {
    /// The provider `key` with its configuration, `model` replacing the
    /// configured model when given.
    pub(crate) fn model_for(
        &self,
        key: &str,
        model: Option<&str>,
    ) -> Result<ModelChoice, AgentError> {
        let provider = model_provider(&self.plugins, key)
            .ok_or_else(|| AgentError::UnknownProvider(key.to_owned()))?;
        let (mut config, api_key) = self
            .models
            .iter()
            .find(|(c, _)| c.provider.as_str() == key)
            .cloned()
            .unwrap_or_else(|| (ModelProviderConfig::new(key), None));
        if let Some(model) = model {
            config.model = Some(model.to_owned());
        }
        if config.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            config.model = provider.default_model();
        }
        Ok(ModelChoice {
            provider,
            config,
            api_key,
        })
    }
}

impl AgentHost {
    /// A builder over the plugin host (its tools and model providers) and
    /// the store sessions live in.
    pub fn builder(plugins: PluginHost, store: Arc<dyn SessionStore>) -> AgentHostBuilder {
        AgentHostBuilder::new(plugins, store)
    }

    /// The plugin host.
    pub fn plugins(&self) -> &PluginHost {
        &self.inner.plugins
    }

    /// The user's session `name` (created when missing) with its agent
    /// started: extensions activated, `SessionStartEvent` dispatched.
    pub async fn session(
        &self,
        user: UserInfo,
        name: &str,
        options: AgentSessionOptions,
    ) -> Result<AgentSession, AgentError> {
        let session = Session::open_or_create(self.inner.store.clone(), user, name).await?;
        self.start(session, options).await
    }

    /// Starts the agent on a session the caller opened.
    pub async fn start(
        &self,
        session: Session,
        options: AgentSessionOptions,
    ) -> Result<AgentSession, AgentError> {
        let reason = if session.entries().is_empty() {
            SessionStartReason::New
        } else {
            SessionStartReason::Resume
        };
        let (shared, extensions) = activate(self, session, &options, None).await;
        let mut agent = AgentSession {
            shared,
            host: self.clone(),
            options,
            extensions,
            parent_cancel: CancellationToken::new(),
        };
        agent.started(reason).await;
        Ok(agent)
    }
}

/// What one session adds to its host's defaults.
#[derive(Clone, Default)]
pub struct AgentSessionOptions {
    pub(crate) extensions: Vec<ExtensionFactory>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) interaction: Option<Arc<dyn InteractionHandler>>,
    pub(crate) approval: Option<Arc<dyn ApprovalHandler>>,
    pub(crate) sink: Option<super::AgentEventSink>,
    pub(crate) model: Option<(String, Option<String>)>,
    pub(crate) wait_expiry: Option<std::time::Duration>,
}

impl std::fmt::Debug for AgentSessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSessionOptions")
            .field("extensions", &self.extensions.len())
            .field("cwd", &self.cwd)
            .field("has_ui", &self.interaction.is_some())
            .field("approval_handler", &self.approval.is_some())
            .finish_non_exhaustive()
    }
}

impl AgentSessionOptions {
    /// No extra extensions, the process's directory, no UI, no events.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an extension for this session only (after the host's), made
    /// with `T::default()`.
    pub fn extension<T: Extension + Default>(mut self) -> Self {
        self.extensions.push(factory_of::<T>());
        self
    }

    /// Adds an extension for this session only, made by `make`.
    pub fn extension_with<T: Extension>(
        mut self,
        make: impl Fn() -> T + Send + Sync + 'static,
    ) -> Self {
        self.extensions.push(factory_with(make));
        self
    }

    /// The session directory: where `exec` runs processes (default: the
    /// process's working directory).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Who answers questions (`ctx.confirm`, `ctx.choose`): the UI. Without
    /// one, `has_ui` is false.
    pub fn interaction_handler(mut self, handler: impl InteractionHandler) -> Self {
        self.interaction = Some(Arc::new(handler));
        self
    }

    /// Who approves this session's scope tool calls that need approval
    /// (a `Required` tool, and a `Default` one when the host's policy
    /// says so), in front of the host's
    /// [`PluginHost::approval_handler`](oscova_core::PluginHost::approval_handler),
    /// which is then not asked. The wait is kept in the session first,
    /// as for the host's ([`wait_expiry`](Self::wait_expiry)): the
    /// handler is asked once the call's
    /// [`CallWait`](crate::session::CallWait) is committed, and asked
    /// again for the same call by the next run of the session after a
    /// restart. An A2A task's run sets one that asks the task's client
    /// (`INPUT_REQUIRED`).
    ///
    /// ```
    /// use oscova_agent::session::agent::AgentSessionOptions;
    /// use oscova_core::{ApprovalDecision, ApprovalRequest};
    ///
    /// let options = AgentSessionOptions::new()
    ///     .approval_handler(|request: &ApprovalRequest<'_>| {
    ///         ApprovalDecision::from(request.wire_name.ends_with("__read"))
    ///     });
    /// # let _ = options;
    /// ```
    pub fn approval_handler(mut self, handler: impl ApprovalHandler) -> Self {
        self.approval = Some(Arc::new(handler));
        self
    }

    /// As [`approval_handler`](Self::approval_handler), with a handler the
    /// caller already holds; `None` leaves the host's.
    pub fn approval_handler_arc(mut self, handler: Option<Arc<dyn ApprovalHandler>>) -> Self {
        self.approval = handler;
        self
    }

    /// Starts with the provider `provider` (one of the host's models) and
    /// `model` (its configured one when `None`), whatever model the
    /// branch last used: a person's explicit choice.
    pub fn model(mut self, provider: impl Into<String>, model: Option<String>) -> Self {
        self.model = Some((provider.into(), model));
        self
    }

    /// How long a tool call waits for a person's approval before it ends
    /// as expired (default: 24 hours). The wait is kept in the session
    /// before the person is asked ([`CallWait`](crate::session::CallWait));
    /// a process that stops while it waits leaves it to the next run of
    /// the session, in any process sharing the store, which asks again
    /// until this expiry, counted from the first asking, and never after.
    pub fn wait_expiry(mut self, expiry: std::time::Duration) -> Self {
        self.wait_expiry = Some(expiry);
        self
    }

    /// Receives [`AgentEvent`]s: streamed text, tool progress, extension
    /// errors.
    pub fn on_event(mut self, sink: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.sink = Some(Arc::new(sink));
        self
    }
}

/// A session with its agent: extensions activated, ready for prompts and
/// commands. See [the module](super) for the rules.
pub struct AgentSession {
    pub(crate) shared: Arc<Shared>,
    pub(crate) host: AgentHost,
    pub(crate) options: AgentSessionOptions,
    /// Kept alive as long as the session: handlers may share their state.
    pub(crate) extensions: Vec<Box<dyn Extension>>,
    /// Cancels every run (each run gets a child of it).
    pub(crate) parent_cancel: CancellationToken,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("session", &self.shared.session_id)
            .field("extensions", &self.extensions.len())
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    async fn started(&mut self, reason: SessionStartReason) {
        self.shared.bound.store(true, Ordering::Release);
        // Failures were reported; a session start has nothing to fail.
        let _ = dispatch(&self.shared, SessionStartEvent { reason }).await;
    }

    /// Switches to the user's session `name` (created when missing).
    /// `Ok(false)`: a handler cancelled the switch and the session is
    /// unchanged.
    pub async fn switch(&mut self, name: &str) -> Result<bool, AgentError> {
        let event = SessionBeforeSwitchEvent {
            target: name.to_owned(),
            cancelled: None,
        };
        let event = dispatch(&self.shared, event).await?;
        if event.cancelled.is_some() {
            return Ok(false);
        }
        let user = self.shared.scope.user().clone();
        let session = Session::open_or_create(self.host.inner.store.clone(), user, name).await?;
        self.shutdown().await;
        let (shared, extensions) = activate(&self.host, session, &self.options, None).await;
        self.shared = shared;
        self.extensions = extensions;
        self.started(SessionStartReason::Switch).await;
        Ok(true)
    }

    /// Dispatches `SessionShutdownEvent` and marks every API and context of
    /// this session stale. The agent does nothing more until switched.
    pub async fn shutdown(&mut self) {
        if self.shared.stale.load(Ordering::Acquire) {
            return;
        }
        let _ = dispatch(&self.shared, SessionShutdownEvent {}).await;
        self.shared.cancellation().cancel();
        self.shared.stale.store(true, Ordering::Release);
    }

    /// Every `extension_error` so far: failed activations and handlers.
    pub fn extension_errors(&self) -> Vec<ExtensionErrorReport> {
        self.shared
            .errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The session as the store last said (a copy).
    pub async fn session_snapshot(
        &self,
    ) -> (
        crate::session::SessionInfo,
        Vec<crate::session::SessionEntry>,
    ) {
        let session = self.shared.session.lock().await;
        (session.info().clone(), session.entries().to_vec())
    }

    /// What the model sees of the branch now.
    pub async fn context(&self) -> crate::session::ModelView {
        self.shared.session.lock().await.context()
    }

    /// Cancels the run in progress.
    pub fn abort(&self) {
        self.shared.cancellation().cancel();
    }

    /// A token that cancels the runs from now on (each run is cancelled by
    /// it, or by an abort of its own): a host's Ctrl-C.
    pub fn cancellation(&mut self, token: CancellationToken) {
        self.parent_cancel = token;
    }

    /// The session itself, locked: for what the agent does not do (a
    /// label, a fork, the tree). Do not hold it across a prompt.
    pub async fn session(&self) -> tokio::sync::MutexGuard<'_, Session> {
        self.shared.session.lock().await
    }

    /// The names of the extensions, in load order.
    pub fn extension_names(&self) -> Vec<String> {
        self.shared.state().names.clone()
    }
}

/// Makes the extensions' instances and activates them on `session`, with
/// `scope` as the session's user scope (else one built for its user).
pub(crate) async fn activate(
    host: &AgentHost,
    session: Session,
    options: &AgentSessionOptions,
    scope: Option<UserScope>,
) -> (Arc<Shared>, Vec<Box<dyn Extension>>) {
    let parts = host.inner.clone();
    let scope = scope.unwrap_or_else(|| parts.plugins.user_scope(session.user().clone()));
    let chosen = options
        .model
        .as_ref()
        .and_then(|(provider, model)| parts.model_for(provider, model.as_deref()).ok());
    let remembered = session.current_model();
    let model = chosen
        .or_else(|| {
            remembered
                .as_ref()
                .and_then(|m| parts.model_for(&m.provider, Some(&m.model_id)).ok())
        })
        .or_else(|| {
            parts
                .models
                .first()
                .and_then(|(c, _)| parts.model_for(c.provider.as_str(), None).ok())
        });
    let thinking_level = session.context().thinking_level;
    let session_id = session.id().clone();
    let cwd = options
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let shared = Arc::new(Shared {
        host: parts.clone(),
        scope,
        session: tokio::sync::Mutex::new(session),
        session_id,
        cwd,
        interaction: options.interaction.clone(),
        approval: options.approval.clone(),
        wait_expiry: options.wait_expiry.unwrap_or(super::wait::WAIT_EXPIRY),
        sink: options.sink.clone(),
        bound: AtomicBool::new(false),
        stale: AtomicBool::new(false),
        idle: AtomicBool::new(true),
        wake: tokio::sync::Notify::new(),
        cancel: Mutex::new(CancellationToken::new()),
        handlers: Mutex::default(),
        bus: Default::default(),
        state: Mutex::new(State {
            queues: Queues::default(),
            active_tools: None,
            model,
            thinking_level,
            commands: Default::default(),
            tools: Default::default(),
            names: Vec::new(),
            system_prompt: String::new(),
            compact_requested: false,
            switch_requested: None,
        }),
        errors: Mutex::default(),
    });
    let factories = parts.extensions.iter().chain(options.extensions.iter());
    let mut extensions = Vec::new();
    for (index, factory) in factories.enumerate() {
        let made = catch_unwind(AssertUnwindSafe(|| factory()));
        let mut extension = match made {
            Ok(extension) => extension,
            Err(payload) => {
                shared.state().names.push(format!("extension #{index}"));
                let message = format!("its factory panicked: {}", panic_text(&*payload));
                shared.report_error(index, "activate", &message);
                continue;
            }
        };
        shared.state().names.push(extension.name().to_owned());
        let mut api = SessionApi::new(shared.clone(), index);
        let outcome = catch_unwind(AssertUnwindSafe(|| extension.activate(&mut api)));
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error.to_string()),
            Err(payload) => Some(format!("it panicked: {}", panic_text(&*payload))),
        };
        if let Some(message) = failure {
            shared.report_error(index, "activate", &message);
            shared.handlers().remove_extension(index);
            let mut state = shared.state();
            state.commands.remove_extension(index);
            state.tools.remove_extension(index);
            continue;
        }
        extensions.push(extension);
    }
    parts.live.add(&shared);
    (shared, extensions)
}
