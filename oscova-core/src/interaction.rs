//! Asking the person from inside a tool: confirm, choose, enter text, or
//! fill a small form.
//!
//! Rules: a question is answered by the host's handler for the call (an
//! [`InteractionHandler`] set on the call, else the host's), never by the
//! tool itself. Without one the tool gets [`AskError::NoOneToAsk`] at once.
//! A form is flat: strings, numbers, booleans and choices, each with an
//! optional default, which is the subset MCP elicitation allows, so every
//! host can render every question. An accepted answer is checked against
//! the question before the tool sees it (a choice must be one of the
//! options, a required field present and of its type; defaults fill
//! missing optional fields). A cancelled call stops waiting at once. The
//! question's text passes the scope's redaction before anyone sees it.

use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::invocation::CallId;
use crate::provider::BoxFuture;

/// The property an answer to [`Question::Choose`] carries.
pub const CHOICE_FIELD: &str = "choice";
/// The property an answer to [`Question::Text`] carries.
pub const TEXT_FIELD: &str = "text";

/// Something a tool asks the person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Question {
    /// Yes or no.
    Confirm {
        /// What to confirm.
        message: String,
    },
    /// One of several options.
    Choose {
        /// What to choose.
        message: String,
        /// The options, in order.
        options: Vec<String>,
    },
    /// A line of text.
    Text {
        /// What to enter.
        message: String,
        /// Offered when the person enters nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    /// A small flat form.
    Form {
        /// What the form is for.
        message: String,
        /// Its fields.
        form: Form,
    },
}

impl Question {
    /// The message shown with the question.
    pub fn message(&self) -> &str {
        match self {
            Self::Confirm { message }
            | Self::Choose { message, .. }
            | Self::Text { message, .. }
            | Self::Form { message, .. } => message,
        }
    }

    pub(crate) fn message_mut(&mut self) -> &mut String {
        match self {
            Self::Confirm { message }
            | Self::Choose { message, .. }
            | Self::Text { message, .. }
            | Self::Form { message, .. } => message,
        }
    }

    /// The question as one form: a confirmation has no fields, a choice
    /// one required [`CHOICE_FIELD`], a text one required [`TEXT_FIELD`].
    pub fn as_form(&self) -> Form {
        match self {
            Self::Confirm { .. } => Form::new(),
            Self::Choose { options, .. } => {
                Form::new().choice(CHOICE_FIELD, "Choice", options.clone(), None, true)
            }
            Self::Text { default, .. } => {
                Form::new().text(TEXT_FIELD, "Text", default.as_deref(), true)
            }
            Self::Form { form, .. } => form.clone(),
        }
    }

    /// The JSON Schema of an accepted answer, in the restricted form MCP's
    /// `elicitation/create` takes as `requestedSchema`.
    ///
    /// ```
    /// use oscova_core::interaction::Question;
    /// let q = Question::Choose { message: "Which?".into(), options: vec!["a".into(), "b".into()] };
    /// let s = q.requested_schema();
    /// assert_eq!(s["properties"]["choice"]["enum"], serde_json::json!(["a", "b"]));
    /// assert_eq!(s["required"], serde_json::json!(["choice"]));
    /// ```
    pub fn requested_schema(&self) -> Value {
        self.as_form().requested_schema()
    }

    /// Checks an accepted answer's values against the question, filling
    /// defaults of missing optional fields.
    pub fn check_answer(&self, values: Map<String, Value>) -> Result<Map<String, Value>, AskError> {
        self.as_form().check(values)
    }
}

/// A flat form: named fields, in order.
///
/// ```
/// use oscova_core::interaction::Form;
/// let form = Form::new()
///     .text("name", "Your name", None, true)
///     .number("age", "Age", Some(30.0), false)
///     .boolean("subscribe", "Subscribe", Some(false), false)
///     .choice("size", "Size", vec!["S".into(), "M".into()], Some("M"), false);
/// assert_eq!(form.fields().len(), 4);
/// assert_eq!(form.requested_schema()["properties"]["age"]["default"], 30.0);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Form {
    fields: Vec<FormField>,
}

/// One field of a [`Form`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormField {
    /// The property name in the answer.
    pub name: String,
    /// The label shown to the person.
    pub title: String,
    /// Whether the answer must have it.
    #[serde(default)]
    pub required: bool,
    /// Its type and default.
    pub kind: FieldKind,
}

/// The type of a form field, with its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FieldKind {
    /// A string.
    Text {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    /// A number.
    Number {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
    },
    /// A boolean.
    Boolean {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    /// One of several strings.
    Choice {
        /// The options.
        options: Vec<String>,
        /// The default, one of the options.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
}

impl Form {
    /// A form with no fields.
    pub fn new() -> Self {
        Self::default()
    }

    fn field(mut self, name: &str, title: &str, required: bool, kind: FieldKind) -> Self {
        self.fields.push(FormField {
            name: name.to_owned(),
            title: title.to_owned(),
            required,
            kind,
        });
        self
    }

    /// Adds a text field.
    pub fn text(self, name: &str, title: &str, default: Option<&str>, required: bool) -> Self {
        let default = default.map(str::to_owned);
        self.field(name, title, required, FieldKind::Text { default })
    }

    /// Adds a number field.
    pub fn number(self, name: &str, title: &str, default: Option<f64>, required: bool) -> Self {
        self.field(name, title, required, FieldKind::Number { default })
    }

    /// Adds a yes/no field.
    pub fn boolean(self, name: &str, title: &str, default: Option<bool>, required: bool) -> Self {
        self.field(name, title, required, FieldKind::Boolean { default })
    }

    /// Adds a choice among `options`.
    pub fn choice(
        self,
        name: &str,
        title: &str,
        options: Vec<String>,
        default: Option<&str>,
        required: bool,
    ) -> Self {
        let default = default.map(str::to_owned);
        self.field(
            name,
            title,
            required,
            FieldKind::Choice { options, default },
        )
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[FormField] {
        &self.fields
    }

    /// The JSON Schema of an answer: a flat object, as MCP elicitation's
    /// `requestedSchema` allows.
    pub fn requested_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in &self.fields {
            let mut schema = match &field.kind {
                FieldKind::Text { default } => json!({"type": "string", "default": default}),
                FieldKind::Number { default } => json!({"type": "number", "default": default}),
                FieldKind::Boolean { default } => json!({"type": "boolean", "default": default}),
                FieldKind::Choice { options, default } => {
                    json!({"type": "string", "enum": options, "default": default})
                }
            };
            if let Value::Object(map) = &mut schema {
                map.retain(|_, v| !v.is_null());
                map.insert("title".to_owned(), Value::from(field.title.clone()));
            }
            properties.insert(field.name.clone(), schema);
            if field.required {
                required.push(Value::from(field.name.clone()));
            }
        }
        json!({"type": "object", "properties": properties, "required": required})
    }

    /// Checks answer values: each field of its type (a number given as
    /// text is read), each choice one of the options, each required field
    /// present; missing optional fields get their defaults; unknown
    /// properties are dropped.
    pub fn check(&self, mut values: Map<String, Value>) -> Result<Map<String, Value>, AskError> {
        let mut out = Map::new();
        for field in &self.fields {
            let value = values.remove(&field.name).filter(|v| !v.is_null());
            let value = match (value, &field.kind) {
                (None, kind) => match default_of(kind) {
                    Some(v) => v,
                    None if field.required => {
                        return Err(AskError::InvalidAnswer(format!(
                            "the answer has no `{}`",
                            field.name
                        )));
                    }
                    None => continue,
                },
                (Some(v), kind) => check_value(&field.name, kind, v)?,
            };
            out.insert(field.name.clone(), value);
        }
        Ok(out)
    }
}

fn default_of(kind: &FieldKind) -> Option<Value> {
    match kind {
        FieldKind::Text { default } => default.clone().map(Value::from),
        FieldKind::Number { default } => default.map(Value::from),
        FieldKind::Boolean { default } => default.map(Value::from),
        FieldKind::Choice { default, .. } => default.clone().map(Value::from),
    }
}

fn check_value(name: &str, kind: &FieldKind, value: Value) -> Result<Value, AskError> {
    let wrong = |what: &str| {
        AskError::InvalidAnswer(format!("`{name}` must be {what}, not {}", short(&value)))
    };
    match (kind, &value) {
        (FieldKind::Text { .. }, Value::String(_)) => Ok(value),
        (FieldKind::Number { .. }, Value::Number(_)) => Ok(value),
        (FieldKind::Number { .. }, Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Value::from)
            .ok_or_else(|| wrong("a number")),
        (FieldKind::Boolean { .. }, Value::Bool(_)) => Ok(value),
        (FieldKind::Choice { options, .. }, Value::String(s)) if options.contains(s) => Ok(value),
        (FieldKind::Choice { options, .. }, _) => Err(wrong(&format!("one of {options:?}"))),
        (FieldKind::Text { .. }, _) => Err(wrong("text")),
        (FieldKind::Number { .. }, _) => Err(wrong("a number")),
        (FieldKind::Boolean { .. }, _) => Err(wrong("true or false")),
    }
}

fn short(value: &Value) -> String {
    crate::args::shorten(&value.to_string())
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn choices_must_be_options_and_defaults_fill_in() {
        let q = Question::Choose {
            message: "pick".into(),
            options: vec!["a".into(), "b".into()],
        };
        assert!(q.check_answer(map(json!({"choice": "b"}))).is_ok());
        let err = q.check_answer(map(json!({"choice": "z"}))).unwrap_err();
        assert!(matches!(err, AskError::InvalidAnswer(_)), "{err}");
        let form = Form::new()
            .number("n", "N", Some(2.0), false)
            .text("t", "T", None, true);
        assert_eq!(
            form.check(map(json!({"t": "x", "extra": 1}))).unwrap(),
            map(json!({"n": 2.0, "t": "x"}))
        );
        assert!(form.check(map(json!({"n": "3"}))).is_err());
        assert_eq!(
            form.check(map(json!({"n": "3", "t": ""}))).unwrap()["n"],
            3.0
        );
    }

    #[test]
    fn a_confirmation_asks_for_an_empty_object() {
        let q = Question::Confirm {
            message: "ok?".into(),
        };
        assert_eq!(
            q.requested_schema(),
            json!({"type": "object", "properties": {}, "required": []})
        );
    }
}
