//! Which built-in provider a host uses when its configuration names none.
//!
//! Rules: the answer depends on this build's features and on what is
//! installed now (checked on each call, so installing a model changes it
//! without a restart); it is always a provider this build has, or the
//! router's refusal lists the keys it has.

use oscova_core::provider::speech::{SpeechProviderConfig, SpeechProviderKeys};

use super::FliteSynthesizer;
#[cfg(feature = "piper")]
use super::KokoroSynthesizer;
#[cfg(feature = "whisper")]
use super::WhisperRecognizer;

/// The offline synthesizer to use when nothing names one: `kokoro` when
/// this build has it (feature `piper`) and its files and onnxruntime are
/// installed (`scripts/ensure-kokoro.sh`), else `flite`.
///
/// ```
/// let key = oscova_speech::providers::default_offline_synthesizer();
/// assert!(key == "kokoro" || key == "flite");
/// ```
pub fn default_offline_synthesizer() -> &'static str {
    #[cfg(feature = "piper")]
    if KokoroSynthesizer::installed() {
        return SpeechProviderKeys::KOKORO;
    }
    SpeechProviderKeys::FLITE
}

/// The synthesis configuration to use when nothing names a provider:
/// `kokoro` with its default voice `af_heart` (`KokoroSynthesizer::DEFAULT_VOICE`,
/// feature `piper`) when it is installed (see [`default_offline_synthesizer`]), else `flite`
/// with [`FliteSynthesizer::DEFAULT_VOICE`].
///
/// ```
/// let config = oscova_speech::providers::default_offline_synthesis();
/// assert!(config.voice.as_deref() == Some("af_heart") || config.voice.as_deref() == Some("kal16"));
/// ```
pub fn default_offline_synthesis() -> SpeechProviderConfig {
    #[cfg(feature = "piper")]
    if KokoroSynthesizer::installed() {
        return SpeechProviderConfig::new(SpeechProviderKeys::KOKORO)
            .voice(KokoroSynthesizer::DEFAULT_VOICE);
    }
    SpeechProviderConfig::new(SpeechProviderKeys::FLITE).voice(FliteSynthesizer::DEFAULT_VOICE)
}

/// The offline recognizer to use when nothing names one: `whisper` when
/// this build has it (feature `whisper`) and its model is installed, or
/// when the build has no `pocketsphinx` (whisper's error then says how to
/// install its model); else `pocketsphinx`. A build with neither has no
/// offline recognizer: the key is still `pocketsphinx`, and the router's
/// refusal lists the keys it has.
///
/// ```
/// let key = oscova_speech::providers::default_offline_recognizer();
/// assert!(key == "whisper" || key == "pocketsphinx");
/// ```
pub fn default_offline_recognizer() -> &'static str {
    #[cfg(feature = "whisper")]
    if !cfg!(feature = "pocketsphinx") || WhisperRecognizer::installed_model().is_some() {
        return SpeechProviderKeys::WHISPER;
    }
    SpeechProviderKeys::POCKETSPHINX
}
