//! The Kokoro model on onnxruntime, and running it chunk by chunk.
//!
//! Rules: onnxruntime is the process's one environment, loaded through
//! `crate::onnx::runtime` (so kokoro and piper share one library and its
//! rules).
//! The model must have the inputs Kokoro's ONNX exports have: the tokens
//! (`tokens`, or `input_ids` in newer exports) as int64 `[1, n + 2]` with
//! a 0 pad at each end, `style` float32 `[1, 256]` (the voice's row
//! `n - 1`) and `speed` float32 `[1]`; its first output is float32 audio
//! at [`SAMPLE_RATE`]. Inference runs one chunk at a time on a session
//! guarded by a mutex, with threads that block instead of spinning; a stop
//! token is checked between chunks and terminates a running inference, and
//! once the audio passes the provider's limit the rest is not computed.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ort::environment::Environment;
use ort::session::{RunOptions, Session};
use ort::value::Tensor;
use oscova_core::CancellationToken;

use crate::onnx::error::OnnxError;
use crate::onnx::runtime::{StopOnDrop, load_session};

use super::assets::{STYLE_ROWS, STYLE_WIDTH};
use super::error::KokoroError;

/// Kokoro's output sample rate.
pub(crate) const SAMPLE_RATE: u32 = 24_000;

/// The loaded model.
pub(crate) struct Model {
    session: Mutex<Session>,
    /// The name of the token input.
    tokens_input: &'static str,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("tokens_input", &self.tokens_input)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads `path` with `threads` threads per inference (blocking).
    pub(crate) fn load(
        env: &Environment,
        path: &Path,
        threads: usize,
    ) -> Result<Self, KokoroError> {
        let session = load_session(env, path, threads, "the kokoro model")?;
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        let tokens_input = if names.contains(&"input_ids") {
            "input_ids"
        } else {
            "tokens"
        };
        for needed in [tokens_input, "style", "speed"] {
            if !names.contains(&needed) {
                return Err(KokoroError::BadFile {
                    path: path.display().to_string(),
                    reason: format!(
                        "the model has no input `{needed}` (its inputs: {}); is it a Kokoro export?",
                        names.join(", ")
                    ),
                });
            }
        }
        Ok(Self {
            session: Mutex::new(session),
            tokens_input,
        })
    }

    /// Speaks one chunk of token ids with `voice`'s style for its length
    /// (blocking).
    fn infer(
        &self,
        ids: &[i64],
        voice: &[f32],
        speed: f32,
        options: &RunOptions,
    ) -> Result<Vec<f32>, KokoroError> {
        let action = "synthesizing a chunk";
        let row = ids.len().clamp(1, STYLE_ROWS) - 1;
        let style = voice
            .get(row * STYLE_WIDTH..(row + 1) * STYLE_WIDTH)
            .ok_or_else(|| OnnxError::Onnx {
                action: action.to_owned(),
                reason: "the voice has too few style rows".to_owned(),
            })?;
        let mut padded = Vec::with_capacity(ids.len() + 2);
        padded.push(0);
        padded.extend_from_slice(ids);
        padded.push(0);
        let len = i64::try_from(padded.len()).unwrap_or(i64::MAX);
        let tokens = Tensor::from_array(([1_i64, len], padded)).map_err(OnnxError::onnx(action))?;
        let width = i64::try_from(STYLE_WIDTH).unwrap_or(256);
        let style = Tensor::from_array(([1_i64, width], style.to_vec()))
            .map_err(OnnxError::onnx(action))?;
        let speed = Tensor::from_array(([1_i64], vec![speed])).map_err(OnnxError::onnx(action))?;
        let values = ort::inputs![
            self.tokens_input => tokens,
            "style" => style,
            "speed" => speed,
        ];
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outputs = session
            .run_with_options(values, options)
            .map_err(OnnxError::onnx(action))?;
        if outputs.len() == 0 {
            return Err(OnnxError::Onnx {
                action: action.to_owned(),
                reason: "the model returned no output".to_owned(),
            }
            .into());
        }
        let (_, audio) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(OnnxError::onnx(action))?;
        Ok(audio.to_vec())
    }
}

/// Runs every chunk on the blocking pool and returns their audio joined,
/// stopping between chunks (and terminating the running inference) when
/// `cancel` is cancelled or the future is dropped, and with
/// [`KokoroError::TooLong`] once the audio passes `max_seconds`.
pub(crate) async fn infer_all(
    model: Arc<Model>,
    voice: Arc<Vec<f32>>,
    chunks: Vec<Vec<i64>>,
    speed: f32,
    max_seconds: u32,
    cancel: &CancellationToken,
) -> Result<Vec<f32>, KokoroError> {
    let max_samples = u64::from(SAMPLE_RATE) * u64::from(max_seconds);
    let options = Arc::new(RunOptions::new().map_err(OnnxError::onnx("creating run options"))?);
    let stop = cancel.child_token();
    let guard = StopOnDrop {
        stop: stop.clone(),
        options: Arc::clone(&options),
    };
    let task_stop = stop.clone();
    let task_options = Arc::clone(&options);
    let task = tokio::task::spawn_blocking(move || {
        let mut audio = Vec::new();
        for (i, ids) in chunks.iter().enumerate() {
            if task_stop.is_cancelled() {
                return Err(KokoroError::Shared(OnnxError::Cancelled));
            }
            audio.extend(model.infer(ids, &voice, speed, &task_options)?);
            if audio.len() as u64 > max_samples {
                return Err(KokoroError::TooLong {
                    seconds: audio.len() as f64 / f64::from(SAMPLE_RATE),
                    chunks: i + 1,
                    of: chunks.len(),
                    limit_seconds: max_seconds,
                });
            }
        }
        Ok(audio)
    });
    let outcome = tokio::select! {
        joined = task => joined.map_err(|source| OnnxError::Task { source })?,
        () = stop.cancelled() => Err(KokoroError::Shared(OnnxError::Cancelled)),
    };
    drop(guard);
    if cancel.is_cancelled() {
        return Err(KokoroError::Shared(OnnxError::Cancelled));
    }
    outcome
}
