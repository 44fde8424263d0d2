//! What a person sees of a chat, and what `--json` records of it.
//!
//! Rules: answer text goes to stdout as it arrives, and nothing else does,
//! so `oscova chat -m ... > answer.txt` keeps only answers. Tool activity
//! goes to stderr, one line when a call starts (wire name and arguments,
//! shortened) and one when it ends (a summary of the result, or why it was
//! refused); a line of answer text still open on stdout is ended first so
//! the two never share a line on a terminal. Tool progress is the redrawn
//! progress line, on a terminal only. With `--json` nothing is printed
//! while the chat runs: the calls are recorded for the outcome document.
//! Answer text passes a redacting stream (a model may echo a key, split
//! across streamed pieces) and tool lines the output's redactors, like
//! everything else the CLI prints; then both pass `term::for_terminal`
//! (tool lines `term::one_line`), so an answer or a result that quotes an
//! ESC sequence or a bidi override shows it inert.

use std::io::Write;
use std::sync::Mutex;

use oscova_agent::chat::ChatEvent;
use oscova_core::provider::model::ToolCallRequest;
use oscova_core::redact::RedactStream;
use oscova_core::{ToolResult, tool::ProgressSink};
use serde::Serialize;
use serde_json::Value;

use crate::term::ProgressLine;

/// The longest argument text shown on a tool line.
const MAX_ARGS: usize = 80;
/// The longest result summary shown on a tool line.
const MAX_SUMMARY: usize = 100;

/// One tool call, as the outcome document lists it.
#[derive(Debug, Clone, Serialize)]
pub(super) struct CallRecord {
    id: String,
    name: String,
    arguments: Value,
    /// `None` while it runs, and for a call the chat never ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<ToolResult>,
    refused: bool,
}

#[derive(Debug)]
struct State {
    /// Answer text on stdout without its line end yet.
    line_open: bool,
    calls: Vec<CallRecord>,
    /// Redacts answer text as it streams.
    answer: RedactStream,
}

impl Default for State {
    fn default() -> Self {
        Self {
            line_open: false,
            calls: Vec::new(),
            answer: crate::output::stream(),
        }
    }
}

/// Shows (or records) one message's events.
pub(super) struct View {
    json: bool,
    progress: Option<(ProgressLine, ProgressSink)>,
    state: Mutex<State>,
}

impl View {
    pub(super) fn new(json: bool) -> Self {
        Self {
            json,
            progress: if json {
                None
            } else {
                ProgressLine::on_stderr().map(|line| {
                    let sink = line.sink();
                    (line, sink)
                })
            },
            state: Mutex::new(State::default()),
        }
    }

    /// Handles one event as it happens.
    pub(super) fn on_event(&self, event: &ChatEvent) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match event {
            ChatEvent::Text(text) if !self.json && !text.is_empty() => {
                let shown = state.answer.push(text);
                write_answer(&mut state, &shown);
            }
            ChatEvent::ToolCallRunning(call) => {
                state.calls.push(CallRecord {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    result: None,
                    refused: false,
                });
                if !self.json {
                    end_line(&mut state);
                    tool_line(&format!("→ {} {}", call.name, short_arguments(call)));
                }
            }
            ChatEvent::ToolProgress { progress, .. } => {
                if let Some((_, sink)) = &self.progress {
                    sink(progress.clone());
                }
            }
            ChatEvent::ToolCallFinished {
                id,
                name,
                result,
                refused,
            } => {
                if let Some(record) = state.calls.iter_mut().rev().find(|c| &c.id == id) {
                    record.result = Some(result.clone());
                    record.refused = *refused;
                }
                if let Some((line, _)) = &self.progress {
                    line.finish();
                }
                if !self.json {
                    end_line(&mut state);
                    let how = match (refused, result.is_error) {
                        (true, _) => " refused",
                        (false, true) => " failed",
                        (false, false) => "",
                    };
                    tool_line(&format!("← {name}{how}: {}", summary(&result.content)));
                }
            }
            _ => {}
        }
    }

    /// Ends the answer's line on stdout, if one is open.
    pub(super) fn finish(&self) {
        if let Some((line, _)) = &self.progress {
            line.finish();
        }
        if let Ok(mut state) = self.state.lock() {
            end_line(&mut state);
        }
    }

    /// The tool calls made, in order.
    pub(super) fn calls(&self) -> Vec<CallRecord> {
        self.state
            .lock()
            .map(|s| s.calls.clone())
            .unwrap_or_default()
    }
}

/// Writes answer text that already passed the redacting stream.
fn write_answer(state: &mut State, shown: &str) {
    if shown.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let shown = crate::term::for_terminal(shown);
    let _ = out.write_all(shown.as_bytes()).and_then(|()| out.flush());
    state.line_open = !shown.ends_with('\n');
}

/// Shows what the redacting stream still holds, then ends the answer's
/// line if one is open.
fn end_line(state: &mut State) {
    let rest = state.answer.finish();
    write_answer(state, &rest);
    if state.line_open {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"\n").and_then(|()| out.flush());
        state.line_open = false;
    }
}

fn tool_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{}",
        crate::term::for_terminal(&crate::output::redacted(text))
    );
}

/// The arguments as compact JSON on one line, cut to [`MAX_ARGS`].
fn short_arguments(call: &ToolCallRequest) -> String {
    let text = match &call.arguments {
        Value::String(text) => text.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    };
    cut(&text, MAX_ARGS)
}

/// The result's text on one line, cut to [`MAX_SUMMARY`].
fn summary(content: &str) -> String {
    let flat = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(no text)".to_owned();
    }
    cut(&flat, MAX_SUMMARY)
}

fn cut(text: &str, max: usize) -> String {
    let clean = crate::term::one_line(text);
    if clean.chars().count() <= max {
        return clean;
    }
    // The marker counts here: at most `max` characters in all.
    let limit = oscova_core::text::Limit::Chars(max.saturating_sub(1));
    oscova_core::text::cut(&clean, limit).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_lines_are_short_and_on_one_line() {
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "t".into(),
            arguments: json!({"text": "x".repeat(200)}),
        };
        let args = short_arguments(&call);
        assert_eq!(args.chars().count(), MAX_ARGS);
        assert!(args.starts_with("{\"text\":\"xxx") && args.ends_with('…'));
        assert_eq!(summary("line one\nline  two"), "line one line two");
        assert_eq!(summary(""), "(no text)");
    }

    #[test]
    fn json_mode_records_calls_and_results() {
        let view = View::new(true);
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "t".into(),
            arguments: json!({"a": 1}),
        };
        view.on_event(&ChatEvent::ToolCallRunning(call));
        view.on_event(&ChatEvent::ToolCallFinished {
            id: "c1".into(),
            name: "t".into(),
            result: ToolResult::text("ok"),
            refused: false,
        });
        let calls = serde_json::to_value(view.calls()).unwrap();
        assert_eq!(calls[0]["name"], "t");
        assert_eq!(calls[0]["result"]["content"], "ok");
        assert_eq!(calls[0]["refused"], false);
    }
}
