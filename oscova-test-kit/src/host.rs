//! [`TestHost`]: a real [`PluginHost`] over the plugins or the toolset a
//! test names, and [`TestScope`]: one test user's scope over it.
//!
//! Rules: only what the test names is loaded (never every linked plugin),
//! and strictly (a publication error fails the build); a toolset or a fake
//! provider given directly is contributed by the kit's own plugin, id
//! [`KIT_PLUGIN_ID`]. The scope and its calls are `scope.rs`'s.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use oscova_core::host::invoke::{Arguments, InvokeError};
use oscova_core::plugin::IntoToolset;
use oscova_core::plugin::{PluginManifest, PluginRegistration, RegisteredPlugin};
use oscova_core::provider::model::ModelProvider;
use oscova_core::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use oscova_core::{
    AgentPlugin, AgentPluginBuilder, AgentPluginContext, ApprovalDecision, PluginHost,
    PluginHostBuilder,
};

use crate::call::{Call, Script};
use crate::running::CANCELLATION_GRACE;
use crate::scope::TestScope;
use crate::user::{TestUser, Vault};

/// The id of the kit's own plugin, which contributes the toolset and the
/// fake providers a test gives the builder directly: wire names read
/// `test__{owner}__{tool}`.
pub const KIT_PLUGIN_ID: &str = "test";

/// The id of the user a [`TestHost`] calls as unless told otherwise.
pub const DEFAULT_USER: &str = "test-user";

type Registrar = Box<dyn Fn(&mut AgentPluginBuilder) + Send + Sync>;
type HostStep = Box<dyn FnOnce(PluginHostBuilder) -> PluginHostBuilder>;

/// The kit's plugin: what the test registered directly.
#[derive(Default)]
struct KitPlugin {
    registrars: Vec<Registrar>,
}

static KIT_MANIFEST: PluginManifest = PluginManifest {
    id: KIT_PLUGIN_ID,
    name: "Oscova test kit",
    version: env!("CARGO_PKG_VERSION"),
    description: "Toolsets and fake providers a test registered directly.",
    framework: "",
};

impl AgentPlugin for KitPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        for registrar in &self.registrars {
            registrar(builder);
        }
    }
}

// By hand rather than with `#[plugin]`: a `#[plugin]` registers itself
// with every binary that links the kit, and hosts that load every linked
// plugin would find it.
impl RegisteredPlugin for KitPlugin {
    fn manifest() -> &'static PluginManifest {
        &KIT_MANIFEST
    }

    fn registration() -> PluginRegistration {
        PluginRegistration::new(&KIT_MANIFEST, std::any::type_name::<Self>(), || {
            Box::new(KitPlugin::default())
        })
    }
}

/// Settings for a [`TestHost`]; start with [`TestHost::builder`].
#[must_use = "a builder does nothing until it is built"]
pub struct TestHostBuilder {
    plugins: Vec<PluginRegistration>,
    /// Internal destinations `Internet` tools may reach (`host:port`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    allow: Vec<String>,
    grace: Duration,
    steps: Vec<HostStep>,
    kit: KitPlugin,
    user: TestUser,
    approve_by_default: bool,
    strict: bool,
}

impl std::fmt::Debug for TestHostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestHostBuilder")
            .field("plugins", &self.plugins.len())
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl TestHostBuilder {
    /// Loads plugin `P`, created with `Default` as a host would.
    pub fn plugin<P: RegisteredPlugin>(mut self) -> Self {
        self.plugins.push(P::registration());
        self
    }

    /// Loads plugin `P` from this value: a plugin configured by the test
    /// (a fixed clock, a root directory).
    pub fn plugin_instance<P: RegisteredPlugin>(mut self, plugin: P) -> Self {
        self.plugins.push(P::registration());
        self.steps
            .push(Box::new(move |b| b.plugin_instance(plugin)));
        self
    }

    /// Adds a toolset, built by `factory` for each user scope as a
    /// plugin's would be, under the kit's plugin ([`KIT_PLUGIN_ID`]).
    pub fn toolset<F, R>(mut self, factory: F) -> Self
    where
        F: Fn(&AgentPluginContext) -> R + Send + Sync + 'static,
        R: IntoToolset,
    {
        let factory = Arc::new(factory);
        self.kit.registrars.push(Box::new(move |b| {
            let factory = factory.clone();
            b.add_toolset(move |ctx: &AgentPluginContext| factory(ctx));
        }));
        self
    }

    /// Adds a model provider (a [`FakeModel`](crate::FakeModel), say)
    /// that every toolset sees through `ctx.providers::<dyn ModelProvider>()`.
    pub fn model_provider<M: ModelProvider + Clone>(mut self, model: M) -> Self {
        self.kit.registrars.push(Box::new(move |b| {
            let model = model.clone();
            b.add_model_provider(move |_| model.clone());
        }));
        self
    }

    /// Adds a speech recognition provider.
    pub fn speech_recognition_provider<S: SpeechRecognitionProvider + Clone>(
        mut self,
        provider: S,
    ) -> Self {
        self.kit.registrars.push(Box::new(move |b| {
            let provider = provider.clone();
            b.add_speech_recognition_provider(move |_| provider.clone());
        }));
        self
    }

    /// Adds a speech synthesis provider.
    pub fn speech_synthesis_provider<S: SpeechSynthesisProvider + Clone>(
        mut self,
        provider: S,
    ) -> Self {
        self.kit.registrars.push(Box::new(move |b| {
            let provider = provider.clone();
            b.add_speech_synthesis_provider(move |_| provider.clone());
        }));
        self
    }

    /// Registers a host service of type `T`, as a host would.
    pub fn service<T: Send + Sync + 'static>(mut self, service: T) -> Self {
        self.steps.push(Box::new(move |b| b.service(service)));
        self
    }

    /// Lets `Internet` tools reach `server`, a loopback
    /// [`TestServer`](crate::http::TestServer), as a host lets them reach a
    /// named internal destination
    /// ([`HttpClientBuilder::allow_internal`](oscova_core::http::HttpClientBuilder::allow_internal)
    /// with the server's `127.0.0.1:{port}`): the tool under test keeps its
    /// real scope, and every other internal address stays refused. Without
    /// it an `Internet` tool's request to the server is refused, as it would
    /// be in production. Servers add up over calls. A host step that sets
    /// its own HTTP client ([`host`](Self::host)) replaces this one.
    #[cfg(feature = "http")]
    pub fn allow_internal(mut self, server: &crate::http::TestServer) -> Self {
        self.allow.push(server.addr.to_string());
        self
    }

    /// How long a cancelled [`RunningCall`](crate::RunningCall)'s body has
    /// to clean up before the host drops it (default
    /// [`CANCELLATION_GRACE`](crate::CANCELLATION_GRACE)).
    pub fn cancellation_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Any other host setting, applied to the real builder.
    pub fn host(
        mut self,
        step: impl FnOnce(PluginHostBuilder) -> PluginHostBuilder + 'static,
    ) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// The user the host's own [`TestHost::call`] calls as (default: an
    /// empty user named [`DEFAULT_USER`]).
    pub fn user(mut self, user: TestUser) -> Self {
        self.user = user;
        self
    }

    /// Answers approvals the script has no answer for with a denial
    /// instead of a yes.
    pub fn deny_approvals_by_default(mut self) -> Self {
        self.approve_by_default = false;
        self
    }

    /// Records publication errors as the host does instead of failing the
    /// build on them, for a test about a plugin's broken metadata.
    pub fn lenient(mut self) -> Self {
        self.strict = false;
        self
    }

    /// Starts the host and builds the default user's scope.
    ///
    /// # Panics
    ///
    /// When the host does not start (the error is the message), or the
    /// temporary files root cannot be created: in a test that is the
    /// failure to report.
    #[track_caller]
    pub fn build(self) -> TestHost {
        let vault = Vault::default();
        let script = Script::new(self.approve_by_default);
        let mut builder = PluginHost::builder()
            .plugins(self.plugins)
            .credentials(vault.clone())
            .strict(self.strict);
        if !self.kit.registrars.is_empty() {
            builder = builder.plugin_instance(self.kit);
        }
        #[cfg(feature = "http")]
        if !self.allow.is_empty() {
            match oscova_core::HttpClient::builder()
                .allow_internal(&self.allow)
                .build()
            {
                Ok(http) => builder = builder.http_client(http),
                Err(e) => panic!("the test host's HTTP client did not start: {e}"),
            }
        }
        for step in self.steps {
            builder = step(builder);
        }
        let host = match builder.build() {
            Ok(host) => Arc::new(host),
            Err(e) => panic!("the test host did not start: {e}"),
        };
        let shared = Shared {
            host,
            vault,
            script,
            grace: self.grace,
        };
        let scope = shared.scope(&self.user);
        TestHost { shared, scope }
    }
}

/// What the host and all its test scopes share.
#[derive(Clone)]
struct Shared {
    host: Arc<PluginHost>,
    vault: Vault,
    script: Script,
    grace: Duration,
}

impl Shared {
    #[track_caller]
    fn scope(&self, user: &TestUser) -> TestScope {
        self.vault.add(user);
        let (info, files) = match user.info() {
            Ok(parts) => parts,
            Err(e) => panic!("cannot create a files root for `{}`: {e}", user.id()),
        };
        TestScope {
            scope: self.host.user_scope(info),
            files,
            script: self.script.clone(),
            host: self.host.clone(),
            grace: self.grace,
        }
    }
}

/// A real host over what the test named, with one user's scope ready.
///
/// ```
/// use oscova_core::prelude::*;
/// use oscova_test_kit::TestHost;
///
/// /// Greeting tools.
/// pub struct GreetToolset;
///
/// #[toolset]
/// impl GreetToolset {
///     /// Greets someone.
///     pub fn greet(
///         /// Who to greet.
///         name: String,
///     ) -> String {
///         format!("Hello, {name}!")
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let kit = TestHost::for_toolset(|_: &AgentPluginContext| GreetToolset);
/// let call = kit.call("greet", json!({"name": "Ada"})).await.assert_ok();
/// assert_eq!(call.text(), "Hello, Ada!");
/// assert_eq!(call.wire_name, "test__greet__greet");
/// # });
/// ```
pub struct TestHost {
    shared: Shared,
    scope: TestScope,
}

impl std::fmt::Debug for TestHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestHost")
            .field("user", &self.scope.scope.user().id())
            .finish_non_exhaustive()
    }
}

impl TestHost {
    /// Settings for a host: plugins, a toolset, providers, a user.
    pub fn builder() -> TestHostBuilder {
        TestHostBuilder {
            plugins: Vec::new(),
            steps: Vec::new(),
            kit: KitPlugin::default(),
            user: TestUser::new(DEFAULT_USER),
            approve_by_default: true,
            strict: true,
            allow: Vec::new(),
            grace: CANCELLATION_GRACE,
        }
    }

    /// A host with plugin `P` alone, created with `Default`.
    #[track_caller]
    pub fn for_plugin<P: RegisteredPlugin>() -> Self {
        Self::builder().plugin::<P>().build()
    }

    /// A host with this plugin value alone.
    #[track_caller]
    pub fn for_plugin_instance<P: RegisteredPlugin>(plugin: P) -> Self {
        Self::builder().plugin_instance(plugin).build()
    }

    /// A host with this toolset alone, under the kit's plugin.
    #[track_caller]
    pub fn for_toolset<F, R>(factory: F) -> Self
    where
        F: Fn(&AgentPluginContext) -> R + Send + Sync + 'static,
        R: IntoToolset,
    {
        Self::builder().toolset(factory).build()
    }

    /// The real host.
    pub fn host(&self) -> &PluginHost {
        &self.shared.host
    }

    /// The default user's scope.
    pub fn scope(&self) -> &TestScope {
        &self.scope
    }

    /// A scope for another user, over the same host and approval script.
    #[track_caller]
    pub fn scope_for(&self, user: TestUser) -> TestScope {
        self.shared.scope(&user)
    }

    /// Queues answers for the next approvals any scope of this host is
    /// asked for, in order.
    pub fn answer_approvals(&self, answers: impl IntoIterator<Item = ApprovalDecision>) {
        self.shared.script.push(answers);
    }

    /// Queues answers for the next questions tools of any scope of this
    /// host ask the person (`invocation.confirm`, `choose`, `ask_text`,
    /// `fill`), in order; with none left, a question is declined. Each
    /// question and its answer are recorded on the call ([`Call::questions`]).
    pub fn answer_questions(
        &self,
        answers: impl IntoIterator<Item = oscova_core::interaction::Answer>,
    ) {
        self.shared.script.push_questions(answers);
    }

    /// [`TestScope::call`] as the default user.
    #[track_caller]
    pub fn call(&self, name: &str, args: serde_json::Value) -> impl Future<Output = Call> + '_ {
        self.scope.call(name, args)
    }

    /// [`TestScope::try_call`] as the default user.
    #[track_caller]
    pub fn try_call<'a>(
        &'a self,
        name: &str,
        args: impl Into<Arguments<'a>>,
    ) -> impl Future<Output = Result<Call, InvokeError>> + 'a {
        self.scope.try_call(name, args)
    }

    /// Shuts the host's providers down, as a host does at exit.
    pub async fn shutdown(&self) {
        self.shared.host.shutdown().await;
    }
}

impl std::ops::Deref for TestHost {
    type Target = TestScope;

    fn deref(&self) -> &TestScope {
        &self.scope
    }
}
