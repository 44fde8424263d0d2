//! A spoken conversation with the session agent: the person talks, the
//! agent answers aloud, and the person can interrupt it. Built with the
//! feature `voice`.
//!
//! Rules:
//!
//! - **A session like any other.** A [`VoiceConversation`] runs an
//!   [`AgentSession`](super::agent::AgentSession) (same store, extensions,
//!   tools, compaction); each of the person's turns is a prompt, its final
//!   transcript the prompt's text.
//! - **Turns.** Audio comes in as 16 kHz mono samples, in pieces of any
//!   size, at the pace it is spoken; turn-taking is
//!   [`oscova_speech::voice`]'s (Silero VAD, and Smart Turn or a silence to
//!   end a turn, tunable through [`VoiceOptions::turn`]). With
//!   [`VoiceOptions::partials`], while the person speaks, the turn's audio
//!   goes to a recognition stream opened through the router
//!   (`open_stream`, the same offline check) for partial transcripts
//!   ([`VoiceEvent::Partial`]). A turn's audio is
//!   recognized whole through the recognition router (its offline check
//!   first), speculatively from the moment the person goes quiet
//!   ([`TurnOptions::quiet`](oscova_speech::voice::TurnOptions::quiet),
//!   before the silence counts as a pause): if the turn ends there (Smart
//!   Turn's verdict at the pause, or the longer silence) the recognition
//!   under way is its transcript; if they speak again it is dropped. An
//!   empty transcript starts no reply. Opening a conversation loads the
//!   recognizer's and the synthesizer's models, so the first turn is as
//!   fast as the next.
//! - **Replies.** The model's text is cut into sentences as it streams
//!   (the first at its first clause, so a long first sentence does not
//!   hold the voice back), each synthesized through the
//!   synthesis router as soon as it is whole, the next while the one
//!   before plays, and played at real-time pace as 20 ms frames of 16 kHz
//!   mono ([`VoiceOutput::Audio`]), so the first sentence plays while the
//!   model still writes.
//! - **Barge-in.** Speech that starts while the agent speaks or is still
//!   writing (speech as the turn options define it: a cough or a short
//!   "mm-hm" under [`TurnOptions::min_speech`](oscova_speech::voice::TurnOptions::min_speech)
//!   is not) stops the audio within one frame, drops the sentences not
//!   yet played and cancels the run. The session then holds what the
//!   person heard, not what the model wrote: an answer still being written
//!   is stored as the heard part; one already stored is edited to it (a
//!   context edit, so the next turn's context is what was heard). Either
//!   way a [`VOICE_INTERRUPTED`] entry marks it, with the heard text.
//! - **Events** ([`VoiceEvent`]) go out with the audio, in order.
//! - **Extensions** get them too, as the session's `voice_*` events
//!   (Oscova's own; pi has none), each as it happens, with times in ms of
//!   the input audio from its start:
//!   [`VoiceSpeechStartedEvent`](super::agent::VoiceSpeechStartedEvent),
//!   [`VoiceSpeechStoppedEvent`](super::agent::VoiceSpeechStoppedEvent),
//!   [`VoicePartialEvent`](super::agent::VoicePartialEvent) (while the
//!   person speaks, each newer partial transcript of the turn from the
//!   recognizer's stream),
//!   [`VoiceTurnEndEvent`](super::agent::VoiceTurnEndEvent) (Smart Turn's
//!   verdict or the silence),
//!   [`VoiceTranscriptEvent`](super::agent::VoiceTranscriptEvent) (one
//!   per recognized turn) and
//!   [`VoiceInterruptedEvent`](super::agent::VoiceInterruptedEvent) (once
//!   per barge-in, after the session stored what was heard). They are
//!   dispatched in that order on a task of their own, so a slow handler
//!   never delays the audio or a barge-in (only the next events, and the
//!   reply's run, which starts once its turn's events were dispatched),
//!   and a failing one is an `extension_error` while the conversation
//!   goes on. They only notify:
//!   a turn's transcript becomes its prompt through
//!   [`AgentSession::prompt`](super::agent::AgentSession::prompt), so an
//!   [`InputEvent`](super::agent::InputEvent) handler changes what the
//!   model gets from a spoken turn as from a typed one (or marks it
//!   handled: no reply), after that turn's `voice_transcript`.

mod conversation;
mod hearing;
mod notify;
mod speaker;

use std::time::Duration;

use oscova_core::provider::speech::SpeechProviderConfig;
use oscova_speech::voice::TurnOptions;

pub use conversation::VoiceConversation;

/// The `customType` of the entry that marks an answer the person
/// interrupted: `{"heard": ..., "entryId": ...}`, the text they heard and
/// the assistant entry that holds it (or was edited to it).
pub const VOICE_INTERRUPTED: &str = "oscova.voice_interrupted";

/// How a conversation listens and speaks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VoiceOptions {
    /// Turn-taking (Smart Turn, 250 ms minimum speech, unless set).
    pub turn: TurnOptions,
    /// The recognizer (`whisper` in English, [`VoiceOptions::LANGUAGE`],
    /// unless set). A set language spares whisper's detection of it at
    /// each turn, a second pass of its encoder: on 2 cores a sentence's
    /// recognition takes about half the time. Language `auto` detects it.
    pub recognition: SpeechProviderConfig,
    /// The synthesizer (`kokoro`, the default local voice, unless set).
    /// On 2 cores Kokoro-82M takes about 550 ms for a first piece of one
    /// word, a Piper voice about 70 ms: the `voice` bench measures either.
    pub synthesis: SpeechProviderConfig,
    /// Whether the routers refuse providers that leave the machine.
    pub offline: bool,
    /// Whether the turn under way is fed to a recognition stream for
    /// partial transcripts ([`VoiceEvent::Partial`]); off unless set: on a
    /// 2-core machine the stream's decodes share the recognizer (one
    /// whisper decode at a time) with the turn's final recognition, which
    /// then waits for a step under way to stop.
    pub partials: bool,
}

impl Default for VoiceOptions {
    fn default() -> Self {
        Self {
            turn: TurnOptions::default(),
            recognition: SpeechProviderConfig::new("whisper").language(Self::LANGUAGE),
            synthesis: SpeechProviderConfig::new("kokoro"),
            offline: false,
            partials: false,
        }
    }
}

impl VoiceOptions {
    /// The language a conversation is heard in unless its recognition
    /// names one: English.
    pub const LANGUAGE: &'static str = "en";

    /// Sets [`turn`](Self::turn).
    pub fn with_turn(mut self, turn: TurnOptions) -> Self {
        self.turn = turn;
        self
    }

    /// Sets [`recognition`](Self::recognition).
    pub fn with_recognition(mut self, config: SpeechProviderConfig) -> Self {
        self.recognition = config;
        self
    }

    /// Sets [`synthesis`](Self::synthesis).
    pub fn with_synthesis(mut self, config: SpeechProviderConfig) -> Self {
        self.synthesis = config;
        self
    }

    /// Sets [`partials`](Self::partials).
    pub fn with_partials(mut self, partials: bool) -> Self {
        self.partials = partials;
        self
    }

    /// Sets [`offline`](Self::offline).
    pub fn with_offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }
}

/// What a conversation sends out: the agent's audio and what happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum VoiceOutput {
    /// 20 ms of the agent's voice, 16 kHz mono.
    Audio(Vec<i16>),
    /// Something happened.
    Event(VoiceEvent),
}

/// What happened in a conversation. Times count the input audio from its
/// start.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum VoiceEvent {
    /// The person started speaking.
    SpeechStarted {
        /// When their first voiced frame began.
        at: Duration,
    },
    /// The person paused.
    SpeechStopped {
        /// When their last voiced frame ended.
        at: Duration,
    },
    /// The person's turn ended.
    TurnEnded {
        /// When its speech ended.
        at: Duration,
    },
    /// A partial transcript of the turn under way, from the recognizer's
    /// stream (none from a recognizer without a streaming form); the
    /// final one is [`Transcript`](Self::Transcript).
    Partial {
        /// Text that will not change within the turn's stream.
        committed: String,
        /// The recognizer's current guess at what follows.
        tentative: String,
    },
    /// The turn's final transcript, the prompt of the reply.
    Transcript {
        /// What was recognized.
        text: String,
    },
    /// The agent finished its reply aloud.
    ReplyFinished {
        /// What it said.
        heard: String,
    },
    /// The person interrupted the agent: its audio stopped, the run was
    /// cancelled, and the session keeps what was heard.
    Interrupted {
        /// What the person heard of the reply.
        heard: String,
    },
    /// A turn's audio could not be recognized; no reply.
    RecognitionFailed {
        /// Why.
        error: String,
    },
    /// A sentence could not be synthesized; it was skipped.
    SpeechFailed {
        /// The sentence.
        sentence: String,
        /// Why.
        error: String,
    },
    /// The run failed (the model or the store); the reply ends.
    RunFailed {
        /// Why.
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_local_providers() {
        let options = VoiceOptions::default().with_offline(true);
        assert_eq!(options.recognition.provider.as_str(), "whisper");
        assert_eq!(options.recognition.language.as_deref(), Some("en"));
        assert_eq!(options.synthesis.provider.as_str(), "kokoro");
        assert!(options.offline);
    }
}
