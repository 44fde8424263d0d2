//! The events a session dispatches to its extensions: one struct per
//! kind, with public fields handlers change to steer the agent.
//!
//! Rules: an event is a value; a handler gets it, may change it, and
//! returns it (see `dispatch.rs` for the order). [`ToolCallEvent::block`],
//! [`InputEvent::mark_handled`], [`SessionBeforeSwitchEvent::cancel`] and
//! [`SessionBeforeCompactEvent::cancel`] stop the handlers after them. A
//! handler's error is reported as an `extension_error` and dispatch goes
//! on, except on [`ToolCallEvent`] (the error blocks the call) and
//! [`ProcessSpawnEvent`] (the error fails the spawn). Events that only
//! notify have nothing to change.
//!
//! The `voice_*` events ([`VoiceSpeechStartedEvent`] and those after it)
//! are Oscova's own, not pi's: a spoken conversation dispatches them as
//! they happen, in order, on a task of its own, so a handler never holds
//! the audio up; a handler's error is an `extension_error` and the
//! conversation goes on.

use oscova_core::process::ProcessSpawnContext;
use oscova_core::provider::model::{ChatMessage, ToolSpec};
use oscova_core::tool::ContentBlock;
use oscova_core::{ToolProgress, ToolResult};

use crate::chat::ToolsPromptSection;
use crate::session::EntryId;
use serde_json::Value;

/// What happens when one of an event's handlers fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnError {
    /// Report it as an `extension_error` and run the next handler.
    Continue,
    /// Report it and fail what the event was for (a process spawn).
    Fail,
}

/// An event extensions can handle (every `…Event` type of this module).
pub trait Event: Clone + Send + Sync + 'static {
    /// The event's name, as `extension_error` reports it (`tool_call`).
    const NAME: &'static str;

    /// Whether a handler stopped the chain (block, cancel, mark handled).
    fn stopped(&self) -> bool {
        false
    }

    /// Called when a handler failed with `message`; decides what follows.
    fn handler_failed(&mut self, message: &str) -> OnError {
        let _ = message;
        OnError::Continue
    }
}

macro_rules! notify_event {
    ($(#[$doc:meta])* $name:ident, $wire:literal { $($(#[$fdoc:meta])* pub $field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
        }
        impl Event for $name {
            const NAME: &'static str = $wire;
        }
    };
}

/// Why a session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionStartReason {
    /// A session created for this agent.
    New,
    /// A session that already had entries.
    Resume,
    /// The agent switched to this session from another.
    Switch,
}

notify_event!(
    /// After the extensions were activated, on a new, resumed or switched
    /// session: rebuild state from the branch ([`ExtensionContext::branch`](super::ExtensionContext::branch)).
    SessionStartEvent, "session_start" {
        /// Why.
        pub reason: SessionStartReason,
    }
);

notify_event!(
    /// Before the session is shut down or replaced: release what the
    /// extension holds (it may come more than once; be idempotent).
    SessionShutdownEvent, "session_shutdown" {}
);

notify_event!(
    /// The session's display name changed.
    SessionInfoChangedEvent, "session_info_changed" {
        /// The new name.
        pub name: Option<String>,
    }
);

/// Before the agent switches to another session; [`cancel`](Self::cancel)
/// keeps the current one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionBeforeSwitchEvent {
    /// The session switched to (its name).
    pub target: String,
    /// Set by [`cancel`](Self::cancel): why the switch was refused.
    pub cancelled: Option<String>,
}

impl SessionBeforeSwitchEvent {
    /// Refuses the switch; later handlers do not run.
    pub fn cancel(&mut self, reason: impl Into<String>) {
        self.cancelled = Some(reason.into());
    }
}

impl Event for SessionBeforeSwitchEvent {
    const NAME: &'static str = "session_before_switch";
    fn stopped(&self) -> bool {
        self.cancelled.is_some()
    }
}

/// What the person typed, before it becomes a prompt: change the text or
/// images, or [`mark_handled`](Self::mark_handled) to consume it (no run).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InputEvent {
    /// The text.
    pub text: String,
    /// Images sent with it.
    pub images: Vec<ContentBlock>,
    /// Set by [`mark_handled`](Self::mark_handled).
    pub handled: bool,
}

impl InputEvent {
    /// Consumes the input: no prompt is made of it; later handlers do not
    /// run.
    pub fn mark_handled(&mut self) {
        self.handled = true;
    }
}

impl Event for InputEvent {
    const NAME: &'static str = "input";
    fn stopped(&self) -> bool {
        self.handled
    }
}

/// The system prompt as options: the base text, named sections, then the
/// tools section (the tools' prompt snippets and guidelines), rendered in
/// that order.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SystemPromptOptions {
    /// The base instructions.
    pub base: String,
    /// Named sections, in order (`("Project", "…")`), each rendered as
    /// `## Project` and its text.
    pub sections: Vec<(String, String)>,
    /// The tools' lines and the guidelines: every active tool with a
    /// `prompt_snippet` and its `prompt_guidelines`; add lines with
    /// [`ToolsPromptSection::tool`], bullets with
    /// [`ToolsPromptSection::guidelines`].
    pub tools: ToolsPromptSection,
}

impl SystemPromptOptions {
    /// The prompt text (empty when every part is).
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.base.trim().is_empty() {
            parts.push(self.base.trim_end().to_owned());
        }
        for (title, body) in &self.sections {
            parts.push(format!("## {title}\n{}", body.trim_end()));
        }
        if !self.tools.is_empty() {
            parts.push(self.tools.render());
        }
        parts.join("\n\n")
    }
}

/// A message an extension gives the model (pi's custom message): stored
/// as a `custom_message` entry, seen by the model as a user message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExtensionMessage {
    /// The extension's type tag.
    pub custom_type: String,
    /// The text.
    pub content: String,
    /// Whether a UI shows it.
    pub display: bool,
    /// Extension data, never sent to the model.
    pub details: Option<Value>,
}

impl ExtensionMessage {
    /// A displayed message of `custom_type` with `content`.
    pub fn new(custom_type: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            custom_type: custom_type.into(),
            content: content.into(),
            display: true,
            details: None,
        }
    }
}

notify_event!(
    /// Before a run: edit the system prompt's options, replace the whole
    /// prompt, or add messages for this run.
    BeforeAgentStartEvent, "before_agent_start" {
        /// The prompt's parts.
        pub prompt: SystemPromptOptions,
        /// When set, the prompt as a whole (the options are then unused).
        pub system_prompt_override: Option<String>,
        /// Messages added after the prompt's messages, stored on the branch.
        pub injected_messages: Vec<ExtensionMessage>,
    }
);

notify_event!(
    /// A run started.
    AgentStartEvent, "agent_start" {}
);

notify_event!(
    /// A run ended: the messages it added.
    AgentEndEvent, "agent_end" {
        /// The messages, in order.
        pub messages: Vec<ChatMessage>,
    }
);

notify_event!(
    /// The agent has nothing left to do (no follow-up queued).
    AgentSettledEvent, "agent_settled" {}
);

notify_event!(
    /// A turn (one model call and its tool calls) starts.
    TurnStartEvent, "turn_start" {
        /// The turn's number in the run, from 1.
        pub turn: usize,
    }
);

notify_event!(
    /// A turn ended; set `continue_requested` to make another model call
    /// even though the model asked for no tool.
    TurnEndEvent, "turn_end" {
        /// The turn's number in the run, from 1.
        pub turn: usize,
        /// The model's message.
        pub message: ChatMessage,
        /// The tool messages answering its calls.
        pub tool_results: Vec<ChatMessage>,
        /// Forces another model call.
        pub continue_requested: bool,
    }
);

notify_event!(
    /// Before each model call: edit the messages (the system prompt is not
    /// among them).
    ContextEvent, "context" {
        /// The messages sent, in order.
        pub messages: Vec<ChatMessage>,
    }
);

/// What is sent to the provider.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProviderPayload {
    /// The model.
    pub model: String,
    /// The messages, the system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The tools offered.
    pub tools: Vec<ToolSpec>,
}

notify_event!(
    /// The request is built: replace the payload.
    BeforeProviderRequestEvent, "before_provider_request" {
        /// What will be sent.
        pub payload: ProviderPayload,
    }
);

notify_event!(
    /// A message starts (an assistant answer before it streams; a user,
    /// custom or tool message as it is added).
    MessageStartEvent, "message_start" {
        /// The message so far.
        pub message: ChatMessage,
    }
);

notify_event!(
    /// More streamed text of the assistant's message.
    MessageUpdateEvent, "message_update" {
        /// The new text.
        pub delta: String,
    }
);

notify_event!(
    /// A message is complete; replace it (same role) before it is stored.
    MessageEndEvent, "message_end" {
        /// The message.
        pub message: ChatMessage,
    }
);

/// Before a tool runs: patch `input`, or [`block`](Self::block) the call
/// (the reason goes to the model). A handler that fails blocks it too.
///
/// It is this session's view of the call: the session's tool events are
/// the call's own layer ([`oscova_core::host::layer`]), outside the host's
/// hooks and layers, which see the input as handlers left it and still
/// refuse it ([`ToolResultEvent`] then carries the refusal). A name that
/// is no tool at all never reaches it. A guard that must hold for
/// every front end (MCP and A2A serving too, every session) is a layer
/// registered once on the plugin host
/// ([`PluginHostBuilder::layer`](oscova_core::PluginHostBuilder::layer));
/// a handler here is for what one session decides (asking its person,
/// its own state).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallEvent {
    /// The call's id.
    pub call_id: String,
    /// The tool's name (a wire name, or an extension tool's name).
    pub tool_name: String,
    /// The arguments.
    pub input: Value,
    /// Set by [`block`](Self::block).
    pub blocked: Option<String>,
}

impl ToolCallEvent {
    /// Blocks the call with a reason the model sees; later handlers do
    /// not run.
    pub fn block(&mut self, reason: impl Into<String>) {
        self.blocked = Some(reason.into());
    }
}

impl Event for ToolCallEvent {
    const NAME: &'static str = "tool_call";
    fn stopped(&self) -> bool {
        self.blocked.is_some()
    }
    fn handler_failed(&mut self, message: &str) -> OnError {
        self.blocked = Some(format!("an extension handler failed: {message}"));
        OnError::Continue
    }
}

notify_event!(
    /// After a tool ran (redacted already): edit `result`'s content,
    /// details and error flag.
    ToolResultEvent, "tool_result" {
        /// The call's id.
        pub call_id: String,
        /// The tool's name.
        pub tool_name: String,
        /// The arguments it ran with.
        pub input: Value,
        /// The result.
        pub result: ToolResult,
    }
);

notify_event!(
    /// A tool starts running.
    ToolExecutionStartEvent, "tool_execution_start" {
        /// The call's id.
        pub call_id: String,
        /// The tool's name.
        pub tool_name: String,
        /// The arguments.
        pub input: Value,
    }
);

notify_event!(
    /// A running tool reported progress.
    ToolExecutionUpdateEvent, "tool_execution_update" {
        /// The call's id.
        pub call_id: String,
        /// The tool's name.
        pub tool_name: String,
        /// The report (redacted).
        pub progress: ToolProgress,
    }
);

notify_event!(
    /// A tool finished (or was blocked, refused or skipped).
    ToolExecutionEndEvent, "tool_execution_end" {
        /// The call's id.
        pub call_id: String,
        /// The tool's name.
        pub tool_name: String,
        /// What the model is told.
        pub result: ToolResult,
    }
);

/// Before a process the agent asked for starts: replace `context`
/// (command, arguments, directory, environment). A failing handler fails
/// the spawn.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProcessSpawnEvent {
    /// What will start, as the spawn policy prepared it.
    pub context: ProcessSpawnContext,
}

impl Event for ProcessSpawnEvent {
    const NAME: &'static str = "process_spawn";
    fn handler_failed(&mut self, _: &str) -> OnError {
        OnError::Fail
    }
}

/// Compaction is about to run: [`cancel`](Self::cancel) it, or supply the
/// summary in `summary`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionBeforeCompactEvent {
    /// The context's size in tokens (estimated).
    pub tokens_before: u64,
    /// A summary to use instead of asking the model.
    pub summary: Option<String>,
    /// Set by [`cancel`](Self::cancel).
    pub cancelled: bool,
}

impl SessionBeforeCompactEvent {
    /// Skips this compaction; later handlers do not run.
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }
}

impl Event for SessionBeforeCompactEvent {
    const NAME: &'static str = "session_before_compact";
    fn stopped(&self) -> bool {
        self.cancelled
    }
}

notify_event!(
    /// A compaction entry was written.
    SessionCompactEvent, "session_compact" {
        /// The summary the model now sees in place of older entries.
        pub summary: String,
        /// Whether an extension supplied it.
        pub from_extension: bool,
    }
);

notify_event!(
    /// The session's model changed.
    ModelSelectEvent, "model_select" {
        /// The provider's type key.
        pub provider: String,
        /// The model.
        pub model: String,
        /// The model before, when there was one.
        pub previous: Option<String>,
    }
);

notify_event!(
    /// The session's thinking level changed.
    ThinkingLevelSelectEvent, "thinking_level_select" {
        /// The new level.
        pub level: String,
        /// The level before.
        pub previous: String,
    }
);

// Voice: Oscova's own events (pi has none), dispatched by a spoken
// conversation (`session::voice::VoiceConversation`, feature `voice`).

notify_event!(
    /// Oscova's own (pi has no voice events): in a spoken conversation,
    /// the person started speaking (speech at least the turn options'
    /// `min_speech` long, so a cough is not). While the agent speaks or
    /// writes, this is the barge-in: [`VoiceInterruptedEvent`] follows.
    /// Notify only.
    VoiceSpeechStartedEvent, "voice_speech_started" {
        /// When the first voiced frame began, in ms of the conversation's
        /// input audio from its start.
        pub at_ms: u64,
    }
);

notify_event!(
    /// Oscova's own: in a spoken conversation, the person paused (the
    /// turn may go on). Notify only.
    VoiceSpeechStoppedEvent, "voice_speech_stopped" {
        /// When the last voiced frame ended, in ms of the input audio from
        /// its start.
        pub at_ms: u64,
    }
);

/// How a spoken turn ended ([`VoiceTurnEndEvent::reason`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum VoiceTurnEndReason {
    /// Smart Turn judged the turn complete at a pause.
    SmartTurn {
        /// Its probability that the turn was complete (above 0.5).
        probability: f32,
    },
    /// The silence after the speech lasted long enough: the configured
    /// silence, or Smart Turn's `max_silence` when it had judged the turn
    /// incomplete.
    Silence,
}

notify_event!(
    /// Oscova's own: in a spoken conversation, the person's turn ended;
    /// its audio goes to the recognizer, and [`VoiceTranscriptEvent`]
    /// follows when it was recognized. Notify only.
    VoiceTurnEndEvent, "voice_turn_end" {
        /// When the turn's last voiced frame ended, in ms of the input
        /// audio from its start.
        pub at_ms: u64,
        /// Smart Turn's verdict, or the silence.
        pub reason: VoiceTurnEndReason,
    }
);

notify_event!(
    /// Oscova's own: in a spoken conversation, a partial transcript of the
    /// turn under way, from the recognizer's stream (whisper's is a
    /// growing window heard again about every second; a recognizer
    /// without a streaming form gives none), whenever it has a newer one.
    /// [`VoiceTranscriptEvent`] still carries the turn's final text.
    /// Notify only.
    VoicePartialEvent, "voice_partial" {
        /// Text that will not change within the stream: each partial's is a
        /// prefix of the next one's.
        pub committed: String,
        /// The recognizer's current guess at what follows; the next partial
        /// may change it.
        pub tentative: String,
        /// How much of the turn's audio (from its pre-roll) it was heard
        /// from, in ms.
        pub audio_ms: u64,
    }
);

notify_event!(
    /// Oscova's own: a spoken turn's final transcript, one per recognized
    /// turn (empty when nothing was recognized: no reply follows), before
    /// it becomes the prompt. Notify only: to change what the model gets,
    /// or to consume the turn, handle [`InputEvent`], which every spoken
    /// prompt goes through as a typed one does (its `text` this
    /// transcript; [`InputEvent::mark_handled`] leaves the turn without a
    /// reply).
    VoiceTranscriptEvent, "voice_transcript" {
        /// What was recognized, trimmed.
        pub text: String,
        /// The end of the turn it transcribes, as [`VoiceTurnEndEvent`]
        /// gave it (ms of the input audio).
        pub turn_end_ms: u64,
        /// How long the recognition took, in ms.
        pub recognition_ms: u64,
    }
);

notify_event!(
    /// Oscova's own: the person spoke over the agent's reply (a barge-in):
    /// its audio stopped, the rest of its synthesis was dropped, its run
    /// cancelled, and the session already holds what was heard (the
    /// assistant entry `entry_id`, written or edited to `heard`, marked by
    /// a `oscova.voice_interrupted` custom entry). Notify only.
    VoiceInterruptedEvent, "voice_interrupted" {
        /// When the speech that interrupted began, in ms of the input audio
        /// from its start.
        pub at_ms: u64,
        /// What the person heard of the reply: the sentences played, and
        /// the words of the one cut short in proportion to its audio played.
        pub heard: String,
        /// The assistant entry that holds `heard` now.
        pub entry_id: EntryId,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_renders_sections_then_the_tools_section() {
        let mut prompt = SystemPromptOptions {
            base: "Be brief.".into(),
            sections: vec![("Project".into(), "Oscova".into())],
            ..SystemPromptOptions::default()
        };
        prompt.tools.tool("hello", Some("greet"), ["ask first"]);
        assert_eq!(
            prompt.render(),
            "Be brief.\n\n## Project\nOscova\n\nAvailable tools:\n- hello: greet\n\nGuidelines:\n- ask first"
        );
        assert_eq!(SystemPromptOptions::default().render(), "");
    }
}
