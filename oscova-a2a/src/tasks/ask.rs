//! A tool's question as `INPUT_REQUIRED`: the client's next message in the
//! task answers it, through any process on the task store.
//!
//! Rules: when a tool of a task's run asks the person (a confirmation,
//! which is also how a session extension's `Required` tool is approved
//! and, through `tasks/approve.rs`, a scope tool's, a choice, a line of text, a form), the wait is kept first: the task moves
//! to `INPUT_REQUIRED` with the question as its status message (the text,
//! then a data part `{"requestedSchema": ...}` saying what an answer
//! holds) and, in the same write, its [`TaskWait`] (the tool, the call's
//! arguments with the host's secrets redacted, the user, the question,
//! the expiry: now plus [`A2aServer::input_wait`](crate::A2aServer::input_wait));
//! only then is it streamed and the run waits. A question whose wait
//! cannot be kept is not asked: the tool gets `AskError::Failed` saying
//! why. The client answers with a message naming the task (`taskId`): a
//! confirmation is yes for `yes`, `y`, `ok`, `true`, `approve` or `allow`
//! (any case) and no for anything else; a choice or a text is the
//! message's text; a form is the first data part that is an object, else
//! the text read as a JSON object (core checks it against the form). The
//! answer takes the wait out of the store (one conditional statement, so
//! one answer goes on, on one process; see `tasks/answer.rs`), joins the
//! task's history, the task is `WORKING` again, and the run goes on:
//! here when it waits here, else resumed where the answer came.
//!
//! A run waiting here gives way when its wait is taken elsewhere (checked
//! every [`WAIT_POLL`]): it stops as a stopped process would, writing
//! nothing more, and the process that took the answer goes on with the
//! session. When the expiry passes first, the wait is taken out and the
//! task ends `FAILED`, its status message saying the wait expired. A
//! cancel while waiting ends the wait (the tool gets
//! `AskError::Cancelled`). A run resumed elsewhere is given the answer
//! again: the first question it asks that is the kept one (the same tool
//! and question) is answered with the stored message without asking.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::interaction::{
    Answer, AskError, CHOICE_FIELD, InteractionHandler, InteractionRequest, Question, TEXT_FIELD,
};
use oscova_core::provider::BoxFuture;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Runner, status_update};
use crate::model::{Message, Part, TaskState};
use crate::store::TaskWait;

/// How often a run waiting here checks whether its wait was taken by
/// another process.
pub(crate) const WAIT_POLL: Duration = Duration::from_secs(2);

/// The answer a resumed run gives again: the message that answered the
/// kept question of `tool`.
pub(crate) struct Replay {
    pub(crate) tool: String,
    pub(crate) asked: Value,
    pub(crate) answer: Message,
}

/// What a run's asking shares with the run.
#[derive(Default)]
pub(crate) struct AskState {
    /// Tool → the arguments of its latest call to start (for the wait).
    pub(crate) calls: Mutex<HashMap<String, Value>>,
    /// The tool of the latest call to start: the one asking when the
    /// question names none (a session extension's confirmation).
    pub(crate) latest: Mutex<Option<String>>,
    /// Why the task ends `FAILED`: a wait that expired.
    pub(crate) ended: Mutex<Option<String>>,
    /// The answer to give again, in a resumed run.
    pub(crate) replay: Mutex<Option<Replay>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl AskState {
    /// Notes the arguments of the latest call of `tool`, which its wait
    /// names (redacted).
    pub(crate) fn saw_call(&self, tool: &str, arguments: &Value) {
        locked(&self.calls).insert(tool.to_owned(), arguments.clone());
    }

    /// The tool asking `request`: its own name, else the latest call's.
    fn tool_of(&self, request: &InteractionRequest) -> String {
        if request.tool.is_empty() {
            locked(&self.latest).clone().unwrap_or_default()
        } else {
            request.tool.clone()
        }
    }

    /// The replayed answer, when `tool` asks the kept question.
    fn replayed(&self, tool: &str, asked: &Value) -> Option<Message> {
        let mut replay = locked(&self.replay);
        let matches = replay
            .as_ref()
            .is_some_and(|r| r.tool == tool && r.asked == *asked);
        matches.then(|| replay.take().map(|r| r.answer)).flatten()
    }
}

/// Asks the client of one task.
#[derive(Clone)]
pub(crate) struct TaskAsk {
    pub(crate) runner: Arc<Runner>,
    pub(crate) user: String,
    pub(crate) task: String,
    pub(crate) events: broadcast::Sender<Value>,
    pub(crate) cancel: CancellationToken,
    /// Stops the run as a stopped process would: its wait was taken
    /// elsewhere.
    pub(crate) abandon: CancellationToken,
    pub(crate) state: Arc<AskState>,
}

/// The status message of a task whose wait for `tool` expired.
pub(crate) fn expired_text(tool: &str, expires_at: i64) -> String {
    format!(
        "expired: the task waited for an answer to the question of `{tool}` until {} and none \
         came; the call did not go on and the task ended here. Send a new message in the \
         context if it is still wanted.",
        oscova_agent::session::millis_to_iso(expires_at)
    )
}

impl InteractionHandler for TaskAsk {
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> {
        let (runner, user, id, events, cancel, abandon, state) = (
            self.runner.clone(),
            self.user.clone(),
            self.task.clone(),
            self.events.clone(),
            self.cancel.clone(),
            self.abandon.clone(),
            self.state.clone(),
        );
        Box::pin(async move {
            let failed = |e: crate::model::A2aError| AskError::Failed(e.to_string());
            let asked = serde_json::to_value(&request.question)
                .map_err(|e| AskError::Failed(e.to_string()))?;
            let tool = state.tool_of(&request);
            if let Some(answer) = state.replayed(&tool, &asked) {
                return answer_of(&request.question, &answer);
            }
            let arguments = locked(&state.calls)
                .get(&tool)
                .map_or(Value::Null, |a| runner.redacted(a));
            let expires_at = crate::store::now_millis()
                .saturating_add(i64::try_from(runner.input_wait.as_millis()).unwrap_or(i64::MAX));
            let wait = TaskWait::new(&user, &tool, arguments, asked, expires_at);
            let (tx, mut rx) = oneshot::channel();
            runner.wait_for_answer(&user, &id, tx);
            let mut task = runner.get(&user, &id).await.map_err(failed)?;
            task.set_state(TaskState::InputRequired, None);
            let mut message = Message::agent_text("", &task.context_id, &task.id);
            message.parts = question_parts(&request.question);
            task.status.message = Some(message);
            if let Err(error) = runner.store.put_waiting(&user, &task, &wait).await {
                runner.stop_waiting(&user, &id);
                let reason = runner.redact(&format!(
                    "the question was not asked: its wait could not be kept in the task store ({error})"
                ));
                tracing::warn!(task = %id, %reason, "a tool's question was not asked");
                return Err(AskError::Failed(reason));
            }
            let _ = events.send(status_update(&task));
            let left = Duration::from_millis(
                u64::try_from(expires_at - crate::store::now_millis()).unwrap_or(0),
            );
            let expiry = tokio::time::sleep(left);
            tokio::pin!(expiry);
            let mut expiry_checked = false;
            let mut poll = tokio::time::interval(WAIT_POLL);
            poll.tick().await;
            let answer = loop {
                tokio::select! {
                    answer = &mut rx => break answer.map_err(|_| AskError::Cancelled)?,
                    () = cancel.cancelled() => {
                        runner.stop_waiting(&user, &id);
                        return Err(AskError::Cancelled);
                    }
                    () = &mut expiry, if !expiry_checked => {
                        expiry_checked = true;
                        // The store decides between the expiry and an answer
                        // on its way (here or elsewhere).
                        match runner.store.take_wait(&user, &id).await {
                            Ok(Some(_)) => {
                                runner.stop_waiting(&user, &id);
                                let text = expired_text(&tool, expires_at);
                                tracing::warn!(task = %id, %tool, "a task's wait for an answer expired");
                                *locked(&state.ended) = Some(text.clone());
                                return Err(AskError::Failed(text));
                            }
                            // Taken: by an answer here (which took this
                            // run's place first) or elsewhere.
                            Ok(None) if runner.is_waiting(&user, &id) => {
                                gone_elsewhere(&runner, &user, &id, &abandon).await;
                            }
                            Ok(None) => {}
                            // The sweep ends it later; the poll sees that.
                            Err(error) => {
                                tracing::warn!(%error, task = %id, "taking an expired wait failed");
                            }
                        }
                    }
                    _ = poll.tick() => {
                        let moved = runner
                            .get(&user, &id)
                            .await
                            .is_ok_and(|t| t.status.state != TaskState::InputRequired);
                        if moved && runner.is_waiting(&user, &id) {
                            gone_elsewhere(&runner, &user, &id, &abandon).await;
                        }
                    }
                }
            };
            if crate::store::now_millis() >= expires_at {
                let text = expired_text(&tool, expires_at);
                *locked(&state.ended) = Some(text.clone());
                return Err(AskError::Failed(text));
            }
            let mut task = runner.get(&user, &id).await.map_err(failed)?;
            task.set_state(TaskState::Working, None);
            runner.put(&user, &task).await.map_err(failed)?;
            let _ = events.send(status_update(&task));
            answer_of(&request.question, &answer)
        })
    }
}

/// The task's wait was answered (or ended) through another process: this
/// run stops as a stopped process would, writing nothing more.
async fn gone_elsewhere(runner: &Runner, user: &str, id: &str, abandon: &CancellationToken) {
    runner.stop_waiting(user, id);
    tracing::info!(task = %id, "a task's question was answered through another process; its run here stops");
    abandon.cancel();
    std::future::pending::<()>().await;
}

/// The question as a status message's parts.
fn question_parts(question: &Question) -> Vec<Part> {
    let hint = match question {
        Question::Confirm { .. } => " Answer yes or no.".to_owned(),
        Question::Choose { options, .. } => format!(" Answer with one of: {}.", options.join(", ")),
        Question::Text { .. } => " Answer with the text.".to_owned(),
        _ => " Answer with a data part (or JSON text) holding the fields.".to_owned(),
    };
    let data = Part {
        data: Some(json!({"requestedSchema": question.requested_schema()})),
        ..Part::default()
    };
    vec![Part::text(format!("{}{hint}", question.message())), data]
}

/// The answer `message` gives to `question`.
fn answer_of(question: &Question, message: &Message) -> Result<Answer, AskError> {
    let text = message.text().trim().to_owned();
    let one = |field: &str| {
        let mut values = Map::new();
        values.insert(field.to_owned(), Value::String(text.clone()));
        Ok(Answer::Accept(values))
    };
    match question {
        Question::Confirm { .. } => {
            let yes = ["yes", "y", "ok", "true", "approve", "allow"]
                .iter()
                .any(|w| text.eq_ignore_ascii_case(w));
            Ok(if yes {
                Answer::Accept(Map::new())
            } else {
                Answer::Decline
            })
        }
        Question::Choose { .. } => one(CHOICE_FIELD),
        Question::Text { .. } => one(TEXT_FIELD),
        _ => {
            let data = message
                .parts
                .iter()
                .find_map(|p| p.data.as_ref().and_then(Value::as_object).cloned());
            let values = match data {
                Some(values) => values,
                None => serde_json::from_str::<Map<String, Value>>(&text).map_err(|e| {
                    AskError::InvalidAnswer(format!("the answer is not a JSON object: {e}"))
                })?,
            };
            Ok(Answer::Accept(values))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn said(text: &str) -> Message {
        Message {
            message_id: "m".into(),
            context_id: None,
            task_id: None,
            role: Role::User,
            parts: vec![Part::text(text)],
            metadata: None,
        }
    }

    #[test]
    fn answers_are_read_as_the_question_asks() {
        let confirm = Question::Confirm {
            message: "ok?".into(),
        };
        assert_eq!(
            answer_of(&confirm, &said(" YES ")),
            Ok(Answer::Accept(Map::new()))
        );
        assert_eq!(answer_of(&confirm, &said("nope")), Ok(Answer::Decline));
        let text = Question::Text {
            message: "name?".into(),
            default: None,
        };
        let Ok(Answer::Accept(values)) = answer_of(&text, &said("Ada")) else {
            panic!("accepted")
        };
        assert_eq!(values[TEXT_FIELD], "Ada");
        let parts = question_parts(&confirm);
        assert_eq!(parts[0].text.as_deref(), Some("ok? Answer yes or no."));
        assert!(parts[1].data.as_ref().unwrap()["requestedSchema"].is_object());
    }
}
