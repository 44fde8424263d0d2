//! The `whisper` provider: local speech recognition with whisper.cpp
//! (through `whisper-rs`), on models converted from CTranslate2's format.
//!
//! Rules: constructing the provider is cheap and cannot fail; a model is
//! loaded on the first recognition that names it (or through
//! [`WhisperRecognizer::preload`]) and kept, warm, for the provider's
//! lifetime, shared by every user; a failed load is not remembered, so a
//! model installed later is picked up. At most `max_concurrent` decodes run
//! at once (the others wait their turn, cancellable), each on `threads`
//! CPU threads. The WAV decoding, the load and the decode run on tokio's
//! blocking pool. A cancelled call returns [`SpeechError::Cancelled`] at
//! once and whisper.cpp stops at its next step. The model files are found
//! as [`model`] describes; the conversion is in [`convert`].

mod cache;
mod convert;
mod ct2;
mod engine;
mod error;
mod half;
pub(crate) mod mel;
mod model;
mod quant;
mod stream;
mod vocab;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{
    RecognitionRequest, SpeechError, SpeechProviderKeys, SpeechRecognitionProvider, Transcript,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use tokio::sync::Semaphore;

use crate::error::EngineError;
use crate::stream::{RecognitionStream, StreamRequest, StreamingRecognizer};
use crate::wav;
use engine::{AudioCtx, Decode, Engine};
use error::WhisperFailure;
use model::{Located, Missing};
use model::{
    WHISPER_DEFAULTS, WHISPER_INSTALL_COMMAND, WHISPER_MODEL_ENV, WHISPER_MODELS,
    WHISPER_QUANTIZATIONS, is_whisper_model_name, whisper_cache_dir,
};

/// The built-in `whisper` recognition provider (type key
/// [`SpeechProviderKeys::WHISPER`]): OpenAI's Whisper models run by
/// whisper.cpp in this process.
///
/// Local by design ([`default_is_local_endpoint`] is `true`); it ignores the
/// configuration's endpoint. The configuration's `model` is `tiny.en` or
/// `base` ([`MODELS`](Self::MODELS), 16-bit weights), either with a suffix from
/// [`QUANTIZATIONS`](Self::QUANTIZATIONS) (`base-q8_0`: ggml's 8-bit blocks, converted
/// on load and cached, see [`cache_dir`](Self::cache_dir)), or a path; without
/// one, the first of [`DEFAULTS`](Self::DEFAULTS) that is installed. `language` is
/// a code such as `en` or `de-DE` (multilingual models only; without one
/// the language is detected), `options.threads` the CPU threads for the
/// decode, and `options.audio_ctx` how much of the encoder's 30-second
/// window to compute: `"fit"` (the audio's length plus a margin, at least
/// about 5 s, for audio
/// well under 30 s), `"full"`, encoder frames (50 a second), or `"auto"`
/// (the default: fit for base and larger, full for tiny, which repeats
/// itself with a fitted window; a fitted window also holds for the
/// language detection of a multilingual model's first decode in a fresh
/// process, which whisper.cpp would otherwise run over the full 30
/// seconds). Loaded models stay loaded for the provider's lifetime, so a
/// long-running host (`oscova mcp`, `oscova serve`) decodes warm from its
/// second call on. The text is Whisper's
/// own, kept as it is: capitals, punctuation, numbers as digits, "Mr." for
/// "mister". The [`Transcript`]'s segments carry start and end times;
/// audio longer than 30 seconds is decoded window by window, and a request
/// with a [progress sink](RecognitionRequest::progress) hears how far the
/// decode has got before each window and once more (all of it) at the end.
///
/// ```no_run
/// use oscova_speech::{RecognitionRequest, SpeechProviderConfig, SpeechRecognitionProvider, providers::WhisperRecognizer};
///
/// # async fn demo(wav: Vec<u8>) -> Result<(), oscova_speech::SpeechError> {
/// let recognizer = WhisperRecognizer::new();
/// recognizer.preload(Some("tiny.en")).await?; // optional: load now, not on first use
/// let config = SpeechProviderConfig::new("whisper").model("tiny.en");
/// let transcript = recognizer.recognize(RecognitionRequest::new(&config, &wav)).await?;
/// for segment in &transcript.segments {
///     println!("{:6.2}-{:6.2} {}", segment.start_seconds, segment.end_seconds, segment.text);
/// }
/// # Ok(()) }
/// ```
///
/// [`default_is_local_endpoint`]: SpeechRecognitionProvider::default_is_local_endpoint
#[derive(Debug, Clone)]
pub struct WhisperRecognizer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Loaded models; the lock is held while one loads, so a model is
    /// loaded once however many calls ask for it at the same time.
    engines: Mutex<HashMap<Located, Arc<Engine>>>,
    permits: Arc<Semaphore>,
    threads: usize,
    display_name: String,
}

impl Inner {
    fn engine(&self, model: &Located) -> Result<Arc<Engine>, WhisperFailure> {
        let mut engines = self.engines.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(engine) = engines.get(model) {
            return Ok(Arc::clone(engine));
        }
        let engine = Arc::new(Engine::load(model)?);
        engines.insert(model.clone(), Arc::clone(&engine));
        Ok(engine)
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

impl Default for WhisperRecognizer {
    fn default() -> Self {
        Self::new()
    }
}

fn not_installed(missing: Missing) -> WhisperFailure {
    WhisperFailure::NotInstalled {
        what: missing.what,
        install: missing.install,
    }
}

impl WhisperRecognizer {
    /// The models the install script installs: English-only tiny and
    /// multilingual base.
    pub const MODELS: [&'static str; 2] = WHISPER_MODELS;

    /// The quantizations a model name can ask for as a suffix
    /// (`base-q8_0`): ggml's 8-bit and 5-bit blocks, converted when the
    /// model loads.
    pub const QUANTIZATIONS: [&'static str; 2] = WHISPER_QUANTIZATIONS;

    /// The model a configuration without one uses: the first of these
    /// whose model is installed. Most accurate first, among those that
    /// decode at tiny.en's speed (see the crate's README for the
    /// measurements).
    pub const DEFAULTS: [&'static str; 2] = WHISPER_DEFAULTS;

    /// The environment variable naming the model when the configuration
    /// does not: a name from [`MODELS`](Self::MODELS) or a path.
    pub const MODEL_ENV: &'static str = WHISPER_MODEL_ENV;

    /// The command that installs a model into the cache (from a checkout
    /// of this project).
    pub const INSTALL_COMMAND: &'static str = WHISPER_INSTALL_COMMAND;

    /// The folder the install script puts models in:
    /// `$XDG_CACHE_HOME/oscova/whisper`, or `$HOME/.cache/oscova/whisper`;
    /// `None` when neither variable is set to an absolute path.
    pub fn cache_dir() -> Option<std::path::PathBuf> {
        whisper_cache_dir()
    }

    /// Whether `name` is a model name (not a path): one of
    /// [`MODELS`](Self::MODELS), with or without a suffix of
    /// [`QUANTIZATIONS`](Self::QUANTIZATIONS) (or `f16`).
    ///
    /// ```
    /// use oscova_speech::providers::WhisperRecognizer;
    ///
    /// assert!(WhisperRecognizer::is_model_name("base-q8_0"));
    /// assert!(!WhisperRecognizer::is_model_name("/models/base"));
    /// ```
    pub fn is_model_name(name: &str) -> bool {
        is_whisper_model_name(name)
    }

    /// One decode at a time, on every core (at most 8).
    pub fn new() -> Self {
        Self::with_limits(1, cores().min(8))
    }

    /// At most `max_concurrent` decodes at once, each on `threads` CPU
    /// threads (both at least 1).
    pub fn with_limits(max_concurrent: usize, threads: usize) -> Self {
        let display_name = match Self::installed_model() {
            Some(model) => format!("whisper.cpp (local); model {model}"),
            None => {
                format!("whisper.cpp (local); no model installed, run {WHISPER_INSTALL_COMMAND}")
            }
        };
        Self {
            inner: Arc::new(Inner {
                engines: Mutex::new(HashMap::new()),
                permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
                threads: threads.max(1),
                display_name,
            }),
        }
    }

    /// The model a configuration without `model` uses, if it is installed:
    /// its name, or the path [`MODEL_ENV`](Self::MODEL_ENV) gives.
    pub fn installed_model() -> Option<String> {
        model::locate(None).ok().map(|m| m.name().to_owned())
    }

    /// Whether `model` (as a configuration names it; `None` for the
    /// default) is loaded.
    pub fn is_loaded(&self, model: Option<&str>) -> bool {
        let Ok(located) = model::locate(model) else {
            return false;
        };
        self.inner
            .engines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&located)
    }

    /// Loads `model` now (`None`: the default), on tokio's blocking pool,
    /// unless it is loaded already.
    ///
    /// # Errors
    ///
    /// [`SpeechError::NotInstalled`] when the model is not on this machine;
    /// [`SpeechError::Provider`] when it cannot be read or converted.
    pub async fn preload(&self, model: Option<&str>) -> Result<(), SpeechError> {
        let located = model::locate(model).map_err(not_installed)?;
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.engine(&located).map(drop))
            .await
            .map_err(|source| EngineError::Task { source })??;
        Ok(())
    }

    async fn transcribe(
        &self,
        request: &RecognitionRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<Transcript, SpeechError> {
        let config = request.config;
        let located = model::locate(config.model.as_deref()).map_err(not_installed)?;
        let language = language(config.language.as_deref())?;
        let threads = threads(config.options.get("threads"), self.inner.threads)?;
        let audio_ctx = audio_ctx(config.options.get("audio_ctx"))?;
        if cancel.is_cancelled() {
            return Err(SpeechError::Cancelled);
        }
        let audio = request.audio.to_vec();
        let pcm = tokio::task::spawn_blocking(move || wav::decode(&audio))
            .await
            .map_err(|source| EngineError::Task { source })??;
        let permit = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(SpeechError::Cancelled),
            permit = Arc::clone(&self.inner.permits).acquire_owned() => permit
                .map_err(|_| SpeechError::provider("the whisper provider is shutting down"))?,
        };
        let inner = Arc::clone(&self.inner);
        let token = cancel.clone();
        let progress = request.progress.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let engine = inner.engine(&located)?;
            if let Some(code) = language.as_deref().filter(|c| *c != "en")
                && !engine.is_multilingual()
            {
                return Err(WhisperFailure::EnglishOnly {
                    model: engine.name().to_owned(),
                    language: code.to_owned(),
                });
            }
            let samples: Vec<f32> = pcm
                .samples
                .iter()
                .map(|s| f32::from(*s) / 32_768.0)
                .collect();
            drop(pcm);
            let decode = Decode {
                threads,
                language,
                audio_ctx,
            };
            engine.transcribe(&samples, &decode, &token, progress)
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(SpeechError::Cancelled),
            joined = task => Ok(joined.map_err(|source| EngineError::Task { source })??),
        }
    }
}

/// The Whisper code for a language tag (`de-DE` → `de`), checked against
/// whisper.cpp's list.
fn language(tag: Option<&str>) -> Result<Option<String>, WhisperFailure> {
    let Some(tag) = tag.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let code = tag
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if code == "auto" {
        return Ok(None);
    }
    match whisper_rs::get_lang_id(&code) {
        Some(_) => Ok(Some(code)),
        None => Err(WhisperFailure::UnknownLanguage(tag.to_owned())),
    }
}

/// `options.threads`, a positive integer, capped at the cores there are.
fn threads(option: Option<&serde_json::Value>, default: usize) -> Result<usize, SpeechError> {
    let Some(value) = option else {
        return Ok(default);
    };
    match value.as_u64().filter(|n| *n > 0) {
        Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX).min(cores())),
        None => Err(SpeechError::provider(format!(
            "the whisper option `threads` must be a positive integer, not {value}"
        ))),
    }
}

/// `options.audio_ctx`: `"auto"` (the default), `"fit"`, `"full"` or a
/// number of encoder frames (50 a second, at most 1500).
fn audio_ctx(option: Option<&serde_json::Value>) -> Result<AudioCtx, SpeechError> {
    let Some(value) = option else {
        return Ok(AudioCtx::Auto);
    };
    match (value.as_str(), value.as_u64()) {
        (Some("auto"), _) => Ok(AudioCtx::Auto),
        (Some("fit"), _) => Ok(AudioCtx::Fit),
        (Some("full"), _) => Ok(AudioCtx::Full),
        (_, Some(n @ 1..=1500)) => Ok(AudioCtx::Frames(usize::try_from(n).unwrap_or(1500))),
        _ => Err(SpeechError::provider(format!(
            "the whisper option `audio_ctx` must be \"auto\", \"fit\", \"full\" or encoder frames \
             from 1 to 1500 (50 a second), not {value}"
        ))),
    }
}

/// The streaming form: a growing window heard again every
/// `options.stream_step_ms` (default 1000 ms, 100 to 10000), its committed
/// prefix by whisper-streaming's LocalAgreement-2 policy (the longest
/// common word prefix of the last two hypotheses), the window cut at a
/// committed sentence end once longer than `options.stream_trim_seconds`
/// (default 15 s, 5 to 28) and never over 30 s. Partials are the committed
/// text and the tentative tail after every decode; the final transcript
/// comes after the audio's end (one more decode if audio came since the
/// last), with one segment per sentence. The model loads when the stream
/// opens, so a missing model is the open's error. See
/// [`stream`](crate::stream) for the caller's side.
impl StreamingRecognizer for WhisperRecognizer {
    fn open_stream(
        &self,
        request: StreamRequest,
    ) -> BoxFuture<'_, Result<RecognitionStream, SpeechError>> {
        Box::pin(stream::open(Arc::clone(&self.inner), request))
    }
}

impl SpeechRecognitionProvider for WhisperRecognizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::WHISPER)
    }

    fn display_name(&self) -> &str {
        &self.inner.display_name
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async move {
            let cancel = request.cancel.clone();
            self.transcribe(&request, &cancel).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_whisper_codes() {
        assert_eq!(language(None).unwrap(), None);
        assert_eq!(language(Some(" ")).unwrap(), None);
        assert_eq!(language(Some("auto")).unwrap(), None);
        assert_eq!(language(Some("en-US")).unwrap().as_deref(), Some("en"));
        assert_eq!(language(Some("DE_de")).unwrap().as_deref(), Some("de"));
        assert!(matches!(
            language(Some("xx")),
            Err(WhisperFailure::UnknownLanguage(_))
        ));
    }

    #[test]
    fn the_threads_option_is_a_positive_integer() {
        assert_eq!(threads(None, 3).unwrap(), 3);
        assert_eq!(threads(Some(&serde_json::json!(1)), 3).unwrap(), 1);
        assert_eq!(
            threads(Some(&serde_json::json!(10_000)), 3).unwrap(),
            cores()
        );
        for bad in [
            serde_json::json!(0),
            serde_json::json!("2"),
            serde_json::json!(-1),
        ] {
            assert!(threads(Some(&bad), 3).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_audio_ctx_option_fits_the_clip_unless_told() {
        use serde_json::json;
        assert_eq!(audio_ctx(None).unwrap(), AudioCtx::Auto);
        assert_eq!(audio_ctx(Some(&json!("fit"))).unwrap(), AudioCtx::Fit);
        // Auto fits base's window (6 encoder layers), not tiny's (4).
        assert_eq!(AudioCtx::Auto.resolve(6), AudioCtx::Fit);
        assert_eq!(AudioCtx::Auto.resolve(4), AudioCtx::Full);
        assert_eq!(AudioCtx::Full.resolve(6), AudioCtx::Full);
        assert_eq!(audio_ctx(Some(&json!("full"))).unwrap(), AudioCtx::Full);
        assert_eq!(audio_ctx(Some(&json!(300))).unwrap(), AudioCtx::Frames(300));
        for bad in [json!(0), json!(1501), json!("half"), json!(-5)] {
            assert!(audio_ctx(Some(&bad)).is_err(), "{bad}");
        }
        // 5 s of audio: 250 frames and the margin; 29 s and more: the
        // whole window (0 to whisper.cpp).
        assert_eq!(AudioCtx::Fit.frames(5 * 16_000), 250 + engine::FIT_MARGIN);
        // A short clip gets at least the floor, not just its length.
        assert_eq!(AudioCtx::Fit.frames(2 * 16_000), engine::FIT_MIN);
        assert_eq!(AudioCtx::Fit.frames(29 * 16_000), 0);
        assert_eq!(AudioCtx::Fit.frames(90 * 16_000), 0);
        assert_eq!(AudioCtx::Full.frames(16_000), 0);
        assert_eq!(AudioCtx::Frames(1500).frames(16_000), 0);
        assert_eq!(AudioCtx::Frames(400).frames(16_000), 400);
    }

    #[tokio::test]
    async fn a_missing_model_is_not_installed_and_named() {
        let recognizer = WhisperRecognizer::new();
        let config = oscova_core::provider::speech::SpeechProviderConfig::new("whisper")
            .model("/nonexistent/whisper-model");
        let wav = crate::wav::encode_wav(&crate::wav::Pcm16kMono {
            samples: vec![0; 1_600],
        });
        let err = recognizer
            .recognize(RecognitionRequest::new(&config, &wav))
            .await
            .unwrap_err();
        let SpeechError::NotInstalled {
            provider, install, ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(provider, "whisper");
        assert!(
            install.starts_with("scripts/ensure-whisper-model.sh"),
            "{install}"
        );
        assert!(!recognizer.is_loaded(Some("/nonexistent/whisper-model")));
        assert!(
            recognizer
                .preload(Some("/nonexistent/whisper-model"))
                .await
                .is_err()
        );
    }
}
