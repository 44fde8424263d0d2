//! Tool results: `content` (then any further `blocks`) for the model,
//! `details` for the host.
//!
//! A tool's return value becomes a result by one rule: a JSON string is the
//! content as is; any other value is the content as compact JSON and the
//! details as the value itself; an `Err` is an error result whose content is
//! the error's `Display` text, which the model can act on. Images, audio
//! and resources are blocks after the text (see [`crate::tool::ContentBlock`]).
//!
//! `terminate` is for the host only: a host's agent loop ends the run when
//! every result of a batch of calls sets it, and nothing carries it to a
//! model or an MCP client.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;

/// The outcome of a tool call.
///
/// Its content is an ordered list of blocks: `content`, the text every
/// host shows, first (when not empty), then `blocks`.
///
/// ```
/// use oscova_core::ToolResult;
/// let r = ToolResult::text("a red square").with_image(vec![0x89, b'P'], "image/png");
/// assert_eq!(r.content, "a red square");
/// assert_eq!(r.blocks[0].kind(), "image");
/// assert_eq!(r.into_blocks().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text for the model.
    pub content: String,
    /// Further blocks after the text (images, audio, resources, more
    /// text), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ContentBlock>,
    /// Structured data for the host; `null` when there is none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// Asks the host's agent loop to stop after this call: when every
    /// result of one batch (the tool calls of one model answer) sets it,
    /// the run ends without another model call (`oscova-agent`'s chat
    /// loop reports it as `ChatOutcome::terminated`). One result of a
    /// batch without it, and the loop goes on as usual.
    ///
    /// Host-side only: the model never sees it (the tool message carries
    /// the content alone), MCP's `CallToolResult` has no such field so an
    /// MCP client never sees it either, and redaction leaves it as it is.
    /// Serialised only when set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub terminate: bool,
}

/// `details.error` of a result that says the call needs a credential the
/// user has not set (see [`ToolResult::missing_credential`]).
///
/// The convention, for plugins and hosts alike: such a call made no
/// connection and did nothing; its content is guidance for the person
/// (which credential, where to set it), and `details.credentials` lists the
/// credential keys. A host may act on it: `oscova serve`'s A2A server ends
/// the task in `TASK_STATE_AUTH_REQUIRED` with the guidance.
pub const MISSING_CREDENTIAL: &str = "missing_credential";

fn is_false(value: &bool) -> bool {
    !*value
}

impl ToolResult {
    /// A successful text result.
    ///
    /// ```
    /// let r = oscova_core::ToolResult::text("done");
    /// assert!(!r.is_error);
    /// ```
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            blocks: Vec::new(),
            details: Value::Null,
            is_error: false,
            terminate: false,
        }
    }

    /// An error result with text the model can act on.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            blocks: Vec::new(),
            details: Value::Null,
            is_error: true,
            terminate: false,
        }
    }

    /// An error result saying the call needs credentials the user has not
    /// set: `guidance` (which credential, where the person sets it) is the
    /// content, and the details are `{"error": "missing_credential",
    /// "credentials": [...]}` ([`MISSING_CREDENTIAL`]). A plugin may add
    /// fields to the details object; it keeps these two.
    ///
    /// ```
    /// use oscova_core::ToolResult;
    /// let r = ToolResult::missing_credential(
    ///     "Set `weather.api_key` under `[users.alice.credentials]`.",
    ///     ["weather.api_key"],
    /// );
    /// assert!(r.is_error && r.is_missing_credential());
    /// assert_eq!(r.details["error"], oscova_core::tool::MISSING_CREDENTIAL);
    /// assert_eq!(r.details["credentials"][0], "weather.api_key");
    /// assert!(!ToolResult::error("timed out").is_missing_credential());
    /// ```
    pub fn missing_credential<S: Into<String>>(
        guidance: impl Into<String>,
        credentials: impl IntoIterator<Item = S>,
    ) -> Self {
        let credentials: Vec<Value> = credentials
            .into_iter()
            .map(|key| Value::String(key.into()))
            .collect();
        Self::error(guidance).with_details(serde_json::json!({
            "error": MISSING_CREDENTIAL,
            "credentials": credentials,
        }))
    }

    /// Whether this is an error result saying a credential is missing
    /// (`details.error` is [`MISSING_CREDENTIAL`]).
    pub fn is_missing_credential(&self) -> bool {
        self.is_error
            && self.details.get("error").and_then(Value::as_str) == Some(MISSING_CREDENTIAL)
    }

    /// Attaches structured details for the host.
    ///
    /// ```
    /// use serde_json::json;
    /// let r = oscova_core::ToolResult::text("3 rows").with_details(json!({"rows": 3}));
    /// assert_eq!(r.details["rows"], 3);
    /// ```
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Sets [`terminate`](Self::terminate): when every result of a batch
    /// of calls is terminating, the host's agent loop ends the run without
    /// another model call.
    ///
    /// ```
    /// let r = oscova_core::ToolResult::text("Saved; nothing more to do.").terminating();
    /// assert!(r.terminate);
    /// assert_eq!(serde_json::to_value(&r).unwrap()["terminate"], true);
    /// let plain = serde_json::to_value(oscova_core::ToolResult::text("x")).unwrap();
    /// assert!(plain.get("terminate").is_none(), "left out when false");
    /// ```
    pub fn terminating(mut self) -> Self {
        self.terminate = true;
        self
    }

    /// Adds a block after the text and the blocks already there.
    pub fn with_block(mut self, block: ContentBlock) -> Self {
        self.blocks.push(block);
        self
    }

    /// Adds an image (bytes and MIME type, such as `image/png`).
    pub fn with_image(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with_block(ContentBlock::image(data, mime_type))
    }

    /// Adds a sound (bytes and MIME type, such as `audio/wav`).
    ///
    /// ```
    /// let r = oscova_core::ToolResult::text("spoken").with_audio(b"RIFF".to_vec(), "audio/wav");
    /// assert_eq!(r.blocks[0].mime_type(), Some("audio/wav"));
    /// ```
    pub fn with_audio(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.with_block(ContentBlock::audio(data, mime_type))
    }

    /// Adds an embedded resource holding text.
    pub fn with_resource_text(
        self,
        uri: impl Into<String>,
        mime_type: Option<&str>,
        text: impl Into<String>,
    ) -> Self {
        self.with_block(ContentBlock::resource_text(uri, mime_type, text))
    }

    /// The whole content in order: the text as a text block (when not
    /// empty), then the blocks.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        let mut out = Vec::with_capacity(self.blocks.len() + 1);
        if !self.content.is_empty() {
            out.push(ContentBlock::text(self.content));
        }
        out.extend(self.blocks);
        out
    }

    /// Calls `f` on every text the result carries for the model: the
    /// content and each block's text fields (not the details).
    pub fn for_each_text_mut(&mut self, mut f: impl FnMut(&mut String)) {
        f(&mut self.content);
        for block in &mut self.blocks {
            block.for_each_text_mut(&mut f);
        }
    }

    /// Serialises a tool's output into a successful result.
    pub fn from_output<T: Serialize + ?Sized>(output: &T) -> Self {
        match serde_json::to_value(output) {
            Ok(Value::String(content)) => Self::text(content),
            Ok(value) => Self {
                content: value.to_string(),
                blocks: Vec::new(),
                details: value,
                is_error: false,
                terminate: false,
            },
            Err(e) => Self::error(format!("the tool's output could not be serialised: {e}")),
        }
    }

    /// An error result from an error's `Display` text.
    pub fn from_error<E: fmt::Display + ?Sized>(error: &E) -> Self {
        Self::error(error.to_string())
    }
}

impl From<String> for ToolResult {
    fn from(content: String) -> Self {
        Self::text(content)
    }
}

impl From<&str> for ToolResult {
    fn from(content: &str) -> Self {
        Self::text(content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_content_and_values_are_details() {
        assert_eq!(ToolResult::from_output("hi"), ToolResult::text("hi"));
        let r = ToolResult::from_output(&vec![1, 2]);
        assert_eq!(r.content, "[1,2]");
        assert_eq!(r.details, json!([1, 2]));
        assert!(!r.is_error);
    }

    #[test]
    fn unserialisable_output_is_an_error() {
        let mut map = std::collections::HashMap::new();
        map.insert((1, 2), 3);
        let r = ToolResult::from_output(&map);
        assert!(r.is_error);
        assert!(
            r.content.contains("could not be serialised"),
            "{}",
            r.content
        );
    }
}
