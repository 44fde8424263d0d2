//! What one session agent shares with its extensions' APIs and contexts.
//!
//! Rules: one `Shared` per activation of a session. Replacing the session
//! (a switch) or shutting it down marks it stale, so every API and context
//! made for it fails with [`AgentError::Stale`] from then on; a new
//! activation gets a new `Shared`. Action members are refused until the
//! activation is done (`bound`). Locks are held for short, synchronous
//! steps only and never across an `await`, except the session's own
//! (a `tokio` mutex, held for one store write or read at a time), so a
//! handler may call any member while the loop runs.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use oscova_core::host::ApprovalHandler;
use oscova_core::interaction::InteractionHandler;
use oscova_core::provider::model::{ChatMessage, ModelProvider, ModelProviderConfig};
use oscova_core::{CancellationToken, SecretString, UserScope};

use super::bus::Bus;
use super::commands::Commands;
use super::dispatch::Handlers;
use super::error::AgentError;
use super::events::ExtensionMessage;
use super::host::HostParts;
use super::tools::ExtensionTools;
use super::{AgentEvent, AgentEventSink, ExtensionErrorReport};
use crate::session::{Session, SessionId};

/// When a message an extension sends reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// As soon as the tool running now is done: in a sequential batch the
    /// rest of its tool calls is skipped (each answered by a tool message
    /// saying so; a concurrent batch finishes), and the message goes to
    /// the model in the next call. Idle: with the next run.
    Steer,
    /// When the agent has nothing left to do: another turn then. Idle:
    /// with the next run.
    FollowUp,
    /// With the next prompt the person sends.
    NextTurn,
}

/// A message waiting for its delivery.
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    User(ChatMessage),
    Custom(ExtensionMessage),
}

#[derive(Default)]
pub(crate) struct Queues {
    pub(crate) steer: VecDeque<Pending>,
    pub(crate) follow_up: VecDeque<Pending>,
    pub(crate) next_turn: VecDeque<Pending>,
    /// A message asked for a turn while the agent was idle.
    pub(crate) trigger: bool,
}

impl Queues {
    pub(crate) fn is_empty(&self) -> bool {
        self.steer.is_empty() && self.follow_up.is_empty() && self.next_turn.is_empty()
    }
}

/// The session's model.
#[derive(Clone)]
pub(crate) struct ModelChoice {
    pub(crate) provider: Arc<dyn ModelProvider>,
    pub(crate) config: ModelProviderConfig,
    pub(crate) api_key: Option<SecretString>,
}

pub(crate) struct State {
    pub(crate) queues: Queues,
    /// `None`: every tool.
    pub(crate) active_tools: Option<Vec<String>>,
    pub(crate) model: Option<ModelChoice>,
    pub(crate) thinking_level: String,
    pub(crate) commands: Commands,
    pub(crate) tools: ExtensionTools,
    pub(crate) names: Vec<String>,
    /// The system prompt of the latest run.
    pub(crate) system_prompt: String,
    /// `ExtensionContext::compact` asked for a compaction after the run.
    pub(crate) compact_requested: bool,
    /// `ExtensionContext::switch_session` asked for this session.
    pub(crate) switch_requested: Option<String>,
}

pub(crate) struct Shared {
    pub(crate) host: Arc<HostParts>,
    pub(crate) scope: UserScope,
    pub(crate) session: tokio::sync::Mutex<Session>,
    pub(crate) session_id: SessionId,
    pub(crate) cwd: PathBuf,
    pub(crate) interaction: Option<Arc<dyn InteractionHandler>>,
    /// Who approves the session's scope tool calls, in front of the
    /// host's (`wait.rs`'s `KeptApproval`).
    pub(crate) approval: Option<Arc<dyn ApprovalHandler>>,
    /// How long a new wait for a person lasts (`wait.rs`).
    pub(crate) wait_expiry: std::time::Duration,
    pub(crate) sink: Option<AgentEventSink>,
    pub(crate) bound: AtomicBool,
    pub(crate) stale: AtomicBool,
    pub(crate) idle: AtomicBool,
    /// Told when a message asks for a turn (`AgentSession::pending`).
    pub(crate) wake: tokio::sync::Notify,
    pub(crate) cancel: Mutex<CancellationToken>,
    pub(crate) handlers: Mutex<Handlers>,
    pub(crate) bus: Bus,
    pub(crate) state: Mutex<State>,
    pub(crate) errors: Mutex<Vec<ExtensionErrorReport>>,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn handlers(&self) -> MutexGuard<'_, Handlers> {
        self.handlers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fails when the session was replaced or shut down.
    pub(crate) fn check_fresh(&self) -> Result<(), AgentError> {
        if self.stale.load(Ordering::Acquire) {
            return Err(AgentError::Stale);
        }
        Ok(())
    }

    /// Fails during activation, and when stale.
    pub(crate) fn check_bound(&self, member: &'static str) -> Result<(), AgentError> {
        self.check_fresh()?;
        if !self.bound.load(Ordering::Acquire) {
            return Err(AgentError::NotBound { member });
        }
        Ok(())
    }

    pub(crate) fn extension_name(&self, extension: usize) -> String {
        self.state()
            .names
            .get(extension)
            .cloned()
            .unwrap_or_else(|| format!("extension #{extension}"))
    }

    pub(crate) fn emit(&self, event: AgentEvent) {
        if let Some(sink) = &self.sink {
            sink(&event);
        }
    }

    /// Records an `extension_error` and tells the host.
    pub(crate) fn report_error(&self, extension: usize, event: &str, message: &str) {
        let report = ExtensionErrorReport {
            extension: self.extension_name(extension),
            event: event.to_owned(),
            message: self.scope.redact(message).into_owned(),
        };
        tracing::warn!(
            extension = %report.extension,
            event = %report.event,
            message = %report.message,
            "extension_error"
        );
        self.emit(AgentEvent::ExtensionError(report.clone()));
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(report);
    }

    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
