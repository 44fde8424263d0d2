//! The client's message in a task that waits for it: the answer to a
//! tool's question (`INPUT_REQUIRED`), or the go-ahead after a missing
//! credential (`AUTH_REQUIRED`).
//!
//! Rules: the task is read as the sender's, so another user's message is
//! `TaskNotFound`, as for a missing task, and their answer reaches
//! nothing. An answer to a question first takes the task's kept wait out
//! of the store ([`TaskStore::take_wait`](crate::store::TaskStore::take_wait),
//! one conditional statement: of two answers, on any processes, one goes
//! on); then:
//!
//! 1. no wait (answered already, here or elsewhere, or never kept): an
//!    `UnsupportedOperation` error, and nothing runs;
//! 2. an expired wait: the task ends `FAILED`, its status message saying
//!    the wait expired, and the call does not go on;
//! 3. the run waits here: it gets the answer and goes on;
//! 4. otherwise (the run waited in another process, or in this one before
//!    a restart): the run is resumed here on the task's session
//!    (`AgentSession::recover`), which settles the batch its process left:
//!    a call that had not started (its approval, or a guard's question,
//!    was waited for) runs afresh, and its question, asked again, gets
//!    this answer without asking, so it runs once, where the answer came;
//!    a call that had started (the tool itself asked) is not run again
//!    but reported interrupted, unless its tool is idempotent (then it
//!    runs again and its question gets this answer). The task ends
//!    `COMPLETED` with the model's answer; an interrupted call's report is
//!    its status message.
//!
//! Waits that expire with nobody to end them (their process stopped) are
//! swept: at start, then every [`WAIT_SWEEP`], each process on the store
//! takes the expired waits out in one conditional statement and ends
//! their tasks `FAILED` with `expired:`, so `GetTask` never shows a
//! question nobody can answer any more. A run still waiting on one of
//! them, here or elsewhere, gives way.

use std::sync::Arc;
use std::time::Duration;

use oscova_core::tool::origin::hops_in;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::ask::{Replay, expired_text};
use super::{Runner, Start, internal, settle};
use crate::model::{A2aError, Message, TaskState};

/// How often each process sweeps the store for expired waits.
pub(crate) const WAIT_SWEEP: Duration = Duration::from_secs(60);

impl Runner {
    /// Sweeps expired waits now, then every [`WAIT_SWEEP`], until `cancel`.
    pub(crate) fn sweep_waits(self: &Arc<Self>, cancel: CancellationToken) {
        let runner = self.clone();
        tokio::spawn(async move {
            loop {
                runner.end_expired().await;
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(WAIT_SWEEP) => {}
                }
            }
        });
    }

    /// Ends the tasks whose waits expired (see the module rules).
    pub(crate) async fn end_expired(&self) {
        let taken = match self
            .store
            .take_expired_waits(crate::store::now_millis())
            .await
        {
            Ok(taken) => taken,
            Err(error) => {
                tracing::warn!(%error, "sweeping expired waits failed");
                return;
            }
        };
        for (user, id, wait) in taken {
            let Ok(Some(mut task)) = self.store.get(&user, &id).await else {
                continue;
            };
            if task.status.state != TaskState::InputRequired {
                continue;
            }
            tracing::warn!(task = %id, tool = %wait.tool, "a task's wait for an answer expired");
            task.set_state(
                TaskState::Failed,
                Some(&expired_text(&wait.tool, wait.expires_at)),
            );
            if let Err(error) = self.store.put_final(&user, &task).await {
                tracing::warn!(%error, task = %id, "storing an expired task failed");
            }
        }
    }

    /// Answers the question the task `id` of `user` waits on with
    /// `message` (see the module rules); with `blocking`, returns once the
    /// task settles again.
    pub(super) async fn answer(
        self: &Arc<Self>,
        user: &str,
        id: &str,
        mut message: Message,
        blocking: bool,
    ) -> Result<(super::Task, broadcast::Receiver<Value>), A2aError> {
        let mut task = self.get(user, id).await?;
        let hops = hops_in(message.metadata.as_ref());
        message.context_id = Some(task.context_id.clone());
        if task.status.state == TaskState::AuthRequired {
            // The run ended at a missing credential: the client's message
            // (sent once the person set it) runs the task again.
            let text = message.text();
            task.history.push(message);
            task.set_state(TaskState::Submitted, None);
            let start = Start::new(text, hops, true);
            return self.launch(user, task, start, blocking, None).await;
        }
        let waits_for_nothing = || {
            A2aError::UnsupportedOperation(format!(
                "task {id} is {} and waits for no answer; send a new message in its context",
                task.status.state.as_str()
            ))
        };
        if task.status.state != TaskState::InputRequired {
            return Err(waits_for_nothing());
        }
        // This process's run first (so its expiry, racing this answer,
        // sees it answered here), then the store's wait, which decides.
        let here = self.take_waiting(user, id);
        let taken = self.store.take_wait(user, id).await;
        let wait = match taken {
            Ok(Some(wait)) => wait,
            Ok(None) | Err(_) => {
                if let Some(answer) = here {
                    // Not ours: the run keeps waiting, and gives way when
                    // it sees the task moved on.
                    self.wait_for_answer(user, id, answer);
                }
                return Err(taken.err().map_or_else(waits_for_nothing, internal));
            }
        };
        if wait.is_expired_at(crate::store::now_millis()) && here.is_none() {
            task.history.push(message);
            let text = expired_text(&wait.tool, wait.expires_at);
            tracing::warn!(task = %id, tool = %wait.tool, "a task's wait for an answer had expired");
            task.set_state(TaskState::Failed, Some(&text));
            self.store.put_final(user, &task).await.map_err(internal)?;
            return Ok((task, broadcast::channel(1).1));
        }
        task.history.push(message.clone());
        let Some(answer) = here else {
            // Resumed here: the process that asked is gone, or is another.
            let mut waiting = task.clone();
            waiting.history.pop();
            task.set_state(TaskState::Working, None);
            let mut start = Start::new(message.text(), hops, true);
            start.resume = Some(Replay {
                tool: wait.tool.clone(),
                asked: wait.asked.clone(),
                answer: message,
            });
            let launched = self.launch(user, task, start, blocking, None).await;
            if launched.is_err() {
                // Not resumed (the user's bound of running tasks, say): the
                // question stays asked, for a later answer.
                let _ = self.store.put_waiting(user, &waiting, &wait).await;
            }
            return launched;
        };
        let receiver = self
            .subscribe(user, id)
            .unwrap_or_else(|| broadcast::channel(1).1);
        let settled = receiver.resubscribe();
        self.put(user, &task).await.map_err(internal)?;
        // A run that waits here and finds its wait expired on the answer
        // ends as its own expiry would (`tasks/ask.rs`).
        let _ = answer.send(message);
        if blocking {
            let done = self
                .running()
                .get(&(user.to_owned(), id.to_owned()))
                .map(|r| r.done.clone());
            if let Some(done) = done {
                settle(settled, done).await;
            }
        }
        Ok((self.get(user, id).await?, receiver))
    }
}
