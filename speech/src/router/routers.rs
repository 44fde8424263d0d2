//! [`SpeechRouters`]: the two routers a host builds once, and
//! [`Builtins`], what the built-in providers register into.
//!
//! Rules: the built-in providers are listed once, in
//! `providers::register`; every router built with them (the pair, or one
//! direction from a host) goes through [`Builtins::registered`], so no
//! list of built-ins is written twice.

use std::any::type_name;
use std::sync::Arc;

use oscova_core::context::ServiceContext;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::PublishedProvider;
use oscova_core::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use oscova_core::{AgentPluginContext, Diagnostic, HttpClient, PluginHost};

use super::{IntoRouted, RouterBuilder, SpeechRecognitionRouter, SpeechSynthesisRouter};

/// Both routers, built from one host: the built-in providers (those
/// [`providers`](crate::providers) lists, with one `openai` instance shared
/// by both directions, on the host's HTTP client and spawn policy) plus
/// every speech provider the host's plugins registered.
///
/// ```no_run
/// use oscova_core::PluginHost;
/// use oscova_speech::{SpeechProviderConfig, SpeechRouters, SynthesisRequest};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let host = PluginHost::builder().build()?;
/// let routers = SpeechRouters::from_host(&host);
/// for warning in routers.diagnostics() {
///     eprintln!("{warning}");
/// }
/// let config = SpeechProviderConfig::new("flite");
/// let audio = routers
///     .synthesis()
///     .synthesize(SynthesisRequest::new(&config, "hello").offline(true))
///     .await?;
/// std::fs::write("hello.wav", &audio.wav)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SpeechRouters {
    recognition: SpeechRecognitionRouter,
    synthesis: SpeechSynthesisRouter,
}

impl SpeechRouters {
    /// Both routers for `host` (see the type's documentation).
    pub fn from_host(host: &PluginHost) -> Self {
        Self::from_context(&host.service_context())
    }

    /// Both routers over what a host built, as a service factory sees it:
    /// the built-in providers on the host's HTTP client and spawn policy,
    /// then every speech provider the host's plugins registered. This is
    /// how a host registers them as its service
    /// (`PluginHost::builder().service_with(SpeechRouters::from_context)`),
    /// so its own code and every toolset reach one shared pair.
    ///
    /// Providers dropped in type-key collisions are reported to the host
    /// too ([`ServiceContext::report`]), so they are among its diagnostics.
    pub fn from_context(ctx: &ServiceContext<'_>) -> Self {
        let routers = Self::over(
            ctx.http_client(),
            ctx.spawn_policy().clone(),
            ctx.providers::<dyn SpeechRecognitionProvider>(),
            ctx.providers::<dyn SpeechSynthesisProvider>(),
        );
        for diagnostic in routers.diagnostics() {
            ctx.report(diagnostic.clone());
        }
        routers
    }

    /// Both routers over what a toolset's context sees: the built-in
    /// providers on the context's HTTP client and spawn policy, then every
    /// speech provider the host's plugins registered (the same for every
    /// user of one host). For a plugin whose host registered no
    /// `SpeechRouters` service; providers dropped in type-key collisions
    /// are logged when the routers are built.
    pub fn from_toolset_context(ctx: &AgentPluginContext) -> Self {
        Self::over(
            ctx.http_client(),
            ctx.spawn_policy().clone(),
            ctx.providers::<dyn SpeechRecognitionProvider>(),
            ctx.providers::<dyn SpeechSynthesisProvider>(),
        )
    }

    /// Both routers over the built-in providers only (those
    /// [`providers`](crate::providers) lists, one `openai` shared by both
    /// directions), on this HTTP client and spawn policy.
    pub fn builtin(http: HttpClient, spawn: ProcessSpawnPolicy) -> Self {
        Self::over(http, spawn, &[], &[])
    }

    fn over(
        http: HttpClient,
        spawn: ProcessSpawnPolicy,
        recognizers: &[PublishedProvider<dyn SpeechRecognitionProvider>],
        synthesizers: &[PublishedProvider<dyn SpeechSynthesisProvider>],
    ) -> Self {
        let (recognition, synthesis) = Builtins::registered(http, spawn);
        Self {
            recognition: recognition.published(recognizers).build(),
            synthesis: synthesis.published(synthesizers).build(),
        }
    }

    /// Two routers built separately.
    pub fn new(recognition: SpeechRecognitionRouter, synthesis: SpeechSynthesisRouter) -> Self {
        Self {
            recognition,
            synthesis,
        }
    }

    /// The recognition router.
    pub fn recognition(&self) -> &SpeechRecognitionRouter {
        &self.recognition
    }

    /// The synthesis router.
    pub fn synthesis(&self) -> &SpeechSynthesisRouter {
        &self.synthesis
    }

    /// Every provider either router dropped, recognition first.
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.recognition
            .diagnostics()
            .iter()
            .chain(self.synthesis.diagnostics())
    }
}

/// What a built-in provider registers into: the two builders, and the
/// host's HTTP client and spawn policy the providers run on.
pub(crate) struct Builtins {
    http: HttpClient,
    spawn: ProcessSpawnPolicy,
    recognition: RouterBuilder<dyn SpeechRecognitionProvider>,
    synthesis: RouterBuilder<dyn SpeechSynthesisProvider>,
}

impl Builtins {
    /// The two builders with every built-in provider registered.
    pub(crate) fn registered(
        http: HttpClient,
        spawn: ProcessSpawnPolicy,
    ) -> (
        RouterBuilder<dyn SpeechRecognitionProvider>,
        RouterBuilder<dyn SpeechSynthesisProvider>,
    ) {
        let mut builtins = Self {
            http,
            spawn,
            recognition: RouterBuilder::default(),
            synthesis: RouterBuilder::default(),
        };
        crate::providers::register(&mut builtins);
        (builtins.recognition, builtins.synthesis)
    }

    /// The host's HTTP client, for a provider that makes requests.
    pub(crate) fn http(&self) -> HttpClient {
        self.http.clone()
    }

    /// The host's spawn policy, for a provider that runs programs.
    pub(crate) fn spawn(&self) -> ProcessSpawnPolicy {
        self.spawn.clone()
    }

    /// Registers a recognition provider (today only pocketsphinx; whisper
    /// registers with its streaming form).
    #[cfg_attr(not(feature = "pocketsphinx"), allow(dead_code))]
    pub(crate) fn recognizer<T: IntoRouted<dyn SpeechRecognitionProvider>>(&mut self, provider: T) {
        self.recognition
            .push_builtin(Arc::new(provider).into_routed(), type_name::<T>());
    }

    /// Registers a recognition provider with its streaming form.
    #[cfg(feature = "whisper")]
    pub(crate) fn streaming_recognizer<T>(&mut self, provider: T)
    where
        T: SpeechRecognitionProvider + crate::stream::StreamingRecognizer,
    {
        self.recognition
            .push_builtin_streaming(Arc::new(provider), type_name::<T>());
    }

    /// Registers a synthesis provider.
    pub(crate) fn synthesizer<T: IntoRouted<dyn SpeechSynthesisProvider>>(&mut self, provider: T) {
        self.synthesis
            .push_builtin(Arc::new(provider).into_routed(), type_name::<T>());
    }

    /// Registers one provider for both directions, shared.
    pub(crate) fn both<T>(&mut self, provider: T)
    where
        T: IntoRouted<dyn SpeechRecognitionProvider> + IntoRouted<dyn SpeechSynthesisProvider>,
    {
        let provider = Arc::new(provider);
        self.recognition.push_builtin(
            IntoRouted::<dyn SpeechRecognitionProvider>::into_routed(Arc::clone(&provider)),
            type_name::<T>(),
        );
        self.synthesis.push_builtin(
            IntoRouted::<dyn SpeechSynthesisProvider>::into_routed(provider),
            type_name::<T>(),
        );
    }
}
