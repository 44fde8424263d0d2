//! The conversation loop: turn-taking, recognition, the run, the speaker
//! and barge-in (the rules are [the module's](super)).

use std::sync::Arc;
use std::time::Duration;

use oscova_core::provider::model::ChatMessage;
use oscova_core::provider::speech::{RecognitionRequest, SpeechError, SynthesisRequest};
use oscova_core::{CancellationToken, UserInfo};
use oscova_speech::SpeechRouters;
use oscova_speech::stream::PartialTranscript;
use oscova_speech::voice::{VoiceActivity, VoiceModels};
use oscova_speech::wav::{Pcm16kMono, encode_wav};

use super::hearing::Hearing;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::notify::{Notifier, ms};
use super::speaker::{Sentences, Speaker};
use super::{VOICE_INTERRUPTED, VoiceEvent, VoiceOptions, VoiceOutput};
use crate::session::agent::{
    AgentError, AgentEvent, AgentHost, AgentSession, AgentSessionOptions, VoiceInterruptedEvent,
    VoicePartialEvent, VoiceSpeechStartedEvent, VoiceSpeechStoppedEvent, VoiceTranscriptEvent,
    VoiceTurnEndEvent, VoiceTurnEndReason,
};
use crate::session::{AgentMessage, ContextReplacement, EntryId, EntryKind, MessageContent};

/// A spoken conversation over one agent session (see [the module](super)).
pub struct VoiceConversation {
    session: AgentSession,
    text: mpsc::UnboundedReceiver<String>,
    models: VoiceModels,
    routers: Arc<SpeechRouters>,
    options: VoiceOptions,
}

impl std::fmt::Debug for VoiceConversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoiceConversation")
            .field("session", &self.session)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// What the loop asks of the session, which a task of its own owns.
pub(super) enum Ask {
    Prompt {
        text: String,
        cancel: CancellationToken,
        done: oneshot::Sender<Result<String, AgentError>>,
    },
    Interrupted {
        heard: String,
        stored: bool,
        done: oneshot::Sender<Result<EntryId, AgentError>>,
    },
}

/// What the loop's steps talk to.
struct Parts<'a> {
    hearing: Hearing,
    routers: &'a Arc<SpeechRouters>,
    options: &'a VoiceOptions,
    asks: &'a mpsc::UnboundedSender<Ask>,
    output: &'a mpsc::Sender<VoiceOutput>,
    notifier: &'a Notifier,
}

/// A reply on its way: the run (until it ends), and the speaker.
struct Reply {
    cancel: CancellationToken,
    run: Option<oneshot::Receiver<Result<String, AgentError>>>,
    sentences: Sentences,
    speaker: Speaker,
}

impl VoiceConversation {
    /// Opens (or creates) `user`'s session `name` on `host` for a spoken
    /// conversation, with `session` options (extensions, UI, events: the
    /// session's own events still reach its sink) and `voice` options.
    /// The recognizer loads its model here, so the first turn is heard as
    /// fast as the next.
    ///
    /// # Errors
    ///
    /// The session's, and [`AgentError::Voice`] when the recognizer cannot
    /// run (not installed, refused offline).
    pub async fn open(
        host: &AgentHost,
        user: UserInfo,
        name: &str,
        mut session: AgentSessionOptions,
        voice: VoiceOptions,
        models: VoiceModels,
        routers: Arc<SpeechRouters>,
    ) -> Result<Self, AgentError> {
        let (tx, text) = mpsc::unbounded_channel();
        let previous = session.sink.take();
        session.sink = Some(Arc::new(move |event: &AgentEvent| {
            if let AgentEvent::Text(delta) = event {
                let _ = tx.send(delta.clone());
            }
            if let Some(previous) = &previous {
                previous(event);
            }
        }));
        warm_up(&routers, &voice).await?;
        let session = host.session(user, name, session).await?;
        Ok(Self {
            session,
            text,
            models,
            routers,
            options: voice,
        })
    }

    /// Runs the conversation until `input` ends (16 kHz mono samples, at
    /// the pace they are spoken) and the last reply has been spoken,
    /// sending the agent's audio and the events to `output`; returns the
    /// session.
    ///
    /// # Errors
    ///
    /// The voice models failing ([`AgentError::Voice`]), or the store
    /// failing to keep what was heard of an interrupted answer.
    pub async fn run(
        self,
        mut input: mpsc::Receiver<Vec<f32>>,
        output: mpsc::Sender<VoiceOutput>,
    ) -> Result<AgentSession, AgentError> {
        let Self {
            session,
            mut text,
            models,
            routers,
            options,
        } = self;
        let mut detector = models.detector(options.turn).map_err(voice)?;
        let (frames, frames_rx) = std::sync::mpsc::channel::<Vec<f32>>();
        let (found, mut activity) = mpsc::unbounded_channel::<Result<VoiceActivity, SpeechError>>();
        let detecting = tokio::task::spawn_blocking(move || {
            for samples in frames_rx {
                match detector.push(&samples) {
                    Ok(events) => {
                        for event in events {
                            let _ = found.send(Ok(event));
                        }
                    }
                    Err(error) => {
                        let _ = found.send(Err(error));
                        return;
                    }
                }
            }
            for event in detector.finish() {
                let _ = found.send(Ok(event));
            }
        });
        let (asks, asked) = mpsc::unbounded_channel();
        let notifier = Notifier::start(session.shared.clone(), asks.clone());
        let owner = tokio::spawn(own(session, asked));
        let mut parts = Parts {
            hearing: Hearing::default(),
            routers: &routers,
            options: &options,
            asks: &asks,
            output: &output,
            notifier: &notifier,
        };

        let mut frames = Some(frames);
        let mut reply: Option<Reply> = None;
        let mut listening = true;
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        let result = loop {
            tokio::select! {
                samples = input.recv(), if frames.is_some() => match samples {
                    Some(samples) => {
                        parts.hearing.push(&samples);
                        if let Some(frames) = &frames {
                            let _ = frames.send(samples);
                        }
                    }
                    None => frames = None,
                },
                event = activity.recv(), if listening => match event {
                    None => listening = false,
                    Some(Err(error)) => break Err(voice(error)),
                    Some(Ok(event)) => {
                        let step = on_activity(event, &mut reply, &mut text, &mut parts).await;
                        if let Err(error) = step {
                            break Err(error);
                        }
                    }
                },
                Some(delta) = text.recv() => {
                    if let Some(reply) = &mut reply {
                        reply.say(&delta);
                    }
                }
                _ = tick.tick() => {
                    // A pause the turn did not end at (its end would have
                    // come with it), whose guess waited for a cancelled
                    // one to stop: guess at the turn so far.
                    parts.hearing.guess(parts.routers, parts.options);
                    if let Some(partial) = parts.hearing.partial() {
                        partial_out(partial, &parts).await;
                    }
                    if !listening && reply.is_none() {
                        break Ok(());
                    }
                    for event in progress(&mut reply, &mut text).await {
                        let _ = output.send(VoiceOutput::Event(event)).await;
                    }
                }
            }
        };
        // A conversation that ends on an error leaves nothing speaking or
        // running behind it.
        if let Some(unfinished) = reply.take() {
            unfinished.cancel.cancel();
            unfinished.speaker.stop().await;
        }
        drop(frames);
        let _ = detecting.await;
        notifier.close().await;
        drop(asks);
        let session = owner
            .await
            .map_err(|e| AgentError::Voice(format!("the session's task stopped: {e}")))?;
        result.map(|()| session)
    }
}

/// Has the recognizer load its model now, on half a second of silence,
/// so the first turn is heard as fast as the others (and a recognizer
/// that cannot run says so before the conversation starts); then the
/// synthesizer, on one word, so the first answer starts as fast as the
/// next (a synthesizer that fails here is only logged: each sentence it
/// cannot say is a [`VoiceEvent::SpeechFailed`]).
async fn warm_up(routers: &SpeechRouters, options: &VoiceOptions) -> Result<(), AgentError> {
    let wav = encode_wav(&Pcm16kMono {
        samples: vec![0; 8_000],
    });
    let request = RecognitionRequest::new(&options.recognition, &wav).offline(options.offline);
    match routers.recognition().recognize(request).await {
        Ok(_) | Err(SpeechError::InvalidAudio(_)) => {}
        Err(error) => return Err(voice(error)),
    }
    let request = SynthesisRequest::new(&options.synthesis, "Hello.").offline(options.offline);
    if let Err(error) = routers.synthesis().synthesize(request).await {
        tracing::warn!(%error, "the synthesizer could not be warmed up");
    }
    Ok(())
}

fn voice(error: SpeechError) -> AgentError {
    AgentError::Voice(error.to_string())
}

impl Reply {
    /// Starts the reply to `text`: the run (once the events before it
    /// were dispatched), and a speaker for its answer.
    fn start(text: String, parts: &Parts<'_>) -> Self {
        let cancel = CancellationToken::new();
        let (done, run) = oneshot::channel();
        parts.notifier.then(Ask::Prompt {
            text,
            cancel: cancel.clone(),
            done,
        });
        let speaker = Speaker::start(
            parts.routers.clone(),
            parts.options.synthesis.clone(),
            parts.options.offline,
            parts.output.clone(),
        );
        Self {
            cancel,
            run: Some(run),
            sentences: Sentences::default(),
            speaker,
        }
    }

    /// Queues the sentences `delta` completes.
    fn say(&mut self, delta: &str) {
        for sentence in self.sentences.push(delta) {
            self.speaker.say(sentence);
        }
    }
}

/// A newer partial transcript of the turn, to the host and the extensions.
async fn partial_out(partial: PartialTranscript, parts: &Parts<'_>) {
    let audio_ms = (partial.audio_seconds.max(0.0) * 1000.0).round() as u64;
    send(
        parts.output,
        VoiceEvent::Partial {
            committed: partial.committed.clone(),
            tentative: partial.tentative.clone(),
        },
    )
    .await;
    parts.notifier.event(VoicePartialEvent {
        committed: partial.committed,
        tentative: partial.tentative,
        audio_ms,
    });
}

async fn send(output: &mpsc::Sender<VoiceOutput>, event: VoiceEvent) {
    let _ = output.send(VoiceOutput::Event(event)).await;
}

/// What one event of turn-taking does: the event out to the host and to
/// the extensions, then what follows from it.
async fn on_activity(
    event: VoiceActivity,
    reply: &mut Option<Reply>,
    text: &mut mpsc::UnboundedReceiver<String>,
    parts: &mut Parts<'_>,
) -> Result<(), AgentError> {
    let output = parts.output;
    match event {
        VoiceActivity::SpeechStarted { at } => {
            parts
                .hearing
                .started(at, parts.routers, parts.options)
                .await;
            send(output, VoiceEvent::SpeechStarted { at }).await;
            parts
                .notifier
                .event(VoiceSpeechStartedEvent { at_ms: ms(at) });
            if let Some(current) = reply.take() {
                barge_in(current, at, text, parts).await?;
            }
        }
        // Hints for the recognition, not told to anyone.
        VoiceActivity::Quiet { at } => {
            parts.hearing.quiet(at);
            parts.hearing.guess(parts.routers, parts.options);
        }
        VoiceActivity::Resumed { .. } => parts.hearing.resumed(),
        VoiceActivity::SpeechStopped { at } => {
            parts.hearing.paused(at);
            send(output, VoiceEvent::SpeechStopped { at }).await;
            parts
                .notifier
                .event(VoiceSpeechStoppedEvent { at_ms: ms(at) });
        }
        VoiceActivity::TurnEnded {
            at,
            audio,
            complete,
        } => {
            send(output, VoiceEvent::TurnEnded { at }).await;
            let reason = match complete {
                Some(probability) => VoiceTurnEndReason::SmartTurn { probability },
                None => VoiceTurnEndReason::Silence,
            };
            parts.notifier.event(VoiceTurnEndEvent {
                at_ms: ms(at),
                reason,
            });
            let (heard, took) = parts
                .hearing
                .ended(at, &audio, parts.routers, parts.options)
                .await;
            match heard {
                Err(error) => {
                    tracing::warn!(%error, "a turn could not be recognized");
                    let error = error.to_string();
                    send(output, VoiceEvent::RecognitionFailed { error }).await;
                }
                Ok(transcript) => {
                    let said = transcript.text.trim().to_owned();
                    send(output, VoiceEvent::Transcript { text: said.clone() }).await;
                    parts.notifier.event(VoiceTranscriptEvent {
                        text: said.clone(),
                        turn_end_ms: ms(at),
                        recognition_ms: ms(took),
                    });
                    if !said.is_empty() {
                        if let Some(current) = reply.take() {
                            barge_in(current, at, text, parts).await?;
                        }
                        *reply = Some(Reply::start(said, parts));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The person spoke over the reply (their speech began `at`): stop it,
/// cancel its run, keep what was heard.
async fn barge_in(
    reply: Reply,
    at: Duration,
    text: &mut mpsc::UnboundedReceiver<String>,
    parts: &Parts<'_>,
) -> Result<(), AgentError> {
    reply.cancel.cancel();
    let heard = reply.speaker.stop().await;
    let stored = match reply.run {
        // The run ends at once when cancelled; it may have finished first.
        Some(run) => matches!(run.await, Ok(Ok(_))),
        None => true,
    };
    // What the cancelled run wrote and nobody will say: not the next
    // reply's words.
    while text.try_recv().is_ok() {}
    send(
        parts.output,
        VoiceEvent::Interrupted {
            heard: heard.clone(),
        },
    )
    .await;
    let (done, kept) = oneshot::channel();
    let _ = parts.asks.send(Ask::Interrupted {
        heard: heard.clone(),
        stored,
        done,
    });
    let entry_id = kept
        .await
        .map_err(|_| AgentError::Voice("the session's task stopped".to_owned()))??;
    parts.notifier.event(VoiceInterruptedEvent {
        at_ms: ms(at),
        heard,
        entry_id,
    });
    Ok(())
}

/// Follows the reply: the run's end (the last sentence queued), the
/// speaker's end (the reply finished).
async fn progress(
    reply: &mut Option<Reply>,
    text: &mut mpsc::UnboundedReceiver<String>,
) -> Vec<VoiceEvent> {
    let mut events = Vec::new();
    let Some(current) = reply else {
        return events;
    };
    if let Some(run) = &mut current.run {
        let ended = match run.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => None,
            Ok(result) => Some(result.map_err(|e| e.to_string())),
            Err(oneshot::error::TryRecvError::Closed) => {
                Some(Err("the session's task stopped".to_owned()))
            }
        };
        if let Some(result) = ended {
            while let Ok(delta) = text.try_recv() {
                current.say(&delta);
            }
            if let Some(last) = current.sentences.finish() {
                current.speaker.say(last);
            }
            current.speaker.close();
            current.run = None;
            if let Err(error) = result {
                events.push(VoiceEvent::RunFailed { error });
            }
        }
    }
    if current.run.is_none()
        && current.speaker.is_finished()
        && let Some(done) = reply.take()
    {
        let heard = done.speaker.finished().await;
        events.push(VoiceEvent::ReplyFinished { heard });
    }
    events
}

/// The session's own task: prompts and what was heard, one at a time.
async fn own(mut session: AgentSession, mut asked: mpsc::UnboundedReceiver<Ask>) -> AgentSession {
    while let Some(ask) = asked.recv().await {
        match ask {
            Ask::Prompt { text, cancel, done } => {
                session.cancellation(cancel);
                let outcome = session.prompt(text).await.map(|o| o.text);
                let _ = done.send(outcome);
            }
            Ask::Interrupted {
                heard,
                stored,
                done,
            } => {
                let _ = done.send(keep_heard(session.shared.clone(), heard, stored).await);
            }
        }
    }
    // A barge-in cancelled the last reply's token: the session goes back to
    // its caller with a fresh one, so its next prompt runs.
    session.cancellation(CancellationToken::new());
    session
}

/// Makes the session hold what was heard of the last answer (see the
/// module rules).
async fn keep_heard(
    shared: Arc<crate::session::agent::SharedState>,
    heard: String,
    stored: bool,
) -> Result<EntryId, AgentError> {
    let mut handle = shared.session.lock().await;
    let target = if stored {
        let last = handle
            .branch()
            .into_iter()
            .rev()
            .find_map(|entry| match &entry.kind {
                EntryKind::Message {
                    message: AgentMessage::Assistant(_),
                } => Some(entry.id.clone()),
                _ => None,
            });
        match last {
            Some(id) => {
                handle
                    .append(EntryKind::ContextEdit {
                        target_id: id.clone(),
                        replacement: Some(ContextReplacement {
                            content: MessageContent::Text(heard.clone()),
                        }),
                    })
                    .await?;
                id
            }
            None => handle
                .append_chat(&[ChatMessage::assistant(heard.clone(), vec![])])
                .await?
                .remove(0),
        }
    } else {
        handle
            .append_chat(&[ChatMessage::assistant(heard.clone(), vec![])])
            .await?
            .remove(0)
    };
    handle
        .append(EntryKind::Custom {
            custom_type: VOICE_INTERRUPTED.to_owned(),
            data: Some(json!({ "heard": heard, "entryId": target.to_string() })),
        })
        .await?;
    Ok(target)
}
