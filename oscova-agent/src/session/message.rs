//! The messages a session keeps: pi's `AgentMessage` (format v3), field
//! for field, and what each becomes for the model.
//!
//! Rules: a message is stored as pi writes it (`role`, camelCase fields,
//! content parts tagged by `type`, timestamps in Unix milliseconds);
//! fields this crate does not model (an assistant's `api`, `usage`,
//! `stopReason` extras, a tool result's `details`, ...) are kept in
//! `extra` and written back unchanged, so a file read and written again
//! loses nothing. What the model sees follows pi's `convertToLlm`
//! (`chat.rs`). Reading is `de.rs`: one pass over the text, no
//! intermediate tree, accepting what serde's derived forms accepted.
mod chat;
mod de;
mod extra;

pub use chat::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
};
pub use extra::Extra;

use oscova_core::provider::model::TokenUsage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One part of a message's content (pi: `TextContent`, `ThinkingContent`,
/// `ImageContent`, `ToolCall`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// A provider's signature over it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text_signature: Option<String>,
    },
    /// The model's reasoning; never sent back as text.
    Thinking {
        /// The reasoning.
        thinking: String,
        /// A provider's signature (or the redacted payload).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking_signature: Option<String>,
        /// Whether safety filters redacted it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<bool>,
    },
    /// An image.
    Image {
        /// The bytes, base64.
        data: String,
        /// The MIME type.
        mime_type: String,
    },
    /// A tool call the model asked for.
    ToolCall {
        /// The provider's call id.
        id: String,
        /// The tool's wire name.
        name: String,
        /// The arguments (an object).
        arguments: Value,
        /// A provider's signature.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thought_signature: Option<String>,
        /// A namespace (OpenAI Responses).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// Why the arguments text was not a JSON object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments_error: Option<String>,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            text_signature: None,
        }
    }
}

/// Content that is either plain text or parts (pi: `string | (TextContent
/// | ImageContent)[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Parts.
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// The text parts joined by newlines (images and the rest left out).
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Parts(parts) => join_text(parts),
        }
    }
}

fn join_text(parts: &[ContentPart]) -> String {
    let mut out = String::new();
    for part in parts {
        if let ContentPart::Text { text, .. } = part {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

/// Instructions and the prompt sections (pi: `SystemMessage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// The instruction text.
    pub content: MessageContent,
    /// Named prompt sections, rendered after `content`; `null` removes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Map<String, Value>>,
    /// When it was written (Unix milliseconds).
    pub timestamp: i64,
    /// Fields kept as read (`toolsAdded`, `toolsRemoved`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// What the person said (pi: `UserMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Text or parts.
    pub content: MessageContent,
    /// When it was written (Unix milliseconds).
    pub timestamp: i64,
}

/// The model's answer (pi: `AssistantMessage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call parts.
    pub content: Vec<ContentPart>,
    /// The provider (pi reads it as the session's current model).
    #[serde(default)]
    pub provider: String,
    /// The model.
    #[serde(default)]
    pub model: String,
    /// When the request started (Unix milliseconds).
    pub timestamp: i64,
    /// Fields kept as read (`api`, `usage`, `stopReason`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl AssistantMessage {
    /// Records the tokens the provider reported for this answer as pi's
    /// `usage` (`input`, `output`, their sum as `totalTokens`; cache
    /// counts and cost zero, which the provider contract does not carry).
    /// Compaction counts the context from it, as pi does, instead of
    /// estimating.
    pub fn set_usage(&mut self, usage: &TokenUsage) {
        let input = usage.input_tokens.unwrap_or(0);
        let output = usage.output_tokens.unwrap_or(0);
        let mut value = zero_usage();
        value["input"] = input.into();
        value["output"] = output.into();
        value["totalTokens"] = input.saturating_add(output).into();
        self.extra.insert("usage", value);
    }
}

/// A tool's result (pi: `ToolResultMessage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call it answers.
    pub tool_call_id: String,
    /// The tool's wire name.
    pub tool_name: String,
    /// Text and image parts.
    pub content: Vec<ContentPart>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// When it was made (Unix milliseconds).
    pub timestamp: i64,
    /// Fields kept as read (`details`, `usage`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A message an extension injected (pi: `CustomMessage`); shown to the
/// model as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// The extension's type tag.
    pub custom_type: String,
    /// Text or parts.
    pub content: MessageContent,
    /// Whether a UI shows it.
    #[serde(default)]
    pub display: bool,
    /// Extension data, never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// When it was made (Unix milliseconds).
    pub timestamp: i64,
}

/// A shell command the person ran (pi: `BashExecutionMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command.
    pub command: String,
    /// What it printed.
    pub output: String,
    /// Its exit code, when it exited.
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// Whether it was cancelled.
    #[serde(default)]
    pub cancelled: bool,
    /// Whether the output was cut.
    #[serde(default)]
    pub truncated: bool,
    /// Where the whole output is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Left out of the model's context (pi's `!!`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
    /// When it ran (Unix milliseconds).
    pub timestamp: i64,
}

/// A branch summary as a message of the context (pi: `BranchSummaryMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary.
    pub summary: String,
    /// The leaf whose abandoned path it summarises.
    pub from_id: Option<String>,
    /// The entry's time (Unix milliseconds).
    pub timestamp: i64,
}

/// A compaction summary as a message of the context (pi:
/// `CompactionSummaryMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary.
    pub summary: String,
    /// The context size it replaced, in tokens.
    pub tokens_before: u64,
    /// The entry's time (Unix milliseconds).
    pub timestamp: i64,
}

/// A message of a session (pi: `AgentMessage`), tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AgentMessage {
    /// Instructions.
    System(SystemMessage),
    /// The person.
    User(UserMessage),
    /// The model.
    Assistant(AssistantMessage),
    /// A tool result.
    ToolResult(ToolResultMessage),
    /// An extension's message.
    Custom(CustomMessage),
    /// A shell command the person ran.
    BashExecution(BashExecutionMessage),
    /// A branch summary (context only; stored as a `branch_summary` entry).
    BranchSummary(BranchSummaryMessage),
    /// A compaction summary (context only; stored as a `compaction` entry).
    CompactionSummary(CompactionSummaryMessage),
}

/// The model an assistant message names, for messages made from a
/// [`ChatMessage`](oscova_core::provider::model::ChatMessage) (pi reads it
/// back as the session's model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    /// The provider's type key.
    pub provider: String,
    /// The model.
    pub model_id: String,
}

/// pi's `usage` of an answer that reported none: every count and cost
/// zero.
fn zero_usage() -> Value {
    serde_json::json!({
        "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pi_messages_read_and_write_back_unchanged() {
        let lines = [
            json!({"role":"user","content":"Hello","timestamp":1733234401000_i64}),
            json!({"role":"assistant","content":[{"type":"text","text":"Hi!"},{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"ls"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1},"stopReason":"toolUse","timestamp":1733234402000_i64}),
            json!({"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out"}],"isError":false,"details":{"x":1},"timestamp":1733234403000_i64}),
            json!({"role":"custom","customType":"ext","content":[{"type":"text","text":"note"}],"display":true,"timestamp":5}),
        ];
        for line in lines {
            let message: AgentMessage = serde_json::from_value(line.clone()).unwrap();
            assert_eq!(serde_json::to_value(&message).unwrap(), line);
        }
    }
}
