//! `oscova speech say|hear|providers`.
//!
//! Rules: everything goes through the speech routers of the host
//! (`SpeechRouters::from_host`: the built-in flite, pocketsphinx, whisper
//! and OpenAI-compatible providers plus those of the loaded plugins; the same
//! routers the launcher gave the speech plugin, when it did), and their
//! diagnostics (providers dropped in a type-key collision) go to stderr.
//! The provider's configuration is the config's `[speech.say]` or
//! `[speech.hear]` when it is that provider's, with `--endpoint` (and for
//! `hear`, `--model`) laid over it. The checks run in an order that makes a refusal cheap and
//! harmless: first the route (unknown provider, and with `--offline` or
//! `[speech] offline` a non-local endpoint, refused before any file is
//! read or connection made), then the input (the text, the voice the
//! provider lists, the output folder for `say`, the audio file for `hear`),
//! and only then the provider. The API key is the user's credential
//! `<provider>.api_key`, as for model providers; errors are redacted with
//! the host's redactor. `say` writes the file only once the provider has
//! returned WAV audio, so a failure leaves an existing file as it was.
//! Ctrl-C cancels the request's token; the provider stops (flite is
//! killed, a connection dropped) and the command exits 130. For audio
//! longer than one 30-second window, `hear` shows the provider's progress
//! (seconds heard of the whole) on stderr, never stdout, which holds the
//! transcript alone: at a terminal one line redrawn in place and erased at
//! the end, else a line per update (whisper: before each window and at the
//! end), so a log shows how far a long file got.

mod list;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use oscova_core::fs::{FileError, FileKind, create_regular, read_regular};
use oscova_core::{CancellationToken, SecretString, ToolProgress, context::CredentialResolver};
use oscova_speech::{
    RecognitionProgress, RecognitionProgressSink, RecognitionRequest, SpeechError,
    SpeechProviderConfig, SpeechRouters, SynthesisRequest, wav::check_wav_header,
};
use serde_json::json;

use super::provider::api_key_credential;
use super::{Env, cancellable};
use crate::cli::{HearArgs, SayArgs, SpeechCommand, SpeechRouteArgs};
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_text, warn};
use crate::term::{ProgressLine, format_progress};

/// Audio longer than this (one Whisper window) shows its progress.
const PROGRESS_FROM_SECONDS: f64 = 30.0;

pub(super) async fn run(env: &Env, command: SpeechCommand) -> Result<ExitStatus, CliError> {
    let routers = routers(env);
    match command {
        SpeechCommand::Say(args) => say(env, &routers, args).await,
        SpeechCommand::Hear(args) => hear(env, &routers, args).await,
        SpeechCommand::Providers => list::providers(env, &routers),
    }
}

/// The host's speech routers service (the launcher registers one), else
/// routers built from the host; their warnings on stderr either way.
pub(super) fn routers(env: &Env) -> Arc<SpeechRouters> {
    let routers = env
        .host
        .service::<SpeechRouters>()
        .unwrap_or_else(|| Arc::new(SpeechRouters::from_host(&env.host)));
    for diagnostic in routers.diagnostics() {
        warn(&diagnostic.to_string());
    }
    routers
}

/// `--endpoint` over the configuration's, and whether offline operation is
/// required.
fn apply_route(env: &Env, config: &mut SpeechProviderConfig, route: &SpeechRouteArgs) -> bool {
    if let Some(endpoint) = route.endpoint.as_deref().map(str::trim) {
        config.endpoint = Some(endpoint.to_owned()).filter(|e| !e.is_empty());
    }
    route.offline || env.config.speech_offline()
}

/// The user's API key for `provider`, if one is configured.
fn api_key(env: &Env, user: Option<&str>, provider: &str) -> Option<SecretString> {
    let user = env.config.user(user);
    env.config
        .credentials()
        .resolve(&user, &api_key_credential(provider))
}

fn speech_error(env: &Env, error: SpeechError) -> CliError {
    CliError::from(error).redacted(&[env.host.redactor()])
}

/// The provider's result as the CLI's; `None` (a second Ctrl-C) is a
/// cancellation.
fn finish<T>(env: &Env, outcome: Option<Result<T, SpeechError>>) -> Result<T, CliError> {
    match outcome {
        Some(Ok(value)) => Ok(value),
        Some(Err(error)) => Err(speech_error(env, error)),
        None => Err(SpeechError::Cancelled.into()),
    }
}

async fn say(env: &Env, routers: &SpeechRouters, args: SayArgs) -> Result<ExitStatus, CliError> {
    let mut config = env.config.speech_synthesis(args.route.provider.as_deref());
    let offline = apply_route(env, &mut config, &args.route);
    let router = routers.synthesis();
    let provider = router
        .resolve(&config, offline, None)
        .map_err(|e| speech_error(env, e))?;
    if args.text.trim().is_empty() {
        return Err(SpeechError::InvalidText("there is nothing to say".into()).into());
    }
    let voice = args
        .voice
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty());
    check_voice(voice.or(config.voice.as_deref()), &provider.voices())?;
    check_output(&args.output)?;
    let key = api_key(env, args.user.user.as_deref(), &config.provider);
    let cancel = CancellationToken::new();
    let request = SynthesisRequest::new(&config, &args.text)
        .voice(voice)
        .api_key(key.as_ref())
        .offline(offline)
        .cancel(cancel.clone());
    let audio = finish(env, cancellable(router.synthesize(request), &cancel).await)?;
    let info = check_wav_header(&audio.wav).map_err(|reason| {
        speech_error(
            env,
            SpeechError::provider(format!(
                "speech provider `{}` returned audio that is not WAV: {reason}",
                config.provider
            )),
        )
    })?;
    // A regular file only, emptied once its handle is checked: `-o` naming a
    // FIFO must not block, nor a device be written.
    create_regular(&args.output)
        .map_err(std::io::Error::from)
        .and_then(|mut file| file.write_all(&audio.wav))
        .map_err(|source| CliError::Write {
            path: args.output.clone(),
            source,
        })?;
    let file = args.output.to_string_lossy();
    let bytes = audio.wav.len();
    let seconds = (info.duration_seconds * 1000.0).round() / 1000.0;
    if env.json {
        print_json(&json!({
            "provider": config.provider,
            "file": file,
            "bytes": bytes,
            "duration_seconds": seconds,
        }))?;
    } else {
        print_text(&format!(
            "{file}: {seconds:.2} s of speech, {bytes} bytes ({})",
            config.provider
        ))?;
    }
    Ok(ExitStatus::Success)
}

async fn hear(env: &Env, routers: &SpeechRouters, args: HearArgs) -> Result<ExitStatus, CliError> {
    let mut config = env
        .config
        .speech_recognition(args.route.provider.as_deref());
    let offline = apply_route(env, &mut config, &args.route);
    if let Some(model) = args
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        config.model = Some(model.to_owned());
    }
    let router = routers.recognition();
    router
        .resolve(&config, offline, None)
        .map_err(|e| speech_error(env, e))?;
    let (wav, seconds) = read_audio(&args.file)?;
    let key = api_key(env, args.user.user.as_deref(), &config.provider);
    let cancel = CancellationToken::new();
    let mut request = RecognitionRequest::new(&config, &wav)
        .api_key(key.as_ref())
        .offline(offline)
        .cancel(cancel.clone());
    let line = ProgressLine::on_stderr();
    if seconds > PROGRESS_FROM_SECONDS {
        request = request.progress(progress_on_stderr(line.as_ref()));
    }
    if args.route.provider.is_none()
        && let Some(hint) = env.config.speech_recognition_hint()
    {
        warn(&hint);
    }
    let outcome = cancellable(router.recognize(request), &cancel).await;
    if let Some(line) = &line {
        line.finish();
    }
    let transcript = finish(env, outcome)?;
    let redactor = env.host.redactor();
    let text = redactor.redact(&transcript.text).into_owned();
    if env.json {
        let mut doc = json!({"provider": config.provider, "text": text});
        if !transcript.segments.is_empty()
            && let Some(map) = doc.as_object_mut()
        {
            let segments: Vec<_> = transcript
                .segments
                .iter()
                .map(|s| {
                    json!({
                        "start_seconds": s.start_seconds,
                        "end_seconds": s.end_seconds,
                        "text": redactor.redact(&s.text),
                    })
                })
                .collect();
            map.insert("segments".into(), json!(segments));
        }
        print_json(&doc)?;
    } else if text.trim().is_empty() {
        warn("no words heard");
    } else {
        print_text(&text)?;
    }
    Ok(ExitStatus::Success)
}

/// Where `hear` shows a recognition's progress: the terminal's progress
/// line, else a line on stderr per update.
fn progress_on_stderr(line: Option<&ProgressLine>) -> RecognitionProgressSink {
    let as_tool = |p: RecognitionProgress| {
        let round = |s: f64| (s * 10.0).round() / 10.0;
        ToolProgress::ratio(
            "seconds of audio heard",
            round(p.seconds_done),
            Some(round(p.seconds_total)),
        )
    };
    match line {
        Some(line) => {
            let sink = line.sink();
            Arc::new(move |p| sink(as_tool(p)))
        }
        None => Arc::new(move |p| warn(&format_progress(&as_tool(p)))),
    }
}

/// A voice the provider does not list is refused before it runs; providers
/// that list none (remote services) accept any name.
fn check_voice(voice: Option<&str>, known: &[String]) -> Result<(), CliError> {
    match voice {
        Some(voice) if !known.is_empty() && !known.iter().any(|k| k == voice) => {
            Err(SpeechError::UnknownVoice {
                voice: voice.to_owned(),
                known: known.to_vec(),
            }
            .into())
        }
        _ => Ok(()),
    }
}

/// `say -o FILE` must name a file in an existing folder.
fn check_output(path: &Path) -> Result<(), CliError> {
    let refuse = |reason: String| CliError::File {
        path: path.to_path_buf(),
        reason,
    };
    if path.as_os_str().is_empty() {
        return Err(refuse("the file name is empty".into()));
    }
    if path.is_dir() {
        return Err(refuse("it is a folder; name a .wav file".into()));
    }
    // Refused before the provider runs; the write checks the handle again.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(refuse("it is not a regular file; name a .wav file".into()));
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !folder.is_dir() {
        return Err(refuse(format!(
            "the folder {} does not exist",
            folder.display()
        )));
    }
    Ok(())
}

/// The WAV file for `hear`: a regular file (checked on the opened handle,
/// so `/dev/zero` or a FIFO is refused at once), read whole with its size
/// capped while reading, then its header checked; with its length in
/// seconds.
pub(super) fn read_audio(path: &Path) -> Result<(Vec<u8>, f64), CliError> {
    let refuse = |reason: String| CliError::File {
        path: path.to_path_buf(),
        reason,
    };
    let limit = oscova_speech::wav::DEFAULT_MAX_AUDIO_BYTES;
    let wav = read_regular(path, limit).map_err(|e| {
        refuse(match e {
            FileError::NotRegular {
                kind: FileKind::Directory,
            } => "it is a folder, not a WAV file".into(),
            FileError::TooLarge { .. } => {
                format!("it is larger than {limit} bytes, the most `hear` reads")
            }
            other => other.to_string(),
        })
    })?;
    let info = check_wav_header(&wav)
        .map_err(|reason| refuse(format!("it is not a WAV file: {reason}")))?;
    Ok((wav, info.duration_seconds))
}
