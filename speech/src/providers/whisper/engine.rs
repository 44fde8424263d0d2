//! One loaded Whisper model and the decoding of audio with it.
//!
//! Rules: a model is converted (CTranslate2 folders) and handed to
//! whisper.cpp from memory once; the context is shared by every call and
//! each running decode has its own whisper.cpp state, taken from a pool of
//! warm states and put back after a successful decode (a failed or
//! cancelled one drops its state), so memory stays at one state per
//! concurrent decode. Everything here blocks: callers run it on tokio's
//! blocking pool. Audio well under 30 seconds is encoded over its own
//! length plus a margin, not the full window ([`AudioCtx::Fit`]), by
//! default for models of base's size and larger only ([`AudioCtx::Auto`];
//! accuracy measured on the LibriVox clips by the `whisper` benchmark:
//! tiny.en repeats itself with a fitted window). whisper.cpp detects the
//! language (multilingual models without one) before it sets the decode's
//! window, on the window the state's last decode left: a fresh state is
//! first primed with this decode's window (200 ms of silence, one token),
//! so a one-shot recognition does not pay a full 30-second encoder pass to
//! detect the language ([`needs_prime`]). whisper.cpp decodes longer audio in 30-second windows itself,
//! and asks the abort callback between its steps, which answers from the
//! request's cancellation token, so a cancelled decode stops within a
//! window step. Progress, when the caller wants it, comes from
//! whisper.cpp's progress callback, which it calls before each window with
//! the part of the audio behind it: reported as seconds done of the whole,
//! only when it grew, and the whole once the decode succeeds (whisper.cpp
//! stops short of its last 100 ms). Whisper's text is kept as it wrote it
//! (digits, "Mr.", punctuation and capitals); segments carry whisper.cpp's
//! timestamps.

use std::ffi::c_int;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{
    RecognitionProgress, RecognitionProgressSink, Transcript, TranscriptSegment,
};
use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState,
};

use super::cache;
use super::convert::{self, HParams};
use super::error::WhisperFailure;
use super::model::Located;
use super::quant::Quant;

thread_local! {
    /// The token of the decode running on this thread, for whisper.cpp's
    /// abort callback.
    static CANCEL: std::cell::RefCell<Option<CancellationToken>> = const { std::cell::RefCell::new(None) };
    /// Where the progress of the decode running on this thread goes, for
    /// whisper.cpp's progress callback.
    static PROGRESS: std::cell::RefCell<Option<Progress>> = const { std::cell::RefCell::new(None) };
}

/// One decode's progress: the caller's sink (dropped if it panics), the
/// audio's length, and the last percentage passed on.
struct Progress {
    sink: Option<RecognitionProgressSink>,
    total_seconds: f64,
    last_percent: i32,
}

impl Progress {
    fn new(sink: RecognitionProgressSink, total_seconds: f64) -> Self {
        Self {
            sink: Some(sink),
            total_seconds,
            last_percent: -1,
        }
    }

    /// Passes `percent` of the audio on as seconds, if it grew. The sink is
    /// the caller's code, called from inside whisper.cpp's callback, where
    /// a panic would abort the process: one is caught, and the sink is
    /// asked no more.
    fn percent(&mut self, percent: i32) {
        let percent = percent.clamp(0, 100);
        if percent <= self.last_percent {
            return;
        }
        self.last_percent = percent;
        let done = self.total_seconds * f64::from(percent) / 100.0;
        let update = RecognitionProgress::new(done, self.total_seconds);
        if let Some(sink) = &self.sink
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(update))).is_err()
        {
            self.sink = None;
        }
    }
}

/// A loaded model.
pub(crate) struct Engine {
    name: String,
    context: WhisperContext,
    multilingual: bool,
    /// The encoder's layers (4 for tiny, 6 for base).
    encoder_layers: usize,
    states: Mutex<Vec<Pooled>>,
}

/// A decoder state and the encoder window whisper.cpp last set in it.
struct Pooled {
    state: WhisperState,
    /// whisper.cpp's `exp_n_audio_ctx` as the last decode left it (0: the
    /// full window), `None` while no decode has set it (a fresh state:
    /// the full window).
    window: Option<usize>,
}

/// Samples of silence a fresh state is primed with (200 ms: whisper.cpp
/// decodes nothing under 100 ms, and sets no window either).
const PRIME_SAMPLES: usize = SAMPLE_RATE as usize / 5;

/// Whether a state whose window is `window` is primed before a decode
/// with `frames` (0: the full window) that detects the language.
///
/// whisper.cpp detects the language before it sets the decode's
/// `audio_ctx`, on the window the state's previous decode left, and a
/// fresh state has none: the full 30 seconds. For a one-shot `hear` of a
/// short clip that detection is a full-window encoder pass of base, more
/// than the decode itself. A fresh state is therefore first run over
/// 200 ms of silence with this decode's window (language given, one
/// token), so the detection runs on the clip's fitted window, as it does
/// on a warm state. A warm state is left as it is (its previous window),
/// as is a decode over the full window (nothing to save).
fn needs_prime(window: Option<usize>, frames: usize, detecting: bool) -> bool {
    detecting && frames != 0 && window.is_none()
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("name", &self.name)
            .field("multilingual", &self.multilingual)
            .finish_non_exhaustive()
    }
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, WhisperFailure> {
    std::fs::read(path).map_err(|source| WhisperFailure::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The whisper.cpp model bytes for the CTranslate2 model in `dir`: the
/// cached conversion under `cache` when there is one (quantized models;
/// then without hyper-parameters), else converted now (and cached, when
/// quantized).
fn ct2_bytes(
    dir: &Path,
    quant: Quant,
    cache: Option<&Path>,
) -> Result<(Vec<u8>, Option<HParams>), WhisperFailure> {
    let vocabulary = read(&dir.join("vocabulary.txt"))?;
    let root = cache.filter(|_| quant != Quant::F16);
    let mut model_bin = None;
    let mut key = root.and_then(|r| cache::path(r, dir, None, &vocabulary, quant));
    if let (None, Some(r)) = (&key, root) {
        // No SOURCE stamp: the key hashes model.bin itself.
        let bytes = model_bin.insert(read(&dir.join("model.bin"))?);
        key = cache::path(r, dir, Some(bytes), &vocabulary, quant);
    }
    if let Some(bytes) = key
        .as_deref()
        .and_then(|p| std::fs::read(p).ok())
        .filter(|b| convert::is_ggml(b))
    {
        return Ok((bytes, None));
    }
    let model_bin = match model_bin {
        Some(bytes) => bytes,
        None => read(&dir.join("model.bin"))?,
    };
    let text = std::str::from_utf8(&vocabulary).map_err(|_| WhisperFailure::Convert {
        path: dir.to_path_buf(),
        reason: "vocabulary.txt is not UTF-8".into(),
    })?;
    let (hp, ggml) =
        convert::convert(&model_bin, text, quant).map_err(|e| WhisperFailure::Convert {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
    if let Some(path) = key {
        cache::store(&path, &ggml);
    }
    Ok((ggml, Some(hp)))
}

/// How one decode runs.
#[derive(Debug, Clone)]
pub(crate) struct Decode {
    /// CPU threads for this decode.
    pub(crate) threads: usize,
    /// A Whisper language code, or `None` to detect it (multilingual
    /// models) or for English-only models.
    pub(crate) language: Option<String>,
    /// How much of the encoder's 30-second window to compute.
    pub(crate) audio_ctx: AudioCtx,
}

/// The most prompt tokens whisper.cpp takes (half its decoder's 448).
const PROMPT_TOKENS: usize = 224;

/// The tokens a stream's window decode may write per second of audio:
/// speech runs at about 3 words (4 tokens) a second, timestamps aside.
pub(crate) const WINDOW_TOKENS_PER_SECOND: usize = 10;
/// The tokens a stream's window decode may write beyond those.
pub(crate) const WINDOW_TOKENS_BASE: usize = 16;

/// How a stream's window is decoded: after `prompt`, one segment per word,
/// at most `max_tokens`, with or without the temperature fallback.
struct Window<'a> {
    prompt: &'a [c_int],
    max_tokens: usize,
    fallback: bool,
}

/// Samples per second of the audio whisper.cpp takes.
const SAMPLE_RATE: u32 = 16_000;

/// Encoder frames per second of audio (1500 for whisper.cpp's 30 s).
const FRAMES_PER_SECOND: usize = 50;
/// The encoder's full window, in frames.
const FULL_WINDOW: usize = 30 * FRAMES_PER_SECOND;
/// Frames [`AudioCtx::Fit`] adds after the audio's own, so the last words
/// are never cut and the decoder sees where speech ends.
pub(crate) const FIT_MARGIN: usize = 64;
/// The fewest frames [`AudioCtx::Fit`] computes (about 5 s): base heard a
/// 1.9 s flite sentence with three words wrong at 158 frames (its length
/// plus the margin) and right from 200 frames up, so short clips get at
/// least this much context.
pub(crate) const FIT_MIN: usize = 256;

/// How much of whisper.cpp's 30-second encoder window a decode computes
/// (its `audio_ctx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AudioCtx {
    /// [`AudioCtx::Fit`] for models with at least base's encoder (6
    /// layers), [`AudioCtx::Full`] for smaller ones: tiny.en repeats
    /// itself with a fitted window (18.3 % of the LibriVox clips' words
    /// wrong against 7.0 %), base does not (2.8 %).
    Auto,
    /// The audio's own length plus [`FIT_MARGIN`] frames, and at least
    /// [`FIT_MIN`], for audio well under 30 seconds; the full window
    /// otherwise.
    Fit,
    /// Always the full window, as Whisper was trained.
    Full,
    /// This many frames (at most the full window).
    Frames(usize),
}

/// Encoder layers from which [`AudioCtx::Auto`] fits the window (base).
const FIT_FROM_LAYERS: usize = 6;

impl AudioCtx {
    /// [`AudioCtx::Auto`] made definite for a model with `layers` encoder
    /// layers.
    pub(crate) fn resolve(self, layers: usize) -> Self {
        match self {
            Self::Auto if layers >= FIT_FROM_LAYERS => Self::Fit,
            Self::Auto => Self::Full,
            other => other,
        }
    }

    /// whisper.cpp's `audio_ctx` for `samples` 16 kHz samples (0: the
    /// full window); [`AudioCtx::Auto`] must be resolved first (see
    /// [`AudioCtx::resolve`]), else it is the full window.
    pub(crate) fn frames(self, samples: usize) -> usize {
        let frames = match self {
            Self::Full | Self::Auto => return 0,
            Self::Fit => (samples.div_ceil(16_000 / FRAMES_PER_SECOND) + FIT_MARGIN).max(FIT_MIN),
            Self::Frames(n) => n,
        };
        if frames >= FULL_WINDOW { 0 } else { frames }
    }
}

impl Engine {
    /// Loads `model`: reads it, converts a CTranslate2 model, and has
    /// whisper.cpp load the result.
    pub(crate) fn load(model: &Located) -> Result<Self, WhisperFailure> {
        whisper_rs::install_logging_hooks();
        let (bytes, hparams): (Vec<u8>, Option<HParams>) = match model {
            Located::Ct2 { dir, quant, .. } => {
                ct2_bytes(dir, *quant, super::whisper_cache_dir().as_deref())?
            }
            Located::Ggml { file, .. } => {
                let bytes = read(file)?;
                if !convert::is_ggml(&bytes) {
                    return Err(WhisperFailure::Convert {
                        path: file.clone(),
                        reason: "the file is not a whisper.cpp model (no `ggml` magic); \
                                 name a CTranslate2 model folder or a whisper.cpp .bin file"
                            .into(),
                    });
                }
                (bytes, None)
            }
        };
        let mut params = WhisperContextParameters::default();
        params.use_gpu(false);
        let context = WhisperContext::new_from_buffer_with_params(&bytes, params).map_err(|e| {
            WhisperFailure::Load {
                name: model.name().to_owned(),
                reason: e.to_string(),
            }
        })?;
        drop(bytes);
        let multilingual =
            hparams.map_or_else(|| context.is_multilingual(), |h| h.is_multilingual());
        let encoder_layers = usize::try_from(context.model_n_audio_layer()).unwrap_or(0);
        Ok(Self {
            name: model.name().to_owned(),
            context,
            multilingual,
            encoder_layers,
            states: Mutex::new(Vec::new()),
        })
    }

    /// The model's name (or path).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether the model hears languages other than English.
    pub(crate) fn is_multilingual(&self) -> bool {
        self.multilingual
    }

    fn take_state(&self) -> Result<Pooled, WhisperFailure> {
        let pooled = self
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match pooled {
            Some(pooled) => Ok(pooled),
            None => self
                .context
                .create_state()
                .map(|state| Pooled {
                    state,
                    window: None,
                })
                .map_err(|e| WhisperFailure::Decode {
                    reason: format!("could not allocate a decoder state: {e}"),
                }),
        }
    }

    /// Transcribes 16 kHz mono samples in [-1, 1], reporting progress to
    /// `progress` when there is one.
    pub(crate) fn transcribe(
        &self,
        samples: &[f32],
        decode: &Decode,
        cancel: &CancellationToken,
        progress: Option<RecognitionProgressSink>,
    ) -> Result<Transcript, WhisperFailure> {
        let progress =
            progress.map(|sink| Progress::new(sink, samples.len() as f64 / f64::from(SAMPLE_RATE)));
        let (state, progress) = self.run(samples, decode, cancel, progress, None)?;
        let mut segments = Vec::new();
        for segment in state.state.as_iter() {
            let text = segment.to_str_lossy().map_err(|e| WhisperFailure::Decode {
                reason: e.to_string(),
            })?;
            segments.push(TranscriptSegment {
                // whisper.cpp counts in centiseconds.
                start_seconds: segment.start_timestamp() as f64 / 100.0,
                end_seconds: segment.end_timestamp() as f64 / 100.0,
                text: text.trim().to_owned(),
            });
        }
        self.put_back(state);
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(mut progress) = progress {
            progress.percent(100);
        }
        Ok(Transcript { text, segments })
    }

    /// Transcribes a stream's window (16 kHz mono samples in [-1, 1]) into
    /// words with times in seconds from the window's start, after
    /// `prompt` (the text heard before the window, which whisper.cpp reads
    /// as what came before). Non-speech marks (`[BLANK_AUDIO]`) are left
    /// out. The decode is bounded to [`WINDOW_TOKENS_PER_SECOND`] tokens
    /// a second of audio (and [`WINDOW_TOKENS_BASE`] more), so a short
    /// window Whisper hallucinates on cannot loop to its context's end;
    /// only the `last` decode of a stream falls back to higher
    /// temperatures when the text repeats itself (an earlier one is heard
    /// again at the next step).
    pub(crate) fn words(
        &self,
        samples: &[f32],
        decode: &Decode,
        prompt: &str,
        last: bool,
        cancel: &CancellationToken,
    ) -> Result<Vec<(String, f64, f64)>, WhisperFailure> {
        let prompt = prompt.replace('\0', "");
        let tokens = if prompt.trim().is_empty() {
            Vec::new()
        } else {
            // At most half the decoder's context, as whisper.cpp allows;
            // a prompt it cannot tokenize is left out, not an error.
            self.context
                .tokenize(&prompt, PROMPT_TOKENS)
                .unwrap_or_default()
        };
        let seconds = samples.len() / SAMPLE_RATE as usize;
        let window = Window {
            prompt: &tokens,
            max_tokens: WINDOW_TOKENS_BASE + WINDOW_TOKENS_PER_SECOND * seconds,
            fallback: last,
        };
        let (state, _) = self.run(samples, decode, cancel, None, Some(window))?;
        let mut words = Vec::new();
        for segment in state.state.as_iter() {
            let text = segment.to_str_lossy().map_err(|e| WhisperFailure::Decode {
                reason: e.to_string(),
            })?;
            let text = text.trim();
            if text.is_empty() || (text.starts_with('[') && text.ends_with(']')) {
                continue;
            }
            words.push((
                text.to_owned(),
                segment.start_timestamp() as f64 / 100.0,
                segment.end_timestamp() as f64 / 100.0,
            ));
        }
        self.put_back(state);
        Ok(words)
    }

    fn put_back(&self, state: Pooled) {
        self.states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(state);
    }

    /// One whisper.cpp decode of `samples`; with `prompt` (a stream's
    /// window), one segment per word with token timestamps, after the
    /// prompt's tokens. The state, ready to read, and the progress.
    fn run(
        &self,
        samples: &[f32],
        decode: &Decode,
        cancel: &CancellationToken,
        progress: Option<Progress>,
        window: Option<Window<'_>>,
    ) -> Result<(Pooled, Option<Progress>), WhisperFailure> {
        if cancel.is_cancelled() {
            return Err(WhisperFailure::Cancelled);
        }
        let mut pooled = self.take_state()?;
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        params.set_n_threads(i32::try_from(decode.threads.max(1)).unwrap_or(1));
        params.set_translate(false);
        params.set_no_context(true);
        let audio_ctx = decode
            .audio_ctx
            .resolve(self.encoder_layers)
            .frames(samples.len());
        params.set_audio_ctx(i32::try_from(audio_ctx).unwrap_or(0));
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        if let Some(window) = window {
            params.set_tokens(window.prompt);
            params.set_token_timestamps(true);
            params.set_split_on_word(true);
            params.set_max_len(1);
            params.set_max_tokens(i32::try_from(window.max_tokens).unwrap_or(i32::MAX));
            if !window.fallback {
                params.set_temperature_inc(0.0);
            }
        }
        let language = match (&decode.language, self.multilingual) {
            (Some(code), true) => Some(code.as_str()),
            (None, true) => Some("auto"),
            (_, false) => Some("en"),
        };
        params.set_language(language);
        if needs_prime(pooled.window, audio_ctx, language == Some("auto")) {
            pooled.window = self.prime(&mut pooled.state, audio_ctx, decode.threads);
        }
        // whisper-rs 0.16's `set_abort_callback_safe` hands whisper.cpp a
        // pointer to a boxed trait object but reads it back as the closure
        // type itself, so a closure that captures anything reads garbage. A
        // closure without captures (zero-sized, so never read) asking a
        // thread-local is sound: whisper.cpp asks on the thread that called
        // it. The box whisper-rs allocates for it is not freed (a few bytes
        // a decode).
        params.set_abort_callback_safe(|| {
            CANCEL.with(|c| {
                c.borrow()
                    .as_ref()
                    .is_some_and(CancellationToken::is_cancelled)
            })
        });
        // The same trick as the abort callback's: a closure without
        // captures, since whisper-rs never frees the box it puts the
        // closure in (the caller's sink would be kept alive for good).
        if progress.is_some() {
            params.set_progress_callback_safe(|percent: i32| {
                PROGRESS.with(|p| {
                    if let Some(progress) = p.borrow_mut().as_mut() {
                        progress.percent(percent);
                    }
                });
            });
        }
        CANCEL.with(|c| *c.borrow_mut() = Some(cancel.clone()));
        PROGRESS.with(|p| *p.borrow_mut() = progress);
        let outcome = pooled.state.full(params, samples);
        CANCEL.with(|c| *c.borrow_mut() = None);
        let progress = PROGRESS.with(|p| p.borrow_mut().take());
        if cancel.is_cancelled() {
            return Err(WhisperFailure::Cancelled);
        }
        outcome.map_err(|e| WhisperFailure::Decode {
            reason: e.to_string(),
        })?;
        // whisper.cpp set the window unless the audio was too short to
        // decode (then it left the previous one).
        if samples.len() >= PRIME_SAMPLES / 2 {
            pooled.window = Some(audio_ctx);
        }
        Ok((pooled, progress))
    }

    /// Sets `state`'s encoder window to `frames` (see [`needs_prime`]) by
    /// a decode of silence, in English, of at most one token; the window
    /// it set, `None` if it failed (then the detection runs on the full
    /// window, as without priming).
    fn prime(&self, state: &mut WhisperState, frames: usize, threads: usize) -> Option<usize> {
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        params.set_n_threads(i32::try_from(threads.max(1)).unwrap_or(1));
        params.set_no_context(true);
        params.set_audio_ctx(i32::try_from(frames).ok()?);
        params.set_language(Some("en"));
        params.set_single_segment(true);
        params.set_no_timestamps(true);
        params.set_max_tokens(1);
        params.set_temperature_inc(0.0);
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        state
            .full(params, &[0.0; PRIME_SAMPLES])
            .ok()
            .map(|_| frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_grows_in_seconds_and_survives_a_panicking_sink() {
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&seen);
        let mut progress = Progress::new(
            std::sync::Arc::new(move |p: RecognitionProgress| {
                sink.lock().unwrap().push(p.seconds_done);
            }),
            40.0,
        );
        for percent in [0, 0, 62, 50, 100, 120] {
            progress.percent(percent);
        }
        assert_eq!(*seen.lock().unwrap(), [0.0, 24.8, 40.0]);

        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = std::sync::Arc::clone(&calls);
        let mut progress = Progress::new(
            std::sync::Arc::new(move |_: RecognitionProgress| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                panic!("a sink that panics");
            }),
            40.0,
        );
        progress.percent(10);
        progress.percent(20);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn only_a_fresh_state_detecting_in_a_fitted_window_is_primed() {
        assert!(needs_prime(None, 314, true));
        // Not detecting (a language given, or an English-only model).
        assert!(!needs_prime(None, 314, false));
        // The full window: detection runs there anyway.
        assert!(!needs_prime(None, 0, true));
        // A warm state keeps the window its last decode left.
        assert!(!needs_prime(Some(0), 314, true));
        assert!(!needs_prime(Some(500), 314, true));
    }

    #[test]
    fn priming_sets_the_window_and_leaves_the_transcript_as_it_was() {
        // The model scripts/test.sh installs.
        let dir = super::super::whisper_cache_dir().unwrap().join("tiny.en");
        let engine = Engine::load(&Located::Ct2 {
            name: "tiny.en".into(),
            dir,
            quant: Quant::F16,
        })
        .unwrap();
        let clip = &oscova_test_support::librivox::clips()[1];
        let pcm = crate::wav::decode_wav(&clip.wav).unwrap();
        let samples: Vec<f32> = pcm
            .samples
            .iter()
            .map(|s| f32::from(*s) / 32_768.0)
            .collect();
        let decode = Decode {
            threads: 1,
            language: None,
            audio_ctx: AudioCtx::Fit,
        };
        let frames = decode.audio_ctx.frames(samples.len());
        let cancel = CancellationToken::new();
        let unprimed = engine.transcribe(&samples, &decode, &cancel, None).unwrap();
        // A fresh state, primed: the window is this decode's.
        let mut pooled = Pooled {
            state: engine.context.create_state().unwrap(),
            window: None,
        };
        assert_eq!(engine.prime(&mut pooled.state, frames, 1), Some(frames));
        pooled.window = Some(frames);
        *engine.states.lock().unwrap() = vec![pooled];
        let primed = engine.transcribe(&samples, &decode, &cancel, None).unwrap();
        assert_eq!(primed.text, unprimed.text);
        let (errors, words) = oscova_test_support::librivox::score(&clip.reference, &primed.text);
        assert!(errors * 4 <= words, "{errors} of {words}: {}", primed.text);
        let states = engine.states.lock().unwrap();
        assert_eq!(states.len(), 1, "the primed state went back to the pool");
        assert_eq!(states[0].window, Some(frames));
    }

    #[test]
    fn a_quantized_conversion_is_cached_and_read_back() {
        // The model scripts/test.sh installs.
        let model = super::super::whisper_cache_dir().unwrap().join("tiny.en");
        let root = tempfile::tempdir().unwrap();
        let (first, hp) = ct2_bytes(&model, Quant::Q8_0, Some(root.path())).unwrap();
        assert!(hp.is_some(), "converted");
        // The header's ftype (the 12th i32) is q8_0's, with ggml's
        // quantization version.
        assert_eq!(i32::from_le_bytes(first[44..48].try_into().unwrap()), 2007);
        let files: Vec<_> = std::fs::read_dir(root.path().join("converted"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].to_str().unwrap().ends_with("-q8_0.bin"));
        assert_eq!(std::fs::read(&files[0]).unwrap(), first);
        // A second start reads the cached file: no conversion.
        let (second, hp) = ct2_bytes(&model, Quant::Q8_0, Some(root.path())).unwrap();
        assert!(hp.is_none(), "read from the cache");
        assert_eq!(second, first);
        // A damaged cache file is ignored and rewritten.
        std::fs::write(&files[0], b"not a model").unwrap();
        let (third, hp) = ct2_bytes(&model, Quant::Q8_0, Some(root.path())).unwrap();
        assert!(hp.is_some());
        assert_eq!(third, first);
        assert_eq!(std::fs::read(&files[0]).unwrap(), first);
        // 16-bit conversions are not cached; q8_0 is about half their size.
        let (f16, _) = ct2_bytes(&model, Quant::F16, Some(root.path())).unwrap();
        assert_eq!(
            std::fs::read_dir(root.path().join("converted"))
                .unwrap()
                .count(),
            1
        );
        assert!(
            first.len() * 10 < f16.len() * 6,
            "{} vs {}",
            first.len(),
            f16.len()
        );
    }
}
