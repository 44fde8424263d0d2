//! A tool's question as `INPUT_REQUIRED`: the client's next message in the
//! task answers it.
//!
//! Rules: when a tool of a task's run asks the person (a confirmation,
//! which is also how a session extension's `Required` tool is approved, a
//! choice, a line of text, a form), the task moves to `INPUT_REQUIRED` with the question as
//! its status message (the text, then a data part `{"requestedSchema":
//! ...}` saying what an answer holds), stored and streamed, and the run
//! waits. The client answers with a message naming the task (`taskId`),
//! sent to the process that runs it: a confirmation is yes for `yes`, `y`,
//! `ok`, `true`, `approve` or `allow` (any case) and no for anything
//! else; a choice or a text is the message's text; a form is the first
//! data part that is an object, else the text read as a JSON object (core
//! checks it against the form). The answer joins the task's history, the
//! task is `WORKING` again, and the run goes on. A cancel while waiting
//! ends the wait (the tool gets `AskError::Cancelled`).

use std::sync::Arc;

use oscova_core::interaction::{
    Answer, AskError, CHOICE_FIELD, InteractionHandler, InteractionRequest, Question, TEXT_FIELD,
};
use oscova_core::provider::BoxFuture;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Runner, status_update};
use crate::model::{Message, Part, TaskState};

/// Asks the client of one task.
pub(crate) struct TaskAsk {
    pub(crate) runner: Arc<Runner>,
    pub(crate) user: String,
    pub(crate) task: String,
    pub(crate) events: broadcast::Sender<Value>,
    pub(crate) cancel: CancellationToken,
}

impl InteractionHandler for TaskAsk {
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> {
        let (runner, user, id, events, cancel) = (
            self.runner.clone(),
            self.user.clone(),
            self.task.clone(),
            self.events.clone(),
            self.cancel.clone(),
        );
        Box::pin(async move {
            let failed = |e: crate::model::A2aError| AskError::Failed(e.to_string());
            let (tx, rx) = oneshot::channel();
            runner.wait_for_answer(&user, &id, tx);
            let mut task = runner.get(&user, &id).await.map_err(failed)?;
            task.set_state(TaskState::InputRequired, None);
            if let Some(message) = &mut task.status.message {
                message.parts = question_parts(&request.question);
            } else {
                let mut message = Message::agent_text("", &task.context_id, &task.id);
                message.parts = question_parts(&request.question);
                task.status.message = Some(message);
            }
            runner.put(&user, &task).await.map_err(failed)?;
            let _ = events.send(status_update(&task));
            let answer = tokio::select! {
                answer = rx => answer.map_err(|_| AskError::Cancelled)?,
                () = cancel.cancelled() => {
                    runner.stop_waiting(&user, &id);
                    return Err(AskError::Cancelled);
                }
            };
            let mut task = runner.get(&user, &id).await.map_err(failed)?;
            task.set_state(TaskState::Working, None);
            runner.put(&user, &task).await.map_err(failed)?;
            let _ = events.send(status_update(&task));
            answer_of(&request.question, &answer)
        })
    }
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
