//! The questions a tool can ask, and each one seen as a form.
//!
//! Rules: every [`Question`] is one [`Form`] (`as_form`), so the requested
//! schema and the answer check are written once, for forms; a confirmation
//! is the empty form, a choice and a line of text one required field named
//! [`CHOICE_FIELD`] and [`TEXT_FIELD`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{AskError, Form, FormField};

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
                Form::new().required_choice(CHOICE_FIELD, "Choice", options.iter().cloned())
            }
            Self::Text { default, .. } => {
                let mut text = FormField::text(TEXT_FIELD, "Text").required();
                if let Some(default) = default {
                    text = text.with_default(default.clone());
                }
                Form::new().field(text)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
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

    #[test]
    fn a_choice_must_be_an_option_and_a_text_offers_its_default() {
        let q = Question::Choose {
            message: "pick".into(),
            options: vec!["a".into(), "b".into()],
        };
        assert!(q.check_answer(map(json!({"choice": "b"}))).is_ok());
        let err = q.check_answer(map(json!({"choice": "z"}))).unwrap_err();
        assert!(matches!(err, AskError::InvalidAnswer(_)), "{err}");
        let q = Question::Text {
            message: "name?".into(),
            default: Some("Ada".into()),
        };
        assert_eq!(
            q.requested_schema()["properties"]["text"],
            json!({"type": "string", "title": "Text", "default": "Ada"})
        );
        assert_eq!(q.check_answer(Map::new()).unwrap()["text"], "Ada");
    }
}
