//! [`SpeechRecognitionRouter`]: audio in, text out, through the provider whose
//! type key the configuration names.
//!
//! Rules: see the parent module for routing; this file only adds what is
//! recognition's own: the router over a host, and `recognize`.

use oscova_core::PluginHost;
use oscova_core::provider::speech::SpeechError;
use oscova_core::provider::speech::{RecognitionRequest, SpeechRecognitionProvider, Transcript};

use super::{Builtins, Router};

/// Recognition: audio in, text out.
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
impl Router<dyn SpeechRecognitionProvider> {
    /// The built-in recognition providers (those
    /// [`providers`](crate::providers) lists for recognition, `openai` on
    /// the host's HTTP client) plus the recognition providers of the
    /// host's plugins.
    pub fn from_host(host: &PluginHost) -> Self {
        let (builder, _) = Builtins::registered(host.http_client(), host.spawn_policy().clone());
        builder.host_plugins(host).build()
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
}
