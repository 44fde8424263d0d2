//! One run of a task: its turn in its context, the session agent's
//! prompt inside the message's hop count, and the final state stored.
//!
//! Rules: as [the tasks'](super): runs in one context take its lock in
//! turn; every state is stored before it is sent to the run's events; a
//! task cancelled in the store meanwhile keeps `CANCELED`. The session's
//! questions go to the task's client (`tasks/ask.rs`), and so do its
//! approvals (`tasks/approve.rs`), unless the server approves them
//! itself ([`A2aServer::allow_approval_required`](crate::A2aServer::allow_approval_required)).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_agent::session::agent::{AgentError, AgentEvent, AgentSessionOptions};
use oscova_core::UserInfo;
use oscova_core::host::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use oscova_core::tool::origin::with_inbound_hops;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::approve::TaskApproval;
use super::ask::{AskState, TaskAsk};
use super::{Runner, Start, status_update};
use crate::events::{Chunks, Outcome, whole_artifact};
use crate::model::{Artifact, Message, Part, Task, TaskState, new_id};

/// How much longer than the task's a session's wait for approval lasts.
const SESSION_WAIT_MARGIN: Duration = Duration::from_secs(60);

impl Runner {
    /// Runs `task` to its end and stores each state (`SUBMITTED` first
    /// unless `stored`, when it has to wait for its context's turn).
    pub(super) async fn run(
        self: &Arc<Self>,
        user: &str,
        mut task: Task,
        start: Start,
        cancel: CancellationToken,
        events: broadcast::Sender<Value>,
    ) {
        let Start {
            text,
            hops,
            stored,
            resume,
            abandon,
        } = start;
        let artifact = new_id();
        let lock = {
            let mut contexts = self
                .contexts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            contexts
                .entry((user.to_owned(), task.context_id.clone()))
                .or_default()
                .clone()
        };
        let key = (user.to_owned(), task.context_id.clone());
        let _forget = ForgetContext(self, key);
        let free = lock.clone().try_lock_owned().ok();
        if free.is_none()
            && !stored
            && let Err(error) = self.store.put(user, &task).await
        {
            tracing::warn!(%error, task = %task.id, "storing a task's state failed");
        }
        let _turn = match free {
            Some(turn) => turn,
            None => tokio::select! {
                turn = lock.clone().lock_owned() => turn,
                () = cancel.cancelled() => {
                    drop(lock);
                    self.finish(user, task, Outcome::Canceled, (&artifact, false), &events).await;
                    return;
                }
            },
        };
        drop(lock);
        task.set_state(TaskState::Working, None);
        if let Err(error) = self.store.put(user, &task).await {
            tracing::warn!(%error, task = %task.id, "storing a task's state failed");
        }
        let _ = events.send(status_update(&task));
        let streamed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let chunks = Chunks {
            events: events.clone(),
            task: task.id.clone(),
            context: task.context_id.clone(),
            artifact: artifact.clone(),
            sent: streamed.clone(),
        };
        let asking = Arc::new(AskState::default());
        *asking
            .replay
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = resume;
        let work = self.prompt(
            user,
            &task.context_id,
            text,
            (&cancel, &abandon),
            chunks,
            asking,
        );
        let outcome = with_inbound_hops(hops, work).await;
        let outcome = (!cancel.is_cancelled()).then_some(outcome);
        let outcome = outcome.unwrap_or(Outcome::Canceled);
        let done = (artifact.as_str(), streamed.load(Ordering::Relaxed));
        self.finish(user, task, outcome, done, &events).await;
    }

    /// The run's prompt in the session; a resumed run (`asking.replay`
    /// set) settles the session's unanswered batch instead.
    async fn prompt(
        self: &Arc<Self>,
        user: &str,
        context: &str,
        text: String,
        (cancel, abandon): (&CancellationToken, &CancellationToken),
        chunks: Chunks,
        asking: Arc<AskState>,
    ) -> Outcome {
        let resumed = asking
            .replay
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some();
        let ask = TaskAsk {
            runner: self.clone(),
            user: user.to_owned(),
            task: chunks.task.clone(),
            events: chunks.events.clone(),
            cancel: cancel.clone(),
            abandon: abandon.clone(),
            state: asking.clone(),
        };
        let missing = Arc::new(Mutex::new(None::<String>));
        let noted = missing.clone();
        let interrupted = Arc::new(Mutex::new(None::<String>));
        let told = interrupted.clone();
        let seen = asking.clone();
        let approval: Arc<dyn ApprovalHandler> = if self.allow_approval_required {
            Arc::new(|_: &ApprovalRequest<'_>| ApprovalDecision::Approve)
        } else {
            Arc::new(TaskApproval(ask.clone()))
        };
        let mut options = AgentSessionOptions::new()
            .interaction_handler(ask)
            .approval_handler_arc(Some(approval))
            // The session keeps a wait for approval a little longer than
            // the task's, so the task's expiry ends it (`FAILED`,
            // `expired:`) rather than the session's.
            .wait_expiry(self.input_wait.saturating_add(SESSION_WAIT_MARGIN))
            .on_event(move |event| match event {
                AgentEvent::Text(text) => chunks.send(text),
                AgentEvent::ToolRunning(call) => {
                    seen.calls
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(call.name.clone(), call.arguments.clone());
                    *seen
                        .latest
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Some(call.name.clone());
                }
                AgentEvent::ToolInterrupted { call, result } => {
                    let report = format!("`{}`: {}", call.name, result.content);
                    told.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get_or_insert(report);
                }
                AgentEvent::ToolFinished { result, .. } if result.is_missing_credential() => {
                    noted
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get_or_insert_with(|| result.content.clone());
                }
                _ => {}
            });
        if let Some((provider, model)) = &self.model {
            options = options.model(provider.clone(), model.clone());
        }
        let info: UserInfo = (self.users)(user);
        let name = format!("a2a:{context}");
        let mut session = match self.agents.session(info, &name, options).await {
            Ok(session) => session,
            Err(error) => return Outcome::Failed(format!("the session did not open: {error}")),
        };
        session.cancellation(cancel.clone());
        let ran = if resumed {
            session.recover().await.map(|outcome| {
                outcome.ok_or_else(|| {
                    "the call the task waited on is not open in its session (answered \
                     already, or never kept); nothing ran"
                        .to_owned()
                })
            })
        } else {
            session.prompt(text).await.map(Ok)
        };
        let expired = asking
            .ended
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let outcome = match ran {
            _ if expired.is_some() => Outcome::Failed(expired.unwrap_or_default()),
            Ok(Err(reason)) => Outcome::Failed(reason),
            Ok(Ok(outcome)) => {
                let guidance = missing
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                let interrupted = interrupted
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                match (guidance, interrupted) {
                    (Some(guidance), _) => Outcome::AuthRequired {
                        guidance,
                        text: outcome.text,
                    },
                    (None, Some(report)) => Outcome::Interrupted {
                        report,
                        text: outcome.text,
                    },
                    (None, None) => Outcome::Completed(outcome.text),
                }
            }
            // The cause alone: the agent's retry is not the A2A client's
            // to call (its next message starts a new task in the context).
            Err(AgentError::ModelCall { error }) => {
                Outcome::Failed(format!("the run failed: {error}"))
            }
            Err(error) => Outcome::Failed(format!("the run failed: {error}")),
        };
        session.shutdown().await;
        outcome
    }

    /// Stores the last state of `task`, unless it was cancelled meanwhile;
    /// an answer none of which was streamed is sent whole before it.
    async fn finish(
        &self,
        user: &str,
        mut task: Task,
        outcome: Outcome,
        (artifact, streamed): (&str, bool),
        events: &broadcast::Sender<Value>,
    ) {
        if let Ok(Some(stored)) = self.store.get(user, &task.id).await {
            if stored.status.state == TaskState::Canceled {
                let _ = events.send(status_update(&stored));
                return;
            }
            // Answers to questions joined the stored history meanwhile.
            task.history = stored.history;
        }
        match outcome {
            Outcome::Completed(text) => {
                let reply = Message::agent_text(text.clone(), &task.context_id, &task.id);
                task.artifacts.push(Artifact {
                    artifact_id: artifact.to_owned(),
                    name: Some("response".into()),
                    parts: vec![Part::text(text)],
                });
                task.history.push(reply);
                task.set_state(TaskState::Completed, None);
            }
            Outcome::Interrupted { report, text } => {
                let reply = Message::agent_text(text.clone(), &task.context_id, &task.id);
                task.artifacts.push(Artifact {
                    artifact_id: artifact.to_owned(),
                    name: Some("response".into()),
                    parts: vec![Part::text(text)],
                });
                task.history.push(reply);
                task.set_state(TaskState::Completed, Some(&report));
            }
            Outcome::AuthRequired { guidance, text } => {
                if !text.is_empty() {
                    let reply = Message::agent_text(text, &task.context_id, &task.id);
                    task.history.push(reply);
                }
                task.set_state(TaskState::AuthRequired, Some(&guidance));
            }
            Outcome::Canceled => {
                task.set_state(TaskState::Canceled, Some("canceled by the client"))
            }
            Outcome::Failed(reason) => task.set_state(TaskState::Failed, Some(&reason)),
        }
        if let Err(error) = self.store.put_final(user, &task).await {
            tracing::warn!(%error, task = %task.id, "storing a task's last state failed");
        }
        if let (false, Some(whole)) = (streamed, whole_artifact(&task, artifact)) {
            let _ = events.send(whole);
        }
        let _ = events.send(status_update(&task));
    }
}

/// Forgets a context's lock once no run holds or waits for it, so the map
/// of locks stays as large as the contexts in use.
struct ForgetContext<'a>(&'a Runner, (String, String));

impl Drop for ForgetContext<'_> {
    fn drop(&mut self) {
        let mut contexts = self
            .0
            .contexts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The map's own reference is the last one: no run holds or waits.
        if contexts
            .get(&self.1)
            .is_some_and(|l| Arc::strong_count(l) == 1)
        {
            contexts.remove(&self.1);
        }
    }
}
