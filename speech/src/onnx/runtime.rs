//! onnxruntime, loaded at run time, for every provider on it (piper,
//! kokoro), and the options and audio conversion they share.
//!
//! Rules: the library is loaded once per process from an absolute path
//! (`ort`'s `load-dynamic`: nothing is linked or downloaded at build time),
//! and the one `ort` environment a process may have is kept for the life
//! of the process. Until a load succeeds every call tries again, so
//! installing the library fixes a running host; once one library is
//! loaded, a request naming another gets an error saying so rather than
//! silently using the first. A missing library is a "not installed" error
//! naming the install script of the provider that asked, checked before
//! `ort` is touched (which would otherwise panic on first use). Sessions
//! run with the configured number of threads, which block instead of
//! spinning while they wait (a host shares its cores with other work, and
//! spinning threads on a busy machine slow everyone); a provider stops a
//! running inference through its run options ([`StopOnDrop`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use ort::environment::Environment;
use ort::session::RunOptions;
use oscova_core::CancellationToken;

use super::error::OnnxError;

/// The environment, once a library has loaded, with the library's path.
static RUNTIME: Mutex<Option<(PathBuf, Environment)>> = Mutex::new(None);

/// The process's onnxruntime environment, loading `library` if none is
/// loaded yet; a missing library is "not installed" naming `install`.
/// Shared by every provider on onnxruntime (piper, kokoro).
pub(crate) fn environment(library: &Path, install: &'static str) -> Result<Environment, OnnxError> {
    let absolute = std::path::absolute(library).unwrap_or_else(|_| library.to_path_buf());
    if !absolute.is_file() {
        return Err(OnnxError::NotInstalled {
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
        return Err(OnnxError::Onnx {
            action: format!("loading {}", library.display()),
            reason: format!(
                "this process already runs onnxruntime from {}, and a process can load only one",
                loaded.display()
            ),
        });
    }
    let env = ort::init_from(&absolute)
        .map_err(OnnxError::onnx(&format!("loading {}", absolute.display())))?
        .with_name("oscova-speech")
        .build()
        .map_err(OnnxError::onnx("creating its environment"))?;
    *slot = Some((absolute, env.clone()));
    Ok(env)
}

/// Loads the model at `path` on `env` with `threads` threads per
/// inference, one between operators and no spinning (the module rules);
/// `what` names the model in the error (blocking).
pub(crate) fn load_session(
    env: &Environment,
    path: &Path,
    threads: usize,
    what: &str,
) -> Result<ort::session::Session, OnnxError> {
    let action = format!("loading {what} {}", path.display());
    ort::session::Session::builder(env)
        .map_err(OnnxError::onnx(&action))?
        .with_intra_threads(threads)
        .map_err(OnnxError::onnx(&action))?
        .with_inter_threads(1)
        .map_err(OnnxError::onnx(&action))?
        .with_intra_op_spinning(false)
        .map_err(OnnxError::onnx(&action))?
        .commit_from_file(path)
        .map_err(OnnxError::onnx(&action))
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
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
pub(crate) fn encode_wav(samples: &[i16], rate: u32) -> Result<Vec<u8>, OnnxError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = std::io::Cursor::new(Vec::with_capacity(44 + 2 * samples.len()));
    let mut writer =
        hound::WavWriter::new(&mut out, spec).map_err(|source| OnnxError::Wav { source })?;
    for sample in samples {
        writer
            .write_sample(*sample)
            .map_err(|source| OnnxError::Wav { source })?;
    }
    writer
        .finalize()
        .map_err(|source| OnnxError::Wav { source })?;
    Ok(out.into_inner())
}

/// The onnxruntime library's path and the threads, when set.
pub(crate) type RuntimeOptions = (Option<PathBuf>, Option<usize>);

/// The options every onnxruntime voice (piper, kokoro) reads the same way:
/// a key outside `known` refused, `onnxruntime` the path of the library,
/// `threads` from 1 to 64. A refusal is the key and why.
pub(crate) fn runtime_options<'a>(
    provider: &str,
    known: &[&str],
    options: &'a Map<String, Value>,
) -> Result<RuntimeOptions, (&'a str, String)> {
    if let Some(key) = options.keys().find(|k| !known.contains(&k.as_str())) {
        return Err((
            key,
            format!("is not one {provider} knows (known: {})", known.join(", ")),
        ));
    }
    let onnxruntime = match options.get("onnxruntime") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) if !path.trim().is_empty() => Some(PathBuf::from(path)),
        Some(_) => {
            return Err((
                "onnxruntime",
                "must be the path of libonnxruntime.so".to_owned(),
            ));
        }
    };
    let threads = match options.get("threads") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_u64() {
            Some(n @ 1..=64) => usize::try_from(n).ok(),
            _ => {
                return Err(("threads", "must be a whole number from 1 to 64".to_owned()));
            }
        },
    };
    Ok((onnxruntime, threads))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSTALL: &str = "scripts/ensure-piper.sh";

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
        let err = environment(Path::new("/nonexistent/libonnxruntime.so"), INSTALL).unwrap_err();
        assert!(
            matches!(&err, OnnxError::NotInstalled { install, .. } if *install == INSTALL),
            "{err:?}"
        );
    }
}
