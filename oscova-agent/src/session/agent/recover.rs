//! Settling a batch a stopped process left unanswered: each call runs at
//! most once, across crashes.
//!
//! Rules: a tool call's started mark
//! ([`CALL_STARTED`](crate::session::CALL_STARTED)) is committed before
//! its tool runs and its tool message after (`tools.rs`, `run.rs`), so a
//! branch whose last assistant message has calls without tool messages was
//! cut short mid-batch (the process was killed, the machine stopped). The
//! next run of the session settles that batch before anything else (a
//! prompt, a command's run, pending messages, or
//! [`AgentSession::recover`]), call by call, in the model's order:
//!
//! 1. a call with a tool message finished: it is kept as it is;
//! 2. a call with a started mark and no tool message may have taken
//!    effect: it is **not** run again, and gets a tool message saying it
//!    was interrupted (`details.error` is `interrupted`), which the model
//!    reads, and an [`AgentEvent::ToolInterrupted`] tells the host;
//! 3. unless its tool declares a repeated call harmless (`#[tool(idempotent)]`,
//!    a runtime tool's or an MCP server's `idempotentHint: true`): it runs
//!    again;
//! 4. a call with no started mark never ran: it runs now, as any call
//!    does (its approval asked again if its tool needs one, a new started
//!    mark first);
//! 5. unless it waited for an approval whose wait has expired
//!    ([`CallWait`](crate::session::CallWait)): it does not run, and gets
//!    a tool message saying the wait expired (`details.error` is
//!    `expired`), and an [`AgentEvent::WaitExpired`] tells the host.
//!
//! The interrupted and expired calls are answered first, in one write; the calls to
//! run then run as a batch of the loop does (`Run::run_batch`). Then a
//! prompt goes on with the person's message, which the model gets after
//! the settled results in the same request (as it gets a steering message
//! after the calls it skipped); [`AgentSession::recover`] goes on with the
//! model as the stopped run would have: the next turn gets the results.
//! The search walks back from the leaf over tool messages and entries that
//! are not messages, and stops at the first other message: only the last
//! batch of the branch is ever settled, and a branch that ends otherwise
//! costs a few steps.

use std::collections::{HashMap, HashSet};

use oscova_core::ToolResult;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest};
use serde_json::json;

use super::AgentEvent;
use super::error::AgentError;
use super::host::AgentSession;
use super::run::{Run, RunOutcome};
use super::tools::is_idempotent;
use super::wait::expired_result;
use crate::session::{AgentMessage, CallWait, EntryKind, Session, iso_to_millis, now_iso};

/// What the model reads for a call that was interrupted.
pub(crate) const INTERRUPTED_TEXT: &str = "interrupted: the process running this call stopped \
     after the call started and before its result was kept. It was not run again, so whether \
     it took effect is unknown; check before calling it again.";

/// A call of the last batch without a tool message.
pub(super) struct OpenCall {
    pub(super) call: ToolCallRequest,
    /// Whether it was marked started.
    pub(super) started: bool,
    /// Its latest wait for a person, if it waited for one.
    pub(super) wait: Option<CallWait>,
}

/// The last batch of a branch with calls that have no tool message.
pub(super) struct Unsettled {
    /// Those calls, in the model's order.
    pub(super) calls: Vec<OpenCall>,
    /// Whether no call of the batch had a tool message.
    whole: bool,
}

/// The batch to settle on `session`'s branch, if any (see the module
/// rules).
pub(super) fn unsettled(session: &Session) -> Option<Unsettled> {
    let mut answered = HashSet::new();
    let mut started = HashSet::new();
    let mut waits: HashMap<String, CallWait> = HashMap::new();
    for entry in session.ancestors() {
        let message = match &entry.kind {
            EntryKind::Message { message } => message,
            EntryKind::CustomMessage { .. }
            | EntryKind::Compaction { .. }
            | EntryKind::BranchSummary { .. } => return None,
            other => {
                if let Some(id) = other.started_call_id() {
                    started.insert(id);
                }
                if let Some(wait) = other.call_wait() {
                    // Walking back: the first one seen is the latest.
                    waits.entry(wait.tool_call_id.clone()).or_insert(wait);
                }
                continue;
            }
        };
        match message {
            AgentMessage::ToolResult(result) => {
                answered.insert(result.tool_call_id.as_str());
            }
            AgentMessage::Assistant(_) => {
                let calls = message.to_chat()?.tool_calls;
                let total = calls.len();
                let open: Vec<OpenCall> = calls
                    .into_iter()
                    .filter(|call| !answered.contains(call.id.as_str()))
                    .map(|call| OpenCall {
                        started: started.contains(call.id.as_str()),
                        wait: waits.remove(&call.id),
                        call,
                    })
                    .collect();
                if open.is_empty() {
                    return None;
                }
                return Some(Unsettled {
                    whole: open.len() == total,
                    calls: open,
                });
            }
            _ => return None,
        }
    }
    None
}

/// Why a call of a settled batch does not run.
enum Unrun {
    /// It had started; its tool is not idempotent.
    Interrupted,
    /// Its wait for approval expired.
    Expired,
}

/// What settling did.
#[derive(Debug, Default)]
pub(super) struct Settled {
    /// The calls answered (interrupted or run).
    pub(super) calls: usize,
    /// Whether the whole batch ran now and every call asked to end the run.
    pub(super) terminate: bool,
}

impl AgentSession {
    /// Settles the batch a stopped process left unanswered on this
    /// session's branch, then goes on with the run as it would have gone:
    /// the model gets the results in its next turn (unless every call of
    /// the batch ran now and asked to end the run). A call that had
    /// started is not run again but answered as interrupted (and
    /// [`AgentEvent::ToolInterrupted`] is sent), unless its tool is
    /// idempotent; a call that had not started runs now, its approval
    /// asked again (the "at most once" rule of [the module](super)).
    /// `None`: the branch has no such batch, and nothing ran.
    ///
    /// A host calls it when it opens a session after a crash, to finish
    /// the interrupted run before the person's next message; without it,
    /// the next [`prompt`](Self::prompt) settles the batch first and the
    /// model gets the results with the prompt.
    pub async fn recover(&mut self) -> Result<Option<RunOutcome>, AgentError> {
        self.shared.check_fresh()?;
        if unsettled(&*self.shared.session.lock().await).is_none() {
            return Ok(None);
        }
        self.run(Vec::new(), true).await.map(Some)
    }
}

impl Run<'_> {
    /// Settles the branch's unanswered batch (see the module rules).
    pub(super) async fn settle(&self, added: &mut Vec<ChatMessage>) -> Result<Settled, AgentError> {
        let found = unsettled(&*self.shared.session.lock().await);
        let Some(batch) = found else {
            return Ok(Settled::default());
        };
        let now = iso_to_millis(&now_iso()).unwrap_or(0);
        let mut answered = Vec::new();
        let mut to_run = Vec::new();
        for open in batch.calls {
            if open.started && !is_idempotent(self.shared, &open.call.name) {
                let result = ToolResult::error(INTERRUPTED_TEXT)
                    .with_details(json!({ "error": "interrupted" }));
                answered.push((open.call, result, Unrun::Interrupted));
            } else if let Some(wait) = open.wait.filter(|w| !open.started && w.is_expired_at(now)) {
                let result = expired_result(&open.call.name, &wait.expires_at);
                answered.push((open.call, result, Unrun::Expired));
            } else {
                to_run.push(open.call);
            }
        }
        let unrun = answered.len();
        self.answer_unrun(answered, added).await?;
        let (results, terminate) = self.run_batch(&to_run, added).await?;
        Ok(Settled {
            calls: unrun + results.len(),
            terminate: batch.whole && unrun == 0 && terminate,
        })
    }

    /// Answers calls that will not run (again), in one write, then tells
    /// the host of each.
    async fn answer_unrun(
        &self,
        calls: Vec<(ToolCallRequest, ToolResult, Unrun)>,
        added: &mut Vec<ChatMessage>,
    ) -> Result<(), AgentError> {
        if calls.is_empty() {
            return Ok(());
        }
        let millis = iso_to_millis(&now_iso()).unwrap_or(0);
        let messages: Vec<ChatMessage> = calls
            .iter()
            .map(|(call, result, _)| ChatMessage::tool(call.id.clone(), result.content.clone()))
            .collect();
        let kinds = calls
            .iter()
            .zip(&messages)
            .map(|((call, result, _), chat)| {
                let mut message = AgentMessage::from_chat(chat, millis, Some(&call.name), None);
                if let AgentMessage::ToolResult(stored) = &mut message {
                    stored.is_error = true;
                    stored.extra.insert("details", result.details.clone());
                }
                EntryKind::Message { message }
            })
            .collect();
        self.shared.session.lock().await.append_all(kinds).await?;
        for (call, result, why) in calls {
            let event = match why {
                Unrun::Interrupted => {
                    tracing::warn!(call = %call.id, tool = %call.name, "tool call interrupted by a stopped process; not run again");
                    AgentEvent::ToolInterrupted { call, result }
                }
                Unrun::Expired => {
                    tracing::warn!(call = %call.id, tool = %call.name, "tool call's wait for approval expired; not run");
                    AgentEvent::WaitExpired { call, result }
                }
            };
            self.shared.emit(event);
        }
        added.extend(messages);
        Ok(())
    }
}
