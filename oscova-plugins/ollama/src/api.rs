//! What the Ollama API sends and takes: `/api/chat` bodies and answers (one JSON object
//! per line when streamed), `/api/tags` model lists, `/api/pull` progress.
//!
//! Rules: tools go out as `{"type": "function", "function": {name,
//! description, parameters}}` (the same function format as OpenAI's), and
//! tool-call arguments travel as JSON objects, never strings. Tool calls
//! arrive whole, one per entry of `message.tool_calls`; servers that give
//! no id get a process-unique `ollama_call_N`. Tool results name the tool
//! (`tool_name`) as well as the call, since Ollama matches by name. Any
//! line that is not a JSON object is [`ModelError::Malformed`] with the
//! line; a line with `error` is the server's error. Images in tool results
//! go out base64 in the tool message's `images` (vision models see them);
//! audio and other bytes are not sent, and the text says what was left
//! out.

use std::sync::atomic::{AtomicU64, Ordering};

use oscova_core::http::backend::excerpt;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, ChatStreamSink,
    DownloadProgress, ModelError, ModelInfo, TokenUsage, ToolCallRequest, ToolSpec,
};
use serde_json::{Map, Value, json};

use crate::lines::Flow;

/// Option keys the provider reads itself; the rest go into the chat body.
pub(crate) const CATALOG: &str = "catalog";
pub(crate) const INSECURE: &str = "insecure";
const RESERVED: [&str; 6] = ["model", "messages", "tools", "stream", CATALOG, INSECURE];

/// The request body for `POST /api/chat`.
pub(crate) fn chat_body(request: &ChatRequest<'_>, stream: bool) -> Value {
    let mut body = Map::new();
    for (key, value) in &request.config.options {
        if !RESERVED.contains(&key.as_str()) {
            body.insert(key.clone(), value.clone());
        }
    }
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        request
            .messages
            .iter()
            .map(|m| message_json(m, request.messages))
            .collect(),
    );
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            request.tools.iter().map(tool_json).collect(),
        );
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

fn message_json(message: &ChatMessage, all: &[ChatMessage]) -> Value {
    match message.role {
        ChatRole::System => json!({"role": "system", "content": message.content}),
        ChatRole::User => json!({"role": "user", "content": message.content}),
        ChatRole::Assistant if message.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": message.content})
        }
        ChatRole::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "function": {"name": call.name, "arguments": object_arguments(&call.arguments)},
                    })
                })
                .collect();
            json!({"role": "assistant", "content": message.content, "tool_calls": calls})
        }
        ChatRole::Tool => {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            let mut value = json!({"role": "tool", "content": message.content});
            // Ollama takes images (base64) on any message, for vision
            // models; it has no audio input, so other bytes are named
            // in the text and left out.
            let mut images = Vec::new();
            let mut notes = Vec::new();
            for block in &message.attachments {
                match (block.kind(), block.base64()) {
                    ("image", Some(data)) => images.push(Value::String(data)),
                    (kind, _) => notes.push(format!(
                        "[{kind} {}, {} bytes: not sent; Ollama takes no {kind} input]",
                        block.mime_type().unwrap_or("application/octet-stream"),
                        block.bytes().map_or(0, <[u8]>::len)
                    )),
                }
            }
            if !images.is_empty() {
                value["images"] = Value::Array(images);
            }
            if !notes.is_empty() {
                let text = [message.content.clone(), notes.join("\n")].join("\n");
                value["content"] = json!(text.trim());
            }
            if !id.is_empty() {
                value["tool_call_id"] = json!(id);
            }
            if let Some(name) = tool_name(all, id) {
                value["tool_name"] = json!(name);
            }
            value
        }
    }
}

/// The name of the tool whose call has id `id`.
fn tool_name<'m>(messages: &'m [ChatMessage], id: &str) -> Option<&'m str> {
    messages
        .iter()
        .rev()
        .flat_map(|m| m.tool_calls.iter())
        .find(|c| c.id == id)
        .map(|c| c.name.as_str())
}

/// Ollama reads arguments as a JSON object only.
fn object_arguments(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => Value::Object(Map::new()),
        },
        _ => Value::Object(Map::new()),
    }
}

fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

/// A JSON object from one line, or the reason it is not one.
pub(crate) fn parse_line(line: &str) -> Result<Map<String, Value>, ModelError> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ModelError::Malformed {
            message: "a line is not a JSON object".into(),
            line: excerpt(line),
        }),
        Err(e) => Err(ModelError::Malformed {
            message: format!("a line is not JSON ({e})"),
            line: excerpt(line),
        }),
    }
}

/// The `error` text of a line or body, if it has one.
pub(crate) fn error_text(object: &Map<String, Value>) -> Option<String> {
    match object.get("error")? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// Whether an error text says a model does not exist.
pub(crate) fn is_missing_model(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    text.contains("not found") || text.contains("does not exist")
}

fn next_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("ollama_call_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Assembles an answer from `/api/chat` lines (one line when not streamed).
pub(crate) struct ChatStream<'s> {
    sink: Option<ChatStreamSink<'s>>,
    content: String,
    calls: Vec<ToolCallRequest>,
    done_reason: Option<String>,
    usage: Option<TokenUsage>,
    done: bool,
    last: String,
    server_error: Option<String>,
}

impl<'s> ChatStream<'s> {
    pub(crate) fn new(sink: Option<ChatStreamSink<'s>>) -> Self {
        Self {
            sink,
            content: String::new(),
            calls: Vec::new(),
            done_reason: None,
            usage: None,
            done: false,
            last: String::new(),
            server_error: None,
        }
    }

    /// The server's own error text, when a line carried one. Unscrubbed:
    /// the caller cleans it before it enters an error.
    pub(crate) fn take_server_error(&mut self) -> Option<String> {
        self.server_error.take()
    }

    /// Takes one line. A line carrying the server's error stops the
    /// stream; the text is kept for [`take_server_error`](Self::take_server_error).
    pub(crate) fn on_line(&mut self, line: &str) -> Result<Flow, ModelError> {
        if line.trim().is_empty() || self.done {
            return Ok(self.flow());
        }
        self.last = excerpt(line);
        let object = parse_line(line)?;
        if let Some(error) = error_text(&object) {
            self.server_error = Some(error);
            return Ok(Flow::Stop);
        }
        if let Some(message) = object.get("message") {
            if let Some(text) = message.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                self.content.push_str(text);
                if let Some(sink) = self.sink {
                    sink(ChatStreamEvent::Text(text.to_owned()));
                }
            }
            let calls = message
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            for call in calls {
                let call = self.tool_call(call, line)?;
                if let Some(sink) = self.sink {
                    sink(ChatStreamEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
                self.calls.push(call);
            }
        }
        if object.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.done_reason = object
                .get("done_reason")
                .and_then(Value::as_str)
                .map(str::to_owned);
            self.usage = TokenUsage::from_fields(&object, "prompt_eval_count", "eval_count");
        }
        Ok(self.flow())
    }

    fn flow(&self) -> Flow {
        if self.done {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    fn tool_call(&self, call: &Value, line: &str) -> Result<ToolCallRequest, ModelError> {
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ModelError::Malformed {
                message: "a tool call has no `function.name`".into(),
                line: excerpt(line),
            })?;
        let arguments = match function.and_then(|f| f.get("arguments")) {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(other) => other.clone(),
        };
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(next_call_id, str::to_owned);
        Ok(ToolCallRequest {
            id,
            name: name.to_owned(),
            arguments,
        })
    }

    /// The answer, once the stream ended.
    pub(crate) fn finish(self) -> Result<ChatResponse, ModelError> {
        if !self.done {
            return Err(ModelError::Malformed {
                message: "the answer ended before a line with `\"done\": true`".into(),
                line: if self.last.is_empty() {
                    "(no line)".into()
                } else {
                    self.last
                },
            });
        }
        let finish_reason = match self.done_reason {
            Some(reason) => Some(reason),
            None if !self.calls.is_empty() => Some("tool_calls".into()),
            None => None,
        };
        Ok(ChatResponse {
            message: ChatMessage::assistant(self.content, self.calls),
            finish_reason,
            usage: self.usage,
        })
    }
}

/// The models in a `/api/tags` answer, marked installed.
pub(crate) fn parse_tags(body: &str) -> Result<Vec<ModelInfo>, ModelError> {
    let object = parse_line(body)?;
    let models = object
        .get("models")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed {
            message: "the model list has no `models` array".into(),
            line: excerpt(body),
        })?;
    let mut out: Vec<ModelInfo> = models
        .iter()
        .filter_map(|m| {
            let name = m
                .get("name")
                .or_else(|| m.get("model"))
                .and_then(Value::as_str)?;
            let mut info = ModelInfo::new(name);
            info.size = m.get("size").and_then(Value::as_u64);
            info.installed = true;
            Some(info)
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// `name` with Ollama's default `:latest` tag made explicit.
pub(crate) fn canonical(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base.contains(':') {
        name.to_owned()
    } else {
        format!("{name}:latest")
    }
}

/// What one `/api/pull` line says.
#[derive(Debug, PartialEq)]
pub(crate) enum PullLine {
    /// Progress to report.
    Progress(DownloadProgress),
    /// The server's error text (unscrubbed).
    Error(String),
}

/// Reads one `/api/pull` line.
pub(crate) fn pull_line(line: &str) -> Result<PullLine, ModelError> {
    let object = parse_line(line)?;
    if let Some(error) = error_text(&object) {
        return Ok(PullLine::Error(error));
    }
    let Some(status) = object.get("status").and_then(Value::as_str) else {
        return Err(ModelError::Malformed {
            message: "a pull line has no `status`".into(),
            line: excerpt(line),
        });
    };
    Ok(PullLine::Progress(DownloadProgress {
        status: status.to_owned(),
        completed: object.get("completed").and_then(Value::as_u64),
        total: object.get("total").and_then(Value::as_u64),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_name_their_tool() {
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "weather".into(),
            arguments: json!("{\"city\":\"Oslo\"}"),
        };
        let messages = vec![
            ChatMessage::assistant("", vec![call]),
            ChatMessage::tool("c1", "cold"),
        ];
        let assistant = message_json(&messages[0], &messages);
        assert_eq!(
            assistant["tool_calls"][0]["function"]["arguments"],
            json!({"city": "Oslo"})
        );
        let tool = message_json(&messages[1], &messages);
        assert_eq!(
            tool,
            json!({"role": "tool", "content": "cold", "tool_call_id": "c1", "tool_name": "weather"})
        );
    }

    #[test]
    fn tool_images_go_in_images_and_audio_is_named_not_sent() {
        use oscova_core::tool::ContentBlock;
        let message = ChatMessage::tool("c1", "drawn").with_attachments(vec![
            ContentBlock::image(vec![1, 2, 3], "image/png"),
            ContentBlock::audio(vec![0; 10], "audio/wav"),
        ]);
        let value = message_json(&message, std::slice::from_ref(&message));
        assert_eq!(value["images"], json!(["AQID"]));
        assert_eq!(
            value["content"],
            "drawn\n[audio audio/wav, 10 bytes: not sent; Ollama takes no audio input]"
        );
    }

    #[test]
    fn names_get_their_default_tag() {
        assert_eq!(canonical("llama3.2"), "llama3.2:latest");
        assert_eq!(canonical("llama3.2:1b"), "llama3.2:1b");
        assert_eq!(canonical("host:5000/ns/model"), "host:5000/ns/model:latest");
    }

    #[test]
    fn calls_without_ids_get_unique_ones() {
        let mut stream = ChatStream::new(None);
        let line = r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}},{"function":{"name":"g","arguments":{"a":1}}}]},"done":true}"#;
        stream.on_line(line).unwrap();
        let answer = stream.finish().unwrap();
        let calls = answer.message.tool_calls;
        assert_ne!(calls[0].id, calls[1].id);
        assert_eq!(calls[1].arguments, json!({"a": 1}));
        assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(answer.usage, None);
    }

    #[test]
    fn the_last_line_reports_token_usage() {
        let mut stream = ChatStream::new(None);
        stream
            .on_line(r#"{"message":{"role":"assistant","content":"hi"},"done":false}"#)
            .unwrap();
        stream
            .on_line(r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":26,"eval_count":7}"#)
            .unwrap();
        let usage = stream.finish().unwrap().usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(26), Some(7))
        );
    }
}
