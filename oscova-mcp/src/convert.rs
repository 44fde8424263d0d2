//! What Oscova's tools and results become in MCP.
//!
//! Rules: a tool is its wire name, description, raw input schema, `title`
//! (also in the annotations, where clients before 2025-06-18 look),
//! annotations (each hint only when the tool's metadata says it; an
//! unsaid hint is left to the client's defaults) and `outputSchema`. MCP
//! wants an object there: an object schema is sent as it is, any other
//! (`Vec<T>`, a number) is wrapped as `{"result": ...}`, the convention
//! of the official Python SDK, and the structured result is wrapped the
//! same way. A result's content is its blocks in order: the text first
//! (one empty text block when there is nothing at all, as before), then
//! images and audio as base64 with their MIME types, and embedded
//! resources as text or blob resources. Its `details` are the
//! `structuredContent`: always, wrapped if need be, for a tool with an
//! output schema that succeeded; otherwise when they are an object.

use std::sync::Arc;

use oscova_core::ToolResult;
use oscova_core::host::PublishedTool;
use oscova_core::tool::{ContentBlock, ResourceContents};
use rmcp::model::{self, CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// The property a non-object structured result is wrapped in.
pub const WRAPPED_RESULT: &str = "result";

/// The MCP form of a published tool.
pub(super) fn mcp_tool(tool: &PublishedTool) -> Tool {
    let schema: JsonObject = match tool.input_schema() {
        Value::Object(map) => map.clone(),
        // Tool arguments are always an object; the macro never emits
        // anything else, but a hand-written toolset might.
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    let hints = tool.annotations();
    let annotations = ToolAnnotations::from_raw(
        tool.title().map(str::to_owned),
        hints.read_only(),
        hints.destructive(),
        hints.idempotent(),
        hints.open_world(),
    );
    let mut out = Tool::new(
        tool.wire_name().to_owned(),
        tool.description().to_owned(),
        Arc::new(schema),
    )
    .with_annotations(annotations);
    if let Some(title) = tool.title() {
        out = out.with_title(title);
    }
    if let Some((schema, _)) = tool.output_schema().map(mcp_output_schema) {
        out = out.with_raw_output_schema(Arc::new(schema));
    }
    out
}

/// An output schema as MCP takes it, and whether it was wrapped.
pub fn mcp_output_schema(schema: &Value) -> (JsonObject, bool) {
    let Value::Object(map) = schema else {
        return (JsonObject::new(), false);
    };
    if map.get("type").and_then(Value::as_str) == Some("object") {
        return (map.clone(), false);
    }
    // `$defs` stay at the root, where the inner schema's `$ref`s point.
    let mut inner = map.clone();
    let mut root = Map::new();
    for key in ["$schema", "$defs"] {
        if let Some(value) = inner.remove(key) {
            root.insert(key.to_owned(), value);
        }
    }
    root.insert("type".to_owned(), Value::from("object"));
    let mut properties = Map::new();
    properties.insert(WRAPPED_RESULT.to_owned(), Value::Object(inner));
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert("required".to_owned(), Value::from(vec![WRAPPED_RESULT]));
    (root, true)
}

/// The MCP form of a result of `tool` (`None` for a call that never
/// reached a tool).
pub(super) fn mcp_result(result: ToolResult, tool: Option<&PublishedTool>) -> CallToolResult {
    let is_error = result.is_error;
    let details = result.details.clone();
    let mut content: Vec<model::ContentBlock> =
        result.into_blocks().into_iter().map(mcp_block).collect();
    if content.is_empty() {
        content.push(model::ContentBlock::text(""));
    }
    let mut out = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let schema = tool.and_then(PublishedTool::output_schema);
    out.structured_content = match schema {
        Some(schema) if !is_error => {
            if mcp_output_schema(schema).1 {
                let mut wrapped = Map::new();
                wrapped.insert(WRAPPED_RESULT.to_owned(), details);
                Some(Value::Object(wrapped))
            } else {
                Some(details)
            }
        }
        // MCP's `structuredContent` is an object, and peers before
        // 2026-07-28 drop anything else; other details are in the text.
        _ => details.is_object().then_some(details),
    };
    out
}

/// One block in MCP's form.
pub fn mcp_block(block: ContentBlock) -> model::ContentBlock {
    let data = block.base64();
    match block {
        ContentBlock::Image { mime_type, .. } => {
            model::ContentBlock::image(data.unwrap_or_default(), mime_type)
        }
        ContentBlock::Audio { mime_type, .. } => {
            model::ContentBlock::audio(data.unwrap_or_default(), mime_type)
        }
        ContentBlock::Resource(resource) => {
            let contents = match resource.contents {
                ResourceContents::Text(text) => model::ResourceContents::TextResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                    meta: None,
                },
                ResourceContents::Blob(_) => model::ResourceContents::BlobResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    blob: data.unwrap_or_default(),
                    meta: None,
                },
            };
            model::ContentBlock::resource(contents)
        }
        ContentBlock::Text { text } => model::ContentBlock::text(text),
        // A kind added to core later is still shown, as text saying what
        // it was.
        other => model::ContentBlock::text(format!("[{} content]", other.kind())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_object_output_schemas_are_wrapped_with_their_defs_at_the_root() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/Row"},
            "$defs": {"Row": {"type": "object"}}
        });
        let (wrapped, was) = mcp_output_schema(&schema);
        assert!(was);
        assert_eq!(
            Value::Object(wrapped),
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Row"}}},
                "required": ["result"],
                "$defs": {"Row": {"type": "object"}}
            })
        );
        let object = json!({"type": "object", "properties": {}});
        assert_eq!(
            mcp_output_schema(&object),
            (object_map(object.clone()), false)
        );
    }

    fn object_map(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn blocks_become_mcp_blocks_in_order_with_base64() {
        let result = ToolResult::text("hi")
            .with_image(vec![1, 2, 3], "image/png")
            .with_audio(vec![0xff], "audio/wav")
            .with_block(ContentBlock::resource_blob("file:///b", None, vec![0]));
        let out = serde_json::to_value(mcp_result(result, None)).unwrap();
        assert_eq!(
            out["content"],
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "/w==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA=="}}
            ])
        );
    }
}
