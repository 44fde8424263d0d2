//! A spoken conversation end to end (`session::voice`): recorded turns
//! (LibriVox clips) played in at real-time pace, Silero VAD and a silence
//! to end each turn, Whisper recognizing, a scripted model answering,
//! flite speaking, and the person interrupting the first answer; an
//! extension on the session records the `voice_*` events and rewrites
//! each spoken prompt through the `input` event. Needs
//! the voice models (`scripts/ensure-voice-models.sh`), the Whisper model
//! (`scripts/ensure-whisper-model.sh`), flite and the clips
//! (`scripts/ensure-system-packages.sh`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_agent::session::agent::{
    AgentError, AgentHost, AgentSession, AgentSessionOptions, Extension, InputEvent, SessionApi,
    VoiceInterruptedEvent, VoicePartialEvent, VoiceSpeechStartedEvent, VoiceSpeechStoppedEvent,
    VoiceTranscriptEvent, VoiceTurnEndEvent, VoiceTurnEndReason,
};
use oscova_agent::session::voice::{
    VOICE_INTERRUPTED, VoiceConversation, VoiceEvent, VoiceOptions, VoiceOutput,
};
use oscova_agent::session::{AgentMessage, EntryId, EntryKind, MemoryStore, Session, SessionStore};
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, ModelError, ModelProvider,
    ModelProviderConfig,
};
use oscova_core::provider::speech::SpeechProviderConfig;
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use oscova_speech::SpeechRouters;
use oscova_speech::voice::{TurnEnd, TurnOptions, VoiceModels};
use oscova_test_support::librivox::{clips, score};
use tokio::sync::mpsc;

/// Answers in turn, writing a word every `pace` (slow enough to be
/// interrupted mid-answer when `pace` is long); records what it was sent.
#[derive(Default)]
pub struct Writer {
    replies: Mutex<Vec<String>>,
    seen: Mutex<Vec<Vec<ChatMessage>>>,
    pace: Duration,
    calls: AtomicUsize,
}

/// The plugin giving the host the writer.
#[plugin(id = "test.voice")]
#[derive(Default)]
pub struct VoicePlugin {
    writer: Arc<Writer>,
}

impl AgentPlugin for VoicePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let writer = self.writer.clone();
        builder.add_model_provider(move |_: &oscova_core::ProviderContext| {
            WriterHandle(writer.clone())
        });
    }
}

/// The writer as the host's model provider.
struct WriterHandle(Arc<Writer>);

impl ModelProvider for WriterHandle {
    fn type_key(&self) -> ProviderTypeKey {
        "writer".into()
    }

    fn display_name(&self) -> &str {
        "Writer"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            self.0.calls.fetch_add(1, Ordering::SeqCst);
            self.0.seen.lock().unwrap().push(request.messages.to_vec());
            let text = {
                let mut replies = self.0.replies.lock().unwrap();
                if replies.is_empty() {
                    return Err(ModelError::Other("script ended".into()));
                }
                replies.remove(0)
            };
            if let Some(sink) = request.stream {
                for piece in text.split_inclusive(' ') {
                    tokio::time::sleep(self.0.pace).await;
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

const FIRST_REPLY: &str = "Yes, he was not. John Dashwood meant well by his sisters. His wife \
     talked him out of every promise he made to his father. By the end he gave them nothing at \
     all. That is how the story begins.";
const SECOND_REPLY: &str = "Perhaps he might.";

fn samples(wav: &[u8]) -> Vec<f32> {
    hound::WavReader::new(wav)
        .unwrap()
        .into_samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect()
}

/// What the test heard: the events and audio frames with when they came,
/// and what the extension saw.
#[derive(Default)]
struct Heard {
    /// The clip of the first turn.
    first: usize,
    events: Vec<(Instant, VoiceEvent)>,
    frames: Vec<Instant>,
    seen: Vec<Seen>,
}

/// What the recording extension saw, in the order it saw it.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Started(u64),
    Stopped(u64),
    TurnEnd(u64, VoiceTurnEndReason),
    /// A partial transcript: its committed text and tentative tail.
    Partial(String, String),
    Transcript(String, u64),
    Interrupted {
        at: u64,
        heard: String,
        entry: EntryId,
        /// What the session's interruption mark for `entry` held when the
        /// handler ran.
        kept: Option<String>,
    },
    /// The `input` event's text, as it came.
    Input(String),
}

/// What the extension puts before every prompt it gets.
const REWRITE: &str = "(spoken) ";

/// Records the voice events; its speech-stopped handler fails every time
/// (the conversation must go on); it rewrites every prompt.
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    fn on<E, F>(&self, api: &SessionApi, record: F)
    where
        E: oscova_agent::session::agent::Event,
        F: Fn(&E) -> Seen + Send + Sync + 'static,
    {
        let (seen, record) = (self.0.clone(), Arc::new(record));
        api.on(move |event: E, _| {
            let (seen, record) = (seen.clone(), record.clone());
            async move {
                seen.lock().unwrap().push(record(&event));
                Ok(event)
            }
        });
    }
}

impl Extension for Recorder {
    fn name(&self) -> &str {
        "voice-recorder"
    }

    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
        self.on(api, |e: &VoiceSpeechStartedEvent| Seen::Started(e.at_ms));
        self.on(api, |e: &VoicePartialEvent| {
            Seen::Partial(e.committed.clone(), e.tentative.clone())
        });
        self.on(api, |e: &VoiceTurnEndEvent| {
            Seen::TurnEnd(e.at_ms, e.reason)
        });
        self.on(api, |e: &VoiceTranscriptEvent| {
            Seen::Transcript(e.text.clone(), e.turn_end_ms)
        });
        let seen = self.0.clone();
        api.on(move |e: VoiceSpeechStoppedEvent, _| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(Seen::Stopped(e.at_ms));
                Err(AgentError::Handler("refused on purpose".into()))
            }
        });
        let seen = self.0.clone();
        api.on(move |e: VoiceInterruptedEvent, ctx| {
            let seen = seen.clone();
            async move {
                let entry = e.entry_id.to_string();
                let kept = ctx.branch().await?.into_iter().find_map(|x| match x.kind {
                    EntryKind::Custom {
                        custom_type,
                        data: Some(data),
                    } if custom_type == VOICE_INTERRUPTED && data["entryId"] == entry.as_str() => {
                        data["heard"].as_str().map(str::to_owned)
                    }
                    _ => None,
                });
                seen.lock().unwrap().push(Seen::Interrupted {
                    at: e.at_ms,
                    heard: e.heard.clone(),
                    entry: e.entry_id.clone(),
                    kept,
                });
                Ok(e)
            }
        });
        let seen = self.0.clone();
        api.on(move |mut e: InputEvent, _| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(Seen::Input(e.text.clone()));
                e.text = format!("{REWRITE}{}", e.text);
                Ok(e)
            }
        });
        Ok(())
    }
}

/// Plays the first clip, waits until the agent has spoken for `into`,
/// plays the second over it, then waits for the second answer to end;
/// turns end as `end` says; the first turn is clip `first`.
async fn converse(
    pace: Duration,
    into: Duration,
    end: TurnEnd,
    first_clip: usize,
) -> (Heard, Arc<Writer>, Arc<dyn SessionStore>, AgentSession) {
    let models = VoiceModels::load().unwrap_or_else(|e| {
        panic!("the voice models are needed: {e} (run scripts/ensure-voice-models.sh)")
    });
    let writer = Arc::new(Writer {
        replies: Mutex::new(vec![FIRST_REPLY.to_owned(), SECOND_REPLY.to_owned()]),
        seen: Mutex::default(),
        pace,
        calls: AtomicUsize::new(0),
    });
    let plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(VoicePlugin {
            writer: writer.clone(),
        })
        .build()
        .unwrap();
    let routers = Arc::new(SpeechRouters::from_host(&plugins));
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let agents = AgentHost::builder(plugins, store.clone())
        .model({
            let mut config = ModelProviderConfig::new("writer");
            config.model = Some("w1".into());
            config
        })
        .build()
        .unwrap();
    let options = VoiceOptions::default()
        .with_turn(TurnOptions::default().with_end(end))
        // Whisper's stream re-hears the turn every half second (not every
        // second), so a loaded machine still gives the short turns a
        // partial transcript or two.
        .with_partials(true)
        .with_recognition(
            SpeechProviderConfig::new("whisper")
                .option("stream_step_ms", 500)
                .option("threads", 1),
        )
        .with_synthesis(SpeechProviderConfig::new("flite").voice("kal16"))
        .with_offline(true);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = seen.clone();
    let conversation = VoiceConversation::open(
        &agents,
        UserInfo::new("alice"),
        "voice",
        AgentSessionOptions::new().extension_with(move || Recorder(recorder.clone())),
        options,
        models,
        routers,
    )
    .await
    .unwrap();

    let all = clips();
    let (first, second) = (samples(&all[first_clip].wav), samples(&all[4].wav));
    let (input, frames) = mpsc::channel(64);
    let (output, mut out) = mpsc::channel(64);
    let running = tokio::spawn(conversation.run(frames, output));

    let heard = Arc::new(Mutex::new(Heard {
        first: first_clip,
        ..Heard::default()
    }));
    let spoken = Arc::new(AtomicUsize::new(0));
    let listening = tokio::spawn({
        let (heard, spoken) = (heard.clone(), spoken.clone());
        async move {
            while let Some(item) = out.recv().await {
                let mut heard = heard.lock().unwrap();
                match item {
                    VoiceOutput::Audio(frame) => {
                        spoken.fetch_add(frame.len(), Ordering::SeqCst);
                        heard.frames.push(Instant::now());
                    }
                    VoiceOutput::Event(event) => heard.events.push((Instant::now(), event)),
                    _ => {}
                }
            }
        }
    });

    // 20 ms pieces at the pace they are spoken.
    let mut clock = tokio::time::interval(Duration::from_millis(20));
    let mut play = async |audio: &[f32]| {
        for piece in audio.chunks(320) {
            clock.tick().await;
            input.send(piece.to_vec()).await.unwrap();
        }
    };
    let silence = vec![0f32; 320];
    play(&vec![0.0; 8_000]).await;
    play(&first).await;
    // Silence until the agent has spoken for `into`, then the second turn
    // over it.
    let into_samples = (into.as_secs_f64() * 16_000.0) as usize;
    let deadline = Instant::now() + Duration::from_secs(60);
    while spoken.load(Ordering::SeqCst) < into_samples {
        assert!(
            Instant::now() < deadline,
            "the agent never spoke: {:?}",
            heard.lock().unwrap().events
        );
        play(&silence).await;
    }
    play(&second).await;
    // Silence until the second answer has been spoken, and a little more.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let finished = heard
            .lock()
            .unwrap()
            .events
            .iter()
            .any(|(_, e)| matches!(e, VoiceEvent::ReplyFinished { .. }));
        if finished {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second answer never finished"
        );
        play(&silence).await;
    }
    play(&vec![0.0; 8_000]).await;
    drop(input);
    let session = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("the conversation ends with its input")
        .unwrap()
        .unwrap();
    listening.await.unwrap();
    let mut heard = Arc::try_unwrap(heard).ok().unwrap().into_inner().unwrap();
    heard.seen = seen.lock().unwrap().clone();
    (heard, writer, store, session)
}

fn transcripts(heard: &Heard) -> Vec<String> {
    heard
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            VoiceEvent::Transcript { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn interrupted(heard: &Heard) -> (Instant, String) {
    let found: Vec<_> = heard
        .events
        .iter()
        .filter_map(|(at, e)| match e {
            VoiceEvent::Interrupted { heard } => Some((*at, heard.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "{:?}", heard.events);
    found[0].clone()
}

/// Checks what every run of the conversation shares, and returns what
/// was heard of the first answer.
fn check_turns(heard: &Heard, writer: &Writer) -> String {
    let all = clips();
    let said = transcripts(heard);
    assert_eq!(said.len(), 2, "one transcript per turn: {said:?}");
    let (mut errors, mut words) = (0, 0);
    for (text, clip) in said.iter().zip([&all[heard.first], &all[4]]) {
        let (e, w) = score(&clip.reference, text);
        errors += e;
        words += w;
    }
    assert!(
        errors * 10 <= words,
        "{errors} word errors in {words} words: heard {said:?}"
    );
    assert_eq!(writer.calls.load(Ordering::SeqCst), 2, "one reply per turn");
    // The barge-in: the audio stops within 200 ms of the person's speech
    // being recognised as speech, and no frame of the first answer comes
    // after the interruption.
    let started = heard
        .events
        .iter()
        .filter(|(_, e)| matches!(e, VoiceEvent::SpeechStarted { .. }))
        .map(|(at, _)| *at)
        .nth(1)
        .expect("the second turn's speech");
    let (cut, words) = interrupted(heard);
    let second_transcript = heard
        .events
        .iter()
        .filter(|(_, e)| matches!(e, VoiceEvent::Transcript { .. }))
        .map(|(at, _)| *at)
        .nth(1)
        .unwrap();
    let last_before = heard
        .frames
        .iter()
        .filter(|at| **at < second_transcript)
        .max()
        .copied()
        .unwrap();
    assert!(
        last_before <= cut
            && last_before.saturating_duration_since(started) <= Duration::from_millis(200),
        "the agent's audio went on {:?} after the barge-in",
        last_before.saturating_duration_since(started)
    );
    assert!(!words.is_empty(), "something of the first answer was heard");
    assert!(
        FIRST_REPLY.starts_with(words.trim_end_matches('.')) && words.len() < FIRST_REPLY.len(),
        "{words:?}"
    );
    let finished: Vec<String> = heard
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            VoiceEvent::ReplyFinished { heard } => Some(heard.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, [SECOND_REPLY]);
    words
}

/// The second model call's context: what the person heard of the first
/// answer stands for it.
fn check_context(writer: &Writer, words: &str) {
    let seen = writer.seen.lock().unwrap();
    let answers: Vec<&ChatMessage> = seen[1]
        .iter()
        .filter(|m| m.role == ChatRole::Assistant)
        .collect();
    assert_eq!(answers.len(), 1, "{:?}", seen[1]);
    assert_eq!(answers[0].content, words);
}

/// What the extension saw: each turn's speech started, stopped, its end
/// (the silence, as configured) and its transcript, in that order and at
/// the loop's own times; one interruption, at the second turn's start,
/// carrying what was heard as the stored mark keeps it; every spoken
/// prompt through `input`, rewritten there, and the model given the
/// rewrite; the failing handler reported and the conversation unbroken.
fn check_extension(
    heard: &Heard,
    writer: &Writer,
    session: &AgentSession,
    words: &str,
    end: TurnEnd,
) {
    let seen = &heard.seen;
    let ms = |at: &Duration| u64::try_from(at.as_millis()).unwrap();
    let turn_ends: Vec<(usize, u64)> = seen
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Seen::TurnEnd(at, _) => Some((i, *at)),
            _ => None,
        })
        .collect();
    let verdicts: Vec<VoiceTurnEndReason> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::TurnEnd(_, reason) => Some(*reason),
            _ => None,
        })
        .collect();
    match end {
        // A plain silence never asks Smart Turn.
        TurnEnd::Silence(_) => assert!(
            verdicts.iter().all(|r| *r == VoiceTurnEndReason::Silence),
            "{seen:?}"
        ),
        // Whole sentences: Smart Turn ends the first turn (a clip it
        // hears as complete) at its pause, before the longest silence.
        _ => assert!(
            verdicts.iter().any(|r| matches!(
                r,
                VoiceTurnEndReason::SmartTurn { probability } if *probability > 0.5
            )),
            "no turn ended on Smart Turn's verdict: {seen:?}"
        ),
    }
    check_partials(heard);
    let looped: Vec<u64> = heard
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            VoiceEvent::TurnEnded { at } => Some(ms(at)),
            _ => None,
        })
        .collect();
    assert_eq!(
        turn_ends.iter().map(|(_, at)| *at).collect::<Vec<_>>(),
        looped,
        "one turn end per turn, at the loop's times: {seen:?}"
    );
    let said: Vec<(usize, String, u64)> = seen
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Seen::Transcript(text, end) => Some((i, text.clone(), *end)),
            _ => None,
        })
        .collect();
    assert_eq!(
        said.iter().map(|(_, t, _)| t.clone()).collect::<Vec<_>>(),
        transcripts(heard),
        "one transcript per turn, the loop's (scored above): {seen:?}"
    );
    let mut after = 0;
    for ((end_at, end), (text_at, _, of)) in turn_ends.iter().zip(&said) {
        assert_eq!(of, end, "the transcript names its turn's end");
        let turn = &seen[after..*end_at];
        let started = turn.iter().position(|s| matches!(s, Seen::Started(_)));
        let stopped = turn.iter().rposition(|s| matches!(s, Seen::Stopped(_)));
        let (Some(started), Some(stopped)) = (started, stopped) else {
            panic!("a turn without speech started and stopped: {seen:?}");
        };
        let (Seen::Started(began), Seen::Stopped(paused)) = (&turn[started], &turn[stopped]) else {
            unreachable!()
        };
        assert!(
            started < stopped && began < paused && paused <= end && end_at < text_at,
            "speech started < stopped <= turn end < transcript: {seen:?}"
        );
        after = end_at + 1;
    }
    // One interruption, dispatched after the barge-in's speech started
    // and before that turn ended, at its start, holding what was heard
    // and what the session's mark keeps.
    let interruptions: Vec<(usize, &Seen)> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Seen::Interrupted { .. }))
        .collect();
    assert_eq!(interruptions.len(), 1, "{seen:?}");
    let (
        index,
        Seen::Interrupted {
            at,
            heard: cut,
            kept,
            ..
        },
    ) = interruptions[0]
    else {
        unreachable!()
    };
    let barge_in = seen[turn_ends[0].0..]
        .iter()
        .position(|s| matches!(s, Seen::Started(_)))
        .map(|i| i + turn_ends[0].0)
        .unwrap();
    assert!(barge_in < index && index < turn_ends[1].0, "{seen:?}");
    assert_eq!(seen[barge_in], Seen::Started(*at));
    assert_eq!(cut, words);
    assert_eq!(kept.as_deref(), Some(words), "the stored mark keeps it");
    // Each spoken prompt went through `input` after its transcript, and
    // the model got the rewrite.
    let inputs: Vec<(usize, String)> = seen
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Seen::Input(text) => Some((i, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(inputs.len(), 2, "{seen:?}");
    let calls = writer.seen.lock().unwrap();
    for (((input_at, input), (text_at, text, _)), call) in inputs.iter().zip(&said).zip(&*calls) {
        assert!(text_at < input_at && input == text, "{seen:?}");
        let prompt = call
            .iter()
            .rev()
            .find(|m| m.role == ChatRole::User)
            .unwrap();
        assert_eq!(prompt.content, format!("{REWRITE}{text}"));
    }
    // The speech-stopped handler failed every time; nothing else did.
    let stopped = seen
        .iter()
        .filter(|s| matches!(s, Seen::Stopped(_)))
        .count();
    let errors = session.extension_errors();
    assert_eq!(errors.len(), stopped, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.event == "voice_speech_stopped" && e.message.contains("refused on purpose")),
        "{errors:?}"
    );
}

/// The turns' partial transcripts, from whisper's stream: the turns
/// (seconds of speech each) have some before they end; within a turn the
/// committed text only grows; the extension got what the loop sent, in
/// order; and the committed words are the turn's final text's.
fn check_partials(heard: &Heard) {
    let seen = &heard.seen;
    let looped: Vec<(String, String)> = heard
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            VoiceEvent::Partial {
                committed,
                tentative,
            } => Some((committed.clone(), tentative.clone())),
            _ => None,
        })
        .collect();
    let told: Vec<(String, String)> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Partial(c, t) => Some((c.clone(), t.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(looped, told, "the extension gets the loop's partials");
    let mut turn: Vec<(String, String)> = Vec::new();
    let mut turns = Vec::new();
    for s in seen {
        match s {
            Seen::Partial(c, t) => turn.push((c.clone(), t.clone())),
            Seen::Transcript(text, _) => turns.push((std::mem::take(&mut turn), text.clone())),
            _ => {}
        }
    }
    assert!(
        turns.iter().any(|(partials, _)| !partials.is_empty()),
        "no partial transcript in any turn: {seen:?}"
    );
    let words = |text: &str| -> Vec<String> {
        text.split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect()
    };
    for (partials, text) in &turns {
        for pair in partials.windows(2) {
            assert!(
                pair[1].0.starts_with(&pair[0].0),
                "committed text only grows: {partials:?}"
            );
        }
        // The committed text is the stream's settled words: mostly the
        // final transcript's (the tentative tail may be anything).
        let final_words = words(text);
        if let Some((committed, _)) = partials.last() {
            let heard = words(committed);
            let known = heard.iter().filter(|w| final_words.contains(w)).count();
            assert!(
                known * 10 >= heard.len() * 8,
                "committed words not the turn's: {committed:?} vs {text:?}"
            );
        }
    }
}

async fn marks(store: &Arc<dyn SessionStore>) -> Vec<serde_json::Value> {
    let session = Session::open(store.clone(), UserInfo::new("alice"), "voice")
        .await
        .unwrap();
    session
        .branch()
        .into_iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Custom { custom_type, data } if custom_type == VOICE_INTERRUPTED => {
                data.clone()
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_interrupted_while_written_keeps_only_what_was_heard() {
    // A word every 400 ms: the answer is still being written when the
    // person speaks over it.
    let end = TurnEnd::Silence(Duration::from_millis(700));
    let (heard, writer, store, mut agent) = converse(
        Duration::from_millis(400),
        Duration::from_millis(1500),
        end,
        1,
    )
    .await;
    let words = check_turns(&heard, &writer);
    check_context(&writer, &words);
    check_extension(&heard, &writer, &agent, &words, end);
    let marks = marks(&store).await;
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0]["heard"], words.as_str());
    let session = Session::open(store.clone(), UserInfo::new("alice"), "voice")
        .await
        .unwrap();
    let stored: Vec<String> = session
        .branch()
        .into_iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message {
                message: AgentMessage::Assistant(message),
            } => Some(AgentMessage::Assistant(message.clone()).to_chat()?.content),
            _ => None,
        })
        .collect();
    assert_eq!(
        stored,
        [words.as_str(), SECOND_REPLY],
        "nothing unheard is stored"
    );
    // The session comes back ready: the cancelled reply's token is gone.
    writer
        .replies
        .lock()
        .unwrap()
        .push("Still here.".to_owned());
    let after = agent.prompt("Are you there?").await.unwrap();
    assert_eq!(after.text, "Still here.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_written_before_the_interruption_is_edited_to_what_was_heard() {
    // Written at once: the whole answer is stored before it is spoken.
    // Turns end on Smart Turn's verdict (or its longest silence); the
    // first turn is a sentence Smart Turn hears as complete.
    let end = TurnEnd::SmartTurn {
        max_silence: Duration::from_millis(1500),
    };
    let (heard, writer, store, agent) =
        converse(Duration::ZERO, Duration::from_millis(1500), end, 2).await;
    let words = check_turns(&heard, &writer);
    check_context(&writer, &words);
    check_extension(&heard, &writer, &agent, &words, end);
    let marks = marks(&store).await;
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0]["heard"], words.as_str());
    let session = Session::open(store.clone(), UserInfo::new("alice"), "voice")
        .await
        .unwrap();
    assert!(
        session
            .branch()
            .iter()
            .any(|entry| matches!(entry.kind, EntryKind::ContextEdit { .. })),
        "the stored answer is edited, not left as written"
    );
}
