//! What plugins see of the host: the user, credentials, HTTP, tracing,
//! and what the host built (providers and services).
//!
//! A toolset factory gets an [`AgentPluginContext`] for one user; provider
//! factories get a [`ProviderContext`], which has no credential access at
//! all, since providers are shared by every user; the host's own service
//! factories get a [`ServiceContext`], which sees the built providers and
//! earlier services but no user. Credentials come out only as [`SecretString`], whose
//! `Debug` prints no value, and every value the resolver hands out is added
//! to the user scope's redactor. What the host built is handed in typed,
//! the way axum hands handlers their `State`: `ctx.service::<T>()` and
//! `ctx.providers::<dyn K>()`, so no host wires a particular plugin by hand.

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use crate::diagnostic::Diagnostic;
use crate::http::HttpClient;
use crate::process::ProcessSpawnPolicy;
use crate::provider::ProviderKind;
use crate::provider::PublishedProvider;
use crate::provider::provisions::Provisions;
use crate::redact::Redactor;

/// Who a user scope is for.
///
/// ```
/// use oscova_core::UserInfo;
///
/// let alice = UserInfo::new("alice")
///     .with_time_zone("Europe/Berlin")
///     .with_files_root("/srv/files/alice");
/// assert_eq!(alice.time_zone(), Some("Europe/Berlin"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    id: String,
    time_zone: Option<String>,
    files_root: Option<PathBuf>,
}

impl UserInfo {
    /// A user with no time zone and no files root set.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            time_zone: None,
            files_root: None,
        }
    }

    /// Sets the user's IANA time zone (for example `Europe/Berlin`).
    #[must_use]
    pub fn with_time_zone(mut self, zone: impl Into<String>) -> Self {
        self.time_zone = Some(zone.into());
        self
    }

    /// Sets the directory the user's files live in: plugins that work on
    /// files (`oscova.files`, `oscova.speech`) stay inside it, under the
    /// rules of [`fs`](crate::fs). Overrides the host's
    /// [`files_roots`](crate::PluginHostBuilder::files_roots) for this user.
    #[must_use]
    pub fn with_files_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.files_root = Some(root.into());
        self
    }

    /// The user's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The user's time zone, when the host set one.
    pub fn time_zone(&self) -> Option<&str> {
        self.time_zone.as_deref()
    }

    /// The user's files root, when the host set one.
    pub fn files_root(&self) -> Option<&Path> {
        self.files_root.as_deref()
    }
}

/// Looks up a user's credentials. Hosts implement it; plugins reach it
/// only through [`Credentials`].
pub trait CredentialResolver: Send + Sync + 'static {
    /// The credential `key` (for example `acme.api_key`) of `user`, if any.
    fn resolve(&self, user: &UserInfo, key: &str) -> Option<SecretString>;
}

impl<F> CredentialResolver for F
where
    F: Fn(&UserInfo, &str) -> Option<SecretString> + Send + Sync + 'static,
{
    fn resolve(&self, user: &UserInfo, key: &str) -> Option<SecretString> {
        self(user, key)
    }
}

/// The resolver a host gets when it configured none: it knows no secret.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCredentials;

impl CredentialResolver for NoCredentials {
    fn resolve(&self, _user: &UserInfo, _key: &str) -> Option<SecretString> {
        None
    }
}

/// A user's credentials, as a toolset sees them. Cheap to clone; keep it
/// in the toolset if a tool resolves credentials while it runs.
#[derive(Clone)]
pub struct Credentials {
    resolver: Arc<dyn CredentialResolver>,
    user: Arc<UserInfo>,
    redactor: Redactor,
}

impl Credentials {
    pub(crate) fn new(
        resolver: Arc<dyn CredentialResolver>,
        user: Arc<UserInfo>,
        redactor: Redactor,
    ) -> Self {
        Self {
            resolver,
            user,
            redactor,
        }
    }

    /// The credential `key`, or `None`. The value is registered with the
    /// scope's redactor, so a tool that echoes it shows `[REDACTED]`.
    pub fn get(&self, key: &str) -> Option<SecretString> {
        let secret = self.resolver.resolve(&self.user, key)?;
        self.redactor.add(secret.expose_secret());
        Some(secret)
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user.id())
            .finish_non_exhaustive()
    }
}

/// The parts of one user scope every plugin's context reads: built once
/// per scope, so handing a context to each plugin costs one reference count.
pub(crate) struct ScopeParts {
    pub(crate) user: Arc<UserInfo>,
    pub(crate) credentials: Credentials,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) http: HttpClient,
    pub(crate) spawn: ProcessSpawnPolicy,
    pub(crate) provisions: Arc<Provisions>,
}

/// A plugin's view of one user, handed to each toolset factory.
#[derive(Clone)]
pub struct AgentPluginContext {
    plugin_id: &'static str,
    parts: Arc<ScopeParts>,
}

impl AgentPluginContext {
    pub(crate) fn new(plugin_id: &'static str, parts: Arc<ScopeParts>) -> Self {
        Self { plugin_id, parts }
    }

    /// A context for tests and hand-built hosts: no credentials, the
    /// default HTTP client and spawn policy, no providers and no services.
    pub fn for_user(plugin_id: &'static str, user: UserInfo) -> Self {
        let user = Arc::new(user);
        let credentials = Credentials::new(Arc::new(NoCredentials), user.clone(), Redactor::new());
        Self::new(
            plugin_id,
            Arc::new(ScopeParts {
                user,
                credentials,
                http: HttpClient::shared_default(),
                spawn: ProcessSpawnPolicy::new(),
                provisions: Arc::default(),
            }),
        )
    }

    /// The id of the plugin this context belongs to.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin_id
    }

    /// The user's id.
    pub fn user_id(&self) -> &str {
        self.parts.user.id()
    }

    /// The user.
    pub fn user(&self) -> &UserInfo {
        &self.parts.user
    }

    /// The user's IANA time zone, when the host set one.
    pub fn time_zone(&self) -> Option<&str> {
        self.parts.user.time_zone()
    }

    /// The user's files root, when the host set one (see
    /// [`UserInfo::with_files_root`]).
    pub fn files_root(&self) -> Option<&Path> {
        self.parts.user.files_root()
    }

    /// The host's service of type `T`, when the host registered one
    /// ([`PluginHostBuilder::service`](crate::PluginHostBuilder::service),
    /// [`service_with`](crate::PluginHostBuilder::service_with)). Plugins
    /// register none; a toolset that can use a host's service works
    /// without it too.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.parts.provisions.service::<T>()
    }

    /// The providers of kind `K` the host built, in creation order, for
    /// example `ctx.providers::<dyn ModelProvider>()`.
    pub fn providers<K: ProviderKind + ?Sized>(&self) -> &[PublishedProvider<K>] {
        self.parts.provisions.providers::<K>()
    }

    /// The user's credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.parts.credentials
    }

    /// The host-managed HTTP client. It enforces the network scope of the
    /// tool that is running when a request is sent. Needs the `http`
    /// feature (on by default).
    #[cfg(feature = "http")]
    pub fn http_client(&self) -> HttpClient {
        self.parts.http.clone()
    }

    /// The process spawn policy for processes this plugin starts.
    pub fn spawn_policy(&self) -> &ProcessSpawnPolicy {
        &self.parts.spawn
    }

    /// A tracing span named after the plugin and the user.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!(
            "oscova.plugin",
            plugin = self.plugin_id,
            user = self.parts.user.id()
        )
    }
}

impl fmt::Debug for AgentPluginContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentPluginContext")
            .field("plugin_id", &self.plugin_id)
            .field("user", &self.parts.user.id())
            .field("time_zone", &self.parts.user.time_zone())
            .finish_non_exhaustive()
    }
}

/// A plugin's view of the host when its providers are built. Providers are
/// shared by every user, so this has no user and no credentials.
#[derive(Clone)]
pub struct ProviderContext {
    plugin_id: &'static str,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    http: HttpClient,
    spawn: ProcessSpawnPolicy,
}

impl ProviderContext {
    /// A context for `plugin_id` with the given client and spawn policy.
    #[cfg(feature = "http")]
    pub fn new(plugin_id: &'static str, http: HttpClient, spawn: ProcessSpawnPolicy) -> Self {
        Self::from_parts(plugin_id, http, spawn)
    }

    pub(crate) fn from_parts(
        plugin_id: &'static str,
        http: HttpClient,
        spawn: ProcessSpawnPolicy,
    ) -> Self {
        Self {
            plugin_id,
            http,
            spawn,
        }
    }

    /// The id of the plugin whose providers are being built.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin_id
    }

    /// The host-managed HTTP client (unscoped: providers are not tools).
    #[cfg(feature = "http")]
    pub fn http_client(&self) -> HttpClient {
        self.http.clone()
    }

    /// The process spawn policy.
    pub fn spawn_policy(&self) -> &ProcessSpawnPolicy {
        &self.spawn
    }

    /// A tracing span named after the plugin.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!("oscova.provider", plugin = self.plugin_id)
    }
}

impl fmt::Debug for ProviderContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderContext")
            .field("plugin_id", &self.plugin_id)
            .finish_non_exhaustive()
    }
}

/// What a service factory sees: the host's providers and the services built
/// before it, the host's HTTP client and spawn policy. Like a
/// [`ProviderContext`], it has no user and no credentials.
pub struct ServiceContext<'a> {
    provisions: &'a Provisions,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    http: &'a HttpClient,
    spawn: &'a ProcessSpawnPolicy,
    /// Where [`report`](Self::report) collects, while the host starts.
    reports: Option<&'a RefCell<Vec<Diagnostic>>>,
}

impl<'a> ServiceContext<'a> {
    pub(crate) fn new(
        provisions: &'a Provisions,
        http: &'a HttpClient,
        spawn: &'a ProcessSpawnPolicy,
        reports: Option<&'a RefCell<Vec<Diagnostic>>>,
    ) -> Self {
        Self {
            provisions,
            http,
            spawn,
            reports,
        }
    }

    /// Records something the service dropped or worked around (a provider
    /// that lost a type-key collision, say) among the host's
    /// [`diagnostics`](crate::PluginHost::diagnostics), so operators see it
    /// with everything else skipped at start-up. Every diagnostic is also
    /// logged when it is created; after start-up that is all this does.
    pub fn report(&self, diagnostic: Diagnostic) {
        if let Some(reports) = self.reports
            && let Ok(mut reports) = reports.try_borrow_mut()
        {
            reports.push(diagnostic);
        }
    }

    /// The providers of kind `K` the host built, in creation order.
    pub fn providers<K: ProviderKind + ?Sized>(&self) -> &'a [PublishedProvider<K>] {
        self.provisions.providers::<K>()
    }

    /// A service built before this one.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.provisions.service::<T>()
    }

    /// The host's HTTP client, as providers get it.
    #[cfg(feature = "http")]
    pub fn http_client(&self) -> HttpClient {
        self.http.clone()
    }

    /// The host's process spawn policy.
    pub fn spawn_policy(&self) -> &'a ProcessSpawnPolicy {
        self.spawn
    }
}

impl fmt::Debug for ServiceContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceContext").finish_non_exhaustive()
    }
}
