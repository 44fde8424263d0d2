//! The entries of a session tree: pi's session format v3, kind for kind
//! and field for field.
//!
//! Rules: an entry is one line of pi's session file: `type`, `id`,
//! `parentId` (`null` for a root), an ISO `timestamp`, and the kind's own
//! fields in camelCase; a store keeps that line as it is, so exporting and
//! importing pi's JSONL is a mapping, not a translation. Entries are
//! append-only: nothing changes one once written; a label, an edit of
//! the context or a new name is a new entry. Which kinds reach the model is
//! decided in `context.rs`: custom entries, labels, session info, usage and
//! model or thinking-level changes never do. The session agent's own
//! bookkeeping is a custom entry too, so pi reads and writes it back like
//! any extension's: the mark that a tool call started
//! ([`CALL_STARTED`], [`EntryKind::call_started`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::id::EntryId;
use super::message::{AgentMessage, MessageContent, SystemMessage};

/// The `customType` of the mark the session agent appends, and commits,
/// when a tool call is about to run: after its approval, just before its
/// tool's body, so the call's tool message comes after it. A custom entry
/// (never in the model's context) whose data names the call and the tool:
/// `{"toolCallId": ..., "toolName": ...}`. A call found with this mark
/// and no tool message was started by a process that stopped before
/// keeping its result; the agent does not run it again on its own
/// ([`AgentSession::recover`](crate::session::agent::AgentSession::recover)).
/// Custom types beginning `oscova.` are the agent's; extensions use
/// their own.
pub const CALL_STARTED: &str = "oscova.call_started";

/// One entry of a session's tree (pi: `SessionEntry`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    /// Its id, unique within the session.
    pub id: EntryId,
    /// The entry it follows; `None` for a root.
    pub parent_id: Option<EntryId>,
    /// When it was appended (ISO 8601 UTC, milliseconds).
    pub timestamp: String,
    /// What it records.
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// What an entry records, tagged by `type` as pi writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum EntryKind {
    /// A message of the conversation.
    Message {
        /// The message.
        message: AgentMessage,
    },
    /// The person switched models; the latest one on the branch is current.
    ModelChange {
        /// The provider.
        provider: String,
        /// The model.
        model_id: String,
    },
    /// The person changed the thinking level.
    ThinkingLevelChange {
        /// The level (`off`, `low`, `high`, ...).
        thinking_level: String,
    },
    /// Model usage outside an assistant message (never in the context).
    Usage {
        /// What it was for, such as `cache_warm`.
        kind: String,
        /// The provider.
        provider: String,
        /// The model.
        model: String,
        /// pi's `Usage` object.
        usage: Value,
        /// A note for people.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The entries before `first_kept_entry_id` were summarised.
    Compaction {
        /// The summary the model sees in their place.
        summary: String,
        /// The first entry kept after the summary (its own id: none kept).
        first_kept_entry_id: EntryId,
        /// The context size before, in tokens.
        tokens_before: u64,
        /// Data of whoever compacted (never sent to the model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Usage of the summarising call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
        /// Whether an extension made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
        /// The complete prompt at this point, leading the compacted context.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system_message: Option<SystemMessage>,
    },
    /// A summary of the branch left behind, where the new branch continues.
    BranchSummary {
        /// The leaf whose abandoned path it summarises.
        from_id: EntryId,
        /// The summary the model sees.
        summary: String,
        /// Data of whoever summarised (never sent to the model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Usage of the summarising call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
        /// Whether an extension made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// An extension's state; never in the model's context.
    Custom {
        /// The extension's type tag.
        custom_type: String,
        /// The state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// A message an extension injected; in the model's context as a user
    /// message.
    CustomMessage {
        /// The extension's type tag.
        custom_type: String,
        /// Text or parts.
        content: MessageContent,
        /// Extension data, never sent to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether a UI shows it.
        display: bool,
    },
    /// An edit of an earlier entry's contribution to the context, on this
    /// branch only.
    ContextEdit {
        /// The entry edited.
        target_id: EntryId,
        /// The new content; `None` leaves the target out of the context.
        replacement: Option<ContextReplacement>,
    },
    /// A bookmark on an entry; `None` clears it.
    Label {
        /// The entry labelled.
        target_id: EntryId,
        /// The label.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Session metadata (a display name).
    SessionInfo {
        /// The name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// The content a [`EntryKind::ContextEdit`] puts in place of its target's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextReplacement {
    /// The new content.
    pub content: MessageContent,
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        super::line::EntryLine::deserialize(deserializer)?.into_entry()
    }
}

impl EntryKind {
    /// pi's name for the kind (the `type` field).
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Message { .. } => "message",
            Self::ModelChange { .. } => "model_change",
            Self::ThinkingLevelChange { .. } => "thinking_level_change",
            Self::Usage { .. } => "usage",
            Self::Compaction { .. } => "compaction",
            Self::BranchSummary { .. } => "branch_summary",
            Self::Custom { .. } => "custom",
            Self::CustomMessage { .. } => "custom_message",
            Self::ContextEdit { .. } => "context_edit",
            Self::Label { .. } => "label",
            Self::SessionInfo { .. } => "session_info",
        }
    }

    /// The mark that the call `call_id` of the tool `tool_name` started
    /// (see [`CALL_STARTED`]).
    ///
    /// ```
    /// use oscova_agent::session::EntryKind;
    ///
    /// let mark = EntryKind::call_started("call_1", "acme__files__write");
    /// assert_eq!(mark.type_name(), "custom");
    /// assert_eq!(mark.started_call_id(), Some("call_1"));
    /// ```
    pub fn call_started(call_id: &str, tool_name: &str) -> Self {
        Self::Custom {
            custom_type: CALL_STARTED.to_owned(),
            data: Some(serde_json::json!({
                "toolCallId": call_id,
                "toolName": tool_name,
            })),
        }
    }

    /// The call a [`call_started`](Self::call_started) mark names; `None`
    /// for any other entry.
    pub fn started_call_id(&self) -> Option<&str> {
        match self {
            Self::Custom {
                custom_type,
                data: Some(data),
            } if custom_type == CALL_STARTED => data.get("toolCallId")?.as_str(),
            _ => None,
        }
    }
}

impl SessionEntry {
    /// The entry as one line of pi's JSONL (no newline).
    pub fn to_json_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Reads one line of pi's JSONL.
    pub fn from_json_line(line: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The example lines of pi's `docs/session-format.md` (v3), one per kind.
    #[test]
    fn every_kind_of_pi_entry_reads_and_writes_back_unchanged() {
        let lines = [
            json!({"type":"message","id":"a1b2c3d4","parentId":"prev1234","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"Hello","timestamp":1733234401000_i64}}),
            json!({"type":"model_change","id":"d4e5f6g7","parentId":"c3d4e5f6","timestamp":"2024-12-03T14:05:00.000Z","provider":"openai","modelId":"gpt-4o"}),
            json!({"type":"thinking_level_change","id":"e5f6g7h8","parentId":"d4e5f6g7","timestamp":"2024-12-03T14:06:00.000Z","thinkingLevel":"high"}),
            json!({"type":"usage","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:08:00.000Z","kind":"cache_warm","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"totalTokens":50000}}),
            json!({"type":"compaction","id":"f6g7h8i9","parentId":"e5f6g7h8","timestamp":"2024-12-03T14:10:00.000Z","summary":"User discussed X, Y, Z...","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000,"systemMessage":{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":1733235000000_i64}}),
            json!({"type":"context_edit","id":"g6h7i8j9","parentId":"f6g7h8i9","timestamp":"2024-12-03T14:11:00.000Z","targetId":"c3d4e5f6","replacement":null}),
            json!({"type":"branch_summary","id":"g7h8i9j0","parentId":"a1b2c3d4","timestamp":"2024-12-03T14:15:00.000Z","fromId":"f6g7h8i9","summary":"Branch explored approach A..."}),
            json!({"type":"custom","id":"h8i9j0k1","parentId":"g7h8i9j0","timestamp":"2024-12-03T14:20:00.000Z","customType":"my-extension","data":{"count":42}}),
            json!({"type":"custom_message","id":"i9j0k1l2","parentId":"h8i9j0k1","timestamp":"2024-12-03T14:25:00.000Z","customType":"my-extension","content":"Injected context...","display":true}),
            json!({"type":"label","id":"j0k1l2m3","parentId":"i9j0k1l2","timestamp":"2024-12-03T14:30:00.000Z","targetId":"a1b2c3d4","label":"checkpoint-1"}),
            json!({"type":"session_info","id":"k1l2m3n4","parentId":null,"timestamp":"2024-12-03T14:35:00.000Z","name":"Refactor auth module"}),
        ];
        for line in lines {
            let entry = SessionEntry::from_json_line(&line.to_string()).unwrap();
            assert_eq!(entry.kind.type_name(), line["type"]);
            let back: Value = serde_json::from_str(&entry.to_json_line().unwrap()).unwrap();
            assert_eq!(back, line);
        }
    }

    #[test]
    fn a_started_mark_is_a_custom_line_pi_keeps() {
        let entry = SessionEntry {
            id: EntryId::new("0000000a"),
            parent_id: Some(EntryId::new("00000009")),
            timestamp: "2024-12-03T14:35:00.000Z".into(),
            kind: EntryKind::call_started("call_1", "files__write"),
        };
        let line: Value = serde_json::from_str(&entry.to_json_line().unwrap()).unwrap();
        assert_eq!(
            line,
            json!({"type":"custom","id":"0000000a","parentId":"00000009","timestamp":"2024-12-03T14:35:00.000Z","customType":"oscova.call_started","data":{"toolCallId":"call_1","toolName":"files__write"}})
        );
        let back = SessionEntry::from_json_line(&line.to_string()).unwrap();
        assert_eq!(back.kind.started_call_id(), Some("call_1"));
        // Another extension's custom entry is no mark.
        let other = EntryKind::Custom {
            custom_type: "my-extension".into(),
            data: Some(json!({"toolCallId": "call_1"})),
        };
        assert_eq!(other.started_call_id(), None);
    }

    #[test]
    fn a_root_is_written_with_a_null_parent() {
        let entry = SessionEntry {
            id: EntryId::new("00000001"),
            parent_id: None,
            timestamp: "2024-12-03T14:35:00.000Z".into(),
            kind: EntryKind::SessionInfo { name: None },
        };
        let line: Value = serde_json::from_str(&entry.to_json_line().unwrap()).unwrap();
        assert_eq!(line["parentId"], Value::Null);
    }
}
