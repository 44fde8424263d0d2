//! What goes wrong in a session agent, as one error type.
//!
//! Rules: an action member of the API used while its extension is being
//! activated is [`AgentError::NotBound`], naming the member; an API or a
//! context kept after its session was replaced or shut down is
//! [`AgentError::Stale`]. Handlers return [`AgentError::Handler`] (made
//! with [`AgentError::handler`]) for their own failures; the dispatcher
//! turns it into an `extension_error` event and goes on.

use oscova_core::process::SpawnError;
use oscova_core::provider::model::ModelError;

use crate::chat::ChatError;
use crate::session::SessionError;
use crate::session::compaction::CompactionError;

/// Why a session agent, an extension or one of its handlers failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// An action member was called while the extension was being
    /// activated: register there, act from a `SessionStartEvent` handler.
    #[error(
        "`{member}` is not bound yet: extensions register tools, commands and handlers in \
         `activate`, and act from a session start handler or later"
    )]
    NotBound {
        /// The member called.
        member: &'static str,
    },
    /// The API or context belongs to a session that was replaced or shut
    /// down.
    #[error("stale extension context: its session was replaced or shut down")]
    Stale,
    /// A handler, command or extension failed.
    #[error("{0}")]
    Handler(String),
    /// An extension's `activate` failed; the others still load.
    #[error("extension `{extension}` failed to activate: {message}")]
    Activation {
        /// The extension's name.
        extension: String,
        /// Why.
        message: String,
    },
    /// The voice loop failed: its models, or its session's task
    /// ([`VoiceConversation`](crate::session::voice::VoiceConversation)).
    #[cfg(feature = "voice")]
    #[error("the voice conversation failed: {0}")]
    Voice(String),
    /// No command by that name.
    #[error("unknown command `/{0}`; /help lists the commands")]
    UnknownCommand(String),
    /// No command of the host's extensions offers a prompt of this name.
    #[error("unknown prompt `{0}`")]
    UnknownPrompt(String),
    /// An argument the prompt form does not declare.
    #[error("prompt `{prompt}` has no argument `{argument}`; it takes: {known}")]
    UnknownPromptArgument {
        /// The prompt.
        prompt: String,
        /// The argument given.
        argument: String,
        /// The declared ones, comma-separated (empty when none).
        known: String,
    },
    /// A required argument of the prompt form was not given.
    #[error("prompt `{prompt}` needs the argument `{argument}`")]
    MissingPromptArgument {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// The text is not a command (it does not start with `/`).
    #[error("not a command: a command starts with `/`")]
    NotACommand,
    /// No model provider with that type key was built by the host.
    #[error("no model provider `{0}` is available in this host")]
    UnknownProvider(String),
    /// An extension asked the agent to run while it was running.
    #[error("the agent is already running; queue a message with a delivery instead")]
    Busy,
    /// The process spawn was refused or failed.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// Reading or writing the session failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The model call failed.
    #[error(transparent)]
    Chat(#[from] ChatError),
    /// The model provider failed to answer a run's model call. Everything
    /// before the call is kept in the session, the person's message and
    /// any tool results included:
    /// [`AgentSession::retry`](super::AgentSession::retry) asks the model
    /// again on that context, without sending the message twice (a new
    /// prompt with the same text would add it again).
    #[error(
        "{error}; the session keeps everything before the model call, the message included: \
         retry asks the model again without sending it twice"
    )]
    ModelCall {
        /// Why the call failed.
        error: ChatError,
    },
    /// [`AgentSession::retry`](super::AgentSession::retry) found nothing
    /// waiting for the model: the session's last message is an answer.
    #[error("nothing to retry: the session's last message is an answer; send a new message")]
    NothingToRetry,
    /// A compaction did not happen.
    #[error(transparent)]
    Compaction(#[from] CompactionError),
}

impl AgentError {
    /// A handler's own failure, with its message.
    pub fn handler(message: impl std::fmt::Display) -> Self {
        Self::Handler(message.to_string())
    }

    /// A short code for the kind of error, as `extension_error` events and
    /// JSON output carry it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotBound { .. } => "not_bound",
            Self::Stale => "stale",
            Self::Handler(_) => "handler_failed",
            Self::Activation { .. } => "activation_failed",
            Self::UnknownCommand(_) => "unknown_command",
            Self::UnknownPrompt(_) => "unknown_prompt",
            Self::UnknownPromptArgument { .. } => "unknown_prompt_argument",
            Self::MissingPromptArgument { .. } => "missing_prompt_argument",
            Self::NotACommand => "not_a_command",
            Self::UnknownProvider(_) => "unknown_provider",
            Self::Busy => "busy",
            Self::Spawn(_) => "spawn_failed",
            Self::Session(_) => "session",
            Self::Chat(_) | Self::ModelCall { .. } => "model",
            Self::NothingToRetry => "nothing_to_retry",
            Self::Compaction(_) => "compaction",
            #[cfg(feature = "voice")]
            Self::Voice(_) => "voice",
        }
    }
}

impl From<ModelError> for AgentError {
    fn from(error: ModelError) -> Self {
        Self::Chat(error.into())
    }
}
