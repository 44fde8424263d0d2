//! Voice activity and turn-taking for spoken conversations: who is
//! speaking, when they pause, and when they have finished their turn.
//! Built with the feature `voice`.
//!
//! Rules: two small models on the onnxruntime the kokoro and piper voices
//! already load: Silero VAD v6 judges each 32 ms frame ([`SileroVad`]) and
//! Smart Turn v3.2 judges, at a pause, whether the turn sounds complete
//! ([`SmartTurn`]). `scripts/ensure-voice-models.sh` installs both, pinned
//! and checked against their publishers' hashes, with their licences, into
//! `voice/` under the speech cache (`$XDG_CACHE_HOME/oscova`, else
//! `~/.cache/oscova`); `OSCOVA_VOICE_MODELS` names another folder. Missing
//! files are [`SpeechError::NotInstalled`] naming that script, never a
//! panic. [`VoiceModels`] loads Smart Turn once for every stream; each
//! stream gets its own [`TurnDetector`] (Silero's state is the stream's),
//! whose rules are in [`detector`]. Nothing here reaches the network.

pub mod detector;
mod features;
mod turn;
mod vad;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oscova_core::provider::speech::SpeechError;

pub use detector::{TurnDetector, TurnEnd, TurnOptions, VoiceActivity};
pub use turn::SmartTurn;
pub use vad::{FRAME, SileroVad};

use crate::onnx::error::OnnxError;
use crate::onnx::runtime::environment;
use crate::onnx::{cache_root, default_onnxruntime};

/// The command that installs the voice models.
pub const INSTALL_COMMAND: &str = "scripts/ensure-voice-models.sh";
/// The variable that names another folder of voice models.
pub const MODELS_ENV: &str = "OSCOVA_VOICE_MODELS";
const VAD_FILE: &str = "silero_vad.onnx";
const TURN_FILE: &str = "smart-turn-v3.2-cpu.onnx";
/// The key the voice models' errors are reported under.
pub(crate) const KEY: &str = "voice";

/// The voice models, loaded: Smart Turn once, and Silero VAD for each
/// stream.
#[derive(Clone)]
pub struct VoiceModels {
    env: ort::environment::Environment,
    vad: PathBuf,
    smart_turn: Arc<SmartTurn>,
}

impl std::fmt::Debug for VoiceModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoiceModels")
            .field("vad", &self.vad)
            .finish_non_exhaustive()
    }
}

impl VoiceModels {
    /// The folder the models are looked for in: `$OSCOVA_VOICE_MODELS`,
    /// else `voice/` in the speech cache.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os(MODELS_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| cache_root().map(|root| root.join("voice")))
    }

    /// Loads the models from [`default_dir`](Self::default_dir) on the
    /// default onnxruntime library (blocking, about 100 ms).
    pub fn load() -> Result<Self, SpeechError> {
        let dir = Self::default_dir().ok_or_else(|| SpeechError::NotInstalled {
            provider: KEY.to_owned(),
            missing: format!(
                "no folder for the voice models: set {MODELS_ENV}, or HOME for the cache"
            ),
            install: INSTALL_COMMAND.to_owned(),
        })?;
        let runtime = default_onnxruntime().ok_or_else(|| SpeechError::NotInstalled {
            provider: KEY.to_owned(),
            missing: "no onnxruntime library: set ORT_DYLIB_PATH, or HOME for the cache".to_owned(),
            install: INSTALL_COMMAND.to_owned(),
        })?;
        Self::load_from(&dir, &runtime)
    }

    /// Loads the models in `dir` on the onnxruntime library `runtime`
    /// (blocking).
    pub fn load_from(dir: &Path, runtime: &Path) -> Result<Self, SpeechError> {
        let speech = |e: OnnxError| e.into_speech(KEY);
        let env = environment(runtime, INSTALL_COMMAND).map_err(speech)?;
        let vad = dir.join(VAD_FILE);
        let turn = dir.join(TURN_FILE);
        for file in [&vad, &turn] {
            if !file.is_file() {
                return Err(SpeechError::NotInstalled {
                    provider: KEY.to_owned(),
                    missing: format!("the voice model {} does not exist", file.display()),
                    install: INSTALL_COMMAND.to_owned(),
                });
            }
        }
        // Checked once here, so a stream's detector never fails to load.
        SileroVad::load(&env, &vad).map_err(speech)?;
        let smart_turn = Arc::new(SmartTurn::load(&env, &turn, 1).map_err(speech)?);
        Ok(Self {
            env,
            vad,
            smart_turn,
        })
    }

    /// Smart Turn, shared by every stream.
    pub fn smart_turn(&self) -> &Arc<SmartTurn> {
        &self.smart_turn
    }

    /// A fresh Silero VAD for one stream (blocking, a few milliseconds).
    pub fn vad(&self) -> Result<SileroVad, SpeechError> {
        SileroVad::load(&self.env, &self.vad).map_err(|e| e.into_speech(KEY))
    }

    /// Turn-taking for one stream with `options`.
    pub fn detector(&self, options: TurnOptions) -> Result<TurnDetector, SpeechError> {
        let smart_turn = match options.end {
            TurnEnd::SmartTurn { .. } => Some(self.smart_turn.clone()),
            TurnEnd::Silence(_) => None,
        };
        Ok(TurnDetector::new(self.vad()?, smart_turn, options))
    }
}
