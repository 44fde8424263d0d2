//! A server's elicitation request, asked through the call it belongs to.
//!
//! Rules: over stdio a request carries nothing naming its call, so it is
//! routed to the connection's one call in flight, and declined when there
//! is none or more than one (asking the wrong person is worse than not
//! asking). A form request becomes a [`Question::Form`] (MCP's flat subset:
//! strings, numbers, booleans, choices, each with its default); a schema
//! outside that subset, and a URL request, are declined. The answer goes
//! back as accept (with the checked values), decline or cancel.

use std::sync::{Arc, Mutex};

use oscova_core::interaction::{Answer, Form, Question};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A question for a call, and where its answer goes.
pub(crate) type Ask = (Question, oneshot::Sender<Option<Answer>>);

/// The calls in flight on one connection that can be asked, by call key.
#[derive(Clone, Default)]
pub(crate) struct Asks(Arc<Mutex<Vec<AskRoute>>>);

/// One call's key and where its questions go.
type AskRoute = (u64, mpsc::UnboundedSender<Ask>);

impl Asks {
    pub(crate) fn add(&self, key: u64, route: mpsc::UnboundedSender<Ask>) {
        if let Ok(mut asks) = self.0.lock() {
            asks.push((key, route));
        }
    }

    pub(crate) fn remove(&self, key: u64) {
        if let Ok(mut asks) = self.0.lock() {
            asks.retain(|(k, _)| *k != key);
        }
    }

    /// The one call in flight, if there is exactly one.
    pub(crate) fn only(&self) -> Option<mpsc::UnboundedSender<Ask>> {
        let asks = self.0.lock().ok()?;
        match asks.as_slice() {
            [(_, route)] => Some(route.clone()),
            _ => None,
        }
    }
}

/// The question a form request asks, if it fits MCP's flat subset.
pub(crate) fn question(message: String, schema: &Value) -> Option<Question> {
    let properties = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut form = Form::new();
    for (name, p) in properties {
        let title = p
            .get("title")
            .or_else(|| p.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(name);
        let needed = required.contains(&name.as_str());
        let default = p.get("default");
        form = match (p.get("type").and_then(Value::as_str), p.get("enum")) {
            (_, Some(Value::Array(options))) => {
                let options: Vec<String> = options
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                form.choice(
                    name,
                    title,
                    options,
                    default.and_then(Value::as_str),
                    needed,
                )
            }
            (Some("string"), _) => form.text(name, title, default.and_then(Value::as_str), needed),
            (Some("number" | "integer"), _) => {
                form.number(name, title, default.and_then(Value::as_f64), needed)
            }
            (Some("boolean"), _) => {
                form.boolean(name, title, default.and_then(Value::as_bool), needed)
            }
            _ => return None,
        };
    }
    Some(Question::Form { message, form })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_forms_become_questions_and_others_do_not() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
                "count": {"type": "integer"},
                "ok": {"type": "boolean", "default": true}
            },
            "required": ["name"]
        });
        let Some(Question::Form { form, .. }) = question("Details?".into(), &schema) else {
            panic!("a form")
        };
        assert_eq!(form.fields().len(), 4);
        let nested = json!({"type": "object", "properties": {"x": {"type": "object"}}});
        assert!(question("x".into(), &nested).is_none());
    }
}
