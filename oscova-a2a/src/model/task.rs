//! Tasks and messages, as the protocol's JSON spells them (the protobuf
//! JSON mapping of `a2a.proto`: camelCase fields, enums by their full
//! names such as `TASK_STATE_COMPLETED`).
//!
//! Rules: unknown fields a peer sends are ignored, never an error; fields
//! with no value are left out, not sent empty. Ids made here are random
//! version-4 UUIDs.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskState {
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// The run is going on.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// The run ended with an answer.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// The run failed; the status message says why.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// The run was cancelled.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// The agent waits for the client's next message in this task.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// The agent refused the task.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// A credential is missing; the status message says which and where.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskState {
    /// Whether nothing more happens to a task in this state.
    pub fn is_terminal(self) -> bool {
        Self::TERMINAL.contains(&self)
    }

    /// The states nothing more happens to a task in (what the stores'
    /// queries leave out when they count what is still going on).
    pub const TERMINAL: [TaskState; 4] = [
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::Rejected,
    ];

    /// The protocol's name of the state (`TASK_STATE_WORKING`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Rejected => "TASK_STATE_REJECTED",
            Self::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
        }
    }

    /// The state named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        serde_json::from_value(Value::String(name.to_owned())).ok()
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Role {
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// This agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// One part of a message or artifact; this server reads and writes text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64 (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// A file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A file's bytes (`raw`, base64) with its name and media type.
    pub fn file(
        raw: impl Into<String>,
        filename: impl Into<String>,
        media_type: impl Into<String>,
    ) -> Self {
        Self {
            raw: Some(raw.into()),
            filename: Some(filename.into()),
            media_type: Some(media_type.into()),
            ..Self::default()
        }
    }
}

/// A message of the client or the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// The message's id, made by its sender.
    pub message_id: String,
    /// The context (for this server: the user's session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who sent it.
    pub role: Role,
    /// Its parts.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Message {
    /// A client's message of `parts`, with a new id and no context or
    /// task yet.
    pub fn user(parts: Vec<Part>) -> Self {
        Self {
            message_id: new_id(),
            context_id: None,
            task_id: None,
            role: Role::User,
            parts,
            metadata: None,
        }
    }

    /// An agent message with one text part.
    pub fn agent_text(text: impl Into<String>, context_id: &str, task_id: &str) -> Self {
        Self {
            message_id: new_id(),
            context_id: Some(context_id.to_owned()),
            task_id: Some(task_id.to_owned()),
            role: Role::Agent,
            parts: vec![Part::text(text)],
            metadata: None,
        }
    }

    /// The text of its text parts, one per line.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| p.text.as_deref())
            .collect();
        texts.join("\n")
    }
}

/// A task's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// What the agent says about it (a failure's reason, a question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it was set (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// What a task produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Artifact {
    /// Its id.
    pub artifact_id: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its parts.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// A task: one run of the user's session agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its context (the session).
    pub context_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// What it produced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages of the task, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Task {
    /// A task in `Submitted` state for `message` (feature `server`).
    #[cfg(feature = "server")]
    pub fn submitted(id: String, context_id: String, message: Message) -> Self {
        Self {
            id,
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(now_rfc3339()),
            },
            artifacts: Vec::new(),
            history: vec![message],
            metadata: None,
        }
    }

    /// Moves to `state` with an agent message saying `text`, if any
    /// (feature `server`).
    #[cfg(feature = "server")]
    pub fn set_state(&mut self, state: TaskState, text: Option<&str>) {
        let message = text.map(|t| Message::agent_text(t, &self.context_id, &self.id));
        self.status = TaskStatus {
            state,
            message,
            timestamp: Some(now_rfc3339()),
        };
    }

    /// The task as a client asked for it: at most `history_length` of its
    /// latest messages (all when `None`), without artifacts unless asked.
    pub fn view(&self, history_length: Option<usize>, artifacts: bool) -> Self {
        let mut task = self.clone();
        if let Some(keep) = history_length {
            let drop = task.history.len().saturating_sub(keep);
            task.history.drain(..drop);
        }
        if !artifacts {
            task.artifacts.clear();
        }
        task
    }
}

/// A new random id (a version-4 UUID).
pub fn new_id() -> String {
    let mut bytes = [0u8; 16];
    // A failing system random source leaves zeros, then the clock: ids
    // still differ between calls within a process.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Now, as RFC 3339 in UTC with milliseconds (feature `server`: the
/// sessions' clock).
#[cfg(feature = "server")]
pub fn now_rfc3339() -> String {
    oscova_agent::session::now_iso()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "server")]
    #[test]
    fn a_task_is_spelled_as_the_protocol_spells_it() {
        let message: Message = serde_json::from_value(serde_json::json!({
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}], "extra": 1
        }))
        .unwrap();
        let mut task = Task::submitted("t1".into(), "c1".into(), message);
        task.set_state(TaskState::Failed, Some("why"));
        let json = serde_json::to_value(&task).unwrap();
        assert_eq!(json["contextId"], "c1");
        assert_eq!(json["status"]["state"], "TASK_STATE_FAILED");
        assert_eq!(json["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(json["history"][0]["parts"][0]["text"], "hi");
        assert!(json.get("artifacts").is_none());
        assert_eq!(
            TaskState::parse("TASK_STATE_CANCELED"),
            Some(TaskState::Canceled)
        );
        assert!(TaskState::Canceled.is_terminal() && !TaskState::InputRequired.is_terminal());
    }

    #[test]
    fn ids_are_version_4_uuids_and_differ() {
        let (a, b) = (new_id(), new_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
