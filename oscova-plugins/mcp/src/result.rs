//! A server's `tools/call` result as a [`ToolResult`].
//!
//! Rules: `isError` makes an error result; text blocks are the content,
//! joined by blank lines; `structuredContent` becomes the details (and the
//! content when no text came with it); an embedded text resource is its
//! text under its URI; binary blocks (image, audio, blob resources) and
//! resource links are named in the content with their MIME type and size,
//! and kept whole in the details under `"content"`, so nothing the server
//! sent is lost.

use oscova_core::ToolResult;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

/// Maps a server's result; `output_schema` is the tool's declared one.
pub(crate) fn call_result(result: CallToolResult, output_schema: Option<&Value>) -> ToolResult {
    let _ = output_schema;
    let mut text = Vec::new();
    let mut binary = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push(t.text.clone()),
            ContentBlock::Image(i) => {
                text.push(format!(
                    "[image: {}, {} bytes]",
                    i.mime_type,
                    decoded_len(&i.data)
                ));
                binary.push(block);
            }
            ContentBlock::Audio(a) => {
                text.push(format!(
                    "[audio: {}, {} bytes]",
                    a.mime_type,
                    decoded_len(&a.data)
                ));
                binary.push(block);
            }
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri, text: body, ..
                } => {
                    text.push(format!("{uri}:\n{body}"));
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => {
                    text.push(format!(
                        "[resource {uri}: {}, {} bytes]",
                        mime_type.as_deref().unwrap_or("application/octet-stream"),
                        decoded_len(blob)
                    ));
                    binary.push(block);
                }
                #[allow(unreachable_patterns)]
                _ => binary.push(block),
            },
            ContentBlock::ResourceLink(link) => {
                text.push(format!("[resource link: {}]", link.uri));
                binary.push(block);
            }
            #[allow(unreachable_patterns)]
            _ => binary.push(block),
        }
    }
    let mut details = match result.structured_content {
        Some(value) => value,
        None => Value::Null,
    };
    if !binary.is_empty() {
        let blocks = serde_json::to_value(&binary).unwrap_or(Value::Null);
        details = match details {
            Value::Null => json!({ "content": blocks }),
            Value::Object(mut map) if !map.contains_key("content") => {
                map.insert("content".to_owned(), blocks);
                Value::Object(map)
            }
            other => other,
        };
    }
    let content = if text.is_empty() && !details.is_null() {
        details.to_string()
    } else {
        text.join("\n\n")
    };
    let out = if result.is_error == Some(true) {
        ToolResult::error(content)
    } else {
        ToolResult::text(content)
    };
    out.with_details(details)
}

/// The size of base64 data once decoded.
fn decoded_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_errors_text_structured_and_binary_content() {
        let mut ok =
            CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        ok.structured_content = Some(json!({"n": 1}));
        let r = call_result(ok, None);
        assert!(!r.is_error);
        assert_eq!(r.content, "a\n\nb");
        assert_eq!(r.details, json!({"n": 1}));

        let err = call_result(CallToolResult::error(vec![ContentBlock::text("bad")]), None);
        assert!(err.is_error && err.content == "bad");

        let img = call_result(
            CallToolResult::success(vec![ContentBlock::image("AAAA", "image/png")]),
            None,
        );
        assert_eq!(img.content, "[image: image/png, 3 bytes]");
        assert_eq!(img.details["content"][0]["mimeType"], "image/png");

        let mut only = CallToolResult::success(vec![]);
        only.structured_content = Some(json!({"x": true}));
        assert_eq!(call_result(only, None).content, r#"{"x":true}"#);
    }
}
