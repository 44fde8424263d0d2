//! The request body for `POST /v1/chat/completions`: the caller's options,
//! the messages, and the tools.
//!
//! Rules: tools go out as `{"type": "function", "function": {name,
//! description, parameters, strict}}` with the parameters exactly as the
//! caller exported them (borrowed, never copied into the body); the
//! options the provider reads itself (`strict_tools`, `tool_images`) and
//! the fields it sets stay out of the body, every other option goes in.
//!
//! Tool results with images: chat completions takes only text in a `tool`
//! message, and images only in `user` messages. So the tool message keeps
//! the text and says an image follows, and after the run of tool messages
//! one `user` message carries every image as an `image_url` part with a
//! `data:` URL (base64), unless the `tool_images` option is `false` (for
//! models without vision, which refuse image parts). Audio and other bytes
//! are not sent (audio input parts need an audio model and a user
//! message); the tool message says what was left out and its size.

use oscova_core::provider::model::{ChatMessage, ChatRequest, ChatRole, ToolSpec};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Option keys the provider reads itself; the rest go into the body.
const STRICT_TOOLS: &str = "strict_tools";
/// `false` keeps tool results' images out of the request.
const TOOL_IMAGES: &str = "tool_images";
const RESERVED: [&str; 6] = [
    "model",
    "messages",
    "tools",
    "stream",
    STRICT_TOOLS,
    TOOL_IMAGES,
];

/// The request body for `POST /v1/chat/completions`: its fields, and the
/// tools serialized straight from the caller's specs (their schemas are
/// borrowed, never copied into the body).
#[derive(Serialize)]
pub(crate) struct RequestBody<'a> {
    #[serde(flatten)]
    fields: Map<String, Value>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: Vec<ToolJson<'a>>,
}

/// `{"type": "function", "function": {...}}`.
#[derive(Serialize)]
struct ToolJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionJson<'a>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// The request body for `POST /v1/chat/completions`.
pub(crate) fn request_body<'a>(request: &'a ChatRequest<'_>, stream: bool) -> RequestBody<'a> {
    let strict = request
        .config
        .options
        .get(STRICT_TOOLS)
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let mut body = Map::new();
    for (key, value) in &request.config.options {
        if !RESERVED.contains(&key.as_str()) {
            body.insert(key.clone(), value.clone());
        }
    }
    let images = request
        .config
        .options
        .get(TOOL_IMAGES)
        .and_then(Value::as_bool)
        .unwrap_or(true);
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        Value::Array(messages_json(request.messages, images)),
    );
    body.insert("stream".into(), json!(stream));
    RequestBody {
        fields: body,
        tools: request.tools.iter().map(|t| tool_json(t, strict)).collect(),
    }
}

/// Every message, with tool results' images moved into one `user`
/// message after each run of tool messages.
fn messages_json(messages: &[ChatMessage], images: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    let mut pending: Vec<Value> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let mut value = message_json(message);
        if message.role == ChatRole::Tool && !message.attachments.is_empty() {
            let mut notes = Vec::new();
            for block in &message.attachments {
                let mime = block.mime_type().unwrap_or("application/octet-stream");
                let size = block.bytes().map_or(0, <[u8]>::len);
                match (block.kind(), block.base64()) {
                    ("image", Some(data)) if images => {
                        notes.push(format!("[image {mime}: sent in the next user message]"));
                        pending.push(json!({
                            "type": "image_url",
                            "image_url": {"url": format!("data:{mime};base64,{data}")},
                        }));
                    }
                    (kind, _) => notes.push(format!(
                        "[{kind} {mime}, {size} bytes: not sent; this API takes no {kind} in tool results]"
                    )),
                }
            }
            let text = value["content"].as_str().unwrap_or_default().to_owned();
            value["content"] = json!([text, notes.join("\n")].join("\n").trim().to_owned());
        }
        out.push(value);
        let run_ends = messages
            .get(i + 1)
            .is_none_or(|next| next.role != ChatRole::Tool);
        if run_ends && !pending.is_empty() {
            let mut parts = vec![json!({
                "type": "text",
                "text": "Images returned by the tool calls above.",
            })];
            parts.append(&mut pending);
            out.push(json!({"role": "user", "content": parts}));
        }
    }
    out
}

fn message_json(message: &ChatMessage) -> Value {
    match message.role {
        ChatRole::System => json!({"role": "system", "content": message.content}),
        ChatRole::User => json!({"role": "user", "content": message.content}),
        ChatRole::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
        ChatRole::Assistant if message.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": message.content})
        }
        ChatRole::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    let arguments = match &call.arguments {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": arguments},
                    })
                })
                .collect();
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                json!(message.content)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
    }
}

fn tool_json(tool: &ToolSpec, strict: bool) -> ToolJson<'_> {
    ToolJson {
        kind: "function",
        function: FunctionJson {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
            strict,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oscova_core::provider::model::ToolCallRequest;

    #[test]
    fn tool_images_follow_the_run_of_tool_messages_in_a_user_message() {
        use oscova_core::tool::ContentBlock;
        let messages = vec![
            ChatMessage::tool("a", "drawn").with_attachments(vec![
                ContentBlock::image(vec![1, 2, 3], "image/png"),
                ContentBlock::audio(vec![0; 4], "audio/wav"),
            ]),
            ChatMessage::tool("b", "plain"),
            ChatMessage::user("next"),
        ];
        let out = messages_json(&messages, true);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0]["role"], "tool");
        assert_eq!(
            out[0]["content"],
            "drawn\n[image image/png: sent in the next user message]\n[audio audio/wav, 4 bytes: not sent; this API takes no audio in tool results]"
        );
        assert_eq!(out[1]["role"], "tool");
        assert_eq!(out[2]["role"], "user");
        assert_eq!(
            out[2]["content"][1],
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AQID"}})
        );
        assert_eq!(out[3]["content"], "next");
        // `tool_images: false` keeps them out.
        let out = messages_json(&messages, false);
        assert_eq!(out.len(), 3);
        assert!(
            out[0]["content"]
                .as_str()
                .unwrap()
                .contains("[image image/png, 3 bytes: not sent")
        );
    }

    #[test]
    fn assistant_tool_calls_go_out_with_string_arguments() {
        let message = ChatMessage::assistant(
            "",
            vec![ToolCallRequest {
                id: "c".into(),
                name: "f".into(),
                arguments: json!({"a": 1}),
            }],
        );
        let v = message_json(&message);
        assert_eq!(v["content"], Value::Null);
        assert_eq!(v["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
    }
}
