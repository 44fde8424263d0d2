//! What a session's message becomes for the model, and what the model's
//! answer is stored as: [`AgentMessage::to_chat`] and
//! [`AgentMessage::from_chat`], following pi's `convertToLlm`.
//!
//! Rules: custom messages, bash executions (unless
//! `excludeFromContext`), branch and compaction summaries become user
//! messages, summaries wrapped in pi's exact prefix and suffix
//! ([`COMPACTION_SUMMARY_PREFIX`] and the like); thinking parts stay out;
//! images of a tool result go as attachments, images of other messages
//! are left out (`ChatMessage` carries bytes on tool messages only). An
//! answer stored from a `ChatMessage` carries what pi expects of one
//! (`api`, a zero `usage`, `stopReason`).

use base64::Engine as _;
use oscova_core::provider::model::{ChatMessage, ChatRole, ToolCallRequest};
use oscova_core::tool::ContentBlock;
use serde_json::Value;

use super::{
    AgentMessage, AssistantMessage, BashExecutionMessage, ContentPart, Extra, MessageContent,
    ModelRef, SystemMessage, ToolResultMessage, UserMessage, join_text, zero_usage,
};

/// pi's text before a compaction summary (`COMPACTION_SUMMARY_PREFIX`).
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's text after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's text before a branch summary (`BRANCH_SUMMARY_PREFIX`).
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's text after a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

impl AgentMessage {
    /// The message a [`ChatMessage`] is stored as, stamped `timestamp`
    /// (Unix milliseconds). A tool message needs the name of the tool it
    /// answers (`tool_name`, from the assistant's call); an assistant
    /// message names `model` when known.
    pub fn from_chat(
        message: &ChatMessage,
        timestamp: i64,
        tool_name: Option<&str>,
        model: Option<&ModelRef>,
    ) -> Self {
        match message.role {
            ChatRole::System => Self::System(SystemMessage {
                content: MessageContent::Text(message.content.clone()),
                sections: None,
                timestamp,
                extra: Extra::new(),
            }),
            ChatRole::User => Self::User(UserMessage {
                content: MessageContent::Text(message.content.clone()),
                timestamp,
            }),
            ChatRole::Assistant => {
                let mut content = Vec::with_capacity(1 + message.tool_calls.len());
                if !message.content.is_empty() {
                    content.push(ContentPart::text(message.content.clone()));
                }
                content.extend(message.tool_calls.iter().map(|call| ContentPart::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    thought_signature: None,
                    namespace: None,
                    arguments_error: None,
                }));
                let mut extra = Extra::new();
                extra.insert("api", Value::String("oscova".into()));
                extra.insert("usage", zero_usage());
                let stop = if message.tool_calls.is_empty() {
                    "stop"
                } else {
                    "toolUse"
                };
                extra.insert("stopReason", Value::String(stop.into()));
                Self::Assistant(AssistantMessage {
                    content,
                    provider: model.map(|m| m.provider.clone()).unwrap_or_default(),
                    model: model.map(|m| m.model_id.clone()).unwrap_or_default(),
                    timestamp,
                    extra,
                })
            }
            ChatRole::Tool => {
                let mut content = vec![ContentPart::text(message.content.clone())];
                content.extend(message.attachments.iter().filter_map(|block| match block {
                    ContentBlock::Image { data, mime_type } => Some(ContentPart::Image {
                        data: base64::engine::general_purpose::STANDARD.encode(data),
                        mime_type: mime_type.clone(),
                    }),
                    _ => None,
                }));
                Self::ToolResult(ToolResultMessage {
                    tool_call_id: message.tool_call_id.clone().unwrap_or_default(),
                    tool_name: tool_name.unwrap_or_default().to_owned(),
                    content,
                    is_error: false,
                    timestamp,
                    extra: Extra::new(),
                })
            }
        }
    }

    /// What the model sees of this message (pi's `convertToLlm`), or
    /// `None` for a bash execution kept out of the context.
    pub fn to_chat(&self) -> Option<ChatMessage> {
        Some(match self {
            Self::System(m) => {
                let mut text = m.content.text();
                for section in m.sections.iter().flat_map(|s| s.values()) {
                    if let Value::String(section) = section {
                        if !text.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(section);
                    }
                }
                ChatMessage::system(text)
            }
            Self::User(m) => ChatMessage::user(m.content.text()),
            Self::Assistant(m) => {
                let calls = m
                    .content
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::ToolCall {
                            id,
                            name,
                            arguments,
                            ..
                        } => Some(ToolCallRequest {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                ChatMessage::assistant(join_text(&m.content), calls)
            }
            Self::ToolResult(m) => {
                let images = m
                    .content
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::Image { data, mime_type } => {
                            let bytes = base64::engine::general_purpose::STANDARD
                                .decode(data)
                                .ok()?;
                            Some(ContentBlock::Image {
                                data: bytes,
                                mime_type: mime_type.clone(),
                            })
                        }
                        _ => None,
                    })
                    .collect();
                ChatMessage::tool(m.tool_call_id.clone(), join_text(&m.content))
                    .with_attachments(images)
            }
            Self::Custom(m) => ChatMessage::user(m.content.text()),
            Self::BashExecution(m) => {
                if m.exclude_from_context == Some(true) {
                    return None;
                }
                ChatMessage::user(bash_text(m))
            }
            Self::BranchSummary(m) => ChatMessage::user(format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                m.summary
            )),
            Self::CompactionSummary(m) => ChatMessage::user(format!(
                "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                m.summary
            )),
        })
    }
}

/// pi's `bashExecutionToText`.
fn bash_text(m: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", m.output));
    }
    if m.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if let (true, Some(path)) = (m.truncated, &m.full_output_path) {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::message::CompactionSummaryMessage;
    use serde_json::json;

    #[test]
    fn chat_messages_map_both_ways() {
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "time__clock__now".into(),
            arguments: json!({"zone": "UTC"}),
        };
        let model = ModelRef {
            provider: "ollama".into(),
            model_id: "llama3.2".into(),
        };
        let assistant = ChatMessage::assistant("checking", vec![call]);
        let stored = AgentMessage::from_chat(&assistant, 7, None, Some(&model));
        assert_eq!(stored.to_chat().unwrap(), assistant);
        let AgentMessage::Assistant(a) = &stored else {
            panic!("{stored:?}")
        };
        assert_eq!(
            (a.provider.as_str(), a.model.as_str()),
            ("ollama", "llama3.2")
        );

        let tool = ChatMessage::tool("c1", "12:00").with_attachments(vec![ContentBlock::Image {
            data: vec![1, 2, 3],
            mime_type: "image/png".into(),
        }]);
        let stored = AgentMessage::from_chat(&tool, 8, Some("time__clock__now"), None);
        assert_eq!(stored.to_chat().unwrap(), tool);
        for plain in [ChatMessage::user("hi"), ChatMessage::system("be brief")] {
            assert_eq!(
                AgentMessage::from_chat(&plain, 9, None, None)
                    .to_chat()
                    .unwrap(),
                plain
            );
        }
    }

    #[test]
    fn summaries_and_custom_messages_reach_the_model_as_pi_words_them() {
        let summary = AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: "We fixed X.".into(),
            tokens_before: 10,
            timestamp: 0,
        });
        assert_eq!(
            summary.to_chat().unwrap().content,
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\nWe fixed X.\n</summary>"
        );
        let bash = AgentMessage::BashExecution(BashExecutionMessage {
            command: "ls".into(),
            output: "a".into(),
            exit_code: Some(2),
            cancelled: false,
            truncated: false,
            full_output_path: None,
            exclude_from_context: None,
            timestamp: 0,
        });
        assert_eq!(
            bash.to_chat().unwrap().content,
            "Ran `ls`\n```\na\n```\n\nCommand exited with code 2"
        );
    }
}
