//! Reading messages in one pass.
//!
//! Rules: serde's derived forms for pi's shapes (an enum tagged by `role`
//! or `type`, text-or-parts content, `flatten` for the fields kept as
//! read) buffer every message into an intermediate tree before reading
//! it, once per level, which made reading a session mostly allocation.
//! These readers take each field straight from the text instead:
//!
//! - A tagged value whose tag is its first field (as pi and this crate
//!   write every message and part) is read by the variant's own reader
//!   over the rest of the object. A tag found later is the slow path:
//!   the object is read into a JSON map first, then the same readers run
//!   over it, so a hand-written line in any field order still reads.
//! - A message that keeps extra fields (system, assistant, tool result)
//!   reads its own fields typed and every other field into `extra` as
//!   raw text (`extra.rs`), decoded only when asked for
//!   (`de/with_extra.rs`).
//! - What is accepted and refused is what the derived forms accepted: the
//!   same names, the same required fields and defaults, unknown fields
//!   kept in `extra` or ignored as before, a tag naming no variant refused
//!   with serde's `unknown variant` error (pinned by the message tests,
//!   which read every shape with its tag first and last).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{
    AgentMessage, AssistantMessage, BashExecutionMessage, BranchSummaryMessage,
    CompactionSummaryMessage, ContentPart, CustomMessage, MessageContent, SystemMessage,
    ToolResultMessage, UserMessage,
};

mod with_extra;

/// A map key, borrowed from the input when it can be.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A type tagged by a field: its variants' readers, over the fields after
/// the tag or over a JSON map (the slow path).
trait Tagged: Sized {
    const TAG: &'static str;
    const EXPECTING: &'static str;
    fn read<'de, D: Deserializer<'de>>(tag: &str, rest: D) -> Result<Self, D::Error>;
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(first) = map.next_key::<Key<'de>>()? else {
            return Err(de::Error::missing_field(T::TAG));
        };
        if first.0 == T::TAG {
            let tag = map.next_value::<Key<'de>>()?;
            return T::read(&tag.0, MapAccessDeserializer::new(map));
        }
        // The slow path: the tag comes later.
        let mut fields = Map::new();
        fields.insert(first.0.into_owned(), map.next_value()?);
        while let Some(key) = map.next_key::<Key<'de>>()? {
            fields.insert(key.0.into_owned(), map.next_value()?);
        }
        let tag = match fields.remove(T::TAG) {
            Some(Value::String(tag)) => tag,
            Some(_) => {
                return Err(de::Error::invalid_type(
                    de::Unexpected::Other("a tag that is not a string"),
                    &"a string",
                ));
            }
            None => return Err(de::Error::missing_field(T::TAG)),
        };
        T::read(&tag, Value::Object(fields)).map_err(de::Error::custom)
    }
}

fn tagged<'de, D: Deserializer<'de>, T: Tagged>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

// The parts' fields, as the derived enum read them.

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextPart {
    text: String,
    text_signature: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThinkingPart {
    thinking: String,
    thinking_signature: Option<String>,
    redacted: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ImagePart {
    data: String,
    mime_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCallPart {
    id: String,
    name: String,
    arguments: Value,
    thought_signature: Option<String>,
    namespace: Option<String>,
    arguments_error: Option<String>,
}

const PART_TYPES: &[&str] = &["text", "thinking", "image", "toolCall"];

impl Tagged for ContentPart {
    const TAG: &'static str = "type";
    const EXPECTING: &'static str = "a content part";

    fn read<'de, D: Deserializer<'de>>(tag: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match tag {
            "text" => {
                let p = TextPart::deserialize(rest)?;
                Self::Text {
                    text: p.text,
                    text_signature: p.text_signature,
                }
            }
            "thinking" => {
                let p = ThinkingPart::deserialize(rest)?;
                Self::Thinking {
                    thinking: p.thinking,
                    thinking_signature: p.thinking_signature,
                    redacted: p.redacted,
                }
            }
            "image" => {
                let p = ImagePart::deserialize(rest)?;
                Self::Image {
                    data: p.data,
                    mime_type: p.mime_type,
                }
            }
            "toolCall" => {
                let p = ToolCallPart::deserialize(rest)?;
                Self::ToolCall {
                    id: p.id,
                    name: p.name,
                    arguments: p.arguments,
                    thought_signature: p.thought_signature,
                    namespace: p.namespace,
                    arguments_error: p.arguments_error,
                }
            }
            other => return Err(de::Error::unknown_variant(other, PART_TYPES)),
        })
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        tagged(deserializer)
    }
}

const ROLES: &[&str] = &[
    "system",
    "user",
    "assistant",
    "toolResult",
    "custom",
    "bashExecution",
    "branchSummary",
    "compactionSummary",
];

impl Tagged for AgentMessage {
    const TAG: &'static str = "role";
    const EXPECTING: &'static str = "a message";

    fn read<'de, D: Deserializer<'de>>(tag: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match tag {
            "system" => Self::System(SystemMessage::deserialize(rest)?),
            "user" => Self::User(UserMessage::deserialize(rest)?),
            "assistant" => Self::Assistant(AssistantMessage::deserialize(rest)?),
            "toolResult" => Self::ToolResult(ToolResultMessage::deserialize(rest)?),
            "custom" => Self::Custom(CustomMessage::deserialize(rest)?),
            "bashExecution" => Self::BashExecution(BashExecutionMessage::deserialize(rest)?),
            "branchSummary" => Self::BranchSummary(BranchSummaryMessage::deserialize(rest)?),
            "compactionSummary" => {
                Self::CompactionSummary(CompactionSummaryMessage::deserialize(rest)?)
            }
            other => return Err(de::Error::unknown_variant(other, ROLES)),
        })
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        tagged(deserializer)
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = MessageContent;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content parts")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessageContent, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element()? {
                    parts.push(part);
                }
                Ok(MessageContent::Parts(parts))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every shape pi writes, one per role and part type.
    fn shapes() -> Vec<Value> {
        vec![
            json!({"role":"system","content":"Be brief.","sections":{"tools":"t"},"toolsAdded":["a"],"timestamp":1}),
            json!({"role":"user","content":"Hello","timestamp":1733234401000_i64}),
            json!({"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"AAEC","mimeType":"image/png"}],"timestamp":2}),
            json!({"role":"assistant","content":[{"type":"text","text":"Hi!","textSignature":"s"},{"type":"thinking","thinking":"hm","redacted":false},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"ls"},"namespace":"n"}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1,"cost":{"total":0}},"stopReason":"toolUse","timestamp":3}),
            json!({"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out"}],"isError":true,"details":{"x":1},"timestamp":4}),
            json!({"role":"custom","customType":"ext","content":[{"type":"text","text":"note"}],"display":true,"details":{"d":2},"timestamp":5}),
            json!({"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":6}),
            json!({"role":"branchSummary","summary":"went left","fromId":"abcd1234","timestamp":7}),
            json!({"role":"compactionSummary","summary":"we did X","tokensBefore":99,"timestamp":8}),
        ]
    }

    /// The JSON text of `value` with its tag moved to the end.
    fn tag_last(value: &Value, tag: &str) -> String {
        let object = value.as_object().unwrap();
        let mut fields: Vec<String> = object
            .iter()
            .filter(|(k, _)| *k != tag)
            .map(|(k, v)| format!("{}:{}", json!(k), tag_last_inner(v)))
            .collect();
        if let Some(t) = object.get(tag) {
            fields.push(format!("{}:{t}", json!(tag)));
        }
        format!("{{{}}}", fields.join(","))
    }

    /// Parts inside content move their `type` to the end too.
    fn tag_last_inner(value: &Value) -> String {
        match value {
            Value::Array(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| match i.get("type") {
                        Some(_) => tag_last(i, "type"),
                        None => i.to_string(),
                    })
                    .collect();
                format!("[{}]", items.join(","))
            }
            other => other.to_string(),
        }
    }

    #[test]
    fn every_shape_reads_the_same_with_its_tag_first_or_last() {
        for shape in shapes() {
            let first: AgentMessage = serde_json::from_str(&shape.to_string()).unwrap();
            let last_text = tag_last(&shape, "role");
            assert!(last_text.ends_with(&format!("\"role\":{}}}", shape["role"])));
            let last: AgentMessage = serde_json::from_str(&last_text).unwrap();
            let from_value: AgentMessage = serde_json::from_value(shape.clone()).unwrap();
            assert_eq!(first, last, "{last_text}");
            assert_eq!(first, from_value);
            assert_eq!(serde_json::to_value(&first).unwrap(), shape);
        }
    }

    #[test]
    fn extra_fields_are_kept_and_known_ones_typed() {
        let shape = &shapes()[3];
        let AgentMessage::Assistant(m) = serde_json::from_value(shape.clone()).unwrap() else {
            panic!("not an assistant message")
        };
        assert_eq!(
            (m.provider.as_str(), m.model.as_str()),
            ("anthropic", "claude")
        );
        let keys: Vec<&str> = m.extra.keys().collect();
        assert_eq!(keys, ["api", "stopReason", "usage"]);
        assert_eq!(
            m.extra.get("usage"),
            Some(json!({"input":1,"cost":{"total":0}}))
        );

        // A system message read on its own (a compaction's checkpoint)
        // keeps its `role` as an extra field, as the derived form did.
        let system: SystemMessage =
            serde_json::from_value(json!({"role":"system","content":"c","timestamp":1})).unwrap();
        assert_eq!(system.extra.get("role"), Some(json!("system")));
        // Defaults: no provider, model or isError.
        let AgentMessage::ToolResult(t) = serde_json::from_value(
            json!({"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"timestamp":1}),
        )
        .unwrap() else {
            panic!("not a tool result")
        };
        assert!(!t.is_error && t.extra.is_empty());
    }

    #[test]
    fn what_the_derived_forms_refused_is_still_refused() {
        let refused = [
            (
                json!({"role":"robot","content":"x","timestamp":1}),
                "unknown variant `robot`",
            ),
            (json!({"content":"x","timestamp":1}), "missing field `role`"),
            (
                json!({"role":"user","timestamp":1}),
                "missing field `content`",
            ),
            (
                json!({"role":"assistant","content":[],"timestamp":1,"model":3}),
                "invalid type",
            ),
            (
                json!({"role":"toolResult","toolName":"t","content":[],"timestamp":1}),
                "missing field `toolCallId`",
            ),
            (
                json!({"role":"user","content":[{"type":"video"}],"timestamp":1}),
                "unknown variant `video`",
            ),
            (
                json!({"role":"user","content":[{"text":"no type"}],"timestamp":1}),
                "missing field `type`",
            ),
            (
                json!({"role":"user","content":[{"type":"text"}],"timestamp":1}),
                "missing field `text`",
            ),
            (
                json!({"role":"user","content":5,"timestamp":1}),
                "a string or a list of content parts",
            ),
            (
                json!({"role":5,"content":"x","timestamp":1}),
                "invalid type",
            ),
        ];
        for (shape, words) in refused {
            for text in [shape.to_string(), tag_last(&shape, "role")] {
                let error = serde_json::from_str::<AgentMessage>(&text).unwrap_err();
                assert!(error.to_string().contains(words), "{text}: {error}");
            }
        }
        let twice = r#"{"role":"assistant","content":[],"content":[],"timestamp":1}"#;
        let error = serde_json::from_str::<AgentMessage>(twice).unwrap_err();
        assert!(
            error.to_string().contains("duplicate field `content`"),
            "{error}"
        );
    }
}
