//! The `speech` toolset: `speak` and `transcribe`.
//!
//! Rules, in the order a call meets them: the arguments are checked (text
//! length, the `provider` choice), then the route — the router's offline
//! decision and, for `speak`, a voice the provider does not list — and only
//! then the path, inside the user's root; so a refused call touches no file
//! and creates no directory, and a refused path never costs a synthesis.
//! `speak` refuses an existing file before synthesizing unless `overwrite`
//! is set, then writes with `O_EXCL` (or truncation when overwriting),
//! so it never replaces a file it was not told to. Both tools open their
//! file through [`UserRoot`], which refuses anything but a regular file
//! (a FIFO never makes a call hang) and hands back an open handle; the
//! audio read is capped while reading. The user's settings are
//! read at each call, so a host that flips a user to offline is obeyed by
//! the next call, not the next scope. File reads and writes run on the
//! blocking pool. `transcribe` passes on the provider's progress as the
//! call's progress (seconds of audio heard of the whole, in order, each
//! before the result), and puts the provider's timed segments in the
//! result's details; the text stays the content.
//!
//! Network scope: both tools declare `Internet`. Scope is static metadata
//! and a host may configure a remote provider for a user who allows it,
//! so `Internet` is the honest upper bound (and what MCP clients see as
//! "open world"). It is not what keeps speech local: providers are unscoped
//! by design (the `openai` provider picks its own fixed scope per
//! endpoint), so the guard is the per-user offline setting, checked by the
//! router with the same locality rule as `NetworkScope::Local`.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use oscova_core::fs::{CreateMode, RootPathError, UserRoot};
use oscova_core::prelude::*;
use oscova_core::serde_json::json;
use oscova_core::{SecretString, ToolProgress, context::Credentials};
use oscova_speech::{
    RecognitionProgress, RecognitionRequest, SpeechError, SpeechProviderConfig, SpeechRouters,
    SynthesisRequest, Transcript, TranscriptSegment, wav::check_wav_header,
};

use crate::SettingsResolver;
use crate::error::SpeechToolError;
use crate::settings::{SpeechLimits, SpeechSettings};

/// Speech tools for one user: their root, settings and credentials.
/// Built by [`SpeechPlugin`](crate::SpeechPlugin) for each user scope.
#[derive(Clone)]
pub struct SpeechToolset {
    pub(crate) root: UserRoot,
    pub(crate) user: UserInfo,
    pub(crate) settings: SettingsResolver,
    pub(crate) credentials: Credentials,
    /// The host's routers, shared by every scope.
    pub(crate) routers: Arc<SpeechRouters>,
    pub(crate) limits: SpeechLimits,
}

impl std::fmt::Debug for SpeechToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechToolset")
            .field("root", &self.root)
            .field("user", &self.user.id())
            .field("routers", &"SpeechRouters")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, SpeechToolError> + Send + 'static,
) -> Result<T, SpeechToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SpeechToolError::Io {
            action: "finish",
            path: String::new(),
            source: io::Error::other(e.to_string()),
        })?
}

/// Which configuration a call uses, and the name of its API key credential.
struct Choice<'a> {
    config: Cow<'a, SpeechProviderConfig>,
    credential: Option<&'a str>,
}

/// The configured provider, or another one the user may pick: any routable
/// provider that runs on this machine by design (no endpoint to configure,
/// nothing to leave the machine), used with a bare configuration.
fn choose<'a>(
    asked: Option<&str>,
    configured: &'a SpeechProviderConfig,
    credential: Option<&'a str>,
    direction: &'static str,
    keys: &[String],
    local_by_design: impl Fn(&str) -> bool,
) -> Result<Choice<'a>, SpeechToolError> {
    let asked = asked.map(str::trim).filter(|k| !k.is_empty());
    match asked {
        None => Ok(Choice {
            config: Cow::Borrowed(configured),
            credential,
        }),
        Some(key) if key == configured.provider.as_str() => Ok(Choice {
            config: Cow::Borrowed(configured),
            credential,
        }),
        Some(key) if keys.iter().any(|k| k == key) && local_by_design(key) => Ok(Choice {
            config: Cow::Owned(SpeechProviderConfig::new(key.to_owned())),
            credential: None,
        }),
        Some(key) => {
            let mut choices = vec![configured.provider.to_string()];
            choices.extend(
                keys.iter()
                    .filter(|k| k.as_str() != configured.provider.as_str() && local_by_design(k))
                    .cloned(),
            );
            Err(SpeechToolError::ProviderNotOffered {
                key: key.to_owned(),
                direction,
                configured: configured.provider.to_string(),
                choices,
            })
        }
    }
}

/// A voice the provider does not list, as the provider would refuse it.
/// Providers that list no voices (remote services have their own) accept
/// any name here.
fn check_voice(voice: Option<&str>, known: &[String]) -> Result<(), SpeechError> {
    match voice {
        Some(voice) if !known.is_empty() && !known.iter().any(|k| k == voice) => {
            Err(SpeechError::UnknownVoice {
                voice: voice.to_owned(),
                known: known.to_vec(),
            })
        }
        _ => Ok(()),
    }
}

fn seconds(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

impl SpeechToolset {
    fn api_key(&self, credential: Option<&str>) -> Option<SecretString> {
        credential.and_then(|name| self.credentials.get(name))
    }
}

#[toolset]
impl SpeechToolset {
    /// Speaks text aloud into a WAV audio file in the user's files. The
    /// result says where it was saved and how long it plays, and carries
    /// the audio itself. Refuses to replace an existing file unless
    /// `overwrite` is true.
    #[tool(title = "Speak text", approval = Required, network = Internet)]
    // Each parameter is one field of the tool's JSON arguments.
    #[allow(clippy::too_many_arguments)]
    pub async fn speak(
        &self,
        /// The words to speak.
        text: String,
        /// Where to save the WAV file, relative to the files root (for example `audio/hello.wav`).
        path: String,
        /// The voice; leave out for the configured default (flite has kal16, slt, rms, awb and kal).
        voice: Option<String>,
        /// A speech provider type key to use instead of the configured one (for example `flite`).
        provider: Option<String>,
        /// Replace the file if it already exists (default false).
        overwrite: Option<bool>,
        /// Create missing parent directories (default false).
        create_dirs: Option<bool>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, SpeechToolError> {
        if text.trim().is_empty() {
            return Err(SpeechToolError::EmptyText);
        }
        let chars = text.chars().count();
        if chars > self.limits.max_text_chars {
            return Err(SpeechToolError::TextTooLong {
                chars,
                limit: self.limits.max_text_chars,
            });
        }
        let settings: SpeechSettings = (self.settings)(&self.user);
        let router = self.routers.synthesis();
        let choice = choose(
            provider.as_deref(),
            &settings.synthesis,
            settings.synthesis_credential.as_deref(),
            "speaking",
            router.keys(),
            |key| {
                router
                    .get(key)
                    .is_some_and(|p| p.default_is_local_endpoint())
            },
        )?;
        let key = &choice.config.provider;
        // Refusals that need no file system come first, so a refused call
        // creates no directory.
        let provider = router
            .resolve(&choice.config, settings.offline, None)
            .map_err(|e| SpeechToolError::speech("speaking", key, e))?;
        check_voice(voice.as_deref(), &provider.voices())
            .map_err(|e| SpeechToolError::speech("speaking", key, e))?;
        let overwrite = overwrite.unwrap_or(false);
        let (root, rel) = (self.root.clone(), path.clone());
        let create_dirs = create_dirs.unwrap_or(false);
        let target = blocking(move || {
            let target = root.check_write(&rel, create_dirs)?;
            if !overwrite && target.exists {
                return Err(RootPathError::AlreadyExists { path: rel }.into());
            }
            Ok(target)
        })
        .await?;

        invocation.report(ToolProgress::message(format!(
            "speaking {chars} characters with {key}"
        )));
        let api_key = self.api_key(choice.credential);
        let audio = router
            .synthesize(
                SynthesisRequest::new(&choice.config, &text)
                    .voice(voice.as_deref())
                    .offline(settings.offline)
                    .api_key(api_key.as_ref())
                    .cancel(invocation.cancellation_token().clone()),
            )
            .await
            .map_err(|e| SpeechToolError::speech("speaking", key, e))?;
        let info = check_wav_header(&audio.wav).map_err(|e| SpeechToolError::BadProviderAudio {
            provider: key.to_string(),
            reason: e.to_string(),
        })?;
        if invocation.is_cancelled() {
            return Err(SpeechToolError::Cancelled);
        }
        let bytes = audio.wav.len();
        let root = self.root.clone();
        // The bytes come back out of the writer: they are also the result's
        // audio block, so a client hears the speech without the file.
        let (replaced, wav) = blocking(move || {
            write_wav(&root, &path, &audio.wav, overwrite, create_dirs)
                .map(|replaced| (replaced, audio.wav))
        })
        .await?;

        let voice = voice.or_else(|| choice.config.voice.clone());
        let shown_voice = voice
            .as_deref()
            .map_or_else(String::new, |v| format!(", voice {v}"));
        Ok(ToolResult::text(format!(
            "Saved {:.1} seconds of speech to `{}` ({key}{shown_voice}{}).",
            info.duration_seconds,
            target.rel,
            if replaced {
                "; the old file was replaced"
            } else {
                ""
            },
        ))
        .with_details(json!({
            "path": target.rel,
            "bytes": bytes,
            "duration_seconds": seconds(info.duration_seconds),
            "sample_rate": info.sample_rate,
            "channels": info.channels,
            "provider": key,
            "voice": voice,
            "offline": settings.offline,
            "replaced": replaced,
        }))
        .with_audio(wav, "audio/wav"))
    }

    /// Transcribes speech in a WAV audio file from the user's files and
    /// returns the words heard, with their start and end times in the
    /// details where the provider gives them. Long audio reports progress.
    #[tool(approval = NotRequired, network = Internet)]
    pub async fn transcribe(
        &self,
        /// The WAV file, relative to the files root.
        path: String,
        /// A speech provider type key to use instead of the configured one (for example `pocketsphinx`).
        provider: Option<String>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, SpeechToolError> {
        let settings: SpeechSettings = (self.settings)(&self.user);
        let router = self.routers.recognition();
        let choice = choose(
            provider.as_deref(),
            &settings.recognition,
            settings.recognition_credential.as_deref(),
            "transcribing",
            router.keys(),
            |key| {
                router
                    .get(key)
                    .is_some_and(|p| p.default_is_local_endpoint())
            },
        )?;
        let key = &choice.config.provider;
        router
            .resolve(&choice.config, settings.offline, None)
            .map_err(|e| SpeechToolError::speech("transcribing", key, e))?;
        let (root, rel, limit) = (self.root.clone(), path.clone(), self.limits.max_audio_bytes);
        let (file_rel, wav) = blocking(move || read_audio(&root, &rel, limit)).await?;
        let info = check_wav_header(&wav).map_err(|e| SpeechToolError::NotWav {
            path: path.clone(),
            reason: e.to_string(),
        })?;

        invocation.report(ToolProgress::message(format!(
            "transcribing {:.1} seconds of audio with {key}",
            info.duration_seconds
        )));
        let api_key = self.api_key(choice.credential);
        // The provider may report from a blocking thread; the updates come
        // here through a channel, since only this task holds the call.
        let (sender, mut updates) = tokio::sync::mpsc::unbounded_channel();
        let recognition = router.recognize(
            RecognitionRequest::new(&choice.config, &wav)
                .offline(settings.offline)
                .api_key(api_key.as_ref())
                .cancel(invocation.cancellation_token().clone())
                .progress(Arc::new(move |p: RecognitionProgress| {
                    let _ = sender.send(p);
                })),
        );
        tokio::pin!(recognition);
        let outcome = loop {
            tokio::select! {
                // Progress first, so every update is reported before the
                // result.
                biased;
                Some(update) = updates.recv() => invocation.report(heard_so_far(update)),
                outcome = &mut recognition => break outcome,
            }
        };
        while let Ok(update) = updates.try_recv() {
            invocation.report(heard_so_far(update));
        }
        let transcript: Transcript =
            outcome.map_err(|e| SpeechToolError::speech("transcribing", key, e))?;
        let text = transcript.text.trim();
        let content = if text.is_empty() {
            format!(
                "No words were recognised in `{}` ({:.1} seconds of audio).",
                file_rel, info.duration_seconds
            )
        } else {
            text.to_owned()
        };
        Ok(ToolResult::text(content).with_details(json!({
            "path": file_rel,
            "text": text,
            "provider": key,
            "duration_seconds": seconds(info.duration_seconds),
            "sample_rate": info.sample_rate,
            "channels": info.channels,
            "offline": settings.offline,
            "segments": transcript.segments.iter().map(segment).collect::<Vec<_>>(),
        })))
    }
}

/// A recognition's progress as the call's: seconds heard of the whole.
fn heard_so_far(update: RecognitionProgress) -> ToolProgress {
    let (done, total) = (seconds(update.seconds_done), seconds(update.seconds_total));
    ToolProgress::ratio(
        format!("transcribed {done:.1} of {total:.1} seconds of audio"),
        done,
        Some(total),
    )
}

/// One timed part of the transcript, for the details.
fn segment(part: &TranscriptSegment) -> oscova_core::serde_json::Value {
    json!({
        "start_seconds": seconds(part.start_seconds),
        "end_seconds": seconds(part.end_seconds),
        "text": part.text,
    })
}

/// Writes the audio; returns whether a file was replaced (blocking).
fn write_wav(
    root: &UserRoot,
    path: &str,
    wav: &[u8],
    overwrite: bool,
    create_dirs: bool,
) -> Result<bool, SpeechToolError> {
    // Not truncation unless asked: a file that appeared since the check is
    // not replaced.
    let mode = if overwrite {
        CreateMode::Truncate
    } else {
        CreateMode::New
    };
    let target = root.create_file(path, mode, create_dirs)?;
    let mut file = target.as_file();
    file.write_all(wav)
        .and_then(|()| file.flush())
        .map_err(SpeechToolError::io("write", path))?;
    Ok(target.existed())
}

/// Reads a regular file inside the root, refusing one over `limit` bytes
/// (blocking); returns its path relative to the root and its bytes.
fn read_audio(
    root: &UserRoot,
    path: &str,
    limit: u64,
) -> Result<(String, Vec<u8>), SpeechToolError> {
    let file = root.open_file(path)?;
    let too_large = |size: u64| SpeechToolError::AudioTooLarge {
        path: path.to_owned(),
        size,
        limit,
    };
    if file.size() > limit {
        return Err(too_large(file.size()));
    }
    // Capped while reading too: the file may grow after it was opened.
    let bytes = file.read_capped(limit).map_err(|e| match e {
        RootPathError::TooLarge { .. } => too_large(limit.saturating_add(1)),
        other => other.into(),
    })?;
    Ok((file.rel().to_owned(), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<String> {
        ["acme.beep", "flite", "openai"].map(String::from).to_vec()
    }

    fn local(key: &str) -> bool {
        key != "openai"
    }

    #[test]
    fn the_configured_provider_keeps_its_settings_and_credential() {
        let configured = SpeechProviderConfig::new("openai").endpoint("http://127.0.0.1:1");
        for asked in [None, Some("openai"), Some(" openai "), Some("")] {
            let c = choose(asked, &configured, Some("k"), "speaking", &keys(), local).unwrap();
            assert_eq!(*c.config, configured, "{asked:?}");
            assert_eq!(c.credential, Some("k"));
        }
    }

    #[test]
    fn a_local_provider_may_be_picked_bare_and_without_a_key() {
        let configured = SpeechProviderConfig::new("openai").endpoint("http://127.0.0.1:1");
        let c = choose(
            Some("flite"),
            &configured,
            Some("k"),
            "speaking",
            &keys(),
            local,
        )
        .unwrap();
        assert_eq!(*c.config, SpeechProviderConfig::new("flite"));
        assert_eq!(c.credential, None);
    }

    #[test]
    fn a_remote_or_unknown_provider_may_not_be_picked() {
        let configured = SpeechProviderConfig::new("flite");
        for asked in ["openai", "nope"] {
            let err = choose(Some(asked), &configured, None, "speaking", &keys(), local)
                .err()
                .unwrap();
            assert_eq!(
                err.to_string(),
                format!(
                    "speech provider `{asked}` is not set up for you for speaking; leave \
                     `provider` out to use `flite`, or pick one of: flite, acme.beep"
                )
            );
        }
    }
}
