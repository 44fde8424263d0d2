//! One loaded Whisper model and the decoding of audio with it.
//!
//! Rules: a model is converted (CTranslate2 folders) and handed to
//! whisper.cpp from memory once; the context is shared by every call and
//! each running decode has its own whisper.cpp state, taken from a pool of
//! warm states and put back after a successful decode (a failed or
//! cancelled one drops its state), so memory stays at one state per
//! concurrent decode. Everything here blocks: callers run it on tokio's
//! blocking pool. whisper.cpp decodes audio in 30-second windows itself,
//! and asks the abort callback between its steps, which answers from the
//! request's cancellation token, so a cancelled decode stops within a
//! window step. Whisper's text is kept as it wrote it (digits, "Mr.",
//! punctuation and capitals); segments carry whisper.cpp's timestamps.

use std::sync::{Mutex, PoisonError};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{Transcript, TranscriptSegment};
use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState,
};

use super::convert::{self, HParams};
use super::error::WhisperFailure;
use super::model::Located;

thread_local! {
    /// The token of the decode running on this thread, for whisper.cpp's
    /// abort callback.
    static CANCEL: std::cell::RefCell<Option<CancellationToken>> = const { std::cell::RefCell::new(None) };
}

/// A loaded model.
pub(crate) struct Engine {
    name: String,
    context: WhisperContext,
    multilingual: bool,
    states: Mutex<Vec<WhisperState>>,
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

/// How one decode runs.
#[derive(Debug, Clone)]
pub(crate) struct Decode {
    /// CPU threads for this decode.
    pub(crate) threads: usize,
    /// A Whisper language code, or `None` to detect it (multilingual
    /// models) or for English-only models.
    pub(crate) language: Option<String>,
}

impl Engine {
    /// Loads `model`: reads it, converts a CTranslate2 model, and has
    /// whisper.cpp load the result.
    pub(crate) fn load(model: &Located) -> Result<Self, WhisperFailure> {
        whisper_rs::install_logging_hooks();
        let (bytes, hparams): (Vec<u8>, Option<HParams>) = match model {
            Located::Ct2 { dir, .. } => {
                let model_bin = read(&dir.join("model.bin"))?;
                let vocabulary_path = dir.join("vocabulary.txt");
                let vocabulary = String::from_utf8(read(&vocabulary_path)?).map_err(|_| {
                    WhisperFailure::Convert {
                        path: dir.clone(),
                        reason: "vocabulary.txt is not UTF-8".into(),
                    }
                })?;
                let (hp, ggml) = convert::convert(&model_bin, &vocabulary).map_err(|e| {
                    WhisperFailure::Convert {
                        path: dir.clone(),
                        reason: e.to_string(),
                    }
                })?;
                (ggml, Some(hp))
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
        Ok(Self {
            name: model.name().to_owned(),
            context,
            multilingual,
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

    fn take_state(&self) -> Result<WhisperState, WhisperFailure> {
        let pooled = self
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match pooled {
            Some(state) => Ok(state),
            None => self
                .context
                .create_state()
                .map_err(|e| WhisperFailure::Decode {
                    reason: format!("could not allocate a decoder state: {e}"),
                }),
        }
    }

    /// Transcribes 16 kHz mono samples in [-1, 1].
    pub(crate) fn transcribe(
        &self,
        samples: &[f32],
        decode: &Decode,
        cancel: &CancellationToken,
    ) -> Result<Transcript, WhisperFailure> {
        if cancel.is_cancelled() {
            return Err(WhisperFailure::Cancelled);
        }
        let mut state = self.take_state()?;
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        params.set_n_threads(i32::try_from(decode.threads.max(1)).unwrap_or(1));
        params.set_translate(false);
        params.set_no_context(true);
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        let language = match (&decode.language, self.multilingual) {
            (Some(code), true) => Some(code.as_str()),
            (None, true) => Some("auto"),
            (_, false) => Some("en"),
        };
        params.set_language(language);
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
        CANCEL.with(|c| *c.borrow_mut() = Some(cancel.clone()));
        let outcome = state.full(params, samples);
        CANCEL.with(|c| *c.borrow_mut() = None);
        if cancel.is_cancelled() {
            return Err(WhisperFailure::Cancelled);
        }
        outcome.map_err(|e| WhisperFailure::Decode {
            reason: e.to_string(),
        })?;
        let mut segments = Vec::new();
        for segment in state.as_iter() {
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
        self.states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(state);
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Transcript { text, segments })
    }
}
