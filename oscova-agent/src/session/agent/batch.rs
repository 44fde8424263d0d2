//! A batch: the calls of one model answer, run and answered on the
//! session.
//!
//! Rules: every call of a batch gets one tool message, stored in the
//! model's order (run, blocked, refused, cancelled or skipped). A batch
//! runs concurrently unless a tool of it is sequential, then one call
//! after another, and a steering message queued meanwhile skips the rest
//! (each skipped call answered so). A call's answer is stored as soon as
//! the call ended and every call before it is answered: in a sequential
//! batch, each as it ends; in a concurrent one, a call that ends before
//! those it follows waits for them (the model's order holds), the others
//! are not held back for the rest of the batch. So what a stopped process
//! loses is only the answers of calls still running, or of calls waiting
//! behind one; those were marked started, and the next run reports them
//! interrupted (`recover.rs`).

use std::slice;

use oscova_core::ToolResult;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest};

use super::AgentEvent;
use super::error::AgentError;
use super::run::Run;
use super::tools::run_call;
use crate::chat::{ChatError, join_in_order};

const CANCELLED_TEXT: &str = "not run: the run was cancelled";
const STEERED_TEXT: &str = "skipped: the user sent a new message, which comes next; not run";

/// A concurrent call's answer, stored.
enum Kept {
    /// It ran: its tool message, and whether it asked to end the run.
    Ran(ChatMessage, bool),
    /// It was cancelled: the message saying so.
    Cancelled(ChatMessage),
}

impl Run<'_> {
    /// Runs a batch of calls (see the module rules): their tool messages,
    /// in the model's order, and whether every call ran and asked to end
    /// the run.
    pub(super) async fn run_batch(
        &self,
        calls: &[ToolCallRequest],
        added: &mut Vec<ChatMessage>,
    ) -> Result<(Vec<ChatMessage>, bool), AgentError> {
        let shared = self.shared;
        let sequential = {
            let state = shared.state();
            calls.iter().any(|c| {
                shared.scope.tool(&c.name).is_some_and(|t| t.sequential())
                    || state.tools.is_sequential(&c.name)
            })
        };
        if !sequential {
            return self.run_concurrently(calls, added).await;
        }
        let mut results = Vec::with_capacity(calls.len());
        let mut terminate = !calls.is_empty();
        for (i, call) in calls.iter().enumerate() {
            let cancelled = shared.cancellation().is_cancelled();
            let ran = if cancelled {
                None
            } else {
                shared.emit(AgentEvent::ToolRunning(call.clone()));
                run_call(shared, call, shared.host.profile).await
            };
            let Some((message, result)) = ran else {
                let rest = calls.get(i..).unwrap_or_default();
                added.extend(self.answer(rest, CANCELLED_TEXT).await?);
                return Err(ChatError::Cancelled.into());
            };
            terminate &= result.terminate;
            let message = self.keep(call, message, result).await?;
            added.push(message.clone());
            results.push(message);
            let rest = calls.get(i + 1..).unwrap_or_default();
            if !rest.is_empty() && !shared.state().queues.steer.is_empty() {
                let skipped = self.answer(rest, STEERED_TEXT).await?;
                added.extend(skipped.iter().cloned());
                results.extend(skipped);
                return Ok((results, false));
            }
        }
        Ok((results, terminate))
    }

    /// The concurrent batch: every call started together, each answer
    /// stored once its call and every call before it ended.
    async fn run_concurrently(
        &self,
        calls: &[ToolCallRequest],
        added: &mut Vec<ChatMessage>,
    ) -> Result<(Vec<ChatMessage>, bool), AgentError> {
        let shared = self.shared;
        for call in calls {
            shared.emit(AgentEvent::ToolRunning(call.clone()));
        }
        let profile = shared.host.profile;
        // How many calls, from the first, have their answer stored: call
        // `i` stores its own once this reaches `i`, then counts itself,
        // whether its store worked or not, so none waits forever.
        let (stored, turn) = tokio::sync::watch::channel(0_usize);
        let running = calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let (stored, mut turn) = (&stored, turn.clone());
                Box::pin(async move {
                    let ran = run_call(shared, call, profile).await;
                    // The sender outlives every call of the batch.
                    let _ = turn.wait_for(|&n| n >= i).await;
                    let kept = match ran {
                        Some((message, result)) => self
                            .keep(call, message, result.clone())
                            .await
                            .map(|message| Kept::Ran(message, result.terminate)),
                        None => {
                            let message = ChatMessage::tool(call.id.clone(), CANCELLED_TEXT);
                            let stored = self.store(slice::from_ref(&message)).await;
                            stored.map(|()| Kept::Cancelled(message))
                        }
                    };
                    stored.send_replace(i + 1);
                    kept
                })
            })
            .collect();
        let outcomes = join_in_order(running).await;
        let mut results = Vec::with_capacity(calls.len());
        let mut terminate = !calls.is_empty();
        let mut cancelled = false;
        for kept in outcomes {
            let message = match kept? {
                Kept::Ran(message, ends) => {
                    terminate &= ends;
                    message
                }
                Kept::Cancelled(message) => {
                    cancelled = true;
                    message
                }
            };
            added.push(message.clone());
            results.push(message);
        }
        if cancelled {
            return Err(ChatError::Cancelled.into());
        }
        Ok((results, terminate))
    }

    /// Tells the host, then stores the tool message with its events.
    async fn keep(
        &self,
        call: &ToolCallRequest,
        message: ChatMessage,
        result: ToolResult,
    ) -> Result<ChatMessage, AgentError> {
        self.shared.emit(AgentEvent::ToolFinished {
            id: call.id.clone(),
            name: call.name.clone(),
            result,
        });
        let message = self.finish(message).await?;
        self.store(slice::from_ref(&message)).await?;
        Ok(message)
    }

    /// Answers calls that will not run, so every stored call has its
    /// tool message.
    async fn answer(
        &self,
        calls: &[ToolCallRequest],
        text: &str,
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let messages: Vec<ChatMessage> = calls
            .iter()
            .map(|call| ChatMessage::tool(call.id.clone(), text))
            .collect();
        if !messages.is_empty() {
            self.store(&messages).await?;
        }
        Ok(messages)
    }

    /// Appends tool messages to the session, as one batch.
    async fn store(&self, messages: &[ChatMessage]) -> Result<(), AgentError> {
        let mut session = self.shared.session.lock().await;
        session.append_chat(messages).await?;
        Ok(())
    }
}
