//! Smart Turn v3.2: the probability that a person has finished their turn,
//! judged from the sound of its last eight seconds (intonation, a trailing
//! "and…"), not from its words.
//!
//! Rules, those of pipecat's `LocalSmartTurnAnalyzerV3`: the turn's audio,
//! 16 kHz mono, becomes Whisper log-mel features (`features.rs`); the model
//! returns a sigmoid probability; above 0.5 the turn is complete. A single
//! inference takes tens of milliseconds on one core, so it runs once per
//! pause, not per frame.

use std::path::Path;
use std::sync::Mutex;

use ort::environment::Environment;
use ort::session::Session;
use ort::value::Tensor;

use super::features::{N_FRAMES, N_MELS, log_mel};
use oscova_core::provider::speech::SpeechError;

use crate::onnx::error::OnnxError;
use crate::onnx::runtime::load_session;

/// Smart Turn's end-of-turn classifier.
pub struct SmartTurn {
    session: Mutex<Session>,
}

impl std::fmt::Debug for SmartTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmartTurn").finish_non_exhaustive()
    }
}

impl SmartTurn {
    /// Loads the model at `path` on `env` with `threads` threads per
    /// inference (blocking; the model is 8.7 MB).
    pub(crate) fn load(env: &Environment, path: &Path, threads: usize) -> Result<Self, OnnxError> {
        let session = load_session(env, path, threads.max(1), "the Smart Turn model")?;
        if !session
            .inputs()
            .iter()
            .any(|i| i.name() == "input_features")
        {
            return Err(OnnxError::Onnx {
                action: format!("loading the Smart Turn model {}", path.display()),
                reason: "the model has no input `input_features`; is it Smart Turn v3?".to_owned(),
            });
        }
        Ok(Self {
            session: Mutex::new(session),
        })
    }

    /// The probability that the turn whose audio is `audio` (16 kHz mono in
    /// [-1, 1], its end the moment asked about) is complete (blocking).
    pub fn probability(&self, audio: &[f32]) -> Result<f32, SpeechError> {
        self.infer(audio).map_err(|e| e.into_speech(super::KEY))
    }

    fn infer(&self, audio: &[f32]) -> Result<f32, OnnxError> {
        let action = "judging the end of a turn";
        let features = log_mel(audio);
        let input = Tensor::from_array(([1_i64, N_MELS as i64, N_FRAMES as i64], features))
            .map_err(OnnxError::onnx(action))?;
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outputs = session
            .run(ort::inputs!["input_features" => input])
            .map_err(OnnxError::onnx(action))?;
        if outputs.len() == 0 {
            return Err(OnnxError::Onnx {
                action: action.to_owned(),
                reason: "the model returned no output".to_owned(),
            });
        }
        let (_, probability) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(OnnxError::onnx(action))?;
        probability.first().copied().ok_or_else(|| OnnxError::Onnx {
            action: action.to_owned(),
            reason: "the model returned an empty output".to_owned(),
        })
    }
}
