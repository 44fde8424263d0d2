//! The agent loop: a prompt (or a command, or pending messages) becomes a
//! run of turns, each one model call and the tool calls it asked for.
//!
//! Rules, in order: `InputEvent` (change the text or images, or consume
//! it); a batch a stopped process left unanswered is settled first
//! (`recover.rs`: what finished is kept, what started is reported
//! interrupted unless its tool is idempotent, what had not started runs);
//! the run starts with the messages queued for the next turn, the prompt,
//! and what steering or follow-ups waited while idle;
//! `BeforeAgentStartEvent` (the system prompt's options, its override,
//! injected messages); `AgentStartEvent`; then turns: `TurnStartEvent`,
//! steering messages delivered, the context built from the branch,
//! `ContextEvent`, `BeforeProviderRequestEvent`, the model call
//! (`MessageStart`, `MessageUpdate` per streamed piece, `MessageEnd`: the
//! message may be replaced, same role, before it is stored), the batch's
//! tool calls (`batch.rs`, each call as `tools.rs` runs it: its started
//! mark committed before its tool runs; concurrently, as the chat loop runs
//! a batch, unless a tool of the batch is sequential: then one after
//! another; each tool message stored once it and those before it are
//! final), `TurnEndEvent`. In a sequential batch, a steering message queued
//! while a tool runs skips the rest of the batch: each skipped call is
//! answered by a tool message saying so, and the next model call sees the
//! steering message (a concurrent batch has no rest: it is delivered
//! after). When every call of the batch ran and returned a terminating
//! result, the run ends there (unless a handler set `continue_requested`).
//! Another turn follows when the model asked for tools, a handler set
//! `continue_requested`, or steering waits; else follow-ups are delivered
//! and another turn follows; else `AgentEndEvent` and `AgentSettledEvent`.
//! Every message is stored on the session as soon as it is final, so the
//! branch is the conversation whatever stops the run; every tool call
//! stored is answered, even on cancellation or when the bound on turns
//! (`max_turns`) is reached. The offline rule is checked before every model
//! call. A provider that fails to answer ends the run with
//! [`AgentError::ModelCall`]: the person's message and the results before
//! it stay stored, and [`AgentSession::retry`] asks the model again on
//! them, where a new prompt with the same text would send it twice.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatRole, ChatStreamEvent, ChatStreamSink, ToolSpec, check_offline,
};
use oscova_core::tool::ContentBlock;

use super::AgentEvent;
use super::dispatch::dispatch;
use super::error::AgentError;
use super::events::{
    AgentEndEvent, AgentSettledEvent, AgentStartEvent, BeforeAgentStartEvent,
    BeforeProviderRequestEvent, ContextEvent, InputEvent, MessageEndEvent, MessageStartEvent,
    MessageUpdateEvent, ProviderPayload, SystemPromptOptions, TurnEndEvent, TurnStartEvent,
};
use super::host::AgentSession;
use super::state::{Pending, Shared};
use crate::chat::{ChatError, ToolsPromptSection, name_calls};
use crate::session::compaction::CompactionOutcome;
use crate::session::{AgentMessage, EntryKind, MessageContent, ModelRef, iso_to_millis, now_iso};

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The model's last answer (empty when no model call was made).
    pub text: String,
    /// The model calls made.
    pub turns: usize,
    /// The tool calls answered (run, blocked, refused or skipped), those
    /// of a batch settled after a crash included.
    pub tool_calls: usize,
    /// Whether an `InputEvent` handler consumed the input (no run).
    pub handled: bool,
    /// The automatic compaction after the run, when it compacted.
    pub compaction: Option<CompactionOutcome>,
    /// Why the automatic compaction failed, when it did (the run itself
    /// succeeded).
    pub compaction_error: Option<String>,
}

impl AgentSession {
    /// Runs `text` as the person's prompt (see the module rules).
    pub async fn prompt(&mut self, text: impl Into<String>) -> Result<RunOutcome, AgentError> {
        self.prompt_with(text, Vec::new()).await
    }

    /// Runs `text` with images as the person's prompt.
    pub async fn prompt_with(
        &mut self,
        text: impl Into<String>,
        images: Vec<ContentBlock>,
    ) -> Result<RunOutcome, AgentError> {
        self.shared.check_fresh()?;
        let event = InputEvent {
            text: text.into(),
            images,
            handled: false,
        };
        let event = dispatch(&self.shared, event).await?;
        if event.handled {
            return Ok(RunOutcome {
                text: String::new(),
                turns: 0,
                tool_calls: 0,
                handled: true,
                compaction: None,
                compaction_error: None,
            });
        }
        let message = ChatMessage::user(event.text).with_attachments(event.images);
        self.run(vec![Pending::User(message)], false).await
    }

    /// Runs what extensions asked for while the agent was idle (a user
    /// message, a message with `trigger_turn`); `None` when nothing waits.
    pub async fn run_pending(&mut self) -> Result<Option<RunOutcome>, AgentError> {
        let trigger = std::mem::take(&mut self.shared.state().queues.trigger);
        if !trigger {
            return Ok(None);
        }
        self.run(Vec::new(), false).await.map(Some)
    }

    /// Asks the model again after a run whose model call failed
    /// ([`AgentError::ModelCall`]): the branch as it is (the person's
    /// message, the tool results before the failure) is the context, and
    /// nothing is sent twice; the run then goes on as any run. A batch a
    /// stopped process left is settled first, as every run does.
    /// [`AgentError::NothingToRetry`] when nothing waits for the model (the
    /// branch's last message is an answer without tool calls, or there is
    /// none).
    pub async fn retry(&mut self) -> Result<RunOutcome, AgentError> {
        self.shared.check_fresh()?;
        let waits = self
            .shared
            .session
            .lock()
            .await
            .chat_messages()
            .last()
            .is_some_and(|m| m.role != ChatRole::Assistant || !m.tool_calls.is_empty());
        if !waits {
            return Err(AgentError::NothingToRetry);
        }
        self.run(Vec::new(), false).await
    }

    /// A run: `initial` delivered first; `recovering` (`recover.rs`): no
    /// input, and the run ends after settling when the batch asked to.
    pub(super) async fn run(
        &mut self,
        initial: Vec<Pending>,
        recovering: bool,
    ) -> Result<RunOutcome, AgentError> {
        let shared = self.shared.clone();
        shared.check_fresh()?;
        if !shared.idle.swap(false, Ordering::AcqRel) {
            return Err(AgentError::Busy);
        }
        // Idle again however the run ends, a dropped future included.
        let _idle = IdleAgain(&shared);
        *shared.cancel.lock().unwrap_or_else(|p| p.into_inner()) = self.parent_cancel.child_token();
        let mut outcome = Run { shared: &shared }.go(initial, recovering).await?;
        self.compact_after(&mut outcome).await;
        Ok(outcome)
    }
}

struct IdleAgain<'a>(&'a Shared);

impl Drop for IdleAgain<'_> {
    fn drop(&mut self) {
        self.0.idle.store(true, Ordering::Release);
    }
}

pub(super) struct Run<'a> {
    pub(super) shared: &'a Arc<Shared>,
}

impl Run<'_> {
    async fn go(&self, initial: Vec<Pending>, recovering: bool) -> Result<RunOutcome, AgentError> {
        let shared = self.shared;
        let mut added = Vec::new();
        let settled = self.settle(&mut added).await?;
        let mut first: Vec<Pending> = {
            let mut state = shared.state();
            let queues = &mut state.queues;
            queues.trigger = false;
            let mut first: Vec<Pending> = queues.next_turn.drain(..).collect();
            first.extend(initial);
            first.extend(queues.steer.drain(..));
            first.extend(queues.follow_up.drain(..));
            first
        };
        let tools = self.tool_names();
        let mut section = ToolsPromptSection::from_scope(&shared.scope, &tools);
        shared.state().tools.prompt(&tools, &mut section);
        let prompt = SystemPromptOptions {
            base: shared.host.system_prompt.clone(),
            sections: Vec::new(),
            tools: section,
        };
        let event = BeforeAgentStartEvent {
            prompt,
            system_prompt_override: None,
            injected_messages: Vec::new(),
        };
        let event = dispatch(shared, event).await?;
        let system = event
            .system_prompt_override
            .unwrap_or_else(|| event.prompt.render());
        shared.state().system_prompt = system.clone();
        first.extend(event.injected_messages.into_iter().map(Pending::Custom));
        self.deliver(first, &mut added).await?;
        dispatch(shared, AgentStartEvent {}).await?;

        let mut outcome = RunOutcome {
            text: String::new(),
            turns: 0,
            tool_calls: settled.calls,
            handled: false,
            compaction: None,
            compaction_error: None,
        };
        if recovering && settled.terminate {
            // The settled batch ends the run, as it would have.
            self.end(added).await;
            return Ok(outcome);
        }
        let max_turns = shared.host.max_turns;
        loop {
            if outcome.turns == max_turns {
                self.end(added).await;
                return Err(ChatError::RoundLimit {
                    max_rounds: max_turns,
                    pending: Vec::new(),
                }
                .into());
            }
            outcome.turns += 1;
            let turn = outcome.turns;
            dispatch(shared, TurnStartEvent { turn }).await?;
            let steering: Vec<Pending> = shared.state().queues.steer.drain(..).collect();
            self.deliver(steering, &mut added).await?;
            let message = self.model_call(&system, turn).await?;
            added.push(message.clone());
            outcome.text = message.content.clone();
            let (results, terminate) = self.run_batch(&message.tool_calls, &mut added).await?;
            outcome.tool_calls += results.len();
            let event = TurnEndEvent {
                turn,
                message: message.clone(),
                tool_results: results,
                continue_requested: false,
            };
            let event = dispatch(shared, event).await?;
            if terminate && !event.continue_requested {
                // Every call of the batch asked to end the run.
                break;
            }
            let steer_waits = !shared.state().queues.steer.is_empty();
            if !message.tool_calls.is_empty() || event.continue_requested || steer_waits {
                continue;
            }
            let follow_ups: Vec<Pending> = shared.state().queues.follow_up.drain(..).collect();
            if follow_ups.is_empty() {
                break;
            }
            self.deliver(follow_ups, &mut added).await?;
        }
        self.end(added).await;
        Ok(outcome)
    }

    async fn end(&self, added: Vec<ChatMessage>) {
        let _ = dispatch(self.shared, AgentEndEvent { messages: added }).await;
        let settled = {
            let queues = &self.shared.state().queues;
            queues.steer.is_empty() && queues.follow_up.is_empty() && !queues.trigger
        };
        if settled {
            let _ = dispatch(self.shared, AgentSettledEvent {}).await;
        }
    }

    /// The active tools' names, as [`tools`](Self::tools) offers them,
    /// each without its description and schema: what the system prompt's
    /// tools section reads, without copying every schema.
    fn tool_names(&self) -> Vec<ToolSpec> {
        let shared = self.shared;
        let profile = shared.host.profile;
        let mut names = shared
            .host
            .specs
            .names(&shared.host.plugins, &shared.scope, profile);
        let state = shared.state();
        names.extend(state.tools.specs(profile).into_iter().map(|spec| spec.name));
        if let Some(active) = &state.active_tools {
            names.retain(|name| active.contains(name));
        }
        names
            .into_iter()
            .map(|name| ToolSpec {
                name,
                description: String::new(),
                parameters: serde_json::Value::Null,
            })
            .collect()
    }

    /// The active tools, as the model is offered them.
    fn tools(&self) -> Vec<ToolSpec> {
        let shared = self.shared;
        let profile = shared.host.profile;
        let mut tools = shared
            .host
            .specs
            .of(&shared.host.plugins, &shared.scope, profile);
        let state = shared.state();
        tools.extend(state.tools.specs(profile));
        if let Some(active) = &state.active_tools {
            tools.retain(|spec| active.contains(&spec.name));
        }
        tools
    }

    /// Stores messages, each with its start and end events.
    async fn deliver(
        &self,
        pending: Vec<Pending>,
        added: &mut Vec<ChatMessage>,
    ) -> Result<(), AgentError> {
        for message in pending {
            match message {
                Pending::User(message) => {
                    let message = self.finish(message).await?;
                    self.shared
                        .session
                        .lock()
                        .await
                        .append_chat(std::slice::from_ref(&message))
                        .await?;
                    added.push(message);
                }
                Pending::Custom(custom) => {
                    let as_chat = ChatMessage::user(custom.content.clone());
                    let message = self.finish(as_chat).await?;
                    let kind = EntryKind::CustomMessage {
                        custom_type: custom.custom_type.clone(),
                        content: MessageContent::Text(message.content.clone()),
                        details: custom.details.clone(),
                        display: custom.display,
                    };
                    self.shared.session.lock().await.append(kind).await?;
                    added.push(message);
                }
            }
        }
        Ok(())
    }

    /// `MessageStart` and `MessageEnd` around a complete message; the
    /// replacement keeps the role.
    pub(super) async fn finish(&self, message: ChatMessage) -> Result<ChatMessage, AgentError> {
        dispatch(
            self.shared,
            MessageStartEvent {
                message: message.clone(),
            },
        )
        .await?;
        let role = message.role;
        let end = dispatch(self.shared, MessageEndEvent { message }).await?;
        let mut message = end.message;
        message.role = role;
        Ok(message)
    }

    async fn model_call(&self, system: &str, turn: usize) -> Result<ChatMessage, AgentError> {
        let shared = self.shared;
        let choice = shared.state().model.clone().ok_or_else(|| {
            AgentError::Chat(ChatError::NoModel {
                provider: "(none configured)".into(),
            })
        })?;
        let config = &choice.config;
        let provider = &*choice.provider;
        check_offline(config, provider, shared.host.offline)?;
        let model = config
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| {
                AgentError::Chat(ChatError::NoModel {
                    provider: config.provider.to_string(),
                })
            })?;
        let history = shared.session.lock().await.chat_messages();
        let event = dispatch(shared, ContextEvent { messages: history }).await?;
        let mut messages = Vec::with_capacity(event.messages.len() + 1);
        if !system.is_empty() {
            messages.push(ChatMessage::system(system));
        }
        messages.extend(event.messages);
        let tools = self.tools();
        let payload = ProviderPayload {
            model,
            messages,
            tools,
        };
        let payload = dispatch(shared, BeforeProviderRequestEvent { payload })
            .await?
            .payload;

        let started = ChatMessage::assistant("", Vec::new());
        dispatch(shared, MessageStartEvent { message: started }).await?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forward = move |event: ChatStreamEvent| {
            if let ChatStreamEvent::Text(text) = event {
                let _ = tx.send(text);
            }
        };
        let sink: ChatStreamSink<'_> = &forward;
        let cancel = shared.cancellation();
        let request = ChatRequest {
            config,
            api_key: choice.api_key.as_ref(),
            model: &payload.model,
            messages: &payload.messages,
            tools: &payload.tools,
            stream: shared.host.stream.then_some(sink),
            cancel: cancel.clone(),
        };
        let call = provider.chat(request);
        tokio::pin!(call);
        let response = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ChatError::Cancelled.into()),
                Some(delta) = rx.recv() => self.update(delta).await,
                response = &mut call => break response,
            }
        };
        while let Ok(delta) = rx.try_recv() {
            self.update(delta).await;
        }
        // The provider failed: the context is stored, so the error says
        // how to ask again without sending the message twice.
        let response = response.map_err(|error| match ChatError::from(error) {
            ChatError::Cancelled => AgentError::Chat(ChatError::Cancelled),
            error => AgentError::ModelCall { error },
        })?;
        let usage = response.usage;
        let mut message = response.message;
        message.role = ChatRole::Assistant;
        message.tool_call_id = None;
        name_calls(&mut message.tool_calls, turn);
        if !shared.host.stream && !message.content.is_empty() {
            self.update(message.content.clone()).await;
        }
        let end = dispatch(
            shared,
            MessageEndEvent {
                message: message.clone(),
            },
        )
        .await?;
        if end.message.role == ChatRole::Assistant {
            message = end.message;
        }
        // The answer names the model that gave it (pi reads the session's
        // model from it).
        let answered_by = ModelRef {
            provider: config.provider.to_string(),
            model_id: payload.model.clone(),
        };
        let millis = iso_to_millis(&now_iso()).unwrap_or(0);
        let mut stored = AgentMessage::from_chat(&message, millis, None, Some(&answered_by));
        // The provider's count, which compaction trusts over an estimate.
        if let (Some(usage), AgentMessage::Assistant(answer)) = (usage, &mut stored) {
            answer.set_usage(&usage);
        }
        shared
            .session
            .lock()
            .await
            .append(EntryKind::Message { message: stored })
            .await?;
        Ok(message)
    }

    async fn update(&self, delta: String) {
        self.shared.emit(AgentEvent::Text(delta.clone()));
        let _ = dispatch(self.shared, MessageUpdateEvent { delta }).await;
    }
}
