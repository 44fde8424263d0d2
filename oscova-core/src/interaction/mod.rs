//! Asking the person from inside a tool: confirm, choose, enter text, or
//! fill a small form.
//!
//! Rules: a question is answered by the host's handler for the call (an
//! [`InteractionHandler`] set on the call, else the host's), never by the
//! tool itself. Without one the tool gets [`AskError::NoOneToAsk`] at once.
//! A form is flat: strings, numbers, integers, booleans, choices of one
//! and choices of several (each option with an optional label), each with
//! an optional default, which is the subset MCP elicitation allows, so
//! every host can render every question. An accepted answer is checked
//! against the question before the tool sees it (a choice must be among
//! the options, a number within its bounds, a required field present and
//! of its type; defaults fill missing optional fields). A cancelled call
//! stops waiting at once. The question's text passes the scope's redaction
//! before anyone sees it.
//!
//! The files, one concept each: `question.rs` (what a tool asks, each
//! question as a form), `form.rs` (forms and their fields), `field.rs`
//! (the typed field builders), `schema.rs` (the requested schema),
//! `check.rs` (answer checks); this file holds the answer and the handler
//! that gives it. Every item is public at `oscova_core::interaction::X`.

use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::provider::BoxFuture;
use crate::tool::CallId;

mod check;
mod field;
mod form;
mod question;
mod schema;

pub use field::{
    BooleanField, ChoiceField, ChoiceOption, IntegerField, MultiChoiceField, NumberField, TextField,
};
pub use form::{FieldKind, Form, FormField};
pub use question::{CHOICE_FIELD, Question, TEXT_FIELD};

/// How the person answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum Answer {
    /// They answered; the values, keyed by field (none for a confirmation).
    Accept(Map<String, Value>),
    /// They said no.
    Decline,
    /// They dismissed the question without answering.
    Cancel,
}

/// Why a question got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// Nobody can be asked here: no handler, no terminal, or a client that
    /// cannot ask; the text says which.
    #[error("nobody can be asked: {0}")]
    NoOneToAsk(String),
    /// The person declined.
    #[error("the person declined")]
    Declined,
    /// The person dismissed the question.
    #[error("the person dismissed the question")]
    Dismissed,
    /// The call was cancelled while waiting for the answer.
    #[error("the call was cancelled while waiting for an answer")]
    Cancelled,
    /// The answer does not fit the question.
    #[error("the answer does not fit the question: {0}")]
    InvalidAnswer(String),
    /// Asking failed (the client went away, the terminal closed).
    #[error("asking failed: {0}")]
    Failed(String),
}

/// A question on its way to a handler, with what the handler may show
/// about the call.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRequest {
    /// The wire name of the tool asking.
    pub tool: String,
    /// The call asking.
    pub call_id: CallId,
    /// The calling user's id.
    pub user_id: String,
    /// The question, already redacted.
    pub question: Question,
}

/// Answers questions from tools. Closures
/// `Fn(InteractionRequest) -> impl Future<Output = Result<Answer, AskError>>`
/// implement it.
///
/// ```
/// use oscova_core::interaction::{Answer, AskError, InteractionHandler, InteractionRequest};
/// fn always_yes() -> impl InteractionHandler {
///     |_req: InteractionRequest| async { Ok::<_, AskError>(Answer::Accept(Default::default())) }
/// }
/// # let _ = always_yes();
/// ```
pub trait InteractionHandler: Send + Sync + 'static {
    /// Asks the person and returns their answer.
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>>;
}

impl<F, Fut> InteractionHandler for F
where
    F: Fn(InteractionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Answer, AskError>> + Send + 'static,
{
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> {
        Box::pin(self(request))
    }
}

impl fmt::Debug for dyn InteractionHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InteractionHandler")
    }
}
