//! The session agent: a [`Session`](super::Session) driven by a model,
//! with the host's extensions (the peer runtime's extension contract).
//!
//! An [`AgentHost`] holds what every session shares: the plugin host (its
//! tools and model providers), the [`SessionStore`](super::SessionStore),
//! the model configurations, and the extensions, registered by type
//! ([`AgentHostBuilder::add_extension`]); a session adds its own
//! ([`AgentSessionOptions::extension`]). [`AgentHost::session`] opens a
//! session and activates one instance of each extension on it
//! ([`Extension::activate`] with a [`SessionApi`]); the [`AgentSession`]
//! then runs prompts ([`AgentSession::prompt`]), slash commands
//! ([`AgentSession::run_command`], with [`AgentSession::complete_command`])
//! and what extensions queued ([`AgentSession::run_pending`]), storing
//! every message on the session as it is final. A command may declare a
//! prompt form ([`Command::prompt`], [`PromptForm`]), which a host lists
//! and renders without a session ([`AgentHost::prompt_forms`],
//! [`AgentHost::render_prompt`]): MCP prompts.
//!
//! Rules:
//!
//! - **Events** are typed values ([`events`](self#events)); handlers
//!   registered with [`SessionApi::on`] get each by value with an
//!   [`ExtensionContext`] and return it, changed or not. Dispatch runs them
//!   in extension load order (the host's, then the session's), then
//!   registration order; an error or panic becomes an `extension_error`
//!   ([`AgentEvent::ExtensionError`], [`AgentSession::extension_errors`])
//!   and dispatch goes on, except that a failed tool-call handler blocks
//!   the call and a failed process-spawn handler fails the spawn; block,
//!   cancel and mark-handled stop the chain.
//! - **Binding**: during `activate`, only registration works; action
//!   members are [`AgentError::NotBound`]. After a switch or shutdown,
//!   every API and context of the old session is [`AgentError::Stale`].
//! - **Tools**: the user scope's tools and the extensions' `#[toolset]`
//!   values, every call through the same events, argument check and
//!   redaction (`tools.rs`); [`SessionApi::set_active_tools`] narrows what
//!   the model is offered and may call.
//! - **At most once**: a tool call's started mark
//!   ([`CALL_STARTED`](crate::session::CALL_STARTED)) is committed to the
//!   session once the call is approved, just before its tool runs, and its
//!   tool message when it ends. A batch a stopped process left unanswered
//!   is settled before the next run does anything else, or by
//!   [`AgentSession::recover`] (`recover.rs`): a finished call is kept; a
//!   started one is not run again but answered as interrupted (the model
//!   reads it; [`AgentEvent::ToolInterrupted`] tells the host), unless its
//!   tool is idempotent; one that had not started runs, its approval asked
//!   again.
//! - **Waits outlive the process**: a call's wait for a person's approval
//!   is kept in the session before the person is asked
//!   ([`CallWait`](crate::session::CallWait), `wait.rs`), with an expiry
//!   ([`AgentSessionOptions::wait_expiry`], 24 hours unless set, counted
//!   from the first asking). A process that stops while it waits leaves
//!   the call unstarted: the next run, in any process sharing the store,
//!   asks again, and the tool runs once when approved. A wait that expires
//!   ends its call unrun with a result saying so (`details.error` is
//!   `expired`; [`AgentEvent::WaitExpired`] when it expired while no
//!   process ran the session).
//! - **Delivery** of extension messages ([`Delivery`]): steer (after the
//!   tool running now; the rest of a sequential batch is skipped, each
//!   skipped call answered), follow-up (when the agent has nothing left to do), next
//!   turn (with the next prompt). Such text is not redacted by the loop:
//!   use [`SessionApi::redact`].
//! - **Boundaries**: nested model calls ([`ExtensionContext::complete`])
//!   obey the offline rule and are redacted; processes
//!   ([`ExtensionContext::exec`]) are built by the host's spawn policy and
//!   offered to `ProcessSpawnEvent` handlers.
//!
//! The files: `extension.rs` (the trait), `host.rs` ([`AgentHost`],
//! [`AgentSession`]'s life), `builder.rs` ([`AgentHostBuilder`]), `api.rs`
//! ([`SessionApi`]), `context.rs` ([`ExtensionContext`], nested calls,
//! processes), `events.rs`,
//! `dispatch.rs` (the rules above), `bus.rs` ([`EventBus`]),
//! `commands.rs` ([`Command`]), `prompts.rs` ([`PromptForm`]), `tools.rs` (a call and its events),
//! `run.rs` (the loop), `batch.rs` (a batch's calls and their answers),
//! `recover.rs` (settling a batch a stopped process left), `compact.rs` (compaction with its events),
//! `state.rs` (what a session's parts share),
//! `error.rs`.
//!
//! # Events
//!
//! | event | when | what a handler can do |
//! |---|---|---|
//! | [`SessionStartEvent`] | after activation: new, resume, switch | rebuild state from [`ExtensionContext::branch`] |
//! | [`SessionShutdownEvent`] | before shutdown or a switch | clean up |
//! | [`SessionBeforeSwitchEvent`] | before a switch | cancel |
//! | [`SessionInfoChangedEvent`] | the name changed | notify |
//! | [`InputEvent`] | the person's text | change text or images, mark handled |
//! | [`BeforeAgentStartEvent`] | before a run | edit the prompt's options, override it, inject messages |
//! | [`AgentStartEvent`], [`AgentEndEvent`], [`AgentSettledEvent`] | run boundaries | notify |
//! | [`TurnStartEvent`], [`TurnEndEvent`] | turn boundaries | `continue_requested` |
//! | [`ContextEvent`] | before each model call | edit the messages |
//! | [`BeforeProviderRequestEvent`] | the request is built | replace the payload |
//! | [`MessageStartEvent`], [`MessageUpdateEvent`], [`MessageEndEvent`] | messages | replace the message before it is stored |
//! | [`ToolCallEvent`] | before a tool runs | patch the input, block |
//! | [`ToolResultEvent`] | after it ran | edit the result |
//! | [`ToolExecutionStartEvent`], [`ToolExecutionUpdateEvent`], [`ToolExecutionEndEvent`] | tool lifecycle | notify |
//! | [`ProcessSpawnEvent`] | before an agent's process starts | replace the context; an error fails the spawn |
//! | [`SessionBeforeCompactEvent`], [`SessionCompactEvent`] | compaction | cancel, supply the summary |
//! | [`ModelSelectEvent`], [`ThinkingLevelSelectEvent`] | settings changed | notify |
//! | [`VoiceSpeechStartedEvent`], [`VoiceSpeechStoppedEvent`] | a spoken conversation: the person starts, pauses (Oscova's own, as all `voice_*`) | notify |
//! | [`VoicePartialEvent`] | a partial transcript of the turn under way | notify |
//! | [`VoiceTurnEndEvent`] | their turn ended: Smart Turn's verdict or the silence | notify |
//! | [`VoiceTranscriptEvent`] | the turn's final transcript, before it is the prompt | notify (change it in [`InputEvent`]) |
//! | [`VoiceInterruptedEvent`] | a barge-in: the reply stopped, what was heard stored | notify |

mod api;
mod batch;
mod builder;
mod bus;
mod commands;
mod compact;
mod context;
mod deliver;
mod dispatch;
mod error;
mod events;
mod extension;
mod host;
mod prompts;
mod recover;
mod run;
mod specs;
mod state;
mod tools;
mod wait;

use std::sync::Arc;

use oscova_core::ToolResult;
use oscova_core::provider::model::ToolCallRequest;

pub use api::SessionApi;
pub use builder::{AgentHostBuilder, AgentHostError};
pub use bus::EventBus;
pub use commands::{Command, CommandInfo};
pub use context::{ContextUsage, ExecOptions, ExecOutput, ExtensionContext};
pub use deliver::Delivered;
pub use dispatch::Subscription;
#[cfg(feature = "voice")]
pub(crate) use dispatch::dispatch;
pub use error::AgentError;
pub use events::*;
pub use extension::{Extension, ExtensionFactory, extension_factory};
pub use host::{AgentHost, AgentSession, AgentSessionOptions};
pub use prompts::{ExtensionPrompt, PromptForm, PromptFormArg, PromptFormArguments};
pub use run::RunOutcome;
pub use state::Delivery;
#[cfg(feature = "voice")]
pub(crate) use state::Shared as SharedState;

/// An `extension_error`: a handler, command or activation that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionErrorReport {
    /// The extension's name.
    pub extension: String,
    /// The event (`tool_call`), `activate`, or `bus:<channel>`.
    pub event: String,
    /// What went wrong (redacted).
    pub message: String,
}

/// What a session agent tells its host as it happens.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// More of the model's answer.
    Text(String),
    /// A tool call is about to run.
    ToolRunning(ToolCallRequest),
    /// A tool call was answered.
    ToolFinished {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// What the model is told.
        result: ToolResult,
    },
    /// A call a stopped process had started and not finished: it was
    /// not run again (its tool is not idempotent), and its tool message,
    /// now stored, tells the model it was interrupted
    /// ([`AgentSession::recover`]). Its effect is unknown: a person should
    /// check it.
    ToolInterrupted {
        /// The call, as the model asked for it.
        call: ToolCallRequest,
        /// What the model is told.
        result: ToolResult,
    },
    /// A tool call now waits for a person's approval: the wait was kept
    /// in the session (it outlives this process) and the person is being
    /// asked.
    CallWaiting(crate::session::CallWait),
    /// A call whose wait for approval expired while no process ran the
    /// session (found when the session is settled,
    /// [`AgentSession::recover`]): it did not run, and its tool message,
    /// now stored, says so (`details.error` is `expired`). A wait that
    /// expires while its process waits ends as a
    /// [`ToolFinished`](Self::ToolFinished) with that result.
    WaitExpired {
        /// The call, as the model asked for it.
        call: ToolCallRequest,
        /// What the model is told.
        result: ToolResult,
    },
    /// An extension failed (see the module rules).
    ExtensionError(ExtensionErrorReport),
}

/// Receives [`AgentEvent`]s; called in line with the loop, so it should
/// return quickly.
pub type AgentEventSink = Arc<dyn Fn(&AgentEvent) + Send + Sync>;
