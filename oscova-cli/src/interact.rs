//! Tools' questions answered at the terminal (`tools call`, `chat`).
//!
//! Rules: every question is asked on stderr and read from the terminal
//! (see `term.rs`); with no terminal, a confirmation is answered by
//! `--yes` when it was given and anything else is refused with an error
//! saying there is nobody to ask (`--yes` answers confirmations only). An
//! empty line to a choice or a text without a default dismisses the
//! question; in a form it leaves the field to its default. Options are
//! shown by their labels and picked by number, value or label; a
//! multiple choice takes several, separated by commas. The answer is checked by the host
//! before the tool sees it.

use oscova_core::interaction::{
    Answer, AskError, CHOICE_FIELD, FieldKind, Form, InteractionHandler, InteractionRequest,
    Question, TEXT_FIELD,
};
use oscova_core::provider::BoxFuture;
use serde_json::{Map, Value};

use crate::output::redacted;
use crate::term::{ask, read_answer, say};

/// The CLI's answerer of tools' questions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TerminalInteraction {
    /// `--yes` was given: confirmations are answered yes.
    pub(crate) yes: bool,
}

impl InteractionHandler for TerminalInteraction {
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> {
        let yes = self.yes;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || answer(&request, yes))
                .await
                .map_err(|e| AskError::Failed(format!("the terminal prompt failed: {e}")))?
        })
    }
}

fn nobody(what: &str) -> AskError {
    AskError::NoOneToAsk(format!(
        "the tool asks {what}, and there is no terminal to ask on (--yes answers confirmations only)"
    ))
}

fn answer(request: &InteractionRequest, yes: bool) -> Result<Answer, AskError> {
    let tool = &request.tool;
    match &request.question {
        Question::Confirm { message } => {
            if yes {
                return Ok(Answer::Accept(Map::new()));
            }
            match ask(&redacted(&format!("{tool} asks: {message}"))) {
                Some(true) => Ok(Answer::Accept(Map::new())),
                Some(false) => Ok(Answer::Decline),
                None => Err(AskError::NoOneToAsk(
                    "the tool asks for a confirmation, and there is no terminal to ask on; pass --yes to confirm"
                        .to_owned(),
                )),
            }
        }
        Question::Choose { message, options } => {
            say(&redacted(&format!("{tool} asks: {message}")));
            let options: Vec<(&str, &str)> =
                options.iter().map(|o| (o.as_str(), o.as_str())).collect();
            let Some(choice) = pick(&options, None)? else {
                return Ok(Answer::Cancel);
            };
            Ok(accepted(CHOICE_FIELD, Value::String(choice)))
        }
        Question::Text { message, default } => {
            let shown = default
                .as_deref()
                .map_or_else(String::new, |d| format!(" [{d}]"));
            let line = read_answer(&redacted(&format!("{tool} asks: {message}{shown} ")))
                .ok_or_else(|| nobody("for text"))?;
            match (line.is_empty(), default) {
                (true, Some(d)) => Ok(accepted(TEXT_FIELD, Value::String(d.clone()))),
                (true, None) => Ok(Answer::Cancel),
                (false, _) => Ok(accepted(TEXT_FIELD, Value::String(line))),
            }
        }
        Question::Form { message, form } => {
            say(&redacted(&format!("{tool} asks: {message}")));
            fill(form).map(Answer::Accept)
        }
        _ => Err(nobody("something this terminal cannot show")),
    }
}

fn accepted(field: &str, value: Value) -> Answer {
    let mut map = Map::new();
    map.insert(field.to_owned(), value);
    Answer::Accept(map)
}

/// Lists `(value, label)` options numbered by label.
fn list(options: &[(&str, &str)]) {
    for (i, (_, label)) in options.iter().enumerate() {
        say(&redacted(&format!("  {}) {label}", i + 1)));
    }
}

/// The value one typed pick names: a number, a value or a label (any
/// case); else the text as typed, which the host's check then refuses.
fn resolve(options: &[(&str, &str)], pick: &str) -> String {
    let by_number = pick
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| options.get(i));
    let by_text = || {
        options
            .iter()
            .find(|(value, label)| *value == pick || label.eq_ignore_ascii_case(pick))
    };
    by_number
        .or_else(by_text)
        .map_or_else(|| pick.to_owned(), |(value, _)| (*value).to_owned())
}

/// Lists `options` and reads one pick; `Ok(None)` for an empty line
/// without a default.
fn pick(options: &[(&str, &str)], default: Option<&str>) -> Result<Option<String>, AskError> {
    list(options);
    let shown = default.map_or_else(String::new, |d| format!(" [{d}]"));
    let line = read_answer(&format!("choose 1-{}{shown}: ", options.len()))
        .ok_or_else(|| nobody("for a choice"))?;
    let line = line.trim();
    if line.is_empty() {
        return Ok(default.map(str::to_owned));
    }
    Ok(Some(resolve(options, line)))
}

/// Lists `options` and reads any number of picks separated by commas;
/// `Ok(None)` for an empty line (the default, if any, then applies).
fn pick_many(options: &[(&str, &str)], default: &[String]) -> Result<Option<Value>, AskError> {
    list(options);
    let shown = if default.is_empty() {
        String::new()
    } else {
        format!(" [{}]", default.join(", "))
    };
    let line = read_answer(&format!(
        "choose any of 1-{}, separated by commas{shown}: ",
        options.len()
    ))
    .ok_or_else(|| nobody("for a choice"))?;
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let picks = line
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| Value::String(resolve(options, p)))
        .collect();
    Ok(Some(Value::Array(picks)))
}

fn fill(form: &Form) -> Result<Map<String, Value>, AskError> {
    let mut values = Map::new();
    for field in form.fields() {
        let star = if field.required { "*" } else { "" };
        let value = match &field.kind {
            FieldKind::Choice { default, .. } => {
                say(&redacted(&format!("{}{star}:", field.title)));
                pick(&field.kind.labelled_options(), default.as_deref())?.map(Value::String)
            }
            FieldKind::MultiChoice { default, .. } => {
                say(&redacted(&format!("{}{star}:", field.title)));
                pick_many(&field.kind.labelled_options(), default)?
            }
            kind => {
                let default = match kind {
                    FieldKind::Text { default } => default.clone(),
                    FieldKind::Number { default, .. } => default.map(|d| d.to_string()),
                    FieldKind::Integer { default, .. } => default.map(|d| d.to_string()),
                    FieldKind::Boolean { default } => {
                        default.map(|d| if d { "y" } else { "n" }.to_owned())
                    }
                    _ => None,
                };
                let hint = match kind {
                    FieldKind::Boolean { .. } => " (y/n)",
                    FieldKind::Number { .. } => " (a number)",
                    FieldKind::Integer { .. } => " (a whole number)",
                    _ => "",
                };
                let shown = default.map_or_else(String::new, |d| format!(" [{d}]"));
                let line = read_answer(&redacted(&format!("{}{star}{hint}{shown}: ", field.title)))
                    .ok_or_else(|| nobody("to fill a form"))?;
                let line = line.trim().to_owned();
                (!line.is_empty()).then(|| match kind {
                    FieldKind::Boolean { .. } => Value::Bool(matches!(
                        line.to_ascii_lowercase().as_str(),
                        "y" | "yes" | "true"
                    )),
                    // Read as a number by the host's check, which says so
                    // when it is not one.
                    _ => Value::String(line),
                })
            }
        };
        if let Some(value) = value {
            values.insert(field.name.clone(), value);
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn a_pick_names_its_option_by_number_value_or_label() {
        let options = [("main", "Main hall"), ("garden", "Garden")];
        assert_eq!(resolve(&options, "2"), "garden");
        assert_eq!(resolve(&options, "main"), "main");
        assert_eq!(resolve(&options, "main HALL"), "main");
        // Out of range or unknown: left as typed for the host's check to refuse.
        assert_eq!(resolve(&options, "3"), "3");
        assert_eq!(resolve(&options, "attic"), "attic");
    }
}
