//! onnxruntime, loaded at run time, and a voice's model on it.
//!
//! Rules: the library is loaded once per process from an absolute path
//! (`ort`'s `load-dynamic`: nothing is linked or downloaded at build time),
//! and the one `ort` environment a process may have is kept for the life
//! of the process. Until a load succeeds every call tries again, so
//! installing the library fixes a running host; once one library is
//! loaded, a request naming another gets an error saying so rather than
//! silently using the first. A missing library is a "not installed" error
//! naming the install script, checked before `ort` is touched (which would
//! otherwise panic on first use). A model must have the inputs Piper's
//! exports have (`input`, `input_lengths`, `scales`, and `sid` for
//! multi-speaker voices). Inference runs one sentence at a time on a
//! session guarded by a mutex, so one voice runs at most one inference at
//! a time, each with the configured number of threads, which block instead
//! of spinning while they wait (a host shares its cores with other work,
//! and spinning threads on a busy machine slow everyone); a stop token is
//! checked between sentences and terminates a running inference through
//! its run options. So is the length: once the sentences spoken so far
//! play longer than the provider's limit, the rest are not computed and
//! the request is refused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ort::environment::Environment;
use ort::session::{RunOptions, Session};
use ort::value::Tensor;
use oscova_core::CancellationToken;

use super::error::PiperError;

/// The environment, once a library has loaded, with the library's path.
static RUNTIME: Mutex<Option<(PathBuf, Environment)>> = Mutex::new(None);

/// The process's onnxruntime environment, loading `library` if none is
/// loaded yet; a missing library is "not installed" naming `install`.
/// Shared by every provider on onnxruntime (piper, kokoro).
pub(crate) fn environment(
    library: &Path,
    install: &'static str,
) -> Result<Environment, PiperError> {
    let absolute = std::path::absolute(library).unwrap_or_else(|_| library.to_path_buf());
    if !absolute.is_file() {
        return Err(PiperError::NotInstalled {
            missing: format!(
                "the onnxruntime library {} does not exist",
                absolute.display()
            ),
            install,
        });
    }
    let mut slot = RUNTIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((loaded, env)) = slot.as_ref() {
        if same_file(loaded, &absolute) {
            return Ok(env.clone());
        }
        return Err(PiperError::Onnx {
            action: format!("loading {}", library.display()),
            reason: format!(
                "this process already runs onnxruntime from {}, and a process can load only one",
                loaded.display()
            ),
        });
    }
    let env = ort::init_from(&absolute)
        .map_err(PiperError::onnx(&format!("loading {}", absolute.display())))?
        .with_name("oscova-speech")
        .build()
        .map_err(PiperError::onnx("creating its environment"))?;
    *slot = Some((absolute, env.clone()));
    Ok(env)
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

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
        let action = format!("loading the voice model {}", path.display());
        let session = Session::builder(env)
            .map_err(PiperError::onnx(&action))?
            .with_intra_threads(threads)
            .map_err(PiperError::onnx(&action))?
            .with_inter_threads(1)
            .map_err(PiperError::onnx(&action))?
            .with_intra_op_spinning(false)
            .map_err(PiperError::onnx(&action))?
            .commit_from_file(path)
            .map_err(PiperError::onnx(&action))?;
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
            .map_err(PiperError::onnx(action))?;
        let lengths = Tensor::from_array(([1_i64], vec![len])).map_err(PiperError::onnx(action))?;
        let scales = Tensor::from_array(([3_i64], inputs.scales.to_vec()))
            .map_err(PiperError::onnx(action))?;
        let mut values = ort::inputs![
            "input" => input,
            "input_lengths" => lengths,
            "scales" => scales,
        ];
        if self.has_sid {
            let sid = Tensor::from_array(([1_i64], vec![inputs.speaker.unwrap_or(0)]))
                .map_err(PiperError::onnx(action))?;
            values.push(("sid".into(), sid.into()));
        }
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outputs = session
            .run_with_options(values, options)
            .map_err(PiperError::onnx(action))?;
        if outputs.len() == 0 {
            return Err(PiperError::Onnx {
                action: action.to_owned(),
                reason: "the model returned no output".to_owned(),
            });
        }
        let (_, audio) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(PiperError::onnx(action))?;
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
    let options = Arc::new(RunOptions::new().map_err(PiperError::onnx("creating run options"))?);
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
                return Err(PiperError::Cancelled);
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
        joined = task => joined.map_err(|source| PiperError::Task { source })?,
        () = stop.cancelled() => Err(PiperError::Cancelled),
    };
    drop(guard);
    if cancel.is_cancelled() {
        return Err(PiperError::Cancelled);
    }
    outcome
}

/// Stops the blocking task when the synthesis ends early: cancels `stop`
/// and terminates the run through `options`.
pub(crate) struct StopOnDrop {
    pub(crate) stop: CancellationToken,
    pub(crate) options: Arc<RunOptions>,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if !self.stop.is_cancelled() {
            self.stop.cancel();
        }
        // Terminating a finished run is harmless; the error only says the
        // options could not be updated, which leaves nothing to undo.
        let _terminated = self.options.terminate();
    }
}

/// Float audio as 16-bit samples, as Piper does it: scaled so the loudest
/// sample is at full scale (never amplifying more than 100-fold), clipped.
pub(crate) fn to_pcm16(audio: &[f32]) -> Vec<i16> {
    let peak = audio
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0_f32, |m, v| m.max(v.abs()));
    let gain = 32767.0 / peak.max(0.01);
    audio
        .iter()
        .map(|v| {
            let v = if v.is_finite() { *v } else { 0.0 };
            #[allow(clippy::cast_possible_truncation)] // clamped to the i16 range
            let sample = (v * gain).clamp(-32767.0, 32767.0) as i16;
            sample
        })
        .collect()
}

/// A 16-bit mono WAV file of `samples` at `rate`.
pub(crate) fn encode_wav(samples: &[i16], rate: u32) -> Result<Vec<u8>, PiperError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = std::io::Cursor::new(Vec::with_capacity(44 + 2 * samples.len()));
    let mut writer =
        hound::WavWriter::new(&mut out, spec).map_err(|source| PiperError::Wav { source })?;
    for sample in samples {
        writer
            .write_sample(*sample)
            .map_err(|source| PiperError::Wav { source })?;
    }
    writer
        .finalize()
        .map_err(|source| PiperError::Wav { source })?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::super::assets::PIPER_INSTALL_COMMAND;
    use super::*;

    #[test]
    fn audio_is_normalised_to_full_scale_and_clipped() {
        assert_eq!(to_pcm16(&[0.5, -0.25, 0.0]), [32767, -16383, 0]);
        // Quiet audio is amplified at most 100-fold.
        assert_eq!(to_pcm16(&[0.001]), [3276]);
        assert_eq!(to_pcm16(&[f32::NAN, 1.0]), [0, 32767]);
        assert!(to_pcm16(&[]).is_empty());
    }

    #[test]
    fn wav_has_the_voices_rate() {
        let wav = encode_wav(&[0, 1, -1], 22050).unwrap();
        let reader = hound::WavReader::new(std::io::Cursor::new(&wav)).unwrap();
        assert_eq!(reader.spec().sample_rate, 22050);
        assert_eq!(reader.duration(), 3);
    }

    #[test]
    fn a_missing_library_is_not_installed() {
        let err = environment(
            Path::new("/nonexistent/libonnxruntime.so"),
            PIPER_INSTALL_COMMAND,
        )
        .unwrap_err();
        assert!(
            matches!(&err, PiperError::NotInstalled { install, .. } if *install == PIPER_INSTALL_COMMAND),
            "{err:?}"
        );
    }
}
