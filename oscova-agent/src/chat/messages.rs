//! What a tool result becomes in the conversation.
//!
//! Rules: an error result's text starts with `error: `; text blocks and
//! text resources join the text in order, and blocks with bytes ride along
//! as attachments.

use oscova_core::ToolResult;
use oscova_core::provider::model::ChatMessage;
use oscova_core::tool::ContentBlock;

/// The text a tool message carries: errors are marked, since the chat
/// formats have no error flag on tool messages.
fn for_model(result: &ToolResult) -> String {
    if result.is_error {
        format!("error: {}", result.content)
    } else {
        result.content.clone()
    }
}

/// The tool message answering `call_id`: the result's text, then its
/// text blocks and text resources, in order; blocks with bytes (images,
/// audio, blob resources) ride along as attachments, which each model
/// provider sends as far as its API takes them.
pub(crate) fn tool_message(call_id: &str, result: &ToolResult) -> ChatMessage {
    let mut text = for_model(result);
    let mut attachments = Vec::new();
    for block in &result.blocks {
        if block.bytes().is_some() {
            attachments.push(block.clone());
            continue;
        }
        let part = match block {
            ContentBlock::Resource(r) => {
                format!(
                    "[resource {}]\n{}",
                    r.uri,
                    block.as_text().unwrap_or_default()
                )
            }
            other => other.as_text().unwrap_or_default().to_owned(),
        };
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&part);
    }
    ChatMessage::tool(call_id, text).with_attachments(attachments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_marked_for_the_model() {
        assert_eq!(for_model(&ToolResult::text("ok")), "ok");
        assert_eq!(for_model(&ToolResult::error("bad")), "error: bad");
    }

    #[test]
    fn text_blocks_join_the_text_and_bytes_are_attachments() {
        let result = ToolResult::text("a")
            .with_image(vec![1], "image/png")
            .with_block(ContentBlock::text("b"))
            .with_resource_text("file:///c", None, "c");
        let m = tool_message("id", &result);
        assert_eq!(m.content, "a\n\nb\n\n[resource file:///c]\nc");
        assert_eq!(m.attachments.len(), 1);
        assert_eq!(m.attachments[0].kind(), "image");
    }
}
