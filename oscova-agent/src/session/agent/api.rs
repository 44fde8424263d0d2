//! [`SessionApi`]: what an extension registers with and acts through.
//!
//! Rules: registration members ([`on`](SessionApi::on),
//! [`register_toolset`](SessionApi::register_toolset),
//! [`register_command`](SessionApi::register_command),
//! [`events`](SessionApi::events)) and the boundaries
//! ([`redact`](SessionApi::redact), [`spawn_policy`](SessionApi::spawn_policy),
//! [`span`](SessionApi::span))
//! work from `activate` on; every other member is an action and is
//! [`AgentError::NotBound`] until activation is done. Every member is
//! [`AgentError::Stale`] once the session is replaced or shut down. Text
//! sent with [`send_message`](SessionApi::send_message) or
//! [`send_user_message`](SessionApi::send_user_message) reaches the model
//! as given: the loop redacts tool results, not these; pass what may hold
//! a secret through [`redact`](SessionApi::redact) first.

use std::sync::Arc;

use oscova_core::Toolset;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::model::ChatMessage;
use oscova_core::tool::ContentBlock;
use serde_json::Value;

use super::bus::EventBus;
use super::commands::{Command, CommandInfo};
use super::context::{ExecOptions, ExecOutput, ExtensionContext};
use super::dispatch::{Handler, Subscription, dispatch};
use super::error::AgentError;
use super::events::{
    Event, ExtensionMessage, ModelSelectEvent, SessionInfoChangedEvent, ThinkingLevelSelectEvent,
};
use super::state::{Delivery, Pending, Shared};
use crate::session::EntryKind;

/// An extension's handle on its session. Clone it into handlers and
/// commands that act later.
#[derive(Clone)]
pub struct SessionApi {
    pub(crate) shared: Arc<Shared>,
    pub(crate) extension: usize,
}

impl std::fmt::Debug for SessionApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionApi")
            .field("extension", &self.shared.extension_name(self.extension))
            .finish_non_exhaustive()
    }
}

impl SessionApi {
    pub(crate) fn new(shared: Arc<Shared>, extension: usize) -> Self {
        Self { shared, extension }
    }

    /// The extension's name.
    pub fn name(&self) -> String {
        self.shared.extension_name(self.extension)
    }

    // Registration.

    /// Subscribes `handler` to events of type `E`: it gets the event and a
    /// context and returns the event, changed or not.
    pub fn on<E, F, Fut>(&self, handler: F) -> Subscription
    where
        E: Event,
        F: Fn(E, ExtensionContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<E, AgentError>> + Send + 'static,
    {
        let handler: Handler<E> = Arc::new(move |event, ctx| Box::pin(handler(event, ctx)));
        self.shared.handlers().add(self.extension, handler)
    }

    /// Unsubscribes; `false` when it was not subscribed.
    pub fn off(&self, subscription: Subscription) -> bool {
        self.shared.handlers().remove(subscription)
    }

    /// Adds the tools of a `#[toolset]` value, each by its own tool name
    /// (`hello`); the first registration of a name wins, a later one is an
    /// `extension_error`. Returns the names added.
    pub fn register_toolset<T: Toolset>(&self, toolset: T) -> Vec<String> {
        let (added, taken) =
            self.shared
                .state()
                .tools
                .add(self.extension, Arc::new(toolset), T::toolset_info());
        for name in taken {
            let message = format!("tool `{name}` is registered already; the first one is kept");
            self.shared
                .report_error(self.extension, "register_tool", &message);
        }
        added
    }

    /// Adds `/name`; a name taken already gets `name:2`, `name:3`.
    /// Returns the name given.
    pub fn register_command(&self, name: &str, command: Command) -> String {
        self.shared
            .state()
            .commands
            .add(name, self.extension, command)
    }

    /// The bus the session's extensions share.
    pub fn events(&self) -> EventBus {
        EventBus {
            shared: Arc::downgrade(&self.shared),
            extension: self.extension,
        }
    }

    /// `text` with the user's and the host's known secrets replaced by
    /// `[REDACTED]`: for text sent to the model other than by a tool.
    pub fn redact(&self, text: &str) -> String {
        self.shared.scope.redact(text).into_owned()
    }

    /// A tracing span named after the extension (the peer runtime's
    /// `Logger`): enter it around what the extension logs with `tracing`.
    pub fn span(&self) -> tracing::Span {
        tracing::info_span!("extension", name = %self.name())
    }

    /// The host's spawn policy, for processes outside a session's events
    /// (during activation): only the host's hooks run.
    pub fn spawn_policy(&self) -> ProcessSpawnPolicy {
        self.shared.host.plugins.spawn_policy().clone()
    }

    // Actions.

    /// A context for this extension, as handlers get.
    pub fn context(&self) -> Result<ExtensionContext, AgentError> {
        self.shared.check_bound("context")?;
        Ok(ExtensionContext::new(self.shared.clone(), self.extension))
    }

    /// Injects a custom message (the model sees it as a user message),
    /// delivered as `delivery` says; `trigger_turn` starts a run when the
    /// agent is idle.
    pub fn send_message(
        &self,
        message: ExtensionMessage,
        delivery: Delivery,
        trigger_turn: bool,
    ) -> Result<(), AgentError> {
        self.shared.check_bound("send_message")?;
        self.enqueue(Pending::Custom(message), delivery, trigger_turn);
        Ok(())
    }

    /// Injects a user message; it always starts a run (when the agent is
    /// idle, as soon as the host asks for pending work).
    pub fn send_user_message(
        &self,
        text: impl Into<String>,
        images: Vec<ContentBlock>,
        delivery: Delivery,
    ) -> Result<(), AgentError> {
        self.shared.check_bound("send_user_message")?;
        let message = ChatMessage::user(text).with_attachments(images);
        self.enqueue(Pending::User(message), delivery, true);
        Ok(())
    }

    fn enqueue(&self, message: Pending, delivery: Delivery, trigger: bool) {
        self.shared.enqueue(message, delivery, trigger);
    }

    /// Keeps extension state on the branch: a `custom` entry, stored with
    /// the session and read back with [`ExtensionContext::branch`] (at
    /// session start, say, to restore the state after a restart).
    ///
    /// The entry **never reaches the model**: it is in no context the
    /// model is sent, now or after a restart. To show the model the state,
    /// put it where the model reads: a section of the system prompt (in a
    /// [`BeforeAgentStartEvent`](super::BeforeAgentStartEvent) handler,
    /// `event.prompt.sections`), a message added to the
    /// [`ContextEvent`](super::ContextEvent) before each model call (sent,
    /// not stored), or a message of its own with
    /// [`send_message`](Self::send_message) (stored, so in every later
    /// context).
    pub async fn append_entry(
        &self,
        custom_type: impl Into<String>,
        data: Value,
    ) -> Result<(), AgentError> {
        self.shared.check_bound("append_entry")?;
        let kind = EntryKind::Custom {
            custom_type: custom_type.into(),
            data: Some(data),
        };
        self.shared.session.lock().await.append(kind).await?;
        Ok(())
    }

    /// The session's model: provider type key and model.
    pub fn model(&self) -> Result<Option<(String, String)>, AgentError> {
        self.shared.check_bound("model")?;
        Ok(self.shared.state().model.as_ref().map(|m| {
            (
                m.config.provider.to_string(),
                m.config.model.clone().unwrap_or_default(),
            )
        }))
    }

    /// Sets the session's model (stored as a `model_change` entry) and
    /// dispatches `ModelSelectEvent`.
    pub async fn set_model(&self, provider: &str, model: &str) -> Result<(), AgentError> {
        self.shared.check_bound("set_model")?;
        let choice = self.shared.host.model_for(provider, Some(model))?;
        let kind = EntryKind::ModelChange {
            provider: provider.to_owned(),
            model_id: model.to_owned(),
        };
        self.shared.session.lock().await.append(kind).await?;
        let previous = self
            .shared
            .state()
            .model
            .replace(choice)
            .and_then(|m| m.config.model);
        let event = ModelSelectEvent {
            provider: provider.to_owned(),
            model: model.to_owned(),
            previous,
        };
        dispatch(&self.shared, event).await?;
        Ok(())
    }

    /// The session's thinking level (`off` until set).
    pub fn thinking_level(&self) -> Result<String, AgentError> {
        self.shared.check_bound("thinking_level")?;
        Ok(self.shared.state().thinking_level.clone())
    }

    /// Sets the thinking level (a `thinking_level_change` entry) and
    /// dispatches `ThinkingLevelSelectEvent`.
    pub async fn set_thinking_level(&self, level: &str) -> Result<(), AgentError> {
        self.shared.check_bound("set_thinking_level")?;
        let kind = EntryKind::ThinkingLevelChange {
            thinking_level: level.to_owned(),
        };
        self.shared.session.lock().await.append(kind).await?;
        let previous = std::mem::replace(&mut self.shared.state().thinking_level, level.to_owned());
        let event = ThinkingLevelSelectEvent {
            level: level.to_owned(),
            previous,
        };
        dispatch(&self.shared, event).await?;
        Ok(())
    }

    /// The tools the model is offered, by name: every tool unless
    /// [`set_active_tools`](Self::set_active_tools) narrowed them.
    pub fn active_tools(&self) -> Result<Vec<String>, AgentError> {
        self.shared.check_bound("active_tools")?;
        let all = self.all_tools()?;
        Ok(match &self.shared.state().active_tools {
            None => all,
            Some(active) => all.into_iter().filter(|t| active.contains(t)).collect(),
        })
    }

    /// Offers the model only these tools (names from
    /// [`all_tools`](Self::all_tools)); a call of another is refused.
    pub fn set_active_tools(&self, names: Vec<String>) -> Result<(), AgentError> {
        self.shared.check_bound("set_active_tools")?;
        self.shared.state().active_tools = Some(names);
        Ok(())
    }

    /// Every tool: the user scope's wire names, then the extensions'.
    pub fn all_tools(&self) -> Result<Vec<String>, AgentError> {
        self.shared.check_bound("all_tools")?;
        let mut names: Vec<String> = self
            .shared
            .scope
            .tools()
            .map(|t| t.wire_name().to_owned())
            .collect();
        names.extend(self.shared.state().tools.names());
        Ok(names)
    }

    /// The commands, in registration order.
    pub fn commands(&self) -> Result<Vec<CommandInfo>, AgentError> {
        self.shared.check_bound("commands")?;
        let state = self.shared.state();
        Ok(state.commands.list(&state.names))
    }

    /// The session's display name.
    pub async fn session_name(&self) -> Result<Option<String>, AgentError> {
        self.shared.check_bound("session_name")?;
        Ok(self
            .shared
            .session
            .lock()
            .await
            .display_name()
            .map(str::to_owned))
    }

    /// Sets the display name (a `session_info` entry) and dispatches
    /// `SessionInfoChangedEvent`.
    pub async fn set_session_name(&self, name: impl Into<String>) -> Result<(), AgentError> {
        self.shared.check_bound("set_session_name")?;
        let name = Some(name.into());
        let kind = EntryKind::SessionInfo { name: name.clone() };
        self.shared.session.lock().await.append(kind).await?;
        dispatch(&self.shared, SessionInfoChangedEvent { name }).await?;
        Ok(())
    }

    /// Runs `command` with `args` in the session directory (see
    /// [`ExtensionContext::exec`]), its origin this extension.
    pub async fn exec(
        &self,
        command: &str,
        args: &[&str],
        options: ExecOptions,
    ) -> Result<ExecOutput, AgentError> {
        self.shared.check_bound("exec")?;
        ExtensionContext::new(self.shared.clone(), self.extension)
            .exec(command, args, options)
            .await
    }
}
