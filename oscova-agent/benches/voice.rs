//! The voice loop's latency, as a person would feel it.
//!
//! Run with: `cargo bench -p oscova-agent --features voice --bench voice`
//! (needs `scripts/ensure-voice-models.sh`, `scripts/ensure-whisper-model.sh`,
//! the synthesizer's voice and the LibriVox clips of
//! `scripts/ensure-system-packages.sh`).
//!
//! Plays each of the five LibriVox sentences into a `VoiceConversation` at
//! real-time pace (half a second of silence before, silence after until
//! the answer has been spoken), with `VoiceOptions`' defaults as `oscova
//! voice` has them: Smart Turn ending the turns, whisper (its default
//! model, in English) hearing them from the moment the person goes quiet,
//! and the conversation's default synthesizer (`kokoro`, Kokoro-82M)
//! speaking; a scripted model answers at once, so the speech path alone
//! is measured. Variables change that: `OSCOVA_VOICE_BENCH_MODEL`
//! (`llamacpp`: the embedded local model, `qwen2.5-coder-0.5b` from
//! `scripts/ensure-llamacpp-model.sh`, loaded and asked once before the
//! first turn, answers instead), `OSCOVA_VOICE_BENCH_SAY` (the
//! synthesizer's key, its default voice: `piper` for en_US-joe-medium),
//! `OSCOVA_VOICE_BENCH_HEAR_MODEL` (the whisper model),
//! `OSCOVA_VOICE_BENCH_HEAR_LANGUAGE` (its language; `auto` detects it at
//! each turn), `OSCOVA_VOICE_BENCH_HEAR_THREADS` (whisper's `threads`),
//! `OSCOVA_VOICE_BENCH_PARTIALS` (`1`: partial transcripts from a
//! recognition stream, `VoiceOptions::partials`),
//! `OSCOVA_VOICE_BENCH_PAUSE_MS` (the pause after which Smart Turn is
//! asked) and `OSCOVA_VOICE_BENCH_QUIET_MS` (the silence after which the
//! turn so far is recognized speculatively). Per turn it reports, from
//! the end of the person's speech (where the VAD put it, on the input's
//! clock): the turn's end, the final transcript, the model's first token
//! and the agent's first audio frame. Two of the five clips are read
//! flatly enough that Smart Turn calls them unfinished: the 2 s silence
//! ends those, so the median is the slowest of the other three. Then five
//! barge-ins: the same sentence spoken over a long answer one second into
//! it, from the moment the person's speech counts as speech
//! (`SpeechStarted`) to the agent's last audio frame. Medians last, with
//! the budgets (end of speech to first audio at most 800 ms, barge-in to
//! silence at most 200 ms). A local model's answer is its own: a barge-in
//! over an answer spoken in under a second is reported as not made.
//!
//! Without `--bench` (as `cargo test --all-targets` runs it) it plays one
//! turn and one barge-in, a smoke test that the harness still works.
#![allow(missing_docs)] // bench fixtures

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_agent::session::MemoryStore;
use oscova_agent::session::agent::{AgentEvent, AgentHost, AgentSessionOptions};
use oscova_agent::session::voice::{VoiceConversation, VoiceEvent, VoiceOptions, VoiceOutput};
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatStreamEvent, ModelError, ModelProvider,
    ModelProviderConfig,
};
use oscova_core::provider::speech::SpeechProviderConfig;
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_speech::SpeechRouters;
use oscova_speech::voice::VoiceModels;
use oscova_test_support::librivox::clips;
use tokio::sync::mpsc;

const SHORT: &str = "Yes, I heard you. That is a fine sentence.";
const LONG: &str = "Let me tell you the whole story from the beginning. John Dashwood \
     promised his father on his deathbed to look after his sisters. His wife talked him out of \
     every promise. By the end he gave them nothing at all.";

/// Answers at once, streaming word by word: the reply set for the turn.
pub struct Scripted(Arc<Mutex<String>>);

impl ModelProvider for Scripted {
    fn type_key(&self) -> ProviderTypeKey {
        "scripted".into()
    }
    fn display_name(&self) -> &str {
        "Scripted"
    }
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let text = self.0.lock().unwrap().clone();
            if let Some(sink) = request.stream {
                for piece in text.split_inclusive(' ') {
                    sink(ChatStreamEvent::Text(piece.to_owned()));
                }
            }
            Ok(ChatResponse {
                message: ChatMessage::assistant(text, vec![]),
                finish_reason: Some("stop".into()),
                usage: None,
            })
        })
    }
}

#[plugin(id = "bench.voice")]
#[derive(Default)]
pub struct BenchPlugin {
    reply: Arc<Mutex<String>>,
}

impl AgentPlugin for BenchPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let reply = self.reply.clone();
        builder.add_model_provider(move |_: &oscova_core::ProviderContext| Scripted(reply.clone()));
    }
}

/// Wall-clock moments of one run.
#[derive(Default)]
struct Moments {
    events: Vec<(Instant, VoiceEvent)>,
    frames: Vec<Instant>,
    tokens: Vec<Instant>,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn samples(wav: &[u8]) -> Vec<f32> {
    oscova_speech::wav::decode_wav(wav)
        .unwrap()
        .samples
        .iter()
        .map(|s| f32::from(*s) / 32768.0)
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let knob = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut options = VoiceOptions::default().with_offline(true);
    if let Some(say) = knob("OSCOVA_VOICE_BENCH_SAY") {
        options = options.with_synthesis(SpeechProviderConfig::new(say.as_str()));
    }
    if let Some(model) = knob("OSCOVA_VOICE_BENCH_HEAR_MODEL") {
        let hear = options.recognition.clone().model(model);
        options = options.with_recognition(hear);
    }
    if let Some(language) = knob("OSCOVA_VOICE_BENCH_HEAR_LANGUAGE") {
        let hear = options.recognition.clone().language(language);
        options = options.with_recognition(hear);
    }
    if let Some(threads) = knob("OSCOVA_VOICE_BENCH_HEAR_THREADS") {
        let threads: u64 = threads
            .parse()
            .expect("OSCOVA_VOICE_BENCH_HEAR_THREADS: a number");
        let hear = options.recognition.clone().option("threads", threads);
        options = options.with_recognition(hear);
    }
    if let Some(partials) = knob("OSCOVA_VOICE_BENCH_PARTIALS") {
        options = options.with_partials(partials == "1");
    }
    if let Some(ms) = knob("OSCOVA_VOICE_BENCH_PAUSE_MS") {
        let pause = Duration::from_millis(ms.parse().expect("OSCOVA_VOICE_BENCH_PAUSE_MS: ms"));
        let turn = options.turn.with_pause(pause);
        options = options.with_turn(turn);
    }
    if let Some(ms) = knob("OSCOVA_VOICE_BENCH_QUIET_MS") {
        let quiet = Duration::from_millis(ms.parse().expect("OSCOVA_VOICE_BENCH_QUIET_MS: ms"));
        let turn = options.turn.with_quiet(quiet);
        options = options.with_turn(turn);
    }
    let say = format!(
        "{} {} ({}), {} {}, quiet {} ms, pause {} ms",
        options.recognition.provider,
        options
            .recognition
            .model
            .as_deref()
            .unwrap_or("(default model)"),
        options
            .recognition
            .language
            .as_deref()
            .unwrap_or("no language"),
        options.synthesis.provider,
        options
            .synthesis
            .voice
            .as_deref()
            .unwrap_or("(default voice)"),
        options.turn.quiet.as_millis(),
        options.turn.pause.as_millis(),
    );
    let local = match knob("OSCOVA_VOICE_BENCH_MODEL").as_deref() {
        None | Some("scripted") => false,
        Some("llamacpp") => true,
        Some(other) => panic!("OSCOVA_VOICE_BENCH_MODEL: `scripted` or `llamacpp`, not `{other}`"),
    };
    let turns = if std::env::args().any(|a| a == "--bench") {
        5
    } else {
        1
    };
    let reply = Arc::new(Mutex::new(SHORT.to_owned()));
    let mut plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(BenchPlugin {
            reply: reply.clone(),
        });
    if local {
        plugins = plugins.plugin_instance(oscova_plugin_llamacpp::LlamaCppPlugin);
    }
    let plugins = plugins.build().unwrap();
    let routers = Arc::new(SpeechRouters::from_host(&plugins));
    let model = if local {
        let mut model = ModelProviderConfig::new("llamacpp");
        model.model = Some(oscova_plugin_llamacpp::DEFAULT_MODEL.into());
        let provider = oscova_agent::chat::model_provider(&plugins, "llamacpp").unwrap();
        let hello = [ChatMessage::user("Hello.")];
        provider
            .chat(ChatRequest {
                config: &model,
                api_key: None,
                model: oscova_plugin_llamacpp::DEFAULT_MODEL,
                messages: &hello,
                tools: &[],
                stream: None,
                cancel: oscova_core::CancellationToken::new(),
            })
            .await
            .expect("the local model (scripts/ensure-llamacpp-model.sh)");
        model
    } else {
        let mut model = ModelProviderConfig::new("scripted");
        model.model = Some("m".into());
        model
    };
    let say = format!("{} model, {say}", model.provider);
    let agents = AgentHost::builder(plugins, Arc::new(MemoryStore::new()))
        .model(model)
        .build()
        .unwrap();
    let moments = Arc::new(Mutex::new(Moments::default()));
    let tokens = moments.clone();
    let session = AgentSessionOptions::new().on_event(move |e| {
        if let AgentEvent::Text(_) = e {
            tokens.lock().unwrap().tokens.push(Instant::now());
        }
    });
    let conversation = VoiceConversation::open(
        &agents,
        UserInfo::new("bench"),
        "voice",
        session,
        options,
        VoiceModels::load().expect("scripts/ensure-voice-models.sh"),
        routers,
    )
    .await
    .unwrap();
    let (input, frames) = mpsc::channel(64);
    let (output, mut out) = mpsc::channel(64);
    let running = tokio::spawn(conversation.run(frames, output));
    let listening = tokio::spawn({
        let moments = moments.clone();
        async move {
            while let Some(item) = out.recv().await {
                let mut m = moments.lock().unwrap();
                match item {
                    VoiceOutput::Audio(_) => m.frames.push(Instant::now()),
                    VoiceOutput::Event(e) => m.events.push((Instant::now(), e)),
                    _ => {}
                }
            }
        }
    });

    let mut clock = tokio::time::interval(Duration::from_millis(20));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut play = async |audio: &[f32]| {
        for piece in audio.chunks(320) {
            clock.tick().await;
            input.send(piece.to_vec()).await.unwrap();
        }
    };
    let silence = vec![0f32; 320];
    let finished = |m: &Moments| {
        m.events
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e,
                    VoiceEvent::ReplyFinished { .. } | VoiceEvent::Interrupted { .. }
                )
            })
            .count()
    };
    let all: Vec<_> = clips().into_iter().take(turns).collect();
    println!("turn  end of speech → turn end | transcript | first token | first audio (ms)");
    let mut rows = Vec::new();
    for (i, clip) in all.iter().enumerate() {
        *reply.lock().unwrap() = SHORT.to_owned();
        let before = finished(&moments.lock().unwrap());
        let speech = samples(&clip.wav);
        play(&vec![0.0; 8_000]).await;
        play(&speech).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while finished(&moments.lock().unwrap()) == before {
            if Instant::now() > deadline {
                let m = moments.lock().unwrap();
                let recent: Vec<_> = m.events.iter().rev().take(12).map(|(_, e)| e).collect();
                panic!("turn {i}: no answer within a minute; latest events: {recent:?}");
            }
            play(&silence).await;
        }
        let m = moments.lock().unwrap();
        let ended = m
            .events
            .iter()
            .rev()
            .find_map(|(at, e)| match e {
                VoiceEvent::TurnEnded { at: speech_end } => Some((*at, *speech_end)),
                _ => None,
            })
            .unwrap();
        let (turn_end, speech_end) = ended;
        let speech_end = started + speech_end;
        let transcript = m
            .events
            .iter()
            .find(|(at, e)| *at >= turn_end && matches!(e, VoiceEvent::Transcript { .. }))
            .map(|(at, _)| *at)
            .unwrap();
        let token = m
            .tokens
            .iter()
            .copied()
            .find(|at| *at >= transcript)
            .unwrap();
        let audio = m
            .frames
            .iter()
            .copied()
            .find(|at| *at >= transcript)
            .unwrap();
        let ms = |at: Instant| at.saturating_duration_since(speech_end).as_secs_f64() * 1000.0;
        let row = [ms(turn_end), ms(transcript), ms(token), ms(audio)];
        println!(
            "{i}     {:>8.0} | {:>8.0} | {:>8.0} | {:>8.0}",
            row[0], row[1], row[2], row[3]
        );
        rows.push(row);
    }

    println!("barge-in  speech counted → audio stopped (ms)");
    let mut cuts = Vec::new();
    for (i, clip) in all.iter().enumerate() {
        *reply.lock().unwrap() = LONG.to_owned();
        let speech = samples(&clip.wav);
        let (before, start) = {
            let m = moments.lock().unwrap();
            (finished(&m), m.events.len())
        };
        play(&vec![0.0; 8_000]).await;
        play(&speech).await;
        // Until the agent has spoken for a second, answering this turn.
        let deadline = Instant::now() + Duration::from_secs(60);
        let long_enough = loop {
            assert!(
                Instant::now() < deadline,
                "barge-in {i}: the agent did not speak within a minute"
            );
            let (spoken, done) = {
                let m = moments.lock().unwrap();
                let transcript = m.events[start..]
                    .iter()
                    .find(|(_, e)| matches!(e, VoiceEvent::Transcript { .. }))
                    .map(|(at, _)| *at);
                let spoken = transcript.map_or(0, |t| m.frames.iter().filter(|f| **f >= t).count());
                (spoken, finished(&m) > before)
            };
            if spoken >= 50 {
                break true;
            }
            if done {
                // A local model's answer, spoken in under a second.
                break false;
            }
            play(&silence).await;
        };
        if !long_enough {
            println!("{i}         (answered in under a second: no barge-in)");
            continue;
        }
        play(&speech).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while finished(&moments.lock().unwrap()) < before + 2 {
            if Instant::now() > deadline {
                let m = moments.lock().unwrap();
                let recent: Vec<_> = m.events.iter().rev().take(12).map(|(_, e)| e).collect();
                panic!(
                    "barge-in {i}: no answer to the interrupting turn; latest events: {recent:?}"
                );
            }
            play(&silence).await;
        }
        let m = moments.lock().unwrap();
        let cut = m
            .events
            .iter()
            .rev()
            .find(|(_, e)| matches!(e, VoiceEvent::Interrupted { .. }))
            .map(|(at, _)| *at)
            .expect("the answer was interrupted");
        let counted = m
            .events
            .iter()
            .rev()
            .find(|(at, e)| *at <= cut && matches!(e, VoiceEvent::SpeechStarted { .. }))
            .map(|(at, _)| *at)
            .unwrap();
        let last = m
            .frames
            .iter()
            .copied()
            .filter(|f| *f <= cut)
            .max()
            .unwrap();
        let stopped = last.saturating_duration_since(counted).as_secs_f64() * 1000.0;
        println!("{i}         {stopped:>8.0}");
        cuts.push(stopped);
    }
    drop(input);
    running.await.unwrap().unwrap();
    listening.await.unwrap();

    let column = |k: usize| median(rows.iter().map(|r| r[k]).collect());
    println!(
        "median ({say}): turn end {:.0} ms, transcript {:.0} ms, first token {:.0} ms, first audio {:.0} ms (budget 800, goal 500); barge-in → silence {:.0} ms (budget 200)",
        column(0),
        column(1),
        column(2),
        column(3),
        if cuts.is_empty() {
            f64::NAN
        } else {
            median(cuts)
        }
    );
}
