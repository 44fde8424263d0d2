//! [`ExtensionContext`]: what handlers, commands and tools of a session
//! get: who and where, the branch, the person (when there is a UI), the
//! model for nested calls, processes, and control of the run.
//!
//! Rules: every member is [`AgentError::Stale`] once the session was
//! replaced or shut down. A nested model call ([`complete`](ExtensionContext::complete))
//! goes through the same offline rule as the loop (refused before any
//! request when the endpoint is not local and the host requires
//! offline operation) and its messages are redacted before they are
//! sent. A process ([`exec`](ExtensionContext::exec),
//! [`prepare_process`](ExtensionContext::prepare_process)) is prepared by
//! the host's spawn policy (its environment built from the deny-list;
//! explicit variables after it), runs in the session directory, and is
//! then offered to `ProcessSpawnEvent` handlers, whose failure fails the
//! spawn: nothing falls back to the inherited environment.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use oscova_core::interaction::AskError;
use oscova_core::process::{ProcessSpawnContext, ProcessSpawnRequest};
use oscova_core::provider::model::{ChatMessage, ChatRequest, ChatRole, check_offline};
use oscova_core::{CancellationToken, ToolInvocation, UserInfo};

use super::dispatch::dispatch;
use super::error::AgentError;
use super::events::ProcessSpawnEvent;
use super::state::Shared;
use crate::chat::ChatError;
use crate::session::compaction::context_tokens;
use crate::session::{SessionEntry, SessionId};

/// A handler's, command's or tool's view of its session.
#[derive(Clone)]
pub struct ExtensionContext {
    pub(crate) shared: Arc<Shared>,
    pub(crate) extension: usize,
}

impl std::fmt::Debug for ExtensionContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionContext")
            .field("session", &self.shared.session_id)
            .finish_non_exhaustive()
    }
}

/// Options of [`ExtensionContext::exec`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExecOptions {
    /// Variables set (`Some`) or removed (`None`) after the policy's
    /// deny-list: a token passed here reaches this process only.
    pub env: Vec<(String, Option<String>)>,
    /// A directory instead of the session directory (relative: to it).
    pub cwd: Option<PathBuf>,
}

impl ExecOptions {
    /// No variables, the session directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value` for this process.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }
}

/// How full a session's context is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContextUsage {
    /// The context's tokens.
    pub tokens: u64,
    /// The model's window, when the host set compaction settings.
    pub window: Option<u64>,
}

/// What a process wrote and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecOutput {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output, lossily UTF-8.
    pub stdout: String,
    /// Standard error, lossily UTF-8.
    pub stderr: String,
}

impl ExtensionContext {
    pub(crate) fn new(shared: Arc<Shared>, extension: usize) -> Self {
        Self { shared, extension }
    }

    /// The session's id.
    pub fn session_id(&self) -> Result<SessionId, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.session_id.clone())
    }

    /// The user the session belongs to.
    pub fn user(&self) -> Result<&UserInfo, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.scope.user())
    }

    /// The session directory.
    pub fn cwd(&self) -> Result<&Path, AgentError> {
        self.shared.check_fresh()?;
        Ok(&self.shared.cwd)
    }

    /// The session's time zone, when the user has one.
    pub fn time_zone(&self) -> Result<Option<&str>, AgentError> {
        Ok(self.user()?.time_zone())
    }

    /// Whether a person can be asked ([`confirm`](Self::confirm),
    /// [`choose`](Self::choose)).
    pub fn has_ui(&self) -> Result<bool, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.interaction.is_some())
    }

    fn asking(&self) -> Result<ToolInvocation<'static>, AskError> {
        let handler = self
            .shared
            .interaction
            .clone()
            .ok_or_else(|| AskError::NoOneToAsk("this session has no UI".into()))?;
        Ok(
            ToolInvocation::new(Arc::new(self.shared.scope.user().clone()))
                .with_interaction_handler_arc(handler)
                .with_cancellation(self.shared.cancellation()),
        )
    }

    /// Asks the person yes or no.
    pub async fn confirm(&self, message: impl Into<String>) -> Result<bool, AgentError> {
        self.shared.check_fresh()?;
        let message = self.shared.scope.redact(&message.into()).into_owned();
        let asking = self.asking().map_err(AgentError::handler)?;
        asking.confirm(message).await.map_err(AgentError::handler)
    }

    /// Asks the person to choose; the chosen option's text.
    pub async fn choose(
        &self,
        message: impl Into<String>,
        options: &[&str],
    ) -> Result<String, AgentError> {
        self.shared.check_fresh()?;
        let message = self.shared.scope.redact(&message.into()).into_owned();
        let asking = self.asking().map_err(AgentError::handler)?;
        let index = asking
            .choose(message, options.iter().copied())
            .await
            .map_err(AgentError::handler)?;
        Ok(options
            .get(index)
            .map(|o| (*o).to_owned())
            .unwrap_or_default())
    }

    /// The active branch, root first (read-only copies): where extension
    /// state kept with `append_entry` is read back.
    pub async fn branch(&self) -> Result<Vec<SessionEntry>, AgentError> {
        self.shared.check_fresh()?;
        let session = self.shared.session.lock().await;
        Ok(session.branch().into_iter().cloned().collect())
    }

    /// The session's model: provider type key and model.
    pub fn model(&self) -> Result<Option<(String, String)>, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.state().model.as_ref().map(|m| {
            (
                m.config.provider.to_string(),
                m.config.model.clone().unwrap_or_default(),
            )
        }))
    }

    /// The thinking level.
    pub fn thinking_level(&self) -> Result<String, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.state().thinking_level.clone())
    }

    /// Whether no run is in progress.
    pub fn is_idle(&self) -> Result<bool, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.idle.load(Ordering::Acquire))
    }

    /// Cancels the run in progress (the model call or tool running now).
    pub fn abort(&self) -> Result<(), AgentError> {
        self.shared.check_fresh()?;
        self.shared.cancellation().cancel();
        Ok(())
    }

    /// Cancelled when the run is aborted.
    pub fn signal(&self) -> Result<CancellationToken, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.cancellation())
    }

    /// The system prompt of the latest run (empty before the first).
    pub fn system_prompt(&self) -> Result<String, AgentError> {
        self.shared.check_fresh()?;
        Ok(self.shared.state().system_prompt.clone())
    }

    /// How full the context is: its tokens (the provider's count where
    /// trusted, else pi's estimate), and the window when the host
    /// compacts automatically.
    pub async fn context_usage(&self) -> Result<ContextUsage, AgentError> {
        self.shared.check_fresh()?;
        let tokens = {
            let session = self.shared.session.lock().await;
            context_tokens(&session.branch())
        };
        Ok(ContextUsage {
            tokens,
            window: self.shared.host.compaction.map(|c| c.context_window),
        })
    }

    /// Asks for a compaction when the run in progress (or the command) is
    /// done, whatever the context's size; the before-compact handlers
    /// still decide.
    pub fn compact(&self) -> Result<(), AgentError> {
        self.shared.check_fresh()?;
        self.shared.state().compact_requested = true;
        Ok(())
    }

    /// From a command: switches the agent to the user's session `name`
    /// (created when missing) when the command is done, as
    /// [`AgentSession::switch`](super::AgentSession::switch) does (a
    /// handler may cancel it). The pi command context's `newSession` is
    /// this with a new name.
    pub fn switch_session(&self, name: impl Into<String>) -> Result<(), AgentError> {
        self.shared.check_fresh()?;
        self.shared.state().switch_requested = Some(name.into());
        Ok(())
    }

    /// Whether messages wait for delivery.
    pub fn has_pending_messages(&self) -> Result<bool, AgentError> {
        self.shared.check_fresh()?;
        Ok(!self.shared.state().queues.is_empty())
    }

    /// A nested model call with the session's model: `messages` in, the
    /// answer out, no tools (see the module rules).
    pub async fn complete(&self, messages: Vec<ChatMessage>) -> Result<ChatMessage, AgentError> {
        self.shared.check_fresh()?;
        let choice = self.shared.state().model.clone().ok_or_else(|| {
            AgentError::Chat(ChatError::NoModel {
                provider: "(none)".into(),
            })
        })?;
        self.complete_on(choice, messages).await
    }

    /// A nested model call with another provider the host built, and
    /// `model` (its configured one when `None`).
    pub async fn complete_with(
        &self,
        provider: &str,
        model: Option<&str>,
        messages: Vec<ChatMessage>,
    ) -> Result<ChatMessage, AgentError> {
        self.shared.check_fresh()?;
        let choice = self.shared.host.model_for(provider, model)?;
        self.complete_on(choice, messages).await
    }

    async fn complete_on(
        &self,
        choice: super::state::ModelChoice,
        mut messages: Vec<ChatMessage>,
    ) -> Result<ChatMessage, AgentError> {
        let config = &choice.config;
        check_offline(config, &*choice.provider, self.shared.host.offline)?;
        let model = config
            .model
            .as_deref()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| {
                AgentError::Chat(ChatError::NoModel {
                    provider: config.provider.to_string(),
                })
            })?;
        for message in &mut messages {
            message.content = self.shared.scope.redact(&message.content).into_owned();
        }
        let request = ChatRequest {
            config,
            api_key: choice.api_key.as_ref(),
            model,
            messages: &messages,
            tools: &[],
            stream: None,
            cancel: self.shared.cancellation(),
        };
        let mut answer = choice.provider.chat(request).await?.message;
        answer.role = ChatRole::Assistant;
        Ok(answer)
    }

    /// Prepares a process through the host's spawn policy and the
    /// session's `ProcessSpawnEvent` handlers (see the module rules);
    /// start it with [`ProcessSpawnContext::to_command`].
    pub async fn prepare_process(
        &self,
        request: ProcessSpawnRequest,
    ) -> Result<ProcessSpawnContext, AgentError> {
        self.shared.check_fresh()?;
        let mut context = self.shared.host.plugins.spawn_policy().prepare(request)?;
        if context.cwd.is_none() {
            context.cwd = Some(self.shared.cwd.clone());
        }
        if context.origin.is_none() {
            context.origin = Some(self.shared.extension_name(self.extension));
        }
        let event = dispatch(&self.shared, ProcessSpawnEvent { context }).await?;
        Ok(event.context)
    }

    /// Runs `command` with `args` in the session directory, prepared as
    /// [`prepare_process`](Self::prepare_process) does, and waits for it;
    /// an abort kills it.
    pub async fn exec(
        &self,
        command: &str,
        args: &[&str],
        options: ExecOptions,
    ) -> Result<ExecOutput, AgentError> {
        let mut request = ProcessSpawnRequest::new(command)
            .args(args.iter().copied())
            .cwd(match options.cwd {
                Some(dir) => self.shared.cwd.join(dir),
                None => self.shared.cwd.clone(),
            })
            .origin(self.shared.extension_name(self.extension));
        if let Some(zone) = self.shared.scope.user().time_zone() {
            request = request.time_zone(zone);
        }
        for (key, value) in options.env {
            request = match value {
                Some(value) => request.env(key, value),
                None => request.env_remove(key),
            };
        }
        let context = self.prepare_process(request).await?;
        let cancel = self.shared.cancellation();
        let mut command = context.to_command();
        let output = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(AgentError::Chat(ChatError::Cancelled)),
            output = command.output() => output,
        };
        let output = output.map_err(|e| {
            AgentError::handler(format!(
                "could not run `{}`: {e}",
                context.command.to_string_lossy()
            ))
        })?;
        Ok(ExecOutput {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}
