//! What a host decides per user ([`SpeechSettings`]) and per plugin
//! ([`SpeechLimits`]).
//!
//! Rules: the defaults keep everything on this machine — kokoro (voice
//! `af_heart`) when the build has it and it is installed, else flite with
//! the 16 kHz `kal16` voice, whisper when the build has it and its model is
//! installed (else pocketsphinx), and offline operation required — so
//! a host that configures nothing never sends a user's text or audio
//! anywhere. API keys are never stored here: a setting names a credential,
//! which is resolved through the user's credential resolver when a tool
//! runs (so its value is also redacted from every result).

use oscova_speech::SpeechProviderConfig;

/// One user's speech settings: which providers speak and listen, and
/// whether speech must stay on this machine.
///
/// ```
/// use oscova_plugin_speech::SpeechSettings;
/// use oscova_speech::SpeechProviderConfig;
///
/// let local = SpeechSettings::default();
/// assert!(local.offline);
/// assert_eq!(local.synthesis, oscova_speech::providers::default_offline_synthesis());
/// assert_eq!(local.recognition.provider, oscova_speech::providers::default_offline_recognizer());
///
/// // A user who allows a hosted service for transcription:
/// let hosted = SpeechSettings::default()
///     .offline(false)
///     .recognition(SpeechProviderConfig::new("openai").model("whisper-1"))
///     .recognition_credential("openai.api_key");
/// assert_eq!(hosted.recognition_credential.as_deref(), Some("openai.api_key"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SpeechSettings {
    /// Require offline operation: a provider whose endpoint (or, without
    /// one, whose design) is not on this machine is refused by the router
    /// before it is entered. Default `true`.
    pub offline: bool,
    /// The provider `speak` uses (default: `kokoro`, voice `af_heart`, when
    /// this build has it and it is installed, else `flite`, voice `kal16`;
    /// see [`oscova_speech::providers::default_offline_synthesis`]).
    pub synthesis: SpeechProviderConfig,
    /// The provider `transcribe` uses (default: `whisper` when this build
    /// has it and its model is installed, else `pocketsphinx`; see
    /// [`oscova_speech::providers::default_offline_recognizer`]).
    pub recognition: SpeechProviderConfig,
    /// The name of the user's credential holding the synthesis provider's
    /// API key, if it needs one (for example `openai.api_key`).
    pub synthesis_credential: Option<String>,
    /// The name of the user's credential holding the recognition
    /// provider's API key, if it needs one.
    pub recognition_credential: Option<String>,
}

impl Default for SpeechSettings {
    fn default() -> Self {
        Self {
            offline: true,
            synthesis: oscova_speech::providers::default_offline_synthesis(),
            recognition: SpeechProviderConfig::new(
                oscova_speech::providers::default_offline_recognizer(),
            ),
            synthesis_credential: None,
            recognition_credential: None,
        }
    }
}

impl SpeechSettings {
    /// Sets whether offline operation is required.
    #[must_use]
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Sets the synthesis provider.
    #[must_use]
    pub fn synthesis(mut self, config: SpeechProviderConfig) -> Self {
        self.synthesis = config;
        self
    }

    /// Sets the recognition provider.
    #[must_use]
    pub fn recognition(mut self, config: SpeechProviderConfig) -> Self {
        self.recognition = config;
        self
    }

    /// Names the credential holding the synthesis provider's API key.
    #[must_use]
    pub fn synthesis_credential(mut self, name: impl Into<String>) -> Self {
        self.synthesis_credential = Some(name.into());
        self
    }

    /// Names the credential holding the recognition provider's API key.
    #[must_use]
    pub fn recognition_credential(mut self, name: impl Into<String>) -> Self {
        self.recognition_credential = Some(name.into());
        self
    }
}

/// Size caps of the speech tools.
///
/// ```
/// let limits = oscova_plugin_speech::SpeechLimits::default();
/// assert_eq!(limits.max_text_chars, 5_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpeechLimits {
    /// The most characters one `speak` call accepts (default
    /// [`oscova_speech::SpeechSynthesisRouter::MAX_CHARS`], 5,000, a few minutes of
    /// speech). It can only lower the synthesis router's caps, which hold
    /// for every call: text over 5,000 characters, or audio that plays
    /// longer than [`oscova_speech::SpeechSynthesisRouter::MAX_SECONDS`] (600 s), is
    /// refused whatever this says.
    pub max_text_chars: usize,
    /// The largest WAV file one `transcribe` call reads (default 64 MiB,
    /// five minutes of 48 kHz 16-bit stereo with room to spare).
    pub max_audio_bytes: u64,
}

impl Default for SpeechLimits {
    fn default() -> Self {
        Self {
            max_text_chars: oscova_speech::SpeechSynthesisRouter::MAX_CHARS,
            max_audio_bytes: oscova_speech::wav::DEFAULT_MAX_AUDIO_BYTES,
        }
    }
}

impl SpeechLimits {
    /// Sets the text cap.
    #[must_use]
    pub fn max_text_chars(mut self, chars: usize) -> Self {
        self.max_text_chars = chars;
        self
    }

    /// Sets the audio size cap.
    #[must_use]
    pub fn max_audio_bytes(mut self, bytes: u64) -> Self {
        self.max_audio_bytes = bytes;
        self
    }
}
