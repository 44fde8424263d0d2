//! Silero VAD v6: the probability that a 32 ms frame of 16 kHz audio holds
//! speech.
//!
//! Rules, those of the silero-vad package's `OnnxWrapper`: frames of 512
//! samples, each sent with the 64 samples before it (zeros before the
//! first) and the model's recurrent state (2 × 1 × 128, zeros at the
//! start), which the next frame gets back; [`SileroVad::reset`] starts a new
//! stream. One model per stream: the state is the stream's.

use std::path::Path;

use ort::environment::Environment;
use ort::session::Session;
use ort::value::Tensor;

use oscova_core::provider::speech::SpeechError;

use crate::onnx::error::OnnxError;
use crate::onnx::runtime::load_session;

/// Samples per frame at 16 kHz.
pub const FRAME: usize = 512;
const CONTEXT: usize = 64;
const STATE: usize = 2 * 128;

/// Silero VAD over one audio stream.
pub struct SileroVad {
    session: Session,
    state: Vec<f32>,
    context: [f32; CONTEXT],
}

impl std::fmt::Debug for SileroVad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SileroVad").finish_non_exhaustive()
    }
}

impl SileroVad {
    /// Loads the model at `path` on `env`, one thread per inference
    /// (blocking; the model is 2.3 MB).
    pub(crate) fn load(env: &Environment, path: &Path) -> Result<Self, OnnxError> {
        let session = load_session(env, path, 1, "the Silero VAD model")?;
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        for needed in ["input", "state", "sr"] {
            if !names.contains(&needed) {
                return Err(OnnxError::Onnx {
                    action: format!("loading the Silero VAD model {}", path.display()),
                    reason: format!(
                        "the model has no input `{needed}` (its inputs: {}); is it Silero VAD v5 or later?",
                        names.join(", ")
                    ),
                });
            }
        }
        Ok(Self {
            session,
            state: vec![0.0; STATE],
            context: [0.0; CONTEXT],
        })
    }

    /// Forgets the stream: the next frame starts a new one.
    pub fn reset(&mut self) {
        self.state.fill(0.0);
        self.context = [0.0; CONTEXT];
    }

    /// The probability that `frame` (512 samples of 16 kHz audio in
    /// [-1, 1]) holds speech, given the frames before it (blocking, well
    /// under a millisecond).
    pub fn probability(&mut self, frame: &[f32; FRAME]) -> Result<f32, SpeechError> {
        self.infer(frame).map_err(|e| e.into_speech(super::KEY))
    }

    fn infer(&mut self, frame: &[f32; FRAME]) -> Result<f32, OnnxError> {
        let action = "judging a frame of audio";
        let mut input = Vec::with_capacity(CONTEXT + FRAME);
        input.extend_from_slice(&self.context);
        input.extend_from_slice(frame);
        let len = (CONTEXT + FRAME) as i64;
        let input = Tensor::from_array(([1_i64, len], input)).map_err(OnnxError::onnx(action))?;
        let state = Tensor::from_array(([2_i64, 1, 128], self.state.clone()))
            .map_err(OnnxError::onnx(action))?;
        let rate = Tensor::from_array(((), vec![16_000_i64])).map_err(OnnxError::onnx(action))?;
        let outputs = self
            .session
            .run(ort::inputs!["input" => input, "state" => state, "sr" => rate])
            .map_err(OnnxError::onnx(action))?;
        let missing = || OnnxError::Onnx {
            action: action.to_owned(),
            reason: "the model returned too few outputs".to_owned(),
        };
        let (_, probability) = outputs
            .get("output")
            .ok_or_else(missing)?
            .try_extract_tensor::<f32>()
            .map_err(OnnxError::onnx(action))?;
        let probability = *probability.first().ok_or_else(missing)?;
        let (_, state) = outputs
            .get("stateN")
            .ok_or_else(missing)?
            .try_extract_tensor::<f32>()
            .map_err(OnnxError::onnx(action))?;
        if state.len() != STATE {
            return Err(OnnxError::Onnx {
                action: action.to_owned(),
                reason: format!("the model's state has {} values, not {STATE}", state.len()),
            });
        }
        self.state.copy_from_slice(state);
        self.context.copy_from_slice(&frame[FRAME - CONTEXT..]);
        Ok(probability)
    }
}
