//! The conversation for an answer in words: tool exchanges as text.
//!
//! Rules: used when the model, offered tools, repeated a call already
//! answered or wanted a tool that is not offered (see the engine's
//! answer). Measured on Qwen2.5-Coder-0.5B: after a `<tool_response>` in
//! the template's own form, with or without the tools section and with
//! any instruction appended, it wrote the same call again 5 times in 5;
//! with the result folded into the person's message as text, it answered
//! from it. So the prompt here has no tools, the calls and results made
//! since the person last spoke are folded into that message ("Tools were
//! called for this and returned: ..."), and earlier turns keep only their
//! words (their calls and results are left out; their answers already say
//! what came of them). System messages are kept as they are.

use oscova_core::provider::model::{ChatMessage, ChatRole};

/// `messages` rewritten for an answer without tools.
pub(crate) fn fold(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let last_user = messages.iter().rposition(|m| m.role == ChatRole::User);
    let mut out = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        match message.role {
            ChatRole::System => out.push(message.clone()),
            ChatRole::User if Some(i) == last_user => {
                let results = results_after(messages, i);
                let mut content = message.content.clone();
                if !results.is_empty() {
                    content.push_str("\n\nTools were called for this and returned:\n");
                    content.push_str(&results);
                    content.push_str("\nAnswer from these results.");
                }
                out.push(ChatMessage::user(content));
            }
            ChatRole::User => out.push(message.clone()),
            ChatRole::Assistant if message.tool_calls.is_empty() => out.push(message.clone()),
            ChatRole::Assistant if Some(i) < last_user && !message.content.trim().is_empty() => {
                out.push(ChatMessage::assistant(message.content.clone(), Vec::new()));
            }
            ChatRole::Assistant | ChatRole::Tool => {}
        }
    }
    out
}

/// The calls after message `from` with their results, one per line.
fn results_after(messages: &[ChatMessage], from: usize) -> String {
    let mut text = String::new();
    for message in &messages[from + 1..] {
        for call in &message.tool_calls {
            let result = messages[from + 1..]
                .iter()
                .find(|m| m.role == ChatRole::Tool && m.tool_call_id.as_deref() == Some(&call.id))
                .map_or("(no result)", |m| m.content.as_str());
            text.push_str(&format!(
                "- {} {}: {}\n",
                call.name,
                call.arguments,
                result.trim()
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use oscova_core::provider::model::ToolCallRequest;
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: json!({"zone": "Asia/Tokyo"}),
        }
    }

    #[test]
    fn the_current_calls_and_results_become_the_persons_words() {
        let messages = [
            ChatMessage::system("Be brief."),
            ChatMessage::user("Hi"),
            ChatMessage::assistant("", vec![call("a", "greet")]),
            ChatMessage::tool("a", "hello"),
            ChatMessage::assistant("Hello!", vec![]),
            ChatMessage::user("Time in Tokyo?"),
            ChatMessage::assistant("", vec![call("b", "now")]),
            ChatMessage::tool("b", "12:00 JST"),
        ];
        let folded = fold(&messages);
        let roles: Vec<_> = folded.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                ChatRole::System,
                ChatRole::User,
                ChatRole::Assistant,
                ChatRole::User
            ]
        );
        assert_eq!(folded[2].content, "Hello!");
        assert_eq!(
            folded[3].content,
            "Time in Tokyo?\n\nTools were called for this and returned:\n\
             - now {\"zone\":\"Asia/Tokyo\"}: 12:00 JST\n\nAnswer from these results."
        );
        assert!(folded.iter().all(|m| m.tool_calls.is_empty()));
    }

    #[test]
    fn without_results_the_message_is_kept() {
        let messages = [ChatMessage::user("Say hello in French.")];
        assert_eq!(fold(&messages)[0].content, "Say hello in French.");
    }
}
