//! Speech provider contracts: recognition (audio to text) and synthesis
//! (text to audio), selected by a [`SpeechProviderConfig`]'s type key.
//!
//! Routers in `oscova-speech` resolve the provider and check offline
//! requirements before a provider is entered; providers themselves only do
//! the work. Audio crosses this boundary as WAV bytes.
//!
//! Progress is optional on both sides: a caller that wants it sets
//! [`RecognitionRequest::progress`]; a provider that can tell how far it has
//! got reports through [`RecognitionRequest::report_progress`] (seconds of
//! audio done never decreasing, and the whole audio once it succeeds), and
//! one that cannot simply never calls it. Timed parts of the text travel in
//! [`Transcript::segments`], empty for providers without timestamps.

use std::fmt;
use std::sync::Arc;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{BoxFuture, ProviderTypeKey, ready};

mod error;
pub use error::SpeechError;

/// Well-known speech provider type keys. Not an allow-list: any stable,
/// unique key a plugin registers routes the same way.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SpeechProviderKeys;

impl SpeechProviderKeys {
    /// Local synthesis with the `flite` program.
    pub const FLITE: &'static str = "flite";
    /// Local recognition with CMU pocketsphinx.
    pub const POCKETSPHINX: &'static str = "pocketsphinx";
    /// OpenAI-compatible remote recognition and synthesis.
    pub const OPENAI: &'static str = "openai";
    /// Local synthesis with Piper neural voices (onnxruntime and espeak-ng).
    pub const PIPER: &'static str = "piper";
    /// Local synthesis with Kokoro-82M (onnxruntime and espeak-ng;
    /// `oscova-speech` feature `piper`).
    pub const KOKORO: &'static str = "kokoro";
    /// Local recognition with whisper.cpp (`oscova-speech` feature `whisper`).
    pub const WHISPER: &'static str = "whisper";
}

/// Which provider to use and how. Hosts store and edit these.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpeechProviderConfig {
    /// The provider type key to route by.
    #[serde(rename = "type")]
    pub provider: ProviderTypeKey,
    /// The service endpoint, for providers that call one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The model name, where the provider has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The default voice for synthesis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<String>,
    /// A language tag such as `en-US`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

impl SpeechProviderConfig {
    /// A configuration for provider `key` with nothing else set.
    pub fn new(key: impl Into<ProviderTypeKey>) -> Self {
        Self {
            provider: key.into(),
            ..Self::default()
        }
    }

    /// Sets the endpoint.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets the model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets the voice.
    pub fn voice(mut self, voice: impl Into<String>) -> Self {
        self.voice = Some(voice.into());
        self
    }

    /// Sets the language tag.
    pub fn language(mut self, language: impl Into<String>) -> Self {
        self.language = Some(language.into());
        self
    }

    /// Sets provider-specific setting `key` (replacing an earlier value).
    pub fn option(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.options.insert(key.into(), value.into());
        self
    }
}

/// How far a recognition has got: seconds of audio heard of the whole.
///
/// ```
/// use oscova_core::provider::speech::RecognitionProgress;
///
/// let p = RecognitionProgress::new(30.0, 40.0);
/// assert_eq!(p.fraction(), 0.75);
/// assert_eq!(RecognitionProgress::new(5.0, 0.0).fraction(), 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RecognitionProgress {
    /// Seconds of audio recognised so far, from its start.
    pub seconds_done: f64,
    /// Seconds of audio in all.
    pub seconds_total: f64,
}

impl RecognitionProgress {
    /// `seconds_done` of `seconds_total`.
    pub fn new(seconds_done: f64, seconds_total: f64) -> Self {
        Self {
            seconds_done,
            seconds_total,
        }
    }

    /// The part done, from 0 to 1 (1 for empty audio).
    pub fn fraction(&self) -> f64 {
        if self.seconds_total > 0.0 {
            (self.seconds_done / self.seconds_total).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

/// Receives a recognition's progress. A provider may call it from any
/// thread, blocking ones included, so it must return quickly: send the
/// update on (a channel, an atomic) rather than do work in it.
pub type RecognitionProgressSink = Arc<dyn Fn(RecognitionProgress) + Send + Sync>;

/// A recognition call, as a router hands it to a provider.
#[derive(Clone)]
pub struct RecognitionRequest<'a> {
    /// The selected configuration.
    pub config: &'a SpeechProviderConfig,
    /// The resolved API key, if the provider needs one.
    pub api_key: Option<&'a SecretString>,
    /// Where to download a model from, if the provider needs one. Fetch
    /// it through [`HttpClient::for_endpoint`](crate::HttpClient::for_endpoint),
    /// so a URL the router's offline check passed on its text is also
    /// checked on its resolved addresses.
    pub download_url: Option<&'a str>,
    /// Whether the host requires offline operation (already checked).
    pub offline: bool,
    /// The audio, as WAV bytes.
    pub audio: &'a [u8],
    /// Cancellation for the whole operation.
    pub cancel: CancellationToken,
    /// Where progress goes, if the caller wants it. Providers report
    /// through [`report_progress`](Self::report_progress); those that
    /// cannot tell how far they are never do.
    pub progress: Option<RecognitionProgressSink>,
}

impl<'a> RecognitionRequest<'a> {
    /// A request to recognize `audio` (WAV bytes) with `config`: no API key,
    /// no download URL, offline not required, a fresh cancellation token,
    /// no progress wanted.
    pub fn new(config: &'a SpeechProviderConfig, audio: &'a [u8]) -> Self {
        Self {
            config,
            api_key: None,
            download_url: None,
            offline: false,
            audio,
            cancel: CancellationToken::new(),
            progress: None,
        }
    }

    /// Sends progress to `sink` (see [`RecognitionProgressSink`]).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use oscova_core::provider::speech::{RecognitionProgress, RecognitionRequest, SpeechProviderConfig};
    ///
    /// let config = SpeechProviderConfig::new("whisper");
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let request = RecognitionRequest::new(&config, b"RIFF")
    ///     .progress(Arc::new(move |p: RecognitionProgress| sink.lock().unwrap().push(p.fraction())));
    /// // What a provider does as it goes:
    /// request.report_progress(RecognitionProgress::new(30.0, 60.0));
    /// assert_eq!(*seen.lock().unwrap(), [0.5]);
    /// ```
    pub fn progress(mut self, sink: RecognitionProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Hands `progress` to the caller's sink; nothing when there is none.
    /// For providers.
    pub fn report_progress(&self, progress: RecognitionProgress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }

    /// Sets the resolved API key.
    pub fn api_key(mut self, key: Option<&'a SecretString>) -> Self {
        self.api_key = key;
        self
    }

    /// Sets the model download URL.
    pub fn download_url(mut self, url: Option<&'a str>) -> Self {
        self.download_url = url;
        self
    }

    /// Sets whether offline operation is required.
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

impl fmt::Debug for RecognitionRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecognitionRequest")
            .field("config", &self.config)
            .field("api_key", &self.api_key.map(|_| "[REDACTED]"))
            .field("download_url", &self.download_url)
            .field("offline", &self.offline)
            .field("audio_bytes", &self.audio.len())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// A synthesis call, as a router hands it to a provider.
#[derive(Clone)]
pub struct SynthesisRequest<'a> {
    /// The selected configuration.
    pub config: &'a SpeechProviderConfig,
    /// The resolved API key, if the provider needs one.
    pub api_key: Option<&'a SecretString>,
    /// Where to download a voice from, if the provider needs one. Fetch
    /// it through [`HttpClient::for_endpoint`](crate::HttpClient::for_endpoint),
    /// so a URL the router's offline check passed on its text is also
    /// checked on its resolved addresses.
    pub download_url: Option<&'a str>,
    /// Whether the host requires offline operation (already checked).
    pub offline: bool,
    /// The text to speak.
    pub text: &'a str,
    /// The voice; `None` means the configuration's or the provider's default.
    pub voice: Option<&'a str>,
    /// Cancellation for the whole operation.
    pub cancel: CancellationToken,
}

impl<'a> SynthesisRequest<'a> {
    /// A request to speak `text` with `config`: the default voice, no API
    /// key, no download URL, offline not required, a fresh cancellation
    /// token.
    pub fn new(config: &'a SpeechProviderConfig, text: &'a str) -> Self {
        Self {
            config,
            api_key: None,
            download_url: None,
            offline: false,
            text,
            voice: None,
            cancel: CancellationToken::new(),
        }
    }

    /// Sets the voice; `None` keeps the configuration's or provider's default.
    pub fn voice(mut self, voice: Option<&'a str>) -> Self {
        self.voice = voice;
        self
    }

    /// Sets the resolved API key.
    pub fn api_key(mut self, key: Option<&'a SecretString>) -> Self {
        self.api_key = key;
        self
    }

    /// Sets the voice download URL.
    pub fn download_url(mut self, url: Option<&'a str>) -> Self {
        self.download_url = url;
        self
    }

    /// Sets whether offline operation is required.
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

impl fmt::Debug for SynthesisRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SynthesisRequest")
            .field("config", &self.config)
            .field("api_key", &self.api_key.map(|_| "[REDACTED]"))
            .field("download_url", &self.download_url)
            .field("offline", &self.offline)
            .field("text", &self.text)
            .field("voice", &self.voice)
            .finish()
    }
}

/// Recognised text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Transcript {
    /// The words heard.
    pub text: String,
    /// The text in timed parts, for providers that report them (empty
    /// otherwise); their texts joined make up `text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<TranscriptSegment>,
}

impl Transcript {
    /// A transcript with text only, no segments.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            segments: Vec::new(),
        }
    }
}

/// A timed part of a [`Transcript`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TranscriptSegment {
    /// Where the part starts, in seconds from the start of the audio.
    pub start_seconds: f64,
    /// Where it ends, in seconds from the start of the audio.
    pub end_seconds: f64,
    /// The words of this part.
    pub text: String,
}

/// Synthesised audio.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SynthesizedAudio {
    /// WAV bytes.
    pub wav: Vec<u8>,
}

/// Turns audio into text.
///
/// A provider that knows how far it has got (one that decodes long audio
/// in windows, say) reports it through
/// [`RecognitionRequest::report_progress`], and one that knows when each
/// part was spoken fills [`Transcript::segments`]; both are optional.
pub trait SpeechRecognitionProvider: Send + Sync + 'static {
    /// The stable type key the router matches.
    fn type_key(&self) -> ProviderTypeKey;
    /// A name for people.
    fn display_name(&self) -> &str;
    /// Whether the provider runs on this machine when no endpoint is set.
    fn default_is_local_endpoint(&self) -> bool {
        false
    }
    /// Recognises the request's audio.
    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>>;
    /// Releases resources; called once at host shutdown.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        ready(())
    }
}

/// Turns text into audio.
pub trait SpeechSynthesisProvider: Send + Sync + 'static {
    /// The stable type key the router matches.
    fn type_key(&self) -> ProviderTypeKey;
    /// A name for people.
    fn display_name(&self) -> &str;
    /// Whether the provider runs on this machine when no endpoint is set.
    fn default_is_local_endpoint(&self) -> bool {
        false
    }
    /// The voices the provider has, when it knows them.
    fn voices(&self) -> Vec<String> {
        Vec::new()
    }
    /// Synthesises the request's text.
    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>>;
    /// Releases resources; called once at host shutdown.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_speech_error_has_its_stable_kind() {
        let cases = [
            (
                SpeechError::UnknownProvider {
                    key: "k".into(),
                    known: vec![],
                },
                "unknown_provider",
            ),
            (
                SpeechError::NotLocal {
                    what: "endpoint",
                    endpoint: "e".into(),
                },
                "not_local",
            ),
            (
                SpeechError::NoLocalEndpoint { key: "k".into() },
                "no_local_endpoint",
            ),
            (SpeechError::InvalidAudio("a".into()), "invalid_audio"),
            (SpeechError::InvalidText("t".into()), "invalid_text"),
            (
                SpeechError::UnknownVoice {
                    voice: "v".into(),
                    known: vec![],
                },
                "unknown_voice",
            ),
            (SpeechError::Cancelled, "cancelled"),
            (
                SpeechError::NotInstalled {
                    provider: "p".into(),
                    missing: "m".into(),
                    install: "i".into(),
                },
                "not_installed",
            ),
            (SpeechError::provider("failed"), "provider"),
        ];
        for (error, kind) in cases {
            assert_eq!(error.kind(), kind, "{error:?}");
        }
    }
}
