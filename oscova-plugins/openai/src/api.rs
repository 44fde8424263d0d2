//! What the chat completions API sends and takes: the request body (`request.rs`),
//! whole answers, and the streamed `chat.completion.chunk` deltas.
//!
//! Rules: streamed tool calls are assembled by `index` from
//! `delta.tool_calls[i]`: the id and name arrive once, the `arguments`
//! text in fragments that are concatenated and parsed only at the end.
//! Arguments that are not valid JSON are kept as the raw string, so the
//! host can tell the model its call was malformed instead of failing the
//! chat; a stream that breaks the format itself is [`ModelError::Malformed`]
//! naming the offending line.

mod request;

pub(crate) use request::request_body;

use std::collections::BTreeMap;

use oscova_core::http::backend::{Scrub, excerpt};
use oscova_core::provider::model::{
    ChatMessage, ChatResponse, ChatStreamEvent, ChatStreamSink, ModelError, TokenUsage,
    ToolCallRequest,
};
use serde_json::{Map, Value};

/// The arguments text as JSON; empty means no arguments, and text that is
/// not JSON is kept as a string for the host to report.
fn parse_arguments(text: &str) -> Value {
    let text = text.trim();
    if text.is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// An `{"error": {...}}` body or event, as text.
fn error_message(value: &Value) -> Option<String> {
    let error = value.get("error")?;
    if error.is_null() {
        return None;
    }
    Some(match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    })
}

/// Parses a whole (non-streamed) answer.
pub(crate) fn parse_response(body: &str, scrub: &Scrub) -> Result<ChatResponse, ModelError> {
    let value: Value = serde_json::from_str(body).map_err(|e| ModelError::Malformed {
        message: format!("the answer is not JSON ({e})"),
        line: excerpt(body),
    })?;
    if let Some(message) = error_message(&value) {
        return Err(ModelError::Other(format!(
            "the server reported an error: {}",
            scrub.text(&message)
        )));
    }
    let malformed = |message: &str| ModelError::Malformed {
        message: message.to_owned(),
        line: excerpt(body),
    };
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| malformed("the answer has no `choices[0]`"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| malformed("`choices[0]` has no `message`"))?;
    let mut content = text_of(message.get("content"));
    content.push_str(&text_of(message.get("refusal")));
    let mut tool_calls = Vec::new();
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let function = call.get("function");
        let name = text_of(function.and_then(|f| f.get("name")));
        if name.is_empty() {
            return Err(malformed("a tool call has no `function.name`"));
        }
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => parse_arguments(text),
            Some(Value::Null) | None => Value::Object(Map::new()),
            Some(other) => other.clone(),
        };
        tool_calls.push(ToolCallRequest {
            id: text_of(call.get("id")),
            name,
            arguments,
        });
    }
    Ok(ChatResponse {
        message: ChatMessage::assistant(content, tool_calls),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: usage_of(&value),
    })
}

/// The `usage` object of an answer or of a stream's last chunk.
fn usage_of(value: &Value) -> Option<TokenUsage> {
    let usage = value.get("usage")?.as_object()?;
    TokenUsage::from_fields(usage, "prompt_tokens", "completion_tokens")
}

fn text_of(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_default()
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Assembles a streamed answer from the `data` of each event.
pub(crate) struct StreamState<'s> {
    sink: Option<ChatStreamSink<'s>>,
    scrub: &'s Scrub,
    content: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    done: bool,
    last: String,
}

impl<'s> StreamState<'s> {
    pub(crate) fn new(sink: Option<ChatStreamSink<'s>>, scrub: &'s Scrub) -> Self {
        Self {
            sink,
            scrub,
            content: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: None,
            done: false,
            last: String::new(),
        }
    }

    /// Whether `data: [DONE]` arrived.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Takes the data of one event.
    pub(crate) fn on_data(&mut self, data: &str) -> Result<(), ModelError> {
        self.last = excerpt(&format!("data: {data}"));
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            message: format!("an event's data is not JSON ({e})"),
            line: self.last.clone(),
        })?;
        if let Some(message) = error_message(&chunk) {
            return Err(ModelError::Other(format!(
                "the server reported an error mid-stream: {}",
                self.scrub.text(&message)
            )));
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Err(ModelError::Malformed {
                message: "an event has no `choices` array".into(),
                line: self.last.clone(),
            });
        };
        if let Some(usage) = usage_of(&chunk) {
            self.usage = Some(usage);
        }
        // Usage-only chunks have an empty `choices`; only choice 0 is asked for.
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        for field in ["content", "refusal"] {
            if let Some(text) = delta.get(field).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.content.push_str(text);
                if let Some(sink) = self.sink {
                    sink(ChatStreamEvent::Text(text.to_owned()));
                }
            }
        }
        let calls = delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for (position, call) in calls.iter().enumerate() {
            self.on_call_delta(position, call);
        }
        Ok(())
    }

    fn on_call_delta(&mut self, position: usize, call: &Value) {
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = call.get("id").and_then(Value::as_str) {
            partial.id.push_str(id);
        }
        let function = call.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
            partial.name.push_str(name);
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(fragment)) => partial.arguments.push_str(fragment),
            Some(Value::Null) | None => {}
            Some(other) => partial.arguments.push_str(&other.to_string()),
        }
        if !partial.announced
            && !partial.name.is_empty()
            && let Some(sink) = self.sink
        {
            partial.announced = true;
            sink(ChatStreamEvent::ToolCallStarted {
                id: partial.id.clone(),
                name: partial.name.clone(),
            });
        }
    }

    /// The answer, once the stream ended.
    pub(crate) fn finish(self) -> Result<ChatResponse, ModelError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ModelError::Malformed {
                message: "the stream ended before `data: [DONE]`".into(),
                line: if self.last.is_empty() {
                    "(no event)".into()
                } else {
                    self.last
                },
            });
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(ModelError::Malformed {
                    message: format!("streamed tool call {index} never got a function name"),
                    line: self.last,
                });
            }
            tool_calls.push(ToolCallRequest {
                id: call.id,
                name: call.name,
                arguments: parse_arguments(&call.arguments),
            });
        }
        Ok(ChatResponse {
            message: ChatMessage::assistant(self.content, tool_calls),
            finish_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_are_assembled_by_index() {
        let scrub = Scrub::new(None);
        let mut state = StreamState::new(None, &scrub);
        let events = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#,
            "[DONE]",
        ];
        for data in events {
            state.on_data(data).unwrap();
        }
        let response = state.finish().unwrap();
        let calls = response.message.tool_calls;
        assert_eq!(calls[0].id, "call_a");
        assert_eq!(calls[0].arguments, json!({"a": 1}));
        assert_eq!(calls[1].arguments, json!({"x": 2}));
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        let usage = response.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(2), Some(1))
        );
    }

    #[test]
    fn an_answer_reports_its_token_usage_when_the_server_does() {
        let scrub = Scrub::new(None);
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}"#;
        let usage = parse_response(body, &scrub).unwrap().usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(9), Some(4))
        );
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(parse_response(body, &scrub).unwrap().usage, None);
    }

    #[test]
    fn arguments_that_are_not_json_stay_a_string() {
        assert_eq!(parse_arguments("{\"a\":"), json!("{\"a\":"));
        assert_eq!(parse_arguments("  "), json!({}));
    }
}
