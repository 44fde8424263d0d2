//! Streaming recognition: audio pushed as it arrives (16 kHz mono 16-bit
//! frames), partial transcripts while it comes, one final transcript at
//! its end.
//!
//! A caller opens a stream through the recognition router,
//! [`SpeechRecognitionRouter::open_stream`](crate::SpeechRecognitionRouter::open_stream),
//! which routes it by type key with the same offline check as
//! `recognize`, before any provider is entered. What comes back is a
//! [`RecognitionStream`]: push frames with [`push`](RecognitionStream::push)
//! (never blocks, so an audio callback or an async task can call it),
//! take [`RecognitionEvent`]s with
//! [`next_event`](RecognitionStream::next_event) (a partial transcript
//! whenever the provider has a newer one, then the final one), end the
//! audio with [`finish`](RecognitionStream::finish), or
//! [`split`](RecognitionStream::split) it so one task pushes while another
//! awaits events.
//!
//! ```no_run
//! use oscova_speech::stream::{RecognitionEvent, StreamRequest};
//! use oscova_speech::{SpeechProviderConfig, SpeechRecognitionRouter};
//!
//! # async fn demo(router: &SpeechRecognitionRouter, frames: Vec<Vec<i16>>) -> Result<(), oscova_speech::SpeechError> {
//! let config = SpeechProviderConfig::new("whisper");
//! let stream = router.open_stream(StreamRequest::new(config).offline(true)).await?;
//! let (audio, mut events) = stream.split();
//! let reader = tokio::spawn(async move {
//!     while let Some(event) = events.next().await {
//!         match event? {
//!             RecognitionEvent::Partial(p) => eprintln!("… {} [{}]", p.committed, p.tentative),
//!             RecognitionEvent::Final(t) => return Ok(t.text),
//!         }
//!     }
//!     Err(oscova_speech::SpeechError::provider("the stream ended without a transcript"))
//! });
//! for frame in frames {
//!     audio.push(&frame)?; // 20 ms = 320 samples at 16 kHz, say
//! }
//! audio.finish();
//! let text = reader.await.map_err(|e| oscova_speech::SpeechError::provider(e.to_string()))??;
//! println!("{text}");
//! # Ok(()) }
//! ```
//!
//! Rules: every stream takes 16 kHz mono 16-bit samples; a request for
//! another rate or channel count is refused when the stream is opened,
//! before the provider is entered ([`SpeechError::InvalidAudio`] naming
//! what to send), and a stream refuses audio beyond [`MAX_SECONDS`] the
//! same way. Partials are coalesced: a reader that falls behind gets the
//! newest, never a queue of stale ones, so a slow reader never slows the
//! recognizer. A partial's [`committed`](PartialTranscript::committed)
//! text only ever grows (each is a prefix of the next and of the final
//! text); its [`tentative`](PartialTranscript::tentative) tail may change.
//! Dropping the stream (or its audio half) without
//! [`finish`](StreamAudio::finish), or cancelling the request's token,
//! cancels it: the provider stops and the final event is
//! [`SpeechError::Cancelled`].
//!
//! Providers: a provider with a streaming form implements
//! [`StreamingRecognizer`] and is registered with it
//! ([`RouterBuilder::builtin_streaming`](crate::router::RouterBuilder::builtin_streaming),
//! [`plugin_streaming`](crate::router::RouterBuilder::plugin_streaming)); it
//! makes the stream's two ends with [`RecognitionStream::channel`] and
//! works from the [`StreamFeed`]. Every other provider streams through the
//! buffering default: the audio is collected and recognized whole at the
//! end (no partials), so every existing provider keeps working. Of the
//! built-in providers, `whisper` streams natively (a growing window with a
//! stable prefix, see `WhisperRecognizer`); `pocketsphinx` and `openai`
//! use the buffering default.

#[cfg(feature = "whisper")]
mod agreement;
mod buffered;
mod handle;

use oscova_core::provider::BoxFuture;
use oscova_core::provider::speech::{SpeechError, SpeechProviderConfig, Transcript};
use oscova_core::{CancellationToken, SecretString};

#[cfg(feature = "whisper")]
pub(crate) use agreement::{Agreement, Word, joined as join_words};
pub(crate) use buffered::open_buffered;
pub use handle::{RecognitionStream, StreamAudio, StreamEvents, StreamFeed, StreamInput};

/// The sample rate every stream takes: 16 kHz.
pub const SAMPLE_RATE: u32 = 16_000;

/// The most audio one stream takes, in seconds (the same as
/// [`wav::MAX_AUDIO_SECONDS`](crate::wav::MAX_AUDIO_SECONDS)); a push past it
/// is refused with [`SpeechError::InvalidAudio`].
pub const MAX_SECONDS: u32 = crate::wav::MAX_AUDIO_SECONDS;

/// A request to open a recognition stream, as a caller makes it and the
/// router hands it to the provider. Unlike
/// [`RecognitionRequest`](crate::RecognitionRequest) it owns what it holds,
/// because the stream outlives the call that opens it.
///
/// ```
/// use oscova_speech::SpeechProviderConfig;
/// use oscova_speech::stream::StreamRequest;
///
/// let request = StreamRequest::new(SpeechProviderConfig::new("whisper")).offline(true);
/// assert_eq!(request.sample_rate, 16_000);
/// assert_eq!(request.channels, 1);
/// ```
#[derive(Clone)]
pub struct StreamRequest {
    /// The selected configuration.
    pub config: SpeechProviderConfig,
    /// The resolved API key, if the provider needs one.
    pub api_key: Option<SecretString>,
    /// Where to download a model from, if the provider needs one (checked
    /// by the router when offline operation is required).
    pub download_url: Option<String>,
    /// Whether the host requires offline operation.
    pub offline: bool,
    /// The sample rate of the frames the caller will push; only
    /// [`SAMPLE_RATE`] is taken.
    pub sample_rate: u32,
    /// The channels of the frames the caller will push; only mono (1) is
    /// taken.
    pub channels: u16,
    /// Cancels the stream: the provider stops and the final event is
    /// [`SpeechError::Cancelled`].
    pub cancel: CancellationToken,
}

impl StreamRequest {
    /// A stream with `config`: 16 kHz mono, no API key, no download URL,
    /// offline not required, a fresh cancellation token.
    pub fn new(config: SpeechProviderConfig) -> Self {
        Self {
            config,
            api_key: None,
            download_url: None,
            offline: false,
            sample_rate: SAMPLE_RATE,
            channels: 1,
            cancel: CancellationToken::new(),
        }
    }

    /// Sets the resolved API key.
    #[must_use]
    pub fn api_key(mut self, key: Option<SecretString>) -> Self {
        self.api_key = key;
        self
    }

    /// Sets the model download URL.
    #[must_use]
    pub fn download_url(mut self, url: Option<String>) -> Self {
        self.download_url = url;
        self
    }

    /// Sets whether offline operation is required.
    #[must_use]
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Says which sample rate the frames have (refused unless 16 kHz).
    #[must_use]
    pub fn sample_rate(mut self, rate: u32) -> Self {
        self.sample_rate = rate;
        self
    }

    /// Says how many channels the frames have (refused unless 1).
    #[must_use]
    pub fn channels(mut self, channels: u16) -> Self {
        self.channels = channels;
        self
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Refuses a layout other than 16 kHz mono, saying what to send.
    ///
    /// # Errors
    ///
    /// [`SpeechError::InvalidAudio`] for another rate or channel count.
    pub fn check_format(&self) -> Result<(), SpeechError> {
        if self.sample_rate != SAMPLE_RATE {
            return Err(SpeechError::InvalidAudio(format!(
                "a recognition stream takes {SAMPLE_RATE} Hz audio, not {} Hz; resample the \
                 frames to 16 kHz mono 16-bit before pushing them",
                self.sample_rate
            )));
        }
        if self.channels != 1 {
            return Err(SpeechError::InvalidAudio(format!(
                "a recognition stream takes 16 kHz mono audio, not {} channels; mix the frames down to \
                 one channel before pushing them",
                self.channels
            )));
        }
        Ok(())
    }
}

impl std::fmt::Debug for StreamRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamRequest")
            .field("config", &self.config)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("download_url", &self.download_url)
            .field("offline", &self.offline)
            .field("sample_rate", &self.sample_rate)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

/// What a stream has heard so far, before its end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartialTranscript {
    /// Text that will not change: each partial's is a prefix of the next
    /// one's and of the final transcript's (empty for providers that
    /// commit nothing before the end).
    pub committed: String,
    /// The provider's current guess at what follows; the next partial may
    /// change it.
    pub tentative: String,
    /// Seconds of audio, from the stream's start, this partial was heard
    /// from.
    pub audio_seconds: f64,
}

impl PartialTranscript {
    /// The committed text and the tentative tail, joined by a space.
    ///
    /// ```
    /// use oscova_speech::stream::PartialTranscript;
    ///
    /// let p = PartialTranscript { committed: "I heard".into(), tentative: "you".into(), audio_seconds: 1.0 };
    /// assert_eq!(p.text(), "I heard you");
    /// ```
    pub fn text(&self) -> String {
        match (self.committed.is_empty(), self.tentative.is_empty()) {
            (true, _) => self.tentative.clone(),
            (false, true) => self.committed.clone(),
            (false, false) => format!("{} {}", self.committed, self.tentative),
        }
    }
}

/// What a stream tells its reader.
#[derive(Debug, Clone, PartialEq)]
pub enum RecognitionEvent {
    /// What has been heard so far (the newest, if several came while the
    /// reader was away).
    Partial(PartialTranscript),
    /// The transcript of the whole audio, after its end; the last event.
    Final(Transcript),
}

/// A recognition provider's streaming form: opens a stream the router
/// routed (the offline check passed and the format checked).
///
/// An implementation makes the stream's two ends with
/// [`RecognitionStream::channel`], starts its work on the [`StreamFeed`]
/// (a task or a thread: reading audio, sending partials, then the final
/// transcript) and returns the caller's end.
pub trait StreamingRecognizer: Send + Sync + 'static {
    /// Opens a stream for `request`.
    ///
    /// # Errors
    ///
    /// What the provider can tell before any audio: a model that is not
    /// installed, a bad setting.
    fn open_stream(
        &self,
        request: StreamRequest,
    ) -> BoxFuture<'_, Result<RecognitionStream, SpeechError>>;
}
