//! Tool results: `content` for the model, `details` for the host.
//!
//! A tool's return value becomes a result by one rule: a JSON string is the
//! content as is; any other value is the content as compact JSON and the
//! details as the value itself; an `Err` is an error result whose content is
//! the error's `Display` text, which the model can act on.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The outcome of a tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text for the model.
    pub content: String,
    /// Structured data for the host; `null` when there is none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
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
            details: Value::Null,
            is_error: false,
        }
    }

    /// An error result with text the model can act on.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            details: Value::Null,
            is_error: true,
        }
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

    /// Serialises a tool's output into a successful result.
    pub fn from_output<T: Serialize + ?Sized>(output: &T) -> Self {
        match serde_json::to_value(output) {
            Ok(Value::String(content)) => Self::text(content),
            Ok(value) => Self {
                content: value.to_string(),
                details: value,
                is_error: false,
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
