//! Reading an entry line in one pass.
//!
//! Rules: [`SessionEntry`]'s derived form (`flatten` over an enum tagged
//! by `type`) makes serde buffer every line before reading it, twice; this
//! flat struct has every field of every kind and reads a line straight
//! from the text, then checks that the kind's required fields are there.
//! What it accepts and refuses is what the derived form would: the same
//! field names, the same required fields (pinned by the entry tests, which
//! read every kind of pi's format back to the same JSON).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::Error;
use serde_json::Value;

use super::entry::{ContextReplacement, EntryKind, SessionEntry};
use super::id::EntryId;
use super::message::{AgentMessage, MessageContent, SystemMessage};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryLine<'a> {
    // Borrowed from the line when it can be: one allocation less per entry.
    #[serde(rename = "type", borrow)]
    entry_type: Cow<'a, str>,
    id: EntryId,
    // pi writes `null` for a root; a missing one reads as a root too.
    #[serde(default)]
    parent_id: Option<EntryId>,
    timestamp: String,
    message: Option<AgentMessage>,
    provider: Option<String>,
    model_id: Option<String>,
    thinking_level: Option<String>,
    kind: Option<String>,
    model: Option<String>,
    usage: Option<Value>,
    note: Option<String>,
    summary: Option<String>,
    first_kept_entry_id: Option<EntryId>,
    tokens_before: Option<u64>,
    details: Option<Value>,
    from_hook: Option<bool>,
    system_message: Option<SystemMessage>,
    from_id: Option<EntryId>,
    custom_type: Option<String>,
    data: Option<Value>,
    content: Option<MessageContent>,
    display: Option<bool>,
    target_id: Option<EntryId>,
    #[serde(default, deserialize_with = "present")]
    replacement: Option<Option<ContextReplacement>>,
    label: Option<String>,
    name: Option<String>,
}

/// Tells `"replacement": null` (present, nothing) from a missing field.
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<ContextReplacement>>, D::Error> {
    Option::<ContextReplacement>::deserialize(deserializer).map(Some)
}

fn need<T, E: Error>(value: Option<T>, field: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(field))
}

impl EntryLine<'_> {
    pub(crate) fn into_entry<E: Error>(self) -> Result<SessionEntry, E> {
        let kind = match &*self.entry_type {
            "message" => EntryKind::Message {
                message: need(self.message, "message")?,
            },
            "model_change" => EntryKind::ModelChange {
                provider: need(self.provider, "provider")?,
                model_id: need(self.model_id, "modelId")?,
            },
            "thinking_level_change" => EntryKind::ThinkingLevelChange {
                thinking_level: need(self.thinking_level, "thinkingLevel")?,
            },
            "usage" => EntryKind::Usage {
                kind: need(self.kind, "kind")?,
                provider: need(self.provider, "provider")?,
                model: need(self.model, "model")?,
                usage: need(self.usage, "usage")?,
                note: self.note,
            },
            "compaction" => EntryKind::Compaction {
                summary: need(self.summary, "summary")?,
                first_kept_entry_id: need(self.first_kept_entry_id, "firstKeptEntryId")?,
                tokens_before: need(self.tokens_before, "tokensBefore")?,
                details: self.details,
                usage: self.usage,
                from_hook: self.from_hook,
                system_message: self.system_message,
            },
            "branch_summary" => EntryKind::BranchSummary {
                from_id: need(self.from_id, "fromId")?,
                summary: need(self.summary, "summary")?,
                details: self.details,
                usage: self.usage,
                from_hook: self.from_hook,
            },
            "custom" => EntryKind::Custom {
                custom_type: need(self.custom_type, "customType")?,
                data: self.data,
            },
            "custom_message" => EntryKind::CustomMessage {
                custom_type: need(self.custom_type, "customType")?,
                content: need(self.content, "content")?,
                details: self.details,
                display: need(self.display, "display")?,
            },
            "context_edit" => EntryKind::ContextEdit {
                target_id: need(self.target_id, "targetId")?,
                replacement: need(self.replacement, "replacement")?,
            },
            "label" => EntryKind::Label {
                target_id: need(self.target_id, "targetId")?,
                label: self.label,
            },
            "session_info" => EntryKind::SessionInfo { name: self.name },
            other => {
                return Err(E::unknown_variant(
                    other,
                    &[
                        "message",
                        "model_change",
                        "thinking_level_change",
                        "usage",
                        "compaction",
                        "branch_summary",
                        "custom",
                        "custom_message",
                        "context_edit",
                        "label",
                        "session_info",
                    ],
                ));
            }
        };
        Ok(SessionEntry {
            id: self.id,
            parent_id: self.parent_id,
            timestamp: self.timestamp,
            kind,
        })
    }
}
