//! The `pocketsphinx` provider: local speech recognition with the decoder kept
//! loaded between calls.
//!
//! Rules: constructing the provider is cheap and cannot fail; the model (tens
//! of megabytes, about a second) is loaded on the first recognition, or
//! earlier through [`PocketsphinxRecognizer::preload`], and then kept for the
//! provider's lifetime, so a host that only synthesizes never pays for it. A
//! failed load is not remembered: the next call tries again (a model
//! installed in the meantime is picked up). The load, the WAV decoding and the
//! decode all run on tokio's blocking pool, never on the executor. A call
//! returns [`SpeechError::Cancelled`] as soon as its token fires; the decode
//! already running finishes in the background (a fraction of the audio's
//! length) and its result is dropped.

use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{
    RecognitionRequest, SpeechError, SpeechProviderKeys, SpeechRecognitionProvider, Transcript,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};

use crate::error::EngineError;
#[allow(unsafe_code)]
mod ffi;
mod sphinx;

use crate::wav;
pub use sphinx::ModelPaths;
use sphinx::SphinxRecognizer;

/// The built-in `pocketsphinx` recognition provider (type key
/// [`SpeechProviderKeys::POCKETSPHINX`]): CMU pocketsphinx with the US
/// English model, in this process.
///
/// Local by design ([`default_is_local_endpoint`] is `true`); it ignores the
/// configuration's endpoint and model, and refuses a `language` other than
/// English. Audio may be any common PCM WAV (see [`decode_wav`](crate::wav::decode_wav));
/// the words come back lowercase, separated by single spaces.
///
/// ```no_run
/// use oscova_speech::{providers::PocketsphinxRecognizer, RecognitionRequest, SpeechProviderConfig, SpeechRecognitionProvider};
///
/// # async fn demo(wav: Vec<u8>) -> Result<(), oscova_speech::SpeechError> {
/// let recognizer = PocketsphinxRecognizer::new();
/// recognizer.preload().await?; // optional: load the model now, not on first use
/// let config = SpeechProviderConfig::new("pocketsphinx");
/// let transcript = recognizer.recognize(RecognitionRequest::new(&config, &wav)).await?;
/// println!("{}", transcript.text);
/// # Ok(()) }
/// ```
///
/// [`default_is_local_endpoint`]: SpeechRecognitionProvider::default_is_local_endpoint
#[derive(Debug, Clone)]
pub struct PocketsphinxRecognizer {
    inner: Arc<Lazy>,
}

/// The model paths and, once loaded, the decoder.
#[derive(Debug)]
struct Lazy {
    paths: ModelPaths,
    loaded: Mutex<Option<Arc<SphinxRecognizer>>>,
}

impl Lazy {
    /// The loaded recognizer, loading it first if needed. Blocking: callers
    /// waiting for a load in progress wait on the lock, then share its result.
    fn get(&self) -> Result<Arc<SphinxRecognizer>, EngineError> {
        // Nothing panics while the lock is held except inside pocketsphinx
        // loading, which leaves the slot empty: a poisoned lock is usable.
        let mut slot = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(recognizer) = &*slot {
            return Ok(Arc::clone(recognizer));
        }
        let recognizer = Arc::new(SphinxRecognizer::new(self.paths.clone())?);
        *slot = Some(Arc::clone(&recognizer));
        Ok(recognizer)
    }
}

impl Default for PocketsphinxRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

impl PocketsphinxRecognizer {
    /// The US English model of the Debian package `pocketsphinx-en-us`
    /// ([`ModelPaths::debian`]), loaded on first use.
    pub fn new() -> Self {
        Self::with_model(ModelPaths::debian())
    }

    /// Another model, loaded on first use.
    pub fn with_model(paths: ModelPaths) -> Self {
        Self {
            inner: Arc::new(Lazy {
                paths,
                loaded: Mutex::new(None),
            }),
        }
    }

    /// The model files this provider loads.
    pub fn model_paths(&self) -> &ModelPaths {
        &self.inner.paths
    }

    /// Whether the model is loaded.
    pub fn is_loaded(&self) -> bool {
        self.inner
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Loads the model now, on tokio's blocking pool, unless it is loaded
    /// already.
    ///
    /// # Errors
    ///
    /// [`SpeechError::Provider`] naming a missing model file and the Debian
    /// package to install, or saying why pocketsphinx refused the model.
    pub async fn preload(&self) -> Result<(), SpeechError> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.get().map(drop))
            .await
            .map_err(|source| EngineError::Task { source })??;
        Ok(())
    }

    /// Decodes `audio` and recognizes it, loading the model if needed.
    async fn transcribe(
        &self,
        audio: &[u8],
        cancel: &CancellationToken,
    ) -> Result<String, EngineError> {
        if cancel.is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        // The blocking task must own its input; a copy costs far less than
        // the decode.
        let audio = audio.to_vec();
        let inner = Arc::clone(&self.inner);
        let task = tokio::task::spawn_blocking(move || {
            let pcm = wav::decode(&audio)?;
            drop(audio);
            inner.get()?.recognize(&pcm)
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(EngineError::Cancelled),
            joined = task => joined.map_err(|source| EngineError::Task { source })?,
        }
    }
}

/// Refuses a language the US English model cannot hear.
fn check_language(language: Option<&str>) -> Result<(), EngineError> {
    let Some(language) = language else {
        return Ok(());
    };
    let primary = language
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if primary == "en" {
        return Ok(());
    }
    Err(EngineError::UnsupportedLanguage {
        engine: "pocketsphinx",
        language: language.to_owned(),
        hint: "only the US English model is installed; use another provider for this language",
    })
}

impl SpeechRecognitionProvider for PocketsphinxRecognizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::POCKETSPHINX)
    }

    fn display_name(&self) -> &str {
        "pocketsphinx (local)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async move {
            check_language(request.config.language.as_deref())?;
            let text = self.transcribe(request.audio, &request.cancel).await?;
            Ok(Transcript::new(text))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oscova_core::provider::speech::SpeechProviderConfig;
    use std::time::{Duration, Instant};

    #[test]
    fn construction_is_lazy() {
        let recognizer = PocketsphinxRecognizer::new();
        assert!(!recognizer.is_loaded());
        assert_eq!(recognizer.model_paths(), &ModelPaths::debian());
    }

    #[test]
    fn languages_other_than_english_are_refused() {
        for ok in [None, Some("en"), Some("en-US"), Some("EN_gb")] {
            assert!(check_language(ok).is_ok(), "{ok:?}");
        }
        for bad in ["de-DE", "fr", "", "eng"] {
            let err = SpeechError::from(check_language(Some(bad)).unwrap_err());
            assert!(err.to_string().contains("US English"), "{bad}: {err}");
        }
    }

    #[tokio::test]
    async fn a_missing_model_is_reported_on_use_and_retried() {
        let paths = ModelPaths {
            hmm: "/nonexistent/hmm".into(),
            ..ModelPaths::debian()
        };
        let recognizer = PocketsphinxRecognizer::with_model(paths);
        let wav = crate::wav::encode_wav(&crate::wav::Pcm16kMono {
            samples: vec![0; 1_600],
        });
        let config = SpeechProviderConfig::new("pocketsphinx");
        for _ in 0..2 {
            let err = recognizer
                .recognize(RecognitionRequest::new(&config, &wav))
                .await
                .unwrap_err();
            let message = err.to_string();
            assert!(
                message.contains("apt-get install pocketsphinx-en-us"),
                "{message}"
            );
        }
        assert!(!recognizer.is_loaded());
        assert!(recognizer.preload().await.is_err());
    }

    #[tokio::test]
    async fn bad_audio_is_refused_without_loading_the_model() {
        let recognizer = PocketsphinxRecognizer::new();
        let config = SpeechProviderConfig::new("pocketsphinx");
        let err = recognizer
            .recognize(RecognitionRequest::new(&config, b"not a wav"))
            .await
            .unwrap_err();
        assert!(matches!(err, SpeechError::InvalidAudio(_)), "{err:?}");
        assert!(!recognizer.is_loaded());
    }

    #[tokio::test]
    async fn cancellation_returns_promptly_and_the_decoder_stays_usable() {
        let recognizer = PocketsphinxRecognizer::new();
        recognizer.preload().await.unwrap();
        assert!(recognizer.is_loaded());
        let config = SpeechProviderConfig::new("pocketsphinx");

        // Already cancelled: nothing runs.
        let cancel = CancellationToken::new();
        cancel.cancel();
        let silence = crate::wav::encode_wav(&crate::wav::Pcm16kMono {
            samples: vec![0; 16_000],
        });
        let err = recognizer
            .recognize(RecognitionRequest::new(&config, &silence).cancel(cancel))
            .await
            .unwrap_err();
        assert!(matches!(err, SpeechError::Cancelled));

        // Cancelled while a long decode runs: the call returns at once.
        let wav = crate::providers::flite::FliteSynthesizer::new()
            .speak(
                "open the door and turn on the light",
                "kal16",
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        let speech = crate::wav::decode(&wav).unwrap().samples;
        let long: Vec<i16> = speech.iter().copied().cycle().take(16_000 * 60).collect();
        let long = crate::wav::encode_wav(&crate::wav::Pcm16kMono { samples: long });
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            canceller.cancel();
        });
        let started = Instant::now();
        let err = recognizer
            .recognize(RecognitionRequest::new(&config, &long).cancel(cancel))
            .await
            .unwrap_err();
        assert!(matches!(err, SpeechError::Cancelled));
        assert!(started.elapsed() < Duration::from_millis(500));

        // The abandoned decode finishes in the background; the provider
        // stays usable afterwards.
        let again = recognizer
            .recognize(RecognitionRequest::new(&config, &wav))
            .await
            .unwrap();
        assert!(again.text.contains("door"), "{again:?}");
    }
}
