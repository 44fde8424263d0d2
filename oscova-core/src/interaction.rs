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
//! of its type; defaults fill missing optional fields). A cancelled call stops waiting at once. The
//! question's text passes the scope's redaction before anyone sees it.

use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::provider::BoxFuture;
use crate::tool::CallId;

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
///     .integer("age", "Age", Some(30), false)
///     .number("score", "Score", None, false)
///     .boolean("subscribe", "Subscribe", Some(false), false)
///     .choice("size", "Size", vec!["S".into(), "M".into()], Some("M"), false)
///     .titled_choice("plan", "Plan", [("free", "Free"), ("pro", "Professional")], None, true)
///     .multi_choice("topics", "Topics", vec!["news".into(), "sport".into()], vec![], false);
/// assert_eq!(form.fields().len(), 7);
/// let schema = form.requested_schema();
/// assert_eq!(schema["properties"]["age"]["type"], "integer");
/// assert_eq!(schema["properties"]["plan"]["oneOf"][1]["title"], "Professional");
/// assert_eq!(schema["properties"]["topics"]["items"]["enum"][0], "news");
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
        /// The smallest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        /// The largest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
    },
    /// A whole number.
    Integer {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<i64>,
        /// The smallest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<i64>,
        /// The largest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<i64>,
    },
    /// A boolean.
    Boolean {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    /// One of several strings.
    Choice {
        /// The options: the values an answer carries.
        options: Vec<String>,
        /// The label shown for each option, in the options' order; empty
        /// when the options are their own labels. An option without a
        /// label here is shown as itself.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        titles: Vec<String>,
        /// The default, one of the options.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
        /// Sends the labels as the deprecated `enumNames` list that MCP
        /// clients from before protocol 2025-11-25 read, instead of
        /// `oneOf` with `const` and `title` (SEP-1330).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        legacy_titles: bool,
    },
    /// Any number of several strings (a multi-select).
    MultiChoice {
        /// The options: the values an answer carries.
        options: Vec<String>,
        /// The label shown for each option, as for [`FieldKind::Choice`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        titles: Vec<String>,
        /// The options chosen by default.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        default: Vec<String>,
        /// The fewest options an answer may choose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_items: Option<u64>,
        /// The most options an answer may choose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u64>,
    },
}

impl FieldKind {
    /// The options of a choice as `(value, label)` pairs, in order, a
    /// missing label being the value itself; empty for other kinds. What
    /// a host shows the person and what it maps their pick back to.
    ///
    /// ```
    /// use oscova_core::interaction::{FieldKind, Form};
    /// let form = Form::new().titled_choice("plan", "Plan", [("pro", "Professional")], None, true);
    /// assert_eq!(form.fields()[0].kind.labelled_options(), vec![("pro", "Professional")]);
    /// ```
    pub fn labelled_options(&self) -> Vec<(&str, &str)> {
        match self {
            Self::Choice {
                options, titles, ..
            }
            | Self::MultiChoice {
                options, titles, ..
            } => options
                .iter()
                .enumerate()
                .map(|(i, option)| (option.as_str(), titles.get(i).unwrap_or(option).as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl FormField {
    /// A field; optional unless [`FormField::required`] is called.
    pub fn new(name: impl Into<String>, title: impl Into<String>, kind: FieldKind) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            required: false,
            kind,
        }
    }

    /// Makes the field one every answer must have.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

/// Splits `(value, label)` pairs into the options and their labels.
fn titled<V: Into<String>, T: Into<String>>(
    options: impl IntoIterator<Item = (V, T)>,
) -> (Vec<String>, Vec<String>) {
    options
        .into_iter()
        .map(|(value, title)| (value.into(), title.into()))
        .unzip()
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
        let kind = FieldKind::Number {
            default,
            minimum: None,
            maximum: None,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a whole-number field.
    pub fn integer(self, name: &str, title: &str, default: Option<i64>, required: bool) -> Self {
        let kind = FieldKind::Integer {
            default,
            minimum: None,
            maximum: None,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a yes/no field.
    pub fn boolean(self, name: &str, title: &str, default: Option<bool>, required: bool) -> Self {
        self.field(name, title, required, FieldKind::Boolean { default })
    }

    /// Adds a choice among `options`, each shown as itself.
    pub fn choice(
        self,
        name: &str,
        title: &str,
        options: Vec<String>,
        default: Option<&str>,
        required: bool,
    ) -> Self {
        let default = default.map(str::to_owned);
        let kind = FieldKind::Choice {
            options,
            titles: Vec::new(),
            default,
            legacy_titles: false,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a choice among `(value, label)` options: the person sees the
    /// labels, the answer carries the value.
    pub fn titled_choice<V: Into<String>, T: Into<String>>(
        self,
        name: &str,
        title: &str,
        options: impl IntoIterator<Item = (V, T)>,
        default: Option<&str>,
        required: bool,
    ) -> Self {
        let (options, titles) = titled(options);
        let kind = FieldKind::Choice {
            options,
            titles,
            default: default.map(str::to_owned),
            legacy_titles: false,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a choice of any number of `options`, `default` chosen unless
    /// the person changes it.
    pub fn multi_choice(
        self,
        name: &str,
        title: &str,
        options: Vec<String>,
        default: Vec<String>,
        required: bool,
    ) -> Self {
        let kind = FieldKind::MultiChoice {
            options,
            titles: Vec::new(),
            default,
            min_items: None,
            max_items: None,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a choice of any number of `(value, label)` options.
    pub fn titled_multi_choice<V: Into<String>, T: Into<String>>(
        self,
        name: &str,
        title: &str,
        options: impl IntoIterator<Item = (V, T)>,
        default: Vec<String>,
        required: bool,
    ) -> Self {
        let (options, titles) = titled(options);
        let kind = FieldKind::MultiChoice {
            options,
            titles,
            default,
            min_items: None,
            max_items: None,
        };
        self.field(name, title, required, kind)
    }

    /// Adds a field built in full, for the settings the shorthands leave
    /// out (bounds, the number of choices, legacy labels).
    ///
    /// ```
    /// use oscova_core::interaction::{FieldKind, Form, FormField};
    /// let guests = FieldKind::Integer { default: Some(2), minimum: Some(1), maximum: Some(8) };
    /// let form = Form::new().with(FormField::new("guests", "Guests", guests).required());
    /// assert_eq!(form.requested_schema()["properties"]["guests"]["maximum"], 8);
    /// ```
    #[must_use]
    pub fn with(mut self, field: FormField) -> Self {
        self.fields.push(field);
        self
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
                FieldKind::Number {
                    default,
                    minimum,
                    maximum,
                } => {
                    json!({"type": "number", "default": default, "minimum": minimum, "maximum": maximum})
                }
                FieldKind::Integer {
                    default,
                    minimum,
                    maximum,
                } => {
                    json!({"type": "integer", "default": default, "minimum": minimum, "maximum": maximum})
                }
                FieldKind::Boolean { default } => json!({"type": "boolean", "default": default}),
                FieldKind::Choice {
                    options,
                    titles,
                    default,
                    legacy_titles,
                } => {
                    let labels = labels(options, titles);
                    match (titles.is_empty(), legacy_titles) {
                        (true, _) => json!({"type": "string", "enum": options, "default": default}),
                        (false, true) => json!({
                            "type": "string", "enum": options, "enumNames": labels, "default": default,
                        }),
                        (false, false) => json!({
                            "type": "string", "oneOf": const_titles(options, &labels), "default": default,
                        }),
                    }
                }
                FieldKind::MultiChoice {
                    options,
                    titles,
                    default,
                    min_items,
                    max_items,
                } => {
                    let items = if titles.is_empty() {
                        json!({"type": "string", "enum": options})
                    } else {
                        json!({"anyOf": const_titles(options, &labels(options, titles))})
                    };
                    let default = (!default.is_empty()).then_some(default);
                    json!({
                        "type": "array", "items": items, "default": default,
                        "minItems": min_items, "maxItems": max_items,
                    })
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

/// Each option's label: its title, or the option itself.
fn labels(options: &[String], titles: &[String]) -> Vec<String> {
    options
        .iter()
        .enumerate()
        .map(|(i, option)| titles.get(i).unwrap_or(option).clone())
        .collect()
}

/// `[{"const": option, "title": label}, ...]`, SEP-1330's titled options.
fn const_titles(options: &[String], labels: &[String]) -> Vec<Value> {
    options
        .iter()
        .zip(labels)
        .map(|(option, label)| json!({"const": option, "title": label}))
        .collect()
}

fn default_of(kind: &FieldKind) -> Option<Value> {
    match kind {
        FieldKind::Text { default } => default.clone().map(Value::from),
        FieldKind::Number { default, .. } => default.map(Value::from),
        FieldKind::Integer { default, .. } => default.map(Value::from),
        FieldKind::Boolean { default } => default.map(Value::from),
        FieldKind::Choice { default, .. } => default.clone().map(Value::from),
        FieldKind::MultiChoice { default, .. } if !default.is_empty() => {
            Some(Value::from(default.clone()))
        }
        FieldKind::MultiChoice { .. } => None,
    }
}

fn check_value(name: &str, kind: &FieldKind, value: Value) -> Result<Value, AskError> {
    let wrong = |what: &str| {
        AskError::InvalidAnswer(format!("`{name}` must be {what}, not {}", short(&value)))
    };
    match (kind, &value) {
        (FieldKind::Text { .. }, Value::String(_)) => Ok(value),
        (
            FieldKind::Number {
                minimum, maximum, ..
            },
            _,
        ) => {
            let number = match &value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|f| f.is_finite())
            .ok_or_else(|| wrong("a number"))?;
            if minimum.is_some_and(|min| number < min) || maximum.is_some_and(|max| number > max) {
                return Err(wrong(&format!("a number {}", range(minimum, maximum))));
            }
            Ok(Value::from(number))
        }
        (
            FieldKind::Integer {
                minimum, maximum, ..
            },
            _,
        ) => {
            let whole = match &value {
                Value::Number(n) => n.as_i64().or_else(|| {
                    // 30.0 is a whole number too.
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                }),
                Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            }
            .ok_or_else(|| wrong("a whole number"))?;
            if minimum.is_some_and(|min| whole < min) || maximum.is_some_and(|max| whole > max) {
                return Err(wrong(&format!(
                    "a whole number {}",
                    range(minimum, maximum)
                )));
            }
            Ok(Value::from(whole))
        }
        (FieldKind::Boolean { .. }, Value::Bool(_)) => Ok(value),
        (FieldKind::Choice { options, .. }, Value::String(s)) if options.contains(s) => Ok(value),
        (FieldKind::Choice { options, .. }, _) => Err(wrong(&format!("one of {options:?}"))),
        (
            FieldKind::MultiChoice {
                options,
                min_items,
                max_items,
                ..
            },
            _,
        ) => {
            let among = || wrong(&format!("a list of distinct options among {options:?}"));
            let Value::Array(items) = &value else {
                return Err(among());
            };
            let mut chosen: Vec<&str> = Vec::with_capacity(items.len());
            for item in items {
                match item.as_str() {
                    Some(s) if options.iter().any(|o| o == s) && !chosen.contains(&s) => {
                        chosen.push(s)
                    }
                    _ => return Err(among()),
                }
            }
            let count = chosen.len() as u64;
            if min_items.is_some_and(|min| count < min) || max_items.is_some_and(|max| count > max)
            {
                let range = range(min_items, max_items);
                return Err(wrong(&format!("{range} options among {options:?}")));
            }
            Ok(value)
        }
        (FieldKind::Text { .. }, _) => Err(wrong("text")),
        (FieldKind::Boolean { .. }, _) => Err(wrong("true or false")),
    }
}

/// "from 1 to 8", "no less than 1", "no more than 8".
fn range<T: fmt::Display>(minimum: &Option<T>, maximum: &Option<T>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("no less than {min}"),
        (None, Some(max)) => format!("no more than {max}"),
        (None, None) => "of any size".to_owned(),
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
    fn integers_are_whole_and_within_bounds() {
        let kind = FieldKind::Integer {
            default: Some(2),
            minimum: Some(1),
            maximum: Some(8),
        };
        let form = Form::new().with(FormField::new("guests", "Guests", kind).required());
        assert_eq!(form.check(map(json!({}))).unwrap()["guests"], 2);
        assert_eq!(
            form.check(map(json!({"guests": 3.0}))).unwrap()["guests"],
            3
        );
        assert_eq!(
            form.check(map(json!({"guests": " 4 "}))).unwrap()["guests"],
            4
        );
        for bad in [json!(2.5), json!(0), json!(9), json!("two"), json!(true)] {
            let err = form.check(map(json!({ "guests": bad }))).unwrap_err();
            assert!(matches!(err, AskError::InvalidAnswer(_)), "{bad}: {err}");
        }
        let err = form.check(map(json!({"guests": 9}))).unwrap_err();
        assert!(err.to_string().contains("from 1 to 8"), "{err}");
        let schema = form.requested_schema();
        assert_eq!(
            schema["properties"]["guests"],
            json!({"type": "integer", "title": "Guests", "default": 2, "minimum": 1, "maximum": 8})
        );
    }

    #[test]
    fn titled_and_multiple_choices_take_the_sep_1330_shapes() {
        let legacy = FieldKind::Choice {
            options: vec!["a".into(), "b".into()],
            titles: vec!["Apple".into(), "Banana".into()],
            default: None,
            legacy_titles: true,
        };
        let form = Form::new()
            .choice("plain", "Plain", vec!["x".into(), "y".into()], None, false)
            .titled_choice(
                "titled",
                "Titled",
                [("v1", "First"), ("v2", "Second")],
                Some("v2"),
                false,
            )
            .with(FormField::new("legacy", "Legacy", legacy))
            .multi_choice(
                "many",
                "Many",
                vec!["p".into(), "q".into()],
                vec!["q".into()],
                false,
            )
            .titled_multi_choice(
                "tmany",
                "Titled many",
                [("m1", "One"), ("m2", "Two")],
                vec![],
                true,
            );
        let p = &form.requested_schema()["properties"];
        assert_eq!(
            p["plain"],
            json!({"type": "string", "title": "Plain", "enum": ["x", "y"]})
        );
        assert_eq!(
            p["titled"],
            json!({"type": "string", "title": "Titled", "default": "v2",
                   "oneOf": [{"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]})
        );
        assert_eq!(
            p["legacy"],
            json!({"type": "string", "title": "Legacy", "enum": ["a", "b"], "enumNames": ["Apple", "Banana"]})
        );
        assert_eq!(
            p["many"],
            json!({"type": "array", "title": "Many", "default": ["q"],
                   "items": {"type": "string", "enum": ["p", "q"]}})
        );
        assert_eq!(
            p["tmany"]["items"],
            json!({"anyOf": [{"const": "m1", "title": "One"}, {"const": "m2", "title": "Two"}]})
        );
        let answer = form
            .check(map(json!({"titled": "v1", "tmany": ["m2", "m1"]})))
            .unwrap();
        assert_eq!(answer["many"], json!(["q"]), "the default fills in");
        assert_eq!(answer["tmany"], json!(["m2", "m1"]));
        for bad in [json!(["m1", "m1"]), json!(["zz"]), json!("m1"), json!([1])] {
            let err = form.check(map(json!({ "tmany": bad }))).unwrap_err();
            assert!(matches!(err, AskError::InvalidAnswer(_)), "{bad}: {err}");
        }
        // A label is never an answer: the value is.
        assert!(
            form.check(map(json!({"titled": "First", "tmany": []})))
                .is_err()
        );
    }

    #[test]
    fn multiple_choices_honour_their_item_bounds() {
        let kind = FieldKind::MultiChoice {
            options: vec!["a".into(), "b".into(), "c".into()],
            titles: vec![],
            default: vec![],
            min_items: Some(1),
            max_items: Some(2),
        };
        let form = Form::new().with(FormField::new("pick", "Pick", kind));
        assert!(form.check(map(json!({"pick": ["a"]}))).is_ok());
        let err = form.check(map(json!({"pick": []}))).unwrap_err();
        assert!(err.to_string().contains("from 1 to 2 options"), "{err}");
        assert!(form.check(map(json!({"pick": ["a", "b", "c"]}))).is_err());
        assert!(form.check(map(json!({}))).is_ok(), "optional and absent");
        let s = form.requested_schema();
        assert_eq!(
            (
                s["properties"]["pick"]["minItems"].clone(),
                s["properties"]["pick"]["maxItems"].clone()
            ),
            (json!(1), json!(2))
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
