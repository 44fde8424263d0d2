//! The `flite` provider: local speech synthesis by running the `flite` program.
//!
//! Rules: the voice is checked against [`FliteSynthesizer::VOICES`] before flite runs,
//! because flite silently falls back to its 8 kHz default voice on an unknown
//! name. The text never appears on the command line: it is written to a
//! temporary file passed with `-f`, so a text that starts with `-` cannot be
//! read as an option, no length limit of the argument list applies, and the
//! text does not show up in the process list. flite exits with status 0 even
//! when it cannot read its input or write its output, so success is judged by
//! the WAV file it leaves behind, not by its exit status. Temporary files live
//! in a private temporary folder that is removed on every path out, including
//! cancellation. The program is started only through the provider's
//! [`ProcessSpawnPolicy`]: a filtered environment, no shell, arguments as a
//! list, stderr in the error, killed on cancellation.

use std::ffi::OsString;

use oscova_core::provider::speech::{
    SpeechError, SpeechProviderKeys, SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_core::{
    CancellationToken, process::ProcessSpawnPolicy, process::ProcessSpawnRequest,
    process::SpawnError,
};

use crate::error::EngineError;

/// The voices flite ships with on Debian that read arbitrary text.
/// `kal16` is 16 kHz; `kal` is the 8 kHz diphone voice; `slt`, `rms` and
/// `awb` are 16 kHz cluster-unit voices. (`awb_time` is left out: it only
/// speaks clock times.)
pub(crate) const FLITE_VOICES: [&str; 5] = ["kal16", "slt", "rms", "awb", "kal"];

/// The voice used when neither the request nor the configuration names one:
/// 16 kHz, and what the recognizer is tested against.
pub(crate) const FLITE_DEFAULT_VOICE: &str = "kal16";

/// The Debian package that provides the program.
const FLITE_PACKAGE: &str = "flite";

/// Who the spawn policy is told the process runs for.
const ORIGIN: &str = "speech provider flite";

/// The built-in `flite` synthesis provider (type key
/// [`SpeechProviderKeys::FLITE`]): runs the local `flite` program and
/// returns its 16-bit mono WAV (16 kHz for every voice but `kal`, 8 kHz).
///
/// Local by design ([`default_is_local_endpoint`] is `true`); it ignores the
/// configuration's endpoint and model. The voice is the request's, else the
/// configuration's, else [`DEFAULT_VOICE`](Self::DEFAULT_VOICE), and must be one of
/// [`VOICES`](Self::VOICES).
///
/// ```no_run
/// use oscova_speech::{providers::FliteSynthesizer, SpeechProviderConfig, SpeechSynthesisProvider, SynthesisRequest};
///
/// # async fn demo() -> Result<(), oscova_speech::SpeechError> {
/// let flite = FliteSynthesizer::new();
/// let config = SpeechProviderConfig::new("flite");
/// let audio = flite
///     .synthesize(SynthesisRequest::new(&config, "hello world").voice(Some("slt")))
///     .await?;
/// assert_eq!(&audio.wav[..4], b"RIFF");
/// # Ok(()) }
/// ```
///
/// [`default_is_local_endpoint`]: SpeechSynthesisProvider::default_is_local_endpoint
#[derive(Debug, Clone)]
pub struct FliteSynthesizer {
    program: String,
    policy: ProcessSpawnPolicy,
}

impl Default for FliteSynthesizer {
    fn default() -> Self {
        Self::new()
    }
}

impl FliteSynthesizer {
    /// The voices flite has built in (the `flite` program's `-voice`
    /// names); a request's voice must be one of them.
    pub const VOICES: [&'static str; 5] = FLITE_VOICES;

    /// The voice used when neither the request nor the configuration names
    /// one.
    pub const DEFAULT_VOICE: &'static str = FLITE_DEFAULT_VOICE;

    /// Runs `flite` from `PATH` with [`ProcessSpawnPolicy::new`] (the host
    /// environment minus secrets).
    pub fn new() -> Self {
        Self {
            program: "flite".to_owned(),
            policy: ProcessSpawnPolicy::new(),
        }
    }

    /// Starts flite through `policy` instead (a host's policy, with its deny
    /// list and hooks).
    #[must_use]
    pub fn with_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Runs `program` (a path, or a name on `PATH`) instead of `flite`; it
    /// must accept flite's command line.
    #[must_use]
    pub fn with_program(mut self, program: impl Into<String>) -> Self {
        self.program = program.into();
        self
    }

    /// Speaks `text` with `voice` and returns the WAV file flite wrote.
    pub(crate) async fn speak(
        &self,
        text: &str,
        voice: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, EngineError> {
        if !FLITE_VOICES.contains(&voice) {
            return Err(EngineError::UnknownVoice {
                voice: voice.to_owned(),
                known: FLITE_VOICES.iter().map(|v| (*v).to_owned()).collect(),
            });
        }
        if text.trim().is_empty() {
            return Err(EngineError::EmptyText);
        }

        let dir = tempfile::Builder::new()
            .prefix("oscova-flite-")
            .tempdir()
            .map_err(|source| EngineError::Io {
                action: "creating a temporary folder for flite".to_owned(),
                source,
            })?;
        let text_path = dir.path().join("input.txt");
        let wav_path = dir.path().join("output.wav");
        tokio::fs::write(&text_path, text.as_bytes())
            .await
            .map_err(|source| EngineError::Io {
                action: format!("writing {}", text_path.display()),
                source,
            })?;

        let args: [OsString; 6] = [
            "-voice".into(),
            voice.into(),
            "-f".into(),
            text_path.clone().into_os_string(),
            "-o".into(),
            wav_path.clone().into_os_string(),
        ];
        let request = ProcessSpawnRequest::new(&self.program)
            .args(args)
            .origin(ORIGIN);
        self.policy
            .run(request, None, cancel)
            .await
            .map_err(|source| match source {
                SpawnError::NotFound { .. } => EngineError::ProgramNotFound {
                    program: self.program.clone(),
                    install_hint: format!(
                        "install the Debian package `{FLITE_PACKAGE}` (apt-get install {FLITE_PACKAGE})"
                    ),
                    source: Box::new(source),
                },
                source => EngineError::Program {
                    source: Box::new(source),
                },
            })?;

        // flite exits with status 0 even when it could not write, so a
        // missing file is the first sign of trouble.
        let mut wav = tokio::fs::read(&wav_path)
            .await
            .map_err(|source| EngineError::Io {
                action: format!(
                    "reading the audio flite should have written to {} (check free space in the temporary folder)",
                    wav_path.display()
                ),
                source,
            })?;
        repair_byte_rate(&mut wav);
        check_output(&wav)?;
        // `dir` is dropped here and on every early return, deleting both files.
        Ok(wav)
    }
}

impl SpeechSynthesisProvider for FliteSynthesizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(SpeechProviderKeys::FLITE)
    }

    fn display_name(&self) -> &str {
        "flite (local)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn voices(&self) -> Vec<String> {
        FLITE_VOICES.iter().map(|v| (*v).to_owned()).collect()
    }

    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        Box::pin(async move {
            let voice = request
                .voice
                .or(request.config.voice.as_deref())
                .unwrap_or(FLITE_DEFAULT_VOICE);
            let wav = self.speak(request.text, voice, &request.cancel).await?;
            Ok(SynthesizedAudio { wav })
        })
    }
}

/// In `-f` mode flite writes a byte-rate field of 32 000 whatever the voice's
/// rate, so the 8 kHz `kal` voice gets an inconsistent header (the samples
/// are right). The field is redundant; it is recomputed from the sample rate
/// and block alignment of flite's canonical 44-byte header.
fn repair_byte_rate(wav: &mut [u8]) {
    if wav.len() < 44 || &wav[0..4] != b"RIFF" || &wav[8..16] != b"WAVEfmt " {
        return;
    }
    let sample_rate = u32::from_le_bytes([wav[24], wav[25], wav[26], wav[27]]);
    let block_align = u32::from(u16::from_le_bytes([wav[32], wav[33]]));
    let byte_rate = sample_rate.saturating_mul(block_align);
    wav[28..32].copy_from_slice(&byte_rate.to_le_bytes());
}

/// flite reports its failures only on stderr, so the file is the evidence.
fn check_output(wav: &[u8]) -> Result<(), EngineError> {
    let reader = hound::WavReader::new(std::io::Cursor::new(wav)).map_err(|err| {
        EngineError::EngineOutput {
            engine: "flite",
            reason: format!("its output is not a valid WAV file ({err})"),
        }
    })?;
    if reader.duration() == 0 {
        return Err(EngineError::EngineOutput {
            engine: "flite",
            reason: "the audio is empty; the text may contain nothing flite can pronounce"
                .to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
