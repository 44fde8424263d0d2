//! A server's `tools/call` result as a [`ToolResult`].
//!
//! Rules: `isError` makes an error result; text blocks are the content,
//! joined by blank lines; `structuredContent` becomes the details (and the
//! content when no text came with it); image, audio and embedded resource
//! blocks become the result's blocks of the same kind (base64 decoded); a
//! resource link is named in the content by its URI. A block whose base64
//! does not decode is named in the content instead of being dropped.

use oscova_core::ToolResult;
use oscova_core::tool::{ContentBlock as Block, decode_base64};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// Maps a server's result.
pub(crate) fn call_result(result: CallToolResult) -> ToolResult {
    let mut text = Vec::new();
    let mut blocks = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push(t.text.clone()),
            ContentBlock::Image(i) => binary(
                &mut text,
                &mut blocks,
                &i.data,
                format!("image {}", i.mime_type),
                &|b| Block::image(b, i.mime_type.clone()),
            ),
            ContentBlock::Audio(a) => binary(
                &mut text,
                &mut blocks,
                &a.data,
                format!("audio {}", a.mime_type),
                &|b| Block::audio(b, a.mime_type.clone()),
            ),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text: body,
                    ..
                } => blocks.push(Block::resource_text(uri, mime_type.as_deref(), body)),
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => binary(
                    &mut text,
                    &mut blocks,
                    blob,
                    format!("resource {uri}"),
                    &|b| Block::resource_blob(uri, mime_type.as_deref(), b),
                ),
                #[allow(unreachable_patterns)]
                _ => text.push("[a resource of a kind this host does not know]".to_owned()),
            },
            ContentBlock::ResourceLink(link) => text.push(format!("[resource link: {}]", link.uri)),
            #[allow(unreachable_patterns)]
            _ => text.push("[a content block of a kind this host does not know]".to_owned()),
        }
    }
    let details = result.structured_content.unwrap_or(Value::Null);
    let content = if text.is_empty() && !details.is_null() {
        details.to_string()
    } else {
        text.join("\n\n")
    };
    let mut out = if result.is_error == Some(true) {
        ToolResult::error(content)
    } else {
        ToolResult::text(content)
    };
    for block in blocks {
        out = out.with_block(block);
    }
    out.with_details(details)
}

/// A binary block, or a note in the text when its base64 is broken.
fn binary(
    text: &mut Vec<String>,
    blocks: &mut Vec<Block>,
    data: &str,
    what: String,
    make: &dyn Fn(Vec<u8>) -> Block,
) {
    match decode_base64(data) {
        Ok(bytes) => blocks.push(make(bytes)),
        Err(e) => text.push(format!("[{what}: its data is not valid base64: {e}]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_errors_text_structured_and_binary_content() {
        let mut ok =
            CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        ok.structured_content = Some(json!({"n": 1}));
        let r = call_result(ok);
        assert!(!r.is_error);
        assert_eq!(r.content, "a\n\nb");
        assert_eq!(r.details, json!({"n": 1}));

        let err = call_result(CallToolResult::error(vec![ContentBlock::text("bad")]));
        assert!(err.is_error && err.content == "bad");

        let img = call_result(CallToolResult::success(vec![ContentBlock::image(
            "AAEC",
            "image/png",
        )]));
        assert_eq!(img.blocks, vec![Block::image(vec![0, 1, 2], "image/png")]);

        let mut only = CallToolResult::success(vec![]);
        only.structured_content = Some(json!({"x": true}));
        assert_eq!(call_result(only).content, r#"{"x":true}"#);
    }
}
