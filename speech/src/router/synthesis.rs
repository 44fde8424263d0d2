//! [`SpeechSynthesisRouter`]: text in, audio out, through the provider whose
//! type key the configuration names.
//!
//! Rules: see the parent module for routing. Every synthesis, whatever
//! the provider and whoever calls (`oscova speech say`, the speech
//! plugin's `speak` tool, an embedding host), goes through
//! [`SpeechSynthesisRouter::synthesize`], which holds the two caps of
//! speaking as `decode_wav` holds hearing's 300 s: the text may have at
//! most [`MAX_SYNTHESIS_CHARS`] characters, refused before the provider is
//! entered, and the audio a provider returns may play at most
//! [`MAX_SYNTHESIS_SECONDS`], refused before a caller sees it (text that
//! expands, such as a long number read digit by digit, passes the first
//! cap and not the second). WAV audio is measured by its header; audio
//! that is not WAV (a plugin provider's MP3, Opus or AAC), whose length
//! is not known without decoding it, is refused above
//! [`MAX_SYNTHESIS_ENCODED_BYTES`]: 600 s at 512 kbit/s, which is above
//! the highest bitrate of the lossy formats a speech service returns
//! (Opus tops at 510 kbit/s, MP3 at 320 kbit/s): audio at that bitrate
//! passes only if it plays at most 600 s, audio at a lower bitrate may
//! play proportionally longer (a 64 kbit/s MP3 up to 80 minutes), and
//! lossless FLAC or raw PCM above 512 kbit/s meets the cap before 600 s.
//! All three refusals are [`SpeechError::InvalidText`] saying the limit and
//! to split the text. The caps hold through `synthesize` only: a caller
//! that takes a provider from [`SpeechSynthesisRouter::resolve`] or
//! [`SpeechSynthesisRouter::get`] and calls it directly bypasses them.
//! The caps bound what one request returns; what one synthesis computes
//! before its length is known is the provider's: piper stops between
//! sentences once its audio passes the cap
//! (`PiperSynthesizer::with_max_seconds`), flite runs to the end (5 000
//! characters of digits, 1 240 s of audio, in under a minute).

use std::sync::Arc;

use oscova_core::provider::speech::{
    SpeechError, SpeechProviderConfig, SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio,
};
use oscova_core::{Diagnostic, PluginHost, provider::PublishedProvider};

use super::{ProviderOrigin, Registry, RegistryBuilder};
use crate::error::EngineError;
use crate::{AudioKind, FliteSynthesizer, OpenAiSpeech, check_wav_header, sniff_audio};

/// The most characters (Unicode scalar values) of text one synthesis
/// speaks: about five minutes of prose.
pub const MAX_SYNTHESIS_CHARS: usize = 5_000;

/// The longest audio one synthesis returns, in seconds: twice what
/// [`MAX_SYNTHESIS_CHARS`] of prose makes with flite (5 000 characters,
/// 280 s), so only text that expands meets it.
pub const MAX_SYNTHESIS_SECONDS: u32 = 600;

/// The bitrate, in kbit/s, [`MAX_SYNTHESIS_ENCODED_BYTES`] assumes: just
/// above Opus's highest (510 kbit/s), the highest of the lossy formats a
/// speech service returns (MP3's is 320 kbit/s).
const MAX_ENCODED_KBPS: u32 = 512;

/// The most bytes of audio that is not WAV one synthesis returns:
/// [`MAX_SYNTHESIS_SECONDS`] at 512 kbit/s (38 400 000 bytes), since the
/// length of MP3, Opus or AAC audio is not known without decoding it.
pub const MAX_SYNTHESIS_ENCODED_BYTES: usize =
    MAX_SYNTHESIS_SECONDS as usize * MAX_ENCODED_KBPS as usize * 1000 / 8;

/// Routes synthesis requests to the provider whose type key matches the
/// request's [`SpeechProviderConfig`], refusing non-local endpoints before the
/// provider is entered when offline operation is required.
///
/// ```no_run
/// use oscova_speech::{SpeechProviderConfig, SpeechSynthesisRouter, SynthesisRequest};
///
/// # async fn demo(host: &oscova_core::PluginHost) -> Result<(), oscova_speech::SpeechError> {
/// let router = SpeechSynthesisRouter::from_host(host);
/// let config = SpeechProviderConfig::new("flite").voice("slt");
/// let audio = router
///     .synthesize(SynthesisRequest::new(&config, "hello world").offline(true))
///     .await?;
/// assert_eq!(&audio.wav[..4], b"RIFF");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SpeechSynthesisRouter {
    registry: Registry<dyn SpeechSynthesisProvider>,
}

impl SpeechSynthesisRouter {
    /// An empty builder.
    pub fn builder() -> SpeechSynthesisRouterBuilder {
        SpeechSynthesisRouterBuilder {
            inner: RegistryBuilder::default(),
        }
    }

    /// The built-in providers (`flite` with the host's spawn policy,
    /// `openai` on the host's HTTP client, and with the feature `piper`
    /// `kokoro` and `piper` with the host's spawn policy) plus the synthesis providers
    /// of the host's plugins.
    pub fn from_host(host: &PluginHost) -> Self {
        let builder = Self::builder()
            .builtin(FliteSynthesizer::new().with_policy(host.spawn_policy().clone()))
            .builtin(OpenAiSpeech::new(host.http_client()));
        #[cfg(feature = "piper")]
        let builder = builder
            .builtin(crate::KokoroSynthesizer::new().with_policy(host.spawn_policy().clone()))
            .builtin(crate::PiperSynthesizer::new().with_policy(host.spawn_policy().clone()));
        builder.host_plugins(host).build()
    }

    /// The provider for `config`, after the offline checks: this is all the
    /// routing there is, done before [`synthesize`](Self::synthesize) enters the
    /// provider.
    ///
    /// The caps on text and audio length are [`synthesize`](Self::synthesize)'s:
    /// calling the provider this returns directly bypasses them.
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
    ) -> Result<&Arc<dyn SpeechSynthesisProvider>, SpeechError> {
        Ok(&self
            .registry
            .resolve(config, offline, download_url)?
            .provider)
    }

    /// Checks the text's length, resolves the request's provider (see
    /// [`resolve`](Self::resolve)), lets it speak the text and checks how
    /// long the audio plays.
    ///
    /// ```
    /// use oscova_speech::{
    ///     FliteSynthesizer, MAX_SYNTHESIS_CHARS, SpeechError, SpeechProviderConfig,
    ///     SpeechSynthesisRouter, SynthesisRequest,
    /// };
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let router = SpeechSynthesisRouter::builder().builtin(FliteSynthesizer::new()).build();
    /// let config = SpeechProviderConfig::new("flite");
    /// let text = "word ".repeat(MAX_SYNTHESIS_CHARS / 5 + 1);
    /// let err = router.synthesize(SynthesisRequest::new(&config, &text)).await.unwrap_err();
    /// assert!(matches!(err, SpeechError::InvalidText(ref m) if m.contains("5000 characters")));
    /// # });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SpeechError::InvalidText`] for text over [`MAX_SYNTHESIS_CHARS`]
    /// and the routing errors of [`resolve`](Self::resolve), with the
    /// provider never entered; the provider's own error; and
    /// [`SpeechError::InvalidText`] for WAV audio that plays longer than
    /// [`MAX_SYNTHESIS_SECONDS`] and for audio that is not WAV and is
    /// larger than [`MAX_SYNTHESIS_ENCODED_BYTES`].
    pub async fn synthesize(
        &self,
        request: SynthesisRequest<'_>,
    ) -> Result<SynthesizedAudio, SpeechError> {
        let chars = request.text.chars().count();
        if chars > MAX_SYNTHESIS_CHARS {
            return Err(EngineError::TextTooLong {
                chars,
                limit: MAX_SYNTHESIS_CHARS,
            }
            .into());
        }
        let provider = self.resolve(request.config, request.offline, request.download_url)?;
        let audio = provider.synthesize(request).await?;
        match check_wav_header(&audio.wav) {
            Ok(header) if header.duration_seconds > f64::from(MAX_SYNTHESIS_SECONDS) => {
                return Err(EngineError::SpeechTooLong {
                    seconds: header.duration_seconds,
                    limit_seconds: MAX_SYNTHESIS_SECONDS,
                }
                .into());
            }
            Ok(_) => {}
            // Not WAV (or a WAV header that cannot be read): its length is
            // not known, its size is. What it is otherwise is the caller's
            // to report, with its words.
            Err(_) if audio.wav.len() > MAX_SYNTHESIS_ENCODED_BYTES => {
                return Err(EngineError::EncodedSpeechTooLarge {
                    bytes: audio.wav.len(),
                    kind: match sniff_audio(&audio.wav) {
                        AudioKind::Wav => AudioKind::Unknown,
                        kind => kind,
                    },
                    limit_bytes: MAX_SYNTHESIS_ENCODED_BYTES,
                    limit_seconds: MAX_SYNTHESIS_SECONDS,
                    kbps: MAX_ENCODED_KBPS,
                }
                .into());
            }
            Err(_) => {}
        }
        Ok(audio)
    }

    /// The provider that holds `key`, if any (no offline checks, and no caps:
    /// those are [`synthesize`](Self::synthesize)'s).
    pub fn get(&self, key: &str) -> Option<&Arc<dyn SpeechSynthesisProvider>> {
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

/// Collects synthesis providers for a [`SpeechSynthesisRouter`].
///
/// Built-in providers take precedence over plugin providers whatever the call
/// order; within each group the first registration of a key wins.
///
/// ```
/// use std::sync::Arc;
/// use oscova_speech::{FliteSynthesizer, OpenAiSpeech, SpeechSynthesisRouter};
///
/// let router = SpeechSynthesisRouter::builder()
///     .plugin("acme.dup", "acme::Dup", Arc::new(FliteSynthesizer::new()))
///     .builtin(FliteSynthesizer::new())
///     .builtin(OpenAiSpeech::default())
///     .build();
/// assert_eq!(router.keys(), ["flite", "openai"]);
/// assert!(router.origin("flite").is_some_and(|o| o.plugin_id().is_none()));
/// assert_eq!(router.diagnostics().len(), 1); // acme.dup's provider was dropped
/// ```
pub struct SpeechSynthesisRouterBuilder {
    inner: RegistryBuilder<dyn SpeechSynthesisProvider>,
}

impl SpeechSynthesisRouterBuilder {
    /// Adds a built-in provider.
    #[must_use]
    pub fn builtin<T: SpeechSynthesisProvider>(self, provider: T) -> Self {
        self.builtin_shared(Arc::new(provider))
    }

    /// Adds a built-in provider that is shared with something else (the
    /// other router, say).
    #[must_use]
    pub fn builtin_shared<T: SpeechSynthesisProvider>(mut self, provider: Arc<T>) -> Self {
        let provider: Arc<dyn SpeechSynthesisProvider> = provider;
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
        provider: Arc<dyn SpeechSynthesisProvider>,
    ) -> Self {
        self.inner
            .plugin(provider, plugin_id.into(), type_name.into());
        self
    }

    /// Adds providers a host published, in order.
    #[must_use]
    pub fn published<'a>(
        mut self,
        providers: impl IntoIterator<Item = &'a PublishedProvider<dyn SpeechSynthesisProvider>>,
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

    /// Adds every synthesis provider `host` built from its plugins, in the
    /// order it built them: its plugin load order, which does not depend on
    /// the linker (see `PluginHostBuilder::build`), so the plugin that keeps
    /// a contested type key is the same in every build.
    #[must_use]
    pub fn host_plugins(self, host: &PluginHost) -> Self {
        self.published(host.providers::<dyn SpeechSynthesisProvider>())
    }

    /// Ranks the providers and builds the routing table.
    pub fn build(self) -> SpeechSynthesisRouter {
        SpeechSynthesisRouter {
            registry: self.inner.build(),
        }
    }
}

impl std::fmt::Debug for SpeechSynthesisRouterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechSynthesisRouterBuilder")
            .finish_non_exhaustive()
    }
}
