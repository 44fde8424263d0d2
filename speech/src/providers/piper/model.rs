//! A Piper voice's model on onnxruntime, run sentence by sentence.
//!
//! Rules: a model must have the inputs Piper's exports have (`input`,
//! `input_lengths`, `scales`, and `sid` for multi-speaker voices).
//! Inference runs one sentence at a time on a session guarded by a mutex,
//! so one voice runs at most one inference at a time; a stop token is
//! checked between sentences and terminates a running inference through
//! its run options. So is the length: once the sentences spoken so far
//! play longer than the provider's limit, the rest are not computed and
//! the request is refused.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ort::environment::Environment;
use ort::session::{RunOptions, Session};
use ort::value::Tensor;
use oscova_core::CancellationToken;

use super::error::PiperError;
use crate::onnx::error::OnnxError;
use crate::onnx::runtime::{StopOnDrop, load_session};

/// A voice's model, loaded.
pub(crate) struct Model {
    session: Mutex<Session>,
    /// Whether the model takes a speaker id.
    has_sid: bool,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("has_sid", &self.has_sid)
            .finish_non_exhaustive()
    }
}

/// The inputs of one sentence.
pub(crate) struct Inputs<'a> {
    pub(crate) ids: &'a [i64],
    /// noise scale, length scale, noise width.
    pub(crate) scales: [f32; 3],
    pub(crate) speaker: Option<i64>,
}

impl Model {
    /// Loads `path` with `threads` threads per inference (blocking).
    pub(crate) fn load(env: &Environment, path: &Path, threads: usize) -> Result<Self, PiperError> {
        let session = load_session(env, path, threads, "the voice model")?;
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        for needed in ["input", "input_lengths", "scales"] {
            if !names.contains(&needed) {
                return Err(PiperError::BadVoice {
                    path: path.to_path_buf(),
                    reason: format!(
                        "the model has no input `{needed}` (its inputs: {}); is it a Piper voice?",
                        names.join(", ")
                    ),
                });
            }
        }
        let has_sid = names.contains(&"sid");
        Ok(Self {
            session: Mutex::new(session),
            has_sid,
        })
    }

    /// Whether the model takes a speaker id.
    pub(crate) fn has_sid(&self) -> bool {
        self.has_sid
    }

    /// Runs the model on one sentence and returns its audio, as floats
    /// (blocking). `options` lets another thread terminate the run.
    pub(crate) fn infer(
        &self,
        inputs: &Inputs<'_>,
        options: &RunOptions,
    ) -> Result<Vec<f32>, PiperError> {
        let action = "synthesizing a sentence";
        let len = i64::try_from(inputs.ids.len()).unwrap_or(i64::MAX);
        let input = Tensor::from_array(([1_i64, len], inputs.ids.to_vec()))
            .map_err(OnnxError::onnx(action))?;
        let lengths = Tensor::from_array(([1_i64], vec![len])).map_err(OnnxError::onnx(action))?;
        let scales = Tensor::from_array(([3_i64], inputs.scales.to_vec()))
            .map_err(OnnxError::onnx(action))?;
        let mut values = ort::inputs![
            "input" => input,
            "input_lengths" => lengths,
            "scales" => scales,
        ];
        if self.has_sid {
            let sid = Tensor::from_array(([1_i64], vec![inputs.speaker.unwrap_or(0)]))
                .map_err(OnnxError::onnx(action))?;
            values.push(("sid".into(), sid.into()));
        }
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

/// Runs `infer` for each sentence on the blocking pool, stopping between
/// sentences (and terminating the running inference) when `stop` is
/// cancelled or the returned future is dropped, and with
/// [`PiperError::TooLong`] once the audio passes `limit` (the voice's
/// sample rate, the most seconds).
pub(crate) async fn infer_all(
    model: Arc<Model>,
    sentences: Vec<(Vec<i64>, [f32; 3])>,
    speaker: Option<i64>,
    limit: (u32, u32),
    cancel: &CancellationToken,
) -> Result<Vec<Vec<f32>>, PiperError> {
    let (rate, max_seconds) = limit;
    let max_samples = u64::from(rate) * u64::from(max_seconds);
    let options = Arc::new(RunOptions::new().map_err(OnnxError::onnx("creating run options"))?);
    let stop = cancel.child_token();
    let guard = StopOnDrop {
        stop: stop.clone(),
        options: Arc::clone(&options),
    };
    let task_stop = stop.clone();
    let task_options = Arc::clone(&options);
    let task = tokio::task::spawn_blocking(move || {
        let mut audio = Vec::with_capacity(sentences.len());
        let mut samples = 0u64;
        for (i, (ids, scales)) in sentences.iter().enumerate() {
            if task_stop.is_cancelled() {
                return Err(PiperError::Shared(OnnxError::Cancelled));
            }
            let inputs = Inputs {
                ids,
                scales: *scales,
                speaker,
            };
            let sentence = model.infer(&inputs, &task_options)?;
            samples += sentence.len() as u64;
            if samples > max_samples {
                return Err(PiperError::TooLong {
                    seconds: samples as f64 / f64::from(rate.max(1)),
                    sentences: i + 1,
                    of: sentences.len(),
                    limit_seconds: max_seconds,
                });
            }
            audio.push(sentence);
        }
        Ok(audio)
    });
    let outcome = tokio::select! {
        joined = task => joined.map_err(|source| OnnxError::Task { source })?,
        () = stop.cancelled() => Err(PiperError::Shared(OnnxError::Cancelled)),
    };
    drop(guard);
    if cancel.is_cancelled() {
        return Err(PiperError::Shared(OnnxError::Cancelled));
    }
    outcome
}
