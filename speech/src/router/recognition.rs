//! [`SpeechRecognitionRouter`]: audio in, text out, through the provider whose
//! type key the configuration names.
//!
//! Rules: see the parent module for routing; this file only adds what is
//! recognition's own: the router over a host, `recognize`, and
//! `open_stream` (the same routing, then the provider's streaming form or
//! the buffering default).

use oscova_core::PluginHost;
use oscova_core::provider::speech::SpeechError;
use oscova_core::provider::speech::{RecognitionRequest, SpeechRecognitionProvider, Transcript};

use std::sync::Arc;

use super::{Builtins, Router};
use crate::stream::{RecognitionStream, StreamRequest, open_buffered};

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

    /// Opens a recognition stream (see [`stream`](crate::stream)) on the
    /// provider the request's configuration names, routed as
    /// [`recognize`](Self::recognize) routes: the type key, then, when
    /// `offline` is set, the endpoint and download URL, then the audio
    /// format (16 kHz mono), all before the provider is entered. A
    /// provider registered with its streaming form
    /// ([`RouterBuilder::builtin_streaming`](super::RouterBuilder::builtin_streaming);
    /// `whisper` among the built-ins) opens the stream itself; any other
    /// streams through the buffering default (the audio recognized whole
    /// after its end, no partials). Must be called inside a tokio runtime.
    ///
    /// ```no_run
    /// use oscova_speech::stream::StreamRequest;
    /// use oscova_speech::{SpeechProviderConfig, SpeechRecognitionRouter};
    ///
    /// # async fn demo(router: &SpeechRecognitionRouter, frames: &[Vec<i16>]) -> Result<(), oscova_speech::SpeechError> {
    /// let config = SpeechProviderConfig::new("whisper");
    /// let mut stream = router.open_stream(StreamRequest::new(config).offline(true)).await?;
    /// for frame in frames {
    ///     stream.push(frame)?;
    ///     if let Some(partial) = stream.latest_partial() {
    ///         eprintln!("{}", partial.text());
    ///     }
    /// }
    /// println!("{}", stream.finish().await?.text);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The routing errors of [`resolve`](Self::resolve) and
    /// [`SpeechError::InvalidAudio`] for a rate other than 16 kHz or more
    /// than one channel, with the provider never entered; the provider's
    /// own error when it cannot open the stream (a model not installed).
    pub async fn open_stream(
        &self,
        request: StreamRequest,
    ) -> Result<RecognitionStream, SpeechError> {
        let route = self.table.resolve(
            &request.config,
            request.offline,
            request.download_url.as_deref(),
        )?;
        request.check_format()?;
        match &route.streaming {
            Some(streaming) => streaming.open_stream(request).await,
            None => Ok(open_buffered(Arc::clone(&route.provider), request)),
        }
    }

    /// Whether the provider holding `key` streams natively (was registered
    /// with its streaming form); `false` for one that streams through the
    /// buffering default, and for an unknown key.
    pub fn streams_natively(&self, key: &str) -> bool {
        self.table
            .get(key)
            .is_some_and(|route| route.streaming.is_some())
    }
}
