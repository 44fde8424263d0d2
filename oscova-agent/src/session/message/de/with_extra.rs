//! Reading a message that keeps the fields this crate does not model
//! (system, assistant, tool result): its own fields typed, every other one
//! into `extra` as raw text, what serde's `flatten` did without buffering
//! the message first.
//!
//! Rules: a field named twice is refused (`duplicate field`), a required
//! one missing is refused (`missing field`), defaults are the derived
//! forms' own; a message read on its own keeps even its `role` in `extra`,
//! as the derived form did.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::Key;
use crate::session::message::{
    AssistantMessage, ContentPart, Extra, MessageContent, SystemMessage, ToolResultMessage,
};

/// A struct whose own fields are read typed and every other field kept in
/// `extra` (the derived `flatten`, without its buffering).
trait WithExtra: Sized {
    const EXPECTING: &'static str;
    /// Fields read so far.
    type Fields: Default;
    /// Reads `key`'s value into `fields` when it is one of the struct's
    /// own; false when it is not (it then goes to `extra`).
    fn field<'de, A: MapAccess<'de>>(
        fields: &mut Self::Fields,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error>;
    fn build<E: de::Error>(fields: Self::Fields, extra: Extra) -> Result<Self, E>;
}

struct ExtraVisitor<T>(PhantomData<T>);

impl<'de, T: WithExtra> Visitor<'de> for ExtraVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut fields = T::Fields::default();
        let mut extra = Extra::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if !T::field(&mut fields, &key.0, &mut map)? {
                extra.insert_raw(key.0.into(), map.next_value()?);
            }
        }
        T::build(fields, extra)
    }
}

/// Sets `slot` from the map's next value, refusing a second one.
fn set<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    name: &'static str,
    map: &mut A,
) -> Result<bool, A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(true)
}

fn need<T, E: de::Error>(value: Option<T>, name: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(name))
}

#[derive(Default)]
struct SystemFields {
    content: Option<MessageContent>,
    sections: Option<Option<Map<String, Value>>>,
    timestamp: Option<i64>,
}

impl WithExtra for SystemMessage {
    const EXPECTING: &'static str = "a system message";
    type Fields = SystemFields;

    fn field<'de, A: MapAccess<'de>>(
        f: &mut SystemFields,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "content" => set(&mut f.content, "content", map),
            "sections" => set(&mut f.sections, "sections", map),
            "timestamp" => set(&mut f.timestamp, "timestamp", map),
            _ => Ok(false),
        }
    }

    fn build<E: de::Error>(f: SystemFields, extra: Extra) -> Result<Self, E> {
        Ok(Self {
            content: need(f.content, "content")?,
            sections: f.sections.flatten(),
            timestamp: need(f.timestamp, "timestamp")?,
            extra,
        })
    }
}

#[derive(Default)]
struct AssistantFields {
    content: Option<Vec<ContentPart>>,
    provider: Option<String>,
    model: Option<String>,
    timestamp: Option<i64>,
}

impl WithExtra for AssistantMessage {
    const EXPECTING: &'static str = "an assistant message";
    type Fields = AssistantFields;

    fn field<'de, A: MapAccess<'de>>(
        f: &mut AssistantFields,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "content" => set(&mut f.content, "content", map),
            "provider" => set(&mut f.provider, "provider", map),
            "model" => set(&mut f.model, "model", map),
            "timestamp" => set(&mut f.timestamp, "timestamp", map),
            _ => Ok(false),
        }
    }

    fn build<E: de::Error>(f: AssistantFields, extra: Extra) -> Result<Self, E> {
        Ok(Self {
            content: need(f.content, "content")?,
            provider: f.provider.unwrap_or_default(),
            model: f.model.unwrap_or_default(),
            timestamp: need(f.timestamp, "timestamp")?,
            extra,
        })
    }
}

#[derive(Default)]
struct ToolResultFields {
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    content: Option<Vec<ContentPart>>,
    is_error: Option<bool>,
    timestamp: Option<i64>,
}

impl WithExtra for ToolResultMessage {
    const EXPECTING: &'static str = "a tool result";
    type Fields = ToolResultFields;

    fn field<'de, A: MapAccess<'de>>(
        f: &mut ToolResultFields,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "toolCallId" => set(&mut f.tool_call_id, "toolCallId", map),
            "toolName" => set(&mut f.tool_name, "toolName", map),
            "content" => set(&mut f.content, "content", map),
            "isError" => set(&mut f.is_error, "isError", map),
            "timestamp" => set(&mut f.timestamp, "timestamp", map),
            _ => Ok(false),
        }
    }

    fn build<E: de::Error>(f: ToolResultFields, extra: Extra) -> Result<Self, E> {
        Ok(Self {
            tool_call_id: need(f.tool_call_id, "toolCallId")?,
            tool_name: need(f.tool_name, "toolName")?,
            content: need(f.content, "content")?,
            is_error: f.is_error.unwrap_or_default(),
            timestamp: need(f.timestamp, "timestamp")?,
            extra,
        })
    }
}

macro_rules! deserialize_with_extra {
    ($($ty:ty),*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_map(ExtraVisitor(PhantomData))
            }
        }
    )*};
}

deserialize_with_extra!(SystemMessage, AssistantMessage, ToolResultMessage);
