//! `oscova voice`: a spoken conversation with the session agent
//! (`oscova_agent::session::voice`) from a WAV file or raw PCM, the
//! agent's voice to a WAV file or raw PCM.
//!
//! Rules: the session, its model, extensions and approval are `oscova chat
//! --session`'s; recognition and synthesis are the speech routers' with
//! the config's `[speech.hear]` and `[speech.say]` (flags over them; the
//! recognizer hears English unless `--language` or `[speech.hear]
//! language` says otherwise: `Config::voice_recognition`), and
//! offline when `--offline` or `[speech] offline` says so. A WAV input is
//! played in at the pace it was spoken (20 ms at a time); PCM on stdin is
//! taken as it comes. The output is the agent's voice only, frame after
//! frame as it was played (its silences between replies left out). What
//! happened goes to stderr, one line each: what the person said, what the
//! agent said, and what of it was heard when the person interrupted.

use std::io::{Read, Write};
use std::time::Duration;

use oscova_agent::session::agent::{AgentHost, AgentSessionOptions};
use oscova_agent::session::voice::{VoiceConversation, VoiceEvent, VoiceOptions, VoiceOutput};
use oscova_core::fs::create_regular;
use oscova_speech::voice::{TurnEnd, TurnOptions, VoiceModels};
use oscova_speech::wav::{Pcm16kMono, decode_wav, encode_wav};
use tokio::sync::mpsc;

use super::Env;
use super::provider::select_with_model;
use crate::cli::VoiceArgs;
use crate::error::{CliError, ExitStatus};
use crate::interact::TerminalInteraction;
use crate::output::warn;

/// Samples per piece of input: 20 ms at 16 kHz.
const PIECE: usize = 320;

pub(super) async fn run(env: &Env, args: VoiceArgs) -> Result<ExitStatus, CliError> {
    let selected = select_with_model(
        env,
        &args.provider,
        args.user.user.as_deref(),
        args.model.as_deref(),
    )?;
    let config = selected.config;
    let mut hear = env
        .config
        .voice_recognition(args.hear.as_deref(), args.language.as_deref());
    let mut say = env.config.speech_synthesis(args.say.as_deref());
    if let Some(voice) = args
        .voice
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        say.voice = Some(voice.to_owned());
    }
    let offline = selected.offline || env.config.speech_offline();
    let routers = super::speech::routers(env);
    hear.endpoint = hear.endpoint.filter(|e| !e.trim().is_empty());
    say.endpoint = say.endpoint.filter(|e| !e.trim().is_empty());
    // Refused before anything runs: an unknown key, or a provider that
    // leaves the machine when offline operation is required.
    routers.recognition().resolve(&hear, offline, None)?;
    routers.synthesis().resolve(&say, offline, None)?;
    let input = read_input(&args.input)?;
    let models = tokio::task::spawn_blocking(VoiceModels::load)
        .await
        .map_err(|e| CliError::Runtime(std::io::Error::other(e)))??;

    let mut turn =
        TurnOptions::default().with_min_speech(Duration::from_millis(args.min_speech_ms));
    if let Some(ms) = args.silence_ms {
        turn = turn.with_end(TurnEnd::Silence(Duration::from_millis(ms)));
    }
    let voice = VoiceOptions::default()
        .with_turn(turn)
        .with_recognition(hear)
        .with_synthesis(say)
        .with_offline(offline);
    let mut agents = AgentHost::builder(env.host.clone(), super::chat::store_of(env).await?)
        .model_with_key(config.clone(), selected.api_key.clone())
        .offline(selected.offline)
        .compaction(env.config.compaction().automatic());
    for extension in &env.extensions {
        agents = agents.add_extension_factory(extension.clone());
    }
    let agents = agents.build()?;
    let mut options =
        AgentSessionOptions::new().model(config.provider.to_string(), config.model.clone());
    if args.yes {
        options = options.interaction_handler(TerminalInteraction { yes: true });
    }
    let conversation = VoiceConversation::open(
        &agents,
        selected.user,
        &args.session,
        options,
        voice,
        models,
        routers,
    )
    .await?;

    let (frames, frames_rx) = mpsc::channel::<Vec<f32>>(64);
    let (output, mut out) = mpsc::channel::<VoiceOutput>(64);
    let running = tokio::spawn(conversation.run(frames_rx, output));
    let feeding = tokio::spawn(feed(input, frames));
    let mut voice_out = Vec::new();
    let mut stdout = (args.output.as_os_str() == "-").then(std::io::stdout);
    while let Some(item) = out.recv().await {
        match item {
            VoiceOutput::Audio(frame) => match &mut stdout {
                Some(stdout) => {
                    let bytes: Vec<u8> = frame.iter().flat_map(|s| s.to_le_bytes()).collect();
                    stdout
                        .write_all(&bytes)
                        .and_then(|()| stdout.flush())
                        .map_err(CliError::Output)?;
                }
                None => voice_out.extend(frame),
            },
            VoiceOutput::Event(event) => report(&event),
            _ => {}
        }
    }
    feeding
        .await
        .map_err(|e| CliError::Runtime(std::io::Error::other(e)))??;
    running
        .await
        .map_err(|e| CliError::Runtime(std::io::Error::other(e)))??;
    if stdout.is_none() {
        let wav = encode_wav(&Pcm16kMono { samples: voice_out });
        create_regular(&args.output)
            .map_err(std::io::Error::from)
            .and_then(|mut file| file.write_all(&wav))
            .map_err(|source| CliError::Write {
                path: args.output.clone(),
                source,
            })?;
    }
    Ok(ExitStatus::Success)
}

/// Where the person's voice comes from.
enum Input {
    /// A recording, played at its pace.
    Recorded(Vec<i16>),
    /// Raw PCM on stdin.
    Stdin,
}

fn read_input(path: &std::path::Path) -> Result<Input, CliError> {
    if path.as_os_str() == "-" {
        return Ok(Input::Stdin);
    }
    let (wav, _) = super::speech::read_audio(path)?;
    Ok(Input::Recorded(decode_wav(&wav)?.samples))
}

fn to_float(samples: &[i16]) -> Vec<f32> {
    samples.iter().map(|s| f32::from(*s) / 32768.0).collect()
}

/// Sends the person's voice into the conversation; closing `frames` ends
/// it.
async fn feed(input: Input, frames: mpsc::Sender<Vec<f32>>) -> Result<(), CliError> {
    match input {
        Input::Recorded(samples) => {
            let mut clock = tokio::time::interval(Duration::from_millis(20));
            for piece in samples.chunks(PIECE) {
                clock.tick().await;
                if frames.send(to_float(piece)).await.is_err() {
                    break;
                }
            }
            Ok(())
        }
        Input::Stdin => {
            let (tx, mut rx) = mpsc::channel::<std::io::Result<Vec<i16>>>(64);
            std::thread::spawn(move || {
                let mut stdin = std::io::stdin().lock();
                let mut buffer = vec![0u8; PIECE * 2];
                loop {
                    let read = match stdin.read(&mut buffer) {
                        Ok(0) => return,
                        Ok(n) => n - n % 2,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.blocking_send(Err(e));
                            return;
                        }
                    };
                    let samples = buffer[..read]
                        .chunks_exact(2)
                        .map(|b| i16::from_le_bytes([b[0], b[1]]))
                        .collect();
                    if tx.blocking_send(Ok(samples)).is_err() {
                        return;
                    }
                }
            });
            while let Some(samples) = rx.recv().await {
                let samples = samples.map_err(CliError::Input)?;
                if frames.send(to_float(&samples)).await.is_err() {
                    break;
                }
            }
            Ok(())
        }
    }
}

/// One line on stderr for what a person would want to see.
fn report(event: &VoiceEvent) {
    let line = match event {
        VoiceEvent::Transcript { text } if !text.is_empty() => format!("you: {text}"),
        VoiceEvent::ReplyFinished { heard } => format!("agent: {heard}"),
        VoiceEvent::Interrupted { heard } => format!("agent (interrupted): {heard}"),
        VoiceEvent::RecognitionFailed { error } => format!("could not hear that turn: {error}"),
        VoiceEvent::SpeechFailed { sentence, error } => {
            format!("could not say {sentence:?}: {error}")
        }
        VoiceEvent::RunFailed { error } => format!("the agent failed: {error}"),
        _ => return,
    };
    let line = crate::output::redacted(&line);
    warn(&crate::term::one_line(&line));
}
