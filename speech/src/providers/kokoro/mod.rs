//! The `kokoro` provider: local neural speech synthesis with Kokoro-82M.
//!
//! Rules: the model (`kokoro-v1.0.int8.onnx`), the vocabulary and the
//! voices live in one folder (see `assets`), which
//! [`KokoroSynthesizer::INSTALL_COMMAND`] fills. The voice is the request's, else the
//! configuration's `voice`, else [`KokoroSynthesizer::DEFAULT_VOICE`]; a name that is
//! not an installed English voice is [`SpeechError::UnknownVoice`] listing
//! the installed ones. Text becomes clauses of IPA through the `espeak-ng`
//! program, run the way piper runs it (`en-us` for `a*` voices, `en-gb` for
//! `b*`; the same clause cutter, the same spawn policy, the punctuation
//! put back for prosody), the clauses become chunks of at most 510 tokens
//! cut at sentence, else clause, else word boundaries (see `chunks`), and
//! onnxruntime, the same library piper loads, speaks each chunk with the
//! voice's style row for its length (see `model`); the chunks' audio is
//! joined into one 24 kHz 16-bit mono WAV. The model and vocabulary are
//! loaded once, on first use or by [`preload`](KokoroSynthesizer::preload),
//! and kept with every voice used; nothing is read when the provider is
//! built except a look at whether the files are there. A missing file is
//! [`SpeechError::NotInstalled`] naming the installer.

mod assets;
mod chunks;
mod error;
mod model;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::speech::{
    SpeechError, SpeechProviderConfig, SpeechProviderKeys, SpeechSynthesisProvider,
    SynthesisRequest, SynthesizedAudio,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use serde_json::{Map, Value};

use assets::{KOKORO_DEFAULT_VOICE, KOKORO_INSTALL_COMMAND};
use error::KokoroError;
use model::{Model, SAMPLE_RATE};

use crate::onnx::error::OnnxError;
use crate::onnx::{default_onnxruntime, phonemes, runtime};

/// Who the spawn policy is told espeak-ng runs for.
const ORIGIN: &str = "speech provider kokoro";

/// The keys a configuration's `options` may hold.
const KEYS: [&str; 3] = ["onnxruntime", "threads", "speed"];

/// The built-in `kokoro` synthesis provider (type key
/// [`SpeechProviderKeys::KOKORO`]): Kokoro-82M (weights and voices
/// Apache-2.0, the int8 ONNX export MIT), run on this machine by
/// onnxruntime with phonemes from the `espeak-ng` program. Returns 16-bit
/// mono WAV at 24 kHz. Voices: the 20 US (`af_*`, `am_*`) and 8 UK
/// (`bf_*`, `bm_*`) English voices, default [`DEFAULT_VOICE`](Self::DEFAULT_VOICE).
///
/// Local by design; it ignores the configuration's endpoint and model.
/// Settings in the configuration's `options`: `onnxruntime` (the
/// library's path), `threads` (per inference, default 2 or the number of
/// cores if fewer) and `speed` (0.5 to 2.0, default 1.0).
///
/// `scripts/ensure-kokoro.sh` installs the model, the voices and the
/// vocabulary (with both licence texts) into the folder this provider
/// looks in, and the onnxruntime library piper also uses. When they are
/// installed, kokoro is Oscova's default synthesis provider
/// ([`default_offline_synthesizer`](super::default_offline_synthesizer)).
///
/// ```no_run
/// use oscova_speech::{providers::KokoroSynthesizer, SpeechProviderConfig, SpeechSynthesisProvider, SynthesisRequest};
///
/// # async fn demo() -> Result<(), oscova_speech::SpeechError> {
/// let kokoro = KokoroSynthesizer::new();
/// let config = SpeechProviderConfig::new("kokoro").voice("bf_emma");
/// let audio = kokoro
///     .synthesize(SynthesisRequest::new(&config, "Hello from Oscova."))
///     .await?;
/// assert_eq!(&audio.wav[..4], b"RIFF");
/// # Ok(()) }
/// ```
pub struct KokoroSynthesizer {
    dir: Option<PathBuf>,
    onnxruntime: Option<PathBuf>,
    espeak: String,
    policy: ProcessSpawnPolicy,
    threads: usize,
    max_seconds: u32,
    display_name: String,
    loaded: tokio::sync::Mutex<Option<Arc<Loaded>>>,
    voices: Mutex<HashMap<String, Arc<Vec<f32>>>>,
}

/// The model and vocabulary, loaded.
#[derive(Debug)]
struct Loaded {
    model: Arc<Model>,
    vocab: assets::Vocab,
}

impl std::fmt::Debug for KokoroSynthesizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KokoroSynthesizer")
            .field("dir", &self.dir)
            .field("onnxruntime", &self.onnxruntime)
            .field("espeak", &self.espeak)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Default for KokoroSynthesizer {
    fn default() -> Self {
        Self::new()
    }
}

impl KokoroSynthesizer {
    /// The voice used when neither the request nor the configuration names
    /// one: American English, female.
    pub const DEFAULT_VOICE: &'static str = KOKORO_DEFAULT_VOICE;

    /// The command that installs the model, its voices and the onnxruntime
    /// library (from a checkout of this project).
    pub const INSTALL_COMMAND: &'static str = KOKORO_INSTALL_COMMAND;

    /// Files from `OSCOVA_KOKORO_DIR`, else `$XDG_CACHE_HOME/oscova/kokoro`,
    /// else `~/.cache/oscova/kokoro`; onnxruntime from `ORT_DYLIB_PATH`,
    /// else the cache's (as piper); `espeak-ng` from `PATH`, started with
    /// [`ProcessSpawnPolicy::new`].
    pub fn new() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let mut kokoro = Self {
            dir: assets::default_dir(),
            onnxruntime: default_onnxruntime(),
            espeak: "espeak-ng".to_owned(),
            policy: ProcessSpawnPolicy::new(),
            threads,
            max_seconds: crate::SpeechSynthesisRouter::MAX_SECONDS,
            display_name: String::new(),
            loaded: tokio::sync::Mutex::new(None),
            voices: Mutex::new(HashMap::new()),
        };
        kokoro.refresh_name();
        kokoro
    }

    /// Whether the model, vocabulary, default voice and onnxruntime library
    /// are installed where [`new`](Self::new) looks.
    pub fn installed() -> bool {
        let files = assets::default_dir().is_some_and(|dir| assets::installed(&dir));
        let library = default_onnxruntime().is_some_and(|p| p.is_file());
        files && library
    }

    /// Looks for the model, vocabulary and voices in `dir` instead.
    #[must_use]
    pub fn with_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self.refresh_name();
        self
    }

    /// Loads onnxruntime from `library` instead; a configuration's
    /// `onnxruntime` option still wins.
    #[must_use]
    pub fn with_onnxruntime(mut self, library: impl Into<PathBuf>) -> Self {
        self.onnxruntime = Some(library.into());
        self.refresh_name();
        self
    }

    /// Refuses a request once its audio passes `seconds` (checked after
    /// each chunk). The default is
    /// [`SpeechSynthesisRouter::MAX_SECONDS`](crate::SpeechSynthesisRouter::MAX_SECONDS).
    #[must_use]
    pub fn with_max_seconds(mut self, seconds: u32) -> Self {
        self.max_seconds = seconds;
        self
    }

    /// Starts espeak-ng through `policy` instead.
    #[must_use]
    pub fn with_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Runs `program` instead of `espeak-ng`; it must accept espeak-ng's
    /// command line.
    #[must_use]
    pub fn with_espeak_program(mut self, program: impl Into<String>) -> Self {
        self.espeak = program.into();
        self
    }

    /// Uses `threads` threads per inference (at least 1) unless a
    /// configuration says otherwise.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Loads the model (and onnxruntime, the first time) and the voice
    /// `config` selects, so the first synthesis does not wait for them.
    ///
    /// # Errors
    ///
    /// [`SpeechError::NotInstalled`] when a file or the library is missing,
    /// [`SpeechError::UnknownVoice`], or the load's failure.
    pub async fn preload(&self, config: &SpeechProviderConfig) -> Result<(), SpeechError> {
        let settings = Settings::parse(&config.options)?;
        self.voice(&voice_name(None, config))?;
        self.load(&settings).await?;
        Ok(())
    }

    fn refresh_name(&mut self) {
        let files = self.dir.as_deref().is_some_and(assets::installed);
        let library = self
            .onnxruntime
            .as_deref()
            .is_some_and(std::path::Path::is_file);
        self.display_name = if files && library {
            "kokoro (local neural voices, Kokoro-82M)".to_owned()
        } else {
            format!("kokoro (local neural voices; not installed: run {KOKORO_INSTALL_COMMAND})")
        };
    }

    /// A voice's style rows, read once.
    fn voice(&self, name: &str) -> Result<Arc<Vec<f32>>, KokoroError> {
        let dir = self.dir.as_deref().ok_or_else(|| assets::missing(None))?;
        let mut voices = self
            .voices
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(voice) = voices.get(name) {
            return Ok(Arc::clone(voice));
        }
        let voice = Arc::new(assets::load_voice(dir, name)?);
        voices.insert(name.to_owned(), Arc::clone(&voice));
        Ok(voice)
    }

    /// The model and vocabulary, loading them on first use.
    async fn load(&self, settings: &Settings) -> Result<Arc<Loaded>, KokoroError> {
        let mut slot = self.loaded.lock().await;
        if let Some(loaded) = slot.as_ref() {
            return Ok(Arc::clone(loaded));
        }
        let dir = self.dir.clone().ok_or_else(|| assets::missing(None))?;
        if !assets::installed(&dir) {
            return Err(assets::missing(Some(&dir)));
        }
        let library = settings
            .onnxruntime
            .clone()
            .or_else(|| self.onnxruntime.clone())
            .ok_or_else(|| {
                KokoroError::not_installed(
                    "no onnxruntime library: set ORT_DYLIB_PATH or the `onnxruntime` option"
                        .to_owned(),
                    KOKORO_INSTALL_COMMAND,
                )
            })?;
        let threads = settings.threads.unwrap_or(self.threads);
        let loaded = tokio::task::spawn_blocking(move || -> Result<Loaded, KokoroError> {
            let vocab = assets::load_vocab(&dir)?;
            let env = runtime::environment(&library, KOKORO_INSTALL_COMMAND)?;
            let model = Model::load(&env, &dir.join(assets::MODEL_FILE), threads)?;
            Ok(Loaded {
                model: Arc::new(model),
                vocab,
            })
        })
        .await
        .map_err(|source| OnnxError::Task { source })??;
        let loaded = Arc::new(loaded);
        *slot = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    async fn speak(&self, request: &SynthesisRequest<'_>) -> Result<Vec<u8>, KokoroError> {
        if request.text.trim().is_empty() {
            return Err(KokoroError::EmptyText);
        }
        let settings = Settings::parse(&request.config.options)?;
        let name = voice_name(request.voice, request.config);
        let voice = self.voice(&name)?;
        let loaded = self.load(&settings).await?;
        let language = assets::espeak_voice(&name).unwrap_or("en-us");
        let clauses = phonemes::espeak_clauses(
            ORIGIN,
            &self.policy,
            &self.espeak,
            language,
            request.text,
            &request.cancel,
        )
        .await?;
        let chunks = chunks::chunks(&clauses, &loaded.vocab, chunks::MAX_TOKENS);
        if chunks.is_empty() {
            return Err(KokoroError::NothingToSay);
        }
        let audio = model::infer_all(
            Arc::clone(&loaded.model),
            voice,
            chunks,
            settings.speed,
            self.max_seconds,
            &request.cancel,
        )
        .await?;
        if audio.is_empty() {
            return Err(KokoroError::NothingToSay);
        }
        Ok(runtime::encode_wav(
            &runtime::to_pcm16(&audio),
            SAMPLE_RATE,
        )?)
    }
}

/// The voice a request selects: the request's, else the configuration's,
/// else the default.
fn voice_name(asked: Option<&str>, config: &SpeechProviderConfig) -> String {
    asked
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .or(config
            .voice
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty()))
        .unwrap_or(KOKORO_DEFAULT_VOICE)
        .to_owned()
}

/// The settings of one request (every key checked, as piper does).
#[derive(Debug, Clone, PartialEq)]
struct Settings {
    onnxruntime: Option<PathBuf>,
    threads: Option<usize>,
    speed: f32,
}

impl Settings {
    fn parse(options: &Map<String, Value>) -> Result<Self, KokoroError> {
        let (onnxruntime, threads) = runtime::runtime_options("kokoro", &KEYS, options)
            .map_err(|(key, reason)| KokoroError::option(key, reason))?;
        let speed = match options.get("speed") {
            None | Some(Value::Null) => 1.0,
            Some(value) => match value.as_f64() {
                #[allow(clippy::cast_possible_truncation)] // within 0.5..=2.0
                Some(s) if (0.5..=2.0).contains(&s) => s as f32,
                _ => {
                    return Err(KokoroError::option(
                        "speed",
                        "must be a number from 0.5 to 2.0",
                    ));
                }
            },
        };
        Ok(Self {
            onnxruntime,
            threads,
            speed,
        })
    }
}

impl SpeechSynthesisProvider for KokoroSynthesizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::KOKORO)
    }

    fn display_name(&self) -> &str {
        &self.display_name
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn voices(&self) -> Vec<String> {
        self.dir
            .as_deref()
            .map(assets::installed_voices)
            .unwrap_or_default()
    }

    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        Box::pin(async move {
            let wav = self.speak(&request).await?;
            Ok(SynthesizedAudio { wav })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_checked() {
        let parse = |v: Value| Settings::parse(v.as_object().unwrap());
        assert_eq!(parse(serde_json::json!({})).unwrap().speed, 1.0);
        assert_eq!(parse(serde_json::json!({"speed": 1.5})).unwrap().speed, 1.5);
        assert!(parse(serde_json::json!({"speed": 3})).is_err());
        assert!(parse(serde_json::json!({"sped": 1})).is_err());
        assert!(parse(serde_json::json!({"threads": 0})).is_err());
    }

    #[test]
    fn the_voice_is_the_requests_then_the_configurations_then_the_default() {
        let config = SpeechProviderConfig::new("kokoro");
        assert_eq!(voice_name(None, &config), KOKORO_DEFAULT_VOICE);
        let config = config.voice("bf_emma");
        assert_eq!(voice_name(None, &config), "bf_emma");
        assert_eq!(voice_name(Some("am_michael"), &config), "am_michael");
    }
}
