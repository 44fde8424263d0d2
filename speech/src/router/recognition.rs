//! [`SpeechRecognitionRouter`]: audio in, text out, through the provider whose
//! type key the configuration names.
//!
//! Rules: see the parent module; this file only gives the registry its
//! recognition-typed API.

use std::sync::Arc;

use oscova_core::provider::speech::{
    RecognitionRequest, SpeechError, SpeechProviderConfig, SpeechRecognitionProvider, Transcript,
};
use oscova_core::{Diagnostic, PluginHost, provider::PublishedProvider};

use super::{ProviderOrigin, Registry, RegistryBuilder};
use crate::OpenAiSpeech;

/// Routes recognition requests to the provider whose type key matches the
/// request's [`SpeechProviderConfig`], refusing non-local endpoints before the
/// provider is entered when offline operation is required.
///
/// ```no_run
/// use oscova_speech::{RecognitionRequest, SpeechProviderConfig, SpeechRecognitionRouter};
///
/// # async fn demo(host: &oscova_core::PluginHost) -> Result<(), oscova_speech::SpeechError> {
/// let router = SpeechRecognitionRouter::from_host(host);
/// let wav = std::fs::read("hello.wav").unwrap_or_default();
/// let config = SpeechProviderConfig::new("pocketsphinx");
/// let transcript = router
///     .recognize(RecognitionRequest::new(&config, &wav).offline(true))
///     .await?;
/// println!("{}", transcript.text);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SpeechRecognitionRouter {
    registry: Registry<dyn SpeechRecognitionProvider>,
}

impl SpeechRecognitionRouter {
    /// An empty builder.
    pub fn builder() -> SpeechRecognitionRouterBuilder {
        SpeechRecognitionRouterBuilder {
            inner: RegistryBuilder::default(),
        }
    }

    /// The built-in providers (`pocketsphinx`, `whisper` with the feature
    /// of that name, and `openai` on the host's HTTP client) plus the recognition providers of the host's plugins.
    pub fn from_host(host: &PluginHost) -> Self {
        let builder = Self::builder();
        #[cfg(feature = "pocketsphinx")]
        let builder = builder.builtin(crate::PocketsphinxRecognizer::new());
        let builder = builder.builtin(OpenAiSpeech::new(host.http_client()));
        #[cfg(feature = "whisper")]
        let builder = builder.builtin(crate::WhisperRecognizer::new());
        builder.host_plugins(host).build()
    }

    /// The provider for `config`, after the offline checks: this is all the
    /// routing there is, done before [`recognize`](Self::recognize) enters the
    /// provider.
    ///
    /// # Errors
    ///
    /// [`SpeechError::UnknownProvider`] listing the known keys;
    /// when `offline` is set, [`SpeechError::NotLocal`] for a non-local
    /// endpoint or download URL and [`SpeechError::NoLocalEndpoint`] for a
    /// provider that is not local by design and has no endpoint configured.
    pub fn resolve(
        &self,
        config: &SpeechProviderConfig,
        offline: bool,
        download_url: Option<&str>,
    ) -> Result<&Arc<dyn SpeechRecognitionProvider>, SpeechError> {
        Ok(&self
            .registry
            .resolve(config, offline, download_url)?
            .provider)
    }

    /// Resolves the request's provider (see [`resolve`](Self::resolve)) and
    /// lets it recognize the request's audio.
    ///
    /// # Errors
    ///
    /// The routing errors of [`resolve`](Self::resolve), with the provider
    /// never entered, or the provider's own error.
    pub async fn recognize(
        &self,
        request: RecognitionRequest<'_>,
    ) -> Result<Transcript, SpeechError> {
        let provider = self.resolve(request.config, request.offline, request.download_url)?;
        provider.recognize(request).await
    }

    /// The provider that holds `key`, if any (no offline checks).
    pub fn get(&self, key: &str) -> Option<&Arc<dyn SpeechRecognitionProvider>> {
        self.registry.get(key).map(|route| &route.provider)
    }

    /// Where the provider that holds `key` came from.
    pub fn origin(&self, key: &str) -> Option<&ProviderOrigin> {
        self.registry.get(key).map(|route| &route.origin)
    }

    /// The routable type keys, sorted.
    pub fn keys(&self) -> &[String] {
        self.registry.keys()
    }

    /// One warning per provider dropped in a type-key collision.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.registry.diagnostics()
    }
}

/// Collects recognition providers for a [`SpeechRecognitionRouter`].
///
/// Built-in providers take precedence over plugin providers whatever the call
/// order; within each group the first registration of a key wins.
///
/// ```
/// use std::sync::Arc;
/// use oscova_speech::{OpenAiSpeech, PocketsphinxRecognizer, SpeechRecognitionRouter};
///
/// let router = SpeechRecognitionRouter::builder()
///     .builtin(PocketsphinxRecognizer::new())
///     .plugin("acme.dup", "acme::Dup", Arc::new(PocketsphinxRecognizer::new()))
///     .builtin(OpenAiSpeech::default())
///     .build();
/// assert_eq!(router.keys(), ["openai", "pocketsphinx"]);
/// assert_eq!(router.diagnostics().len(), 1); // acme.dup's provider was dropped
/// ```
pub struct SpeechRecognitionRouterBuilder {
    inner: RegistryBuilder<dyn SpeechRecognitionProvider>,
}

impl SpeechRecognitionRouterBuilder {
    /// Adds a built-in provider.
    #[must_use]
    pub fn builtin<T: SpeechRecognitionProvider>(self, provider: T) -> Self {
        self.builtin_shared(Arc::new(provider))
    }

    /// Adds a built-in provider that is shared with something else (the
    /// other router, say).
    #[must_use]
    pub fn builtin_shared<T: SpeechRecognitionProvider>(mut self, provider: Arc<T>) -> Self {
        let provider: Arc<dyn SpeechRecognitionProvider> = provider;
        self.inner.builtin(provider, std::any::type_name::<T>());
        self
    }

    /// Adds a provider registered by plugin `plugin_id`; `type_name` names
    /// its implementation in warnings.
    #[must_use]
    pub fn plugin(
        mut self,
        plugin_id: impl Into<String>,
        type_name: impl Into<String>,
        provider: Arc<dyn SpeechRecognitionProvider>,
    ) -> Self {
        self.inner
            .plugin(provider, plugin_id.into(), type_name.into());
        self
    }

    /// Adds providers a host published, in order.
    #[must_use]
    pub fn published<'a>(
        mut self,
        providers: impl IntoIterator<Item = &'a PublishedProvider<dyn SpeechRecognitionProvider>>,
    ) -> Self {
        for published in providers {
            self = self.plugin(
                published.plugin_id(),
                published.type_name(),
                Arc::clone(published.provider()),
            );
        }
        self
    }

    /// Adds every recognition provider `host` built from its plugins, in the
    /// order it built them: its plugin load order, which does not depend on
    /// the linker (see `PluginHostBuilder::build`), so the plugin that keeps
    /// a contested type key is the same in every build.
    #[must_use]
    pub fn host_plugins(self, host: &PluginHost) -> Self {
        self.published(host.providers::<dyn SpeechRecognitionProvider>())
    }

    /// Ranks the providers and builds the routing table.
    pub fn build(self) -> SpeechRecognitionRouter {
        SpeechRecognitionRouter {
            registry: self.inner.build(),
        }
    }
}

impl std::fmt::Debug for SpeechRecognitionRouterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechRecognitionRouterBuilder")
            .finish_non_exhaustive()
    }
}
