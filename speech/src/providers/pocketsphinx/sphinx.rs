//! The pocketsphinx engine: model paths, and a decoder kept loaded.
//!
//! Rules: a [`SphinxRecognizer`] loads its model once (about a second) and is
//! then shared in an `Arc` (by the `pocketsphinx` provider). The decoder is not thread-safe, so it
//! sits behind a `Mutex`: recognitions on one recognizer run one after
//! another, while separate recognizers run in parallel. Model paths are
//! checked before pocketsphinx sees them, because a missing file makes it log
//! and fail vaguely (and some failures make it call `exit()`). Decoding is
//! blocking CPU work: the provider runs it on tokio's blocking pool. All `unsafe` code lives in the
//! private `ffi` module beside this one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use oscova_core::provider::speech::SpeechError;

use crate::error::EngineError;
use crate::wav::Pcm16kMono;

use super::ffi;

/// The Debian package that ships the default English model.
const MODEL_PACKAGE: &str = "pocketsphinx-en-us";

/// Where Debian's `pocketsphinx-en-us` puts the US English model.
pub(crate) const DEBIAN_MODEL_DIR: &str = "/usr/share/pocketsphinx/model/en-us";

/// The files of the acoustic model folder that pocketsphinx cannot work
/// without.
const HMM_FILES: [&str; 5] = [
    "mdef",
    "means",
    "variances",
    "transition_matrices",
    "feat.params",
];

/// How the acoustic model files pocketsphinx aborts on must begin: binary or
/// text model definition, and the sphinx-3 header of the parameter files.
const MODEL_MAGIC: [(&str, &[&[u8]]); 4] = [
    ("mdef", &[b"BMDF", b"0.3"]),
    ("means", &[b"s3\n"]),
    ("variances", &[b"s3\n"]),
    ("transition_matrices", &[b"s3\n"]),
];

/// The model files the `pocketsphinx` provider loads.
///
/// ```
/// use oscova_speech::providers::ModelPaths;
///
/// let paths = ModelPaths::debian();
/// assert!(paths.dict.ends_with("cmudict-en-us.dict"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    /// The acoustic model folder (`-hmm`), holding `mdef`, `means`, ….
    pub hmm: PathBuf,
    /// The language model (`-lm`), ARPA text or binary `.lm.bin`.
    pub lm: PathBuf,
    /// The pronunciation dictionary (`-dict`).
    pub dict: PathBuf,
}

impl ModelPaths {
    /// Where Debian's `pocketsphinx-en-us` puts the US English model.
    pub const DEBIAN_DIR: &'static str = DEBIAN_MODEL_DIR;

    /// Where the Debian package `pocketsphinx-en-us` installs the US English
    /// model, unchecked; [`ModelPaths::check`] (or the first recognition)
    /// tells whether it is there.
    pub fn debian() -> Self {
        let dir = Path::new(DEBIAN_MODEL_DIR);
        Self {
            hmm: dir.join("en-us"),
            lm: dir.join("en-us.lm.bin"),
            dict: dir.join("cmudict-en-us.dict"),
        }
    }

    /// [`ModelPaths::debian`], checked.
    ///
    /// # Errors
    ///
    /// As [`ModelPaths::check`].
    pub fn debian_default() -> Result<Self, SpeechError> {
        let paths = Self::debian();
        paths.check()?;
        Ok(paths)
    }

    /// Checks that the model folder and files exist, and that the acoustic
    /// model files start like pocketsphinx model files.
    ///
    /// The header check matters because libpocketsphinx 5prealpha ends the
    /// whole process (`exit(1)`) when it meets a malformed acoustic model;
    /// a damaged language model or dictionary is an ordinary error. Damage
    /// past the first bytes is not detected.
    ///
    /// # Errors
    ///
    /// [`SpeechError::Provider`] naming the first missing file and the Debian
    /// package to install, or a file with a wrong header.
    pub fn check(&self) -> Result<(), SpeechError> {
        self.verify().map_err(SpeechError::from)
    }

    /// [`ModelPaths::check`] with the engine's error:
    /// [`EngineError::ModelMissing`] for the first missing path,
    /// [`EngineError::DecoderInit`] naming a file with a wrong header.
    pub(crate) fn verify(&self) -> Result<(), EngineError> {
        let hmm_files = HMM_FILES.iter().map(|f| self.hmm.join(f));
        for path in [self.lm.clone(), self.dict.clone()]
            .into_iter()
            .chain(hmm_files)
        {
            if !path.is_file() {
                return Err(EngineError::ModelMissing {
                    path,
                    package: MODEL_PACKAGE,
                });
            }
        }
        for (file, accepted) in MODEL_MAGIC {
            let path = self.hmm.join(file);
            let mut head = [0u8; 4];
            let read = std::fs::File::open(&path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
            let ok = read.is_ok() && accepted.iter().any(|magic| head.starts_with(magic));
            if !ok {
                return Err(EngineError::DecoderInit {
                    reason: format!(
                        "{} is not a pocketsphinx acoustic model file",
                        path.display()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// A pocketsphinx decoder, loaded once and reused for every recognition.
///
/// `Send + Sync`; share it with `Arc`.
pub(crate) struct SphinxRecognizer {
    decoder: Mutex<ffi::Decoder>,
    paths: ModelPaths,
}

impl std::fmt::Debug for SphinxRecognizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SphinxRecognizer")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl SphinxRecognizer {
    /// Loads the model. This reads tens of megabytes and takes about a
    /// second; do it once, off the async executor.
    ///
    /// # Errors
    ///
    /// [`EngineError::ModelMissing`] for a missing file,
    /// [`EngineError::DecoderInit`] when pocketsphinx rejects the model.
    pub(crate) fn new(paths: ModelPaths) -> Result<Self, EngineError> {
        paths.verify()?;
        let options: Vec<(&str, OsString)> = vec![
            ("-hmm", paths.hmm.clone().into_os_string()),
            ("-lm", paths.lm.clone().into_os_string()),
            ("-dict", paths.dict.clone().into_os_string()),
            // Settings measured on the flite round trip (see tests/), all
            // with whole-utterance decoding and batch cepstral normalisation:
            //
            // Noise subtraction and the voice-activity filter both track a
            // noise level that carries over from one utterance to the next,
            // so the same audio gave different words depending on what was
            // decoded before, and on short clean clips they eat into speech.
            // Off, recognition is a pure function of the audio (18 % → 0 %
            // WER on the five test sentences; 8-bit audio 27 % → 9 %).
            ("-remove_noise", "no".into()),
            ("-remove_silence", "no".into()),
            // A cap on active HMMs per frame and a narrower word beam (default
            // 7e-29): about 35 % less CPU with the same words. The cap also
            // bounds the cost of noise and silence. Tighter settings (cap
            // 1500, or -beam 1e-40) cost words on 8-bit audio.
            ("-maxhmmpf", "3000".into()),
            ("-wbeam", "1e-20".into()),
        ];
        let decoder = ffi::Decoder::new(&options)?;
        Ok(Self {
            decoder: Mutex::new(decoder),
            paths,
        })
    }

    /// Recognizes one utterance and returns the words, lowercase, separated
    /// by single spaces (empty when nothing was recognized). Blocks the
    /// thread for the length of the decode, and waits for any decode already
    /// running on this recognizer.
    ///
    /// # Errors
    ///
    /// [`EngineError::Decode`] when pocketsphinx fails.
    pub(crate) fn recognize(&self, pcm: &Pcm16kMono) -> Result<String, EngineError> {
        if pcm.samples.is_empty() {
            return Ok(String::new());
        }
        // A panic cannot happen while the lock is held (the decode is FFI
        // plus a string copy), and every decode starts a fresh utterance, so
        // a poisoned lock still guards a usable decoder.
        let samples = dithered(&pcm.samples);
        let mut decoder = self.decoder.lock().unwrap_or_else(PoisonError::into_inner);
        decoder.decode(&samples)
    }
}

/// The samples plus ±1 LSB of pseudo-random noise.
///
/// Digital silence (runs of exact zeros, common in synthetic and 8-bit
/// audio) gives log-energy features of minus infinity that pocketsphinx
/// floors, which skews the batch cepstral mean and costs words. This is what
/// pocketsphinx's `-dither` does, but with a fixed seed (the same audio always
/// gives the same words) and without sphinxbase's process-global random
/// generator, which decoders in parallel threads would share unsynchronised.
/// Measured on the flite round trip, 8-bit audio: 27 % → 12 % WER with the
/// default decoder settings.
fn dithered(samples: &[i16]) -> Vec<i16> {
    let mut state: u32 = 0x9E37_79B9;
    samples
        .iter()
        .map(|&s| {
            // xorshift32
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let noise = (state % 3) as i16 - 1;
            s.saturating_add(noise)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use oscova_core::CancellationToken;
    use std::sync::Arc;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn dither_is_small_deterministic_and_saturating() {
        let input = [0i16, 0, 0, 100, -100, i16::MAX, i16::MIN, 0];
        let once = dithered(&input);
        assert_eq!(once, dithered(&input));
        for (a, b) in input.iter().zip(&once) {
            assert!((i32::from(*a) - i32::from(*b)).abs() <= 1);
        }
        let zeros = dithered(&[0; 1_000]);
        assert!(zeros.iter().filter(|&&s| s != 0).count() > 500);
    }

    #[test]
    fn recognizer_is_send_and_sync() {
        assert_send_sync::<SphinxRecognizer>();
        assert_send_sync::<Arc<SphinxRecognizer>>();
    }

    #[test]
    fn missing_model_names_the_package() {
        let paths = ModelPaths {
            hmm: PathBuf::from("/nonexistent/hmm"),
            ..ModelPaths::debian()
        };
        let err = SphinxRecognizer::new(paths).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, EngineError::ModelMissing { .. }), "{err:?}");
        assert!(message.contains("/nonexistent/hmm/mdef"), "{message}");
        assert!(
            message.contains("apt-get install pocketsphinx-en-us"),
            "{message}"
        );
    }

    #[test]
    fn mismatched_model_is_an_init_error_not_a_crash() {
        // The phonetic LM is a valid LM whose words are not in this dictionary.
        let mut paths = ModelPaths::debian();
        paths.dict = PathBuf::from(DEBIAN_MODEL_DIR).join("en-us/noisedict");
        paths.lm = PathBuf::from(DEBIAN_MODEL_DIR).join("en-us-phone.lm.bin");
        let err = SphinxRecognizer::new(paths).unwrap_err();
        assert!(matches!(err, EngineError::DecoderInit { .. }), "{err:?}");
    }

    #[test]
    fn garbage_language_model_is_an_init_error() {
        let dir = tempfile::tempdir().unwrap();
        let lm = dir.path().join("garbage.lm.bin");
        std::fs::write(&lm, b"\x01\x02 not a language model").unwrap();
        let paths = ModelPaths {
            lm,
            ..ModelPaths::debian()
        };
        let err = SphinxRecognizer::new(paths).unwrap_err();
        assert!(matches!(err, EngineError::DecoderInit { .. }), "{err:?}");
    }

    #[test]
    fn damaged_acoustic_model_is_refused_before_pocketsphinx_sees_it() {
        // pocketsphinx itself would call exit(1) on this folder.
        let dir = tempfile::tempdir().unwrap();
        let source = PathBuf::from(DEBIAN_MODEL_DIR).join("en-us");
        for file in HMM_FILES {
            std::fs::copy(source.join(file), dir.path().join(file)).unwrap();
        }
        std::fs::write(dir.path().join("mdef"), b"garbage garbage").unwrap();
        let paths = ModelPaths {
            hmm: dir.path().to_owned(),
            ..ModelPaths::debian()
        };
        let err = SphinxRecognizer::new(paths).unwrap_err();
        assert!(
            err.to_string()
                .contains("mdef is not a pocketsphinx acoustic model file"),
            "{err}"
        );
    }

    #[test]
    fn silence_and_empty_audio_give_empty_or_short_text() {
        let recognizer = SphinxRecognizer::new(ModelPaths::debian()).unwrap();
        assert_eq!(recognizer.recognize(&Pcm16kMono::default()).unwrap(), "");
        let silence = recognizer
            .recognize(&Pcm16kMono {
                samples: vec![0; 16_000],
            })
            .unwrap();
        assert!(silence.split_whitespace().count() <= 1, "{silence:?}");
        // The decoder is reusable after each utterance.
        recognizer
            .recognize(&Pcm16kMono {
                samples: vec![0; 1_600],
            })
            .unwrap();
    }

    #[tokio::test]
    async fn the_same_audio_gives_the_same_words_whatever_came_before() {
        let recognizer = SphinxRecognizer::new(ModelPaths::debian()).unwrap();
        let flite = crate::providers::flite::FliteSynthesizer::new();
        let cancel = CancellationToken::new();
        let speak = |text: &'static str| {
            let flite = flite.clone();
            let cancel = cancel.clone();
            async move {
                crate::wav::decode(&flite.speak(text, "kal16", &cancel).await.unwrap()).unwrap()
            }
        };
        let probe = speak("please call stella").await;
        let other = speak("the quick brown fox jumps over the lazy dog").await;
        let first = recognizer.recognize(&probe).unwrap();
        for gain in [3, 1] {
            let louder = Pcm16kMono {
                samples: other
                    .samples
                    .iter()
                    .map(|&s| s.saturating_mul(gain))
                    .collect(),
            };
            recognizer.recognize(&louder).unwrap();
            assert_eq!(recognizer.recognize(&probe).unwrap(), first);
        }
        let quieter = Pcm16kMono {
            samples: other.samples.iter().map(|&s| s / 8).collect(),
        };
        recognizer.recognize(&quieter).unwrap();
        assert_eq!(recognizer.recognize(&probe).unwrap(), first);
    }
}
