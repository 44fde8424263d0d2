//! The `piper` provider: local neural speech synthesis with Piper voices.
//!
//! Rules: a voice is a Piper export, `NAME.onnx` beside `NAME.onnx.json`.
//! The voice is the request's, else the configuration's `voice` (both
//! names of voices in the voice folder), else the configuration's `model`
//! (the path of any voice's `.onnx`), else [`PiperSynthesizer::DEFAULT_VOICE`] when it
//! is installed, else the first installed voice by name. Text becomes
//! phonemes through the `espeak-ng` program (see `phonemes`), phonemes
//! become ids through the voice's `phoneme_id_map`, and onnxruntime, loaded
//! at run time from a shared library, turns each sentence's ids into audio
//! (see `runtime`). A voice is loaded once, on first use or by
//! [`preload`](PiperSynthesizer::preload), and kept warm (the last four
//! voices used); loads of one provider are serialised so two first
//! requests do not load a voice twice. Nothing is read or loaded when the
//! provider is built except a look at which voices are installed, so
//! listing providers stays cheap. A missing library, voice or espeak-ng is
//! [`SpeechError::NotInstalled`] naming the command that installs it.

mod assets;
mod error;
mod model;
mod settings;
mod voice;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::speech::{
    SpeechError, SpeechProviderConfig, SpeechProviderKeys, SpeechSynthesisProvider,
    SynthesisRequest, SynthesizedAudio,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};

use crate::onnx::error::OnnxError;
use crate::onnx::phonemes::{espeak, text_sentences};
use crate::onnx::runtime::{self, encode_wav, to_pcm16};
use assets::VoiceFiles;
use assets::{PIPER_DEFAULT_VOICE, PIPER_INSTALL_COMMAND};
use error::PiperError;
use model::{Model, infer_all};
use settings::{Settings, Speaker};
use voice::{PhonemeType, VoiceConfig};

/// Who the spawn policy is told espeak-ng runs for.
const ORIGIN: &str = "speech provider piper";

/// How many loaded voices a provider keeps warm.
const WARM_VOICES: usize = 4;

/// The built-in `piper` synthesis provider (type key
/// [`SpeechProviderKeys::PIPER`]): Piper neural voices, run on this
/// machine by onnxruntime, with phonemes from the `espeak-ng` program.
/// Returns 16-bit mono WAV at the voice's sample rate (22 050 Hz for
/// `medium` voices).
///
/// Local by design ([`default_is_local_endpoint`] is `true`); it ignores
/// the configuration's endpoint. Settings in the configuration's `options`:
/// `onnxruntime` (the library's path), `threads` (per inference, default 2
/// or the number of cores if fewer), `noise_scale`, `length_scale`,
/// `noise_w` (default: the voice's), `deterministic` (both noise scales 0:
/// the same text gives the same audio), `speaker` (name or number, for
/// multi-speaker voices) and `sentence_silence` (seconds, default 0.2).
///
/// `scripts/ensure-piper.sh` installs the library and a test voice into
/// the cache folder this provider looks in. The default synthesis provider
/// of Oscova stays `flite`: the test voice's licence is not clear for
/// commercial use, so point `model` (or the voice folder) at a voice whose
/// licence suits you.
///
/// ```no_run
/// use oscova_speech::{providers::PiperSynthesizer, SpeechProviderConfig, SpeechSynthesisProvider, SynthesisRequest};
///
/// # async fn demo() -> Result<(), oscova_speech::SpeechError> {
/// let piper = PiperSynthesizer::new();
/// // Any Piper voice: its .onnx, with the .onnx.json beside it.
/// let config = SpeechProviderConfig::new("piper").model("/opt/voices/en_GB-alan-medium.onnx");
/// let audio = piper
///     .synthesize(SynthesisRequest::new(&config, "Hello from Oscova."))
///     .await?;
/// assert_eq!(&audio.wav[..4], b"RIFF");
/// # Ok(()) }
/// ```
///
/// [`default_is_local_endpoint`]: SpeechSynthesisProvider::default_is_local_endpoint
pub struct PiperSynthesizer {
    voices_dir: Option<PathBuf>,
    onnxruntime: Option<PathBuf>,
    espeak: String,
    policy: ProcessSpawnPolicy,
    threads: usize,
    /// The longest audio one request makes, in seconds.
    max_seconds: u32,
    display_name: String,
    warm: Mutex<Vec<(WarmKey, Arc<Loaded>)>>,
    loading: tokio::sync::Mutex<()>,
}

/// What a loaded voice is kept under.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WarmKey {
    model: PathBuf,
    threads: usize,
}

/// A voice ready to speak.
#[derive(Debug)]
struct Loaded {
    config: VoiceConfig,
    model: Arc<Model>,
}

impl std::fmt::Debug for PiperSynthesizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiperSynthesizer")
            .field("voices_dir", &self.voices_dir)
            .field("onnxruntime", &self.onnxruntime)
            .field("espeak", &self.espeak)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Default for PiperSynthesizer {
    fn default() -> Self {
        Self::new()
    }
}

impl PiperSynthesizer {
    /// The voice used when neither the request nor the configuration names
    /// one and it is installed; else the first installed voice by name.
    pub const DEFAULT_VOICE: &'static str = PIPER_DEFAULT_VOICE;

    /// The command that installs the onnxruntime library and the test
    /// voice (from a checkout of this project).
    pub const INSTALL_COMMAND: &'static str = PIPER_INSTALL_COMMAND;

    /// Voices from the voice folder (`OSCOVA_PIPER_VOICES`, else
    /// `$XDG_CACHE_HOME/oscova/piper/voices`, else
    /// `~/.cache/oscova/piper/voices`), onnxruntime from `ORT_DYLIB_PATH`,
    /// else `onnxruntime/1.32.0/libonnxruntime.so.1.32.0` in the same cache,
    /// `espeak-ng` from `PATH`, started with [`ProcessSpawnPolicy::new`].
    pub fn new() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let mut piper = Self {
            voices_dir: assets::default_voices_dir(),
            onnxruntime: crate::onnx::default_onnxruntime(),
            espeak: "espeak-ng".to_owned(),
            policy: ProcessSpawnPolicy::new(),
            threads,
            max_seconds: crate::SpeechSynthesisRouter::MAX_SECONDS,
            display_name: String::new(),
            warm: Mutex::new(Vec::new()),
            loading: tokio::sync::Mutex::new(()),
        };
        piper.refresh_name();
        piper
    }

    /// Looks for voices in `dir` instead.
    #[must_use]
    pub fn with_voices_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.voices_dir = Some(dir.into());
        self.refresh_name();
        self
    }

    /// Loads onnxruntime from `library` (a `libonnxruntime.so`) instead; a
    /// configuration's `onnxruntime` option still wins.
    #[must_use]
    pub fn with_onnxruntime(mut self, library: impl Into<PathBuf>) -> Self {
        self.onnxruntime = Some(library.into());
        self.refresh_name();
        self
    }

    /// Stops a request once its audio passes `seconds` (checked after each
    /// sentence, so no more is computed than one sentence past it) and
    /// refuses it. The default is the synthesis router's cap,
    /// [`SpeechSynthesisRouter::MAX_SECONDS`](crate::SpeechSynthesisRouter::MAX_SECONDS), which the
    /// router applies to every provider after the fact; this one saves
    /// the work of speaking the rest.
    #[must_use]
    pub fn with_max_seconds(mut self, seconds: u32) -> Self {
        self.max_seconds = seconds;
        self
    }

    /// Starts espeak-ng through `policy` instead (a host's policy, with its
    /// deny list and hooks).
    #[must_use]
    pub fn with_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Runs `program` (a path, or a name on `PATH`) instead of `espeak-ng`;
    /// it must accept espeak-ng's command line.
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

    /// Loads the voice `config` selects (and onnxruntime, the first time),
    /// so the first synthesis does not wait for it.
    ///
    /// # Errors
    ///
    /// [`SpeechError::NotInstalled`] when the library or the voice is
    /// missing, [`SpeechError::UnknownVoice`], or the load's failure.
    pub async fn preload(&self, config: &SpeechProviderConfig) -> Result<(), SpeechError> {
        let settings = Settings::parse(&config.options)?;
        let files = self.voice_files(None, config)?;
        self.load(&files, &settings).await?;
        Ok(())
    }

    fn refresh_name(&mut self) {
        let runtime = self
            .onnxruntime
            .as_deref()
            .is_some_and(std::path::Path::is_file);
        let voices = self
            .voices_dir
            .as_deref()
            .is_some_and(|dir| !assets::installed_voices(dir).is_empty());
        self.display_name = if runtime && voices {
            "piper (local neural voices)".to_owned()
        } else {
            format!("piper (local neural voices; not installed: run {PIPER_INSTALL_COMMAND})")
        };
    }

    /// The voice a request selects (see the module rules).
    fn voice_files(
        &self,
        asked: Option<&str>,
        config: &SpeechProviderConfig,
    ) -> Result<VoiceFiles, PiperError> {
        let named = asked.map(str::trim).filter(|v| !v.is_empty()).or(config
            .voice
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty()));
        if let Some(name) = named {
            let dir = self
                .voices_dir
                .as_deref()
                .ok_or_else(|| assets::no_voice(None))?;
            return assets::voice_named(dir, name);
        }
        if let Some(model) = config
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            let files = VoiceFiles::at(std::path::Path::new(model));
            if !files.exist() {
                return Err(PiperError::BadVoice {
                    path: files.model,
                    reason: format!(
                        "its files are missing (a Piper voice is the .onnx with its .onnx.json beside it, {})",
                        files.config.display()
                    ),
                });
            }
            return Ok(files);
        }
        let dir = self
            .voices_dir
            .as_deref()
            .ok_or_else(|| assets::no_voice(None))?;
        assets::default_voice(dir)
    }

    /// The loaded voice for `files`, loading it if it is not warm.
    async fn load(
        &self,
        files: &VoiceFiles,
        settings: &Settings,
    ) -> Result<Arc<Loaded>, PiperError> {
        let key = WarmKey {
            model: files.model.clone(),
            threads: settings.threads.unwrap_or(self.threads),
        };
        if let Some(loaded) = self.warm(&key) {
            return Ok(loaded);
        }
        let _one_load_at_a_time = self.loading.lock().await;
        if let Some(loaded) = self.warm(&key) {
            return Ok(loaded);
        }
        let library = settings
            .onnxruntime
            .clone()
            .or_else(|| self.onnxruntime.clone())
            .ok_or_else(|| {
                PiperError::not_installed(
                    "no onnxruntime library: set ORT_DYLIB_PATH or the `onnxruntime` option"
                        .to_owned(),
                    PIPER_INSTALL_COMMAND,
                )
            })?;
        let files = files.clone();
        let threads = key.threads;
        let loaded = tokio::task::spawn_blocking(move || -> Result<Loaded, PiperError> {
            let text =
                std::fs::read_to_string(&files.config).map_err(|e| PiperError::BadVoice {
                    path: files.config.clone(),
                    reason: format!("its config cannot be read ({e})"),
                })?;
            let config = VoiceConfig::parse(&text).map_err(|reason| PiperError::BadVoice {
                path: files.config.clone(),
                reason,
            })?;
            let env = runtime::environment(&library, PIPER_INSTALL_COMMAND)?;
            let model = Model::load(&env, &files.model, threads)?;
            Ok(Loaded {
                config,
                model: Arc::new(model),
            })
        })
        .await
        .map_err(|source| OnnxError::Task { source })??;
        let loaded = Arc::new(loaded);
        let mut warm = self
            .warm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if warm.len() >= WARM_VOICES {
            warm.remove(0);
        }
        warm.push((key, Arc::clone(&loaded)));
        Ok(loaded)
    }

    /// A warm voice, marked as the most recently used.
    fn warm(&self, key: &WarmKey) -> Option<Arc<Loaded>> {
        let mut warm = self
            .warm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = warm.iter().position(|(k, _)| k == key)?;
        let entry = warm.remove(at);
        let loaded = Arc::clone(&entry.1);
        warm.push(entry);
        Some(loaded)
    }

    async fn speak(&self, request: &SynthesisRequest<'_>) -> Result<Vec<u8>, PiperError> {
        if request.text.trim().is_empty() {
            return Err(PiperError::EmptyText);
        }
        let settings = Settings::parse(&request.config.options)?;
        let files = self.voice_files(request.voice, request.config)?;
        let loaded = self.load(&files, &settings).await?;
        let voice = &loaded.config;
        let speaker = speaker(voice, settings.speaker.as_ref(), &files)?;
        let sentences = match voice.phoneme_type {
            PhonemeType::Espeak => {
                espeak(
                    ORIGIN,
                    &self.policy,
                    &self.espeak,
                    &voice.espeak_voice,
                    request.text,
                    &request.cancel,
                )
                .await?
            }
            PhonemeType::Text => text_sentences(request.text),
        };
        let scales = [
            settings.noise_scale.unwrap_or(voice.noise_scale),
            settings.length_scale.unwrap_or(voice.length_scale),
            settings.noise_w.unwrap_or(voice.noise_w),
        ];
        let inputs: Vec<(Vec<i64>, [f32; 3])> = sentences
            .iter()
            .map(|phonemes| (voice.ids(phonemes).0, scales))
            .filter(|(ids, _)| ids.len() > 3)
            .collect();
        if inputs.is_empty() {
            return Err(PiperError::NothingToSay);
        }
        let speaker = speaker.filter(|_| loaded.model.has_sid());
        let limit = (voice.sample_rate, self.max_seconds);
        let audio = infer_all(
            Arc::clone(&loaded.model),
            inputs,
            speaker,
            limit,
            &request.cancel,
        )
        .await?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // at most 5 s of samples
        let gap = (settings.sentence_silence * voice.sample_rate as f32) as usize;
        let mut samples = Vec::with_capacity(audio.iter().map(|a| a.len() + gap).sum());
        for (i, sentence) in audio.iter().enumerate() {
            if i > 0 {
                samples.resize(samples.len() + gap, 0);
            }
            samples.extend(to_pcm16(sentence));
        }
        if samples.is_empty() {
            return Err(PiperError::NothingToSay);
        }
        Ok(encode_wav(&samples, voice.sample_rate)?)
    }
}

/// The speaker id for a multi-speaker voice (0 when none is asked for);
/// `None` for a single-speaker voice.
fn speaker(
    voice: &VoiceConfig,
    asked: Option<&Speaker>,
    files: &VoiceFiles,
) -> Result<Option<i64>, PiperError> {
    if voice.num_speakers <= 1 {
        return Ok(None);
    }
    let id = match asked {
        None => 0,
        Some(Speaker::Id(id)) => *id,
        Some(Speaker::Name(name)) => *voice.speakers.get(name).ok_or_else(|| {
            let mut names: Vec<&str> = voice.speakers.keys().map(String::as_str).collect();
            names.sort_unstable();
            PiperError::option(
                "speaker",
                format!(
                    "names no speaker of {} (its speakers: {})",
                    files.name,
                    names.join(", ")
                ),
            )
        })?,
    };
    if id >= i64::from(voice.num_speakers) {
        return Err(PiperError::option(
            "speaker",
            format!(
                "is {id}, but {} has speakers 0 to {}",
                files.name,
                voice.num_speakers - 1
            ),
        ));
    }
    Ok(Some(id))
}

impl SpeechSynthesisProvider for PiperSynthesizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::PIPER)
    }

    fn display_name(&self) -> &str {
        &self.display_name
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn voices(&self) -> Vec<String> {
        self.voices_dir
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
