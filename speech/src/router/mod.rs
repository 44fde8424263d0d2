//! The speech routers: one registry per direction, keyed by provider type.
//!
//! Rules: everything that can be decided ahead is decided when a router is
//! built. Candidates are ranked then — built-in providers before plugin
//! providers, each group in registration order — and the first candidate for
//! a type key wins (for a router built from a host, plugin providers come in
//! the host's load order, which `PluginHostBuilder::build` documents and the
//! linker does not decide, each plugin's in the order it registered them);
//! every later one is dropped with a
//! [`PROVIDER_DROPPED`] warning (logged through `tracing` as it
//! is created, and kept for [`diagnostics`](SpeechRecognitionRouter::diagnostics))
//! that names the dropped implementation and the one that kept the key. A
//! provider's type key and `default_is_local_endpoint` are read once, there.
//! Routing is then one hash lookup and, when offline operation is required,
//! the locality check of [`is_local_endpoint`] on the configured endpoint and
//! download URL — both before the provider is entered, so a refused request
//! never reaches it. A configuration without an endpoint is local only if the
//! provider is local by design. Errors never quote user info of a URL.

mod recognition;
mod synthesis;

use std::fmt;
use std::sync::Arc;

use oscova_core::AgentPluginContext;
use oscova_core::HttpClient;
use oscova_core::context::ServiceContext;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::ProviderTypeKey;
use oscova_core::provider::PublishedProvider;
use oscova_core::provider::speech::{
    SpeechError, SpeechProviderConfig, SpeechRecognitionProvider, SpeechSynthesisProvider,
};
use oscova_core::{
    Diagnostic, PluginHost, diagnostic::DiagnosticKind, locality::is_local_endpoint,
};
use rustc_hash::FxHashMap;

pub use recognition::{SpeechRecognitionRouter, SpeechRecognitionRouterBuilder};
pub use synthesis::{
    MAX_SYNTHESIS_CHARS, MAX_SYNTHESIS_ENCODED_BYTES, MAX_SYNTHESIS_SECONDS, SpeechSynthesisRouter,
    SpeechSynthesisRouterBuilder,
};

use crate::error::truncate;
use crate::providers::openai::{OpenAiSpeech, redact_endpoint_text};

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

    fn is_builtin(&self) -> bool {
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

/// What the registry needs from a provider trait object.
pub(crate) trait Routed: Send + Sync + 'static {
    /// `speech recognition` or `speech synthesis`, for messages.
    const KIND: &'static str;
    fn routed_key(&self) -> ProviderTypeKey;
    fn routed_default_local(&self) -> bool;
}

impl Routed for dyn SpeechRecognitionProvider {
    const KIND: &'static str = "speech recognition";
    fn routed_key(&self) -> ProviderTypeKey {
        self.type_key()
    }
    fn routed_default_local(&self) -> bool {
        self.default_is_local_endpoint()
    }
}

impl Routed for dyn SpeechSynthesisProvider {
    const KIND: &'static str = "speech synthesis";
    fn routed_key(&self) -> ProviderTypeKey {
        self.type_key()
    }
    fn routed_default_local(&self) -> bool {
        self.default_is_local_endpoint()
    }
}

/// A provider waiting for [`RegistryBuilder::build`].
struct Candidate<P: ?Sized> {
    provider: Arc<P>,
    origin: ProviderOrigin,
}

/// Collects candidates in call order; ranks them at build time.
pub(crate) struct RegistryBuilder<P: ?Sized> {
    builtins: Vec<Candidate<P>>,
    plugins: Vec<Candidate<P>>,
}

impl<P: ?Sized> Default for RegistryBuilder<P> {
    fn default() -> Self {
        Self {
            builtins: Vec::new(),
            plugins: Vec::new(),
        }
    }
}

impl<P: ?Sized + Routed> RegistryBuilder<P> {
    pub(crate) fn builtin(&mut self, provider: Arc<P>, type_name: &str) {
        self.builtins.push(Candidate {
            provider,
            origin: ProviderOrigin::BuiltIn {
                type_name: type_name.to_owned(),
            },
        });
    }

    pub(crate) fn plugin(&mut self, provider: Arc<P>, plugin_id: String, type_name: String) {
        self.plugins.push(Candidate {
            provider,
            origin: ProviderOrigin::Plugin {
                plugin_id,
                type_name,
            },
        });
    }

    pub(crate) fn build(self) -> Registry<P> {
        let mut routes: FxHashMap<Box<str>, Route<P>> = FxHashMap::default();
        let mut diagnostics = Vec::new();
        for candidate in self.builtins.into_iter().chain(self.plugins) {
            let key = candidate.provider.routed_key();
            if let Some(winner) = routes.get(key.as_str()) {
                diagnostics.push(dropped::<P>(&key, &candidate.origin, &winner.origin));
                continue;
            }
            let default_local = candidate.provider.routed_default_local();
            routes.insert(
                key.as_str().into(),
                Route {
                    provider: candidate.provider,
                    default_local,
                    origin: candidate.origin,
                },
            );
        }
        let mut keys: Vec<String> = routes.keys().map(|k| k.to_string()).collect();
        keys.sort_unstable();
        Registry {
            routes,
            keys,
            diagnostics,
        }
    }
}

/// The warning for a candidate that lost its key to an earlier one.
fn dropped<P: ?Sized + Routed>(
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
            format!("built-in {} provider `{type_name}`", P::KIND)
        }
        ProviderOrigin::Plugin { .. } => format!("{} provider {loser}", P::KIND),
    };
    let message =
        format!("{dropped} was dropped: type key `{key}` is already taken by {winner} ({rule})");
    Diagnostic::warning(PROVIDER_DROPPED, loser.plugin_id(), message)
}

/// A provider that won its type key.
pub(crate) struct Route<P: ?Sized> {
    pub(crate) provider: Arc<P>,
    default_local: bool,
    pub(crate) origin: ProviderOrigin,
}

/// The built routing table.
pub(crate) struct Registry<P: ?Sized> {
    routes: FxHashMap<Box<str>, Route<P>>,
    keys: Vec<String>,
    diagnostics: Vec<Diagnostic>,
}

impl<P: ?Sized> Registry<P> {
    /// The route for `config`, if offline rules allow it.
    pub(crate) fn resolve(
        &self,
        config: &SpeechProviderConfig,
        offline: bool,
        download_url: Option<&str>,
    ) -> Result<&Route<P>, SpeechError> {
        let Some(route) = self.routes.get(config.provider.as_str()) else {
            return Err(SpeechError::UnknownProvider {
                key: config.provider.to_string(),
                known: self.keys.clone(),
            });
        };
        if offline {
            check_offline(config, route.default_local, download_url)?;
        }
        Ok(route)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Route<P>> {
        self.routes.get(key)
    }

    pub(crate) fn keys(&self) -> &[String] {
        &self.keys
    }

    pub(crate) fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

impl<P: ?Sized> fmt::Debug for Registry<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for key in &self.keys {
            if let Some(route) = self.routes.get(key.as_str()) {
                map.entry(key, &route.origin.to_string());
            }
        }
        map.finish()
    }
}

/// The offline rules: the endpoint (or, without one, the provider's design)
/// and the download URL must be local.
fn check_offline(
    config: &SpeechProviderConfig,
    default_local: bool,
    download_url: Option<&str>,
) -> Result<(), SpeechError> {
    match config.endpoint.as_deref() {
        Some(endpoint) if !is_local_endpoint(endpoint) => {
            return Err(SpeechError::NotLocal {
                what: "endpoint",
                endpoint: shown(endpoint),
            });
        }
        Some(_) => {}
        None if !default_local => {
            return Err(SpeechError::NoLocalEndpoint {
                key: config.provider.to_string(),
            });
        }
        None => {}
    }
    if let Some(url) = download_url.filter(|url| !is_local_endpoint(url)) {
        return Err(SpeechError::NotLocal {
            what: "download URL",
            endpoint: shown(url),
        });
    }
    Ok(())
}

/// A refused URL as an error may quote it: user info hidden, length capped.
fn shown(url: &str) -> String {
    truncate(&redact_endpoint_text(url).escape_debug().to_string(), 200)
}

/// Both routers, built from one host: the built-in providers (`flite`,
/// `pocketsphinx` and one `openai` instance shared by both directions, using
/// the host's HTTP client and spawn policy; `kokoro` and `piper` too with
/// the feature `piper`) plus every speech provider the host's plugins registered.
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

    /// Both routers over the built-in providers only (`flite`, one
    /// `openai` shared by both directions, and with the features of their
    /// names `pocketsphinx`, `whisper`, `kokoro` and `piper` (feature
    /// `piper`)), on this HTTP client and spawn policy.
    pub fn builtin(http: HttpClient, spawn: ProcessSpawnPolicy) -> Self {
        Self::over(http, spawn, &[], &[])
    }

    fn over(
        http: HttpClient,
        spawn: ProcessSpawnPolicy,
        recognizers: &[PublishedProvider<dyn SpeechRecognitionProvider>],
        synthesizers: &[PublishedProvider<dyn SpeechSynthesisProvider>],
    ) -> Self {
        let openai = Arc::new(OpenAiSpeech::new(http));
        let recognition = SpeechRecognitionRouter::builder();
        #[cfg(feature = "pocketsphinx")]
        let recognition = recognition.builtin(crate::PocketsphinxRecognizer::new());
        let recognition = recognition.builtin_shared(Arc::clone(&openai));
        #[cfg(feature = "whisper")]
        let recognition = recognition.builtin(crate::WhisperRecognizer::new());
        let recognition = recognition.published(recognizers).build();
        let synthesis = SpeechSynthesisRouter::builder()
            .builtin(crate::FliteSynthesizer::new().with_policy(spawn.clone()))
            .builtin_shared(openai);
        #[cfg(feature = "piper")]
        let synthesis = synthesis
            .builtin(crate::KokoroSynthesizer::new().with_policy(spawn.clone()))
            .builtin(crate::PiperSynthesizer::new().with_policy(spawn));
        #[cfg(not(feature = "piper"))]
        drop(spawn);
        let synthesis = synthesis.published(synthesizers).build();
        Self {
            recognition,
            synthesis,
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

#[cfg(test)]
mod tests;
