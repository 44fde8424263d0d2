//! A tool call waiting for a person's answer, kept in the session before
//! anyone is asked.
//!
//! Rules: when a session's tool call needs a person's approval, the
//! session agent appends and commits a [`CALL_WAITING`] entry (the call,
//! its tool, who is asked, what, its arguments with the session's secrets
//! redacted, and when the wait expires) and only then asks. The answer is
//! what follows on the branch: the call's started mark
//! ([`CALL_STARTED`](super::CALL_STARTED)) once approved, or its tool
//! message (refused, expired). A call whose process stopped while it
//! waited is asked again by the next run of the session in any process
//! sharing the store, until its wait expires, never after: an expired
//! wait ends the call with a result saying so (`details.error` is
//! `expired`). Asking again keeps the first expiry, so restarts never
//! extend a wait. A custom entry, so the model never sees it and pi keeps
//! it as any extension's state.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::entry::EntryKind;
use super::id::iso_to_millis;

/// The `customType` of the record that a tool call waits for a person's
/// answer (see [`CallWait`]); its data is a [`CallWait`] in camelCase.
/// Appended and committed before the person is asked.
pub const CALL_WAITING: &str = "oscova.call_waiting";

/// A tool call waiting for a person's answer, as the session keeps it.
///
/// The session agent appends it (a [`CALL_WAITING`] entry) and commits it
/// before the person is asked. The answer is what follows on the branch:
/// the call's started mark once approved, or its tool message (refused,
/// expired). A call whose process stopped while it waited is asked again
/// by the next run of the session in any process sharing the store, until
/// the wait expires, never after: an expired wait ends the call with a
/// result saying so (`details.error` is `expired`). Asking again keeps the
/// first expiry, so restarts never extend a wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallWait {
    /// The call's id, as the model gave it.
    pub tool_call_id: String,
    /// The tool it calls.
    pub tool_name: String,
    /// The user asked: the session's.
    pub user_id: String,
    /// What the person is asked.
    pub asked: String,
    /// The call's arguments, with the session's secrets redacted.
    pub arguments: Value,
    /// When the wait ends unanswered (ISO 8601 UTC, milliseconds).
    pub expires_at: String,
}

impl CallWait {
    /// A wait for the call `tool_call_id` of `tool_name`, asking `user_id`
    /// `asked` about `arguments` (already redacted) until `expires_at`.
    pub fn new(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        user_id: impl Into<String>,
        asked: impl Into<String>,
        arguments: Value,
        expires_at: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            user_id: user_id.into(),
            asked: asked.into(),
            arguments,
            expires_at: expires_at.into(),
        }
    }

    /// When the wait expires, in milliseconds since the Unix epoch; `None`
    /// when `expires_at` is not a timestamp (such a wait counts as
    /// expired: nothing is run on a record that cannot be read).
    pub fn expires_at_millis(&self) -> Option<i64> {
        iso_to_millis(&self.expires_at)
    }

    /// Whether the wait had expired at `now_millis` (milliseconds since
    /// the Unix epoch).
    ///
    /// ```
    /// use oscova_agent::session::CallWait;
    /// use serde_json::json;
    ///
    /// let wait = CallWait::new("c1", "acme__pay__send", "alice", "Pay?", json!({}),
    ///     "2026-01-01T00:00:00.000Z");
    /// let at = wait.expires_at_millis().unwrap();
    /// assert!(!wait.is_expired_at(at - 1));
    /// assert!(wait.is_expired_at(at));
    /// ```
    pub fn is_expired_at(&self, now_millis: i64) -> bool {
        self.expires_at_millis().is_none_or(|at| now_millis >= at)
    }
}

impl EntryKind {
    /// The record that a call waits for a person (see [`CALL_WAITING`]).
    ///
    /// ```
    /// use oscova_agent::session::{CallWait, EntryKind};
    /// use serde_json::json;
    ///
    /// let wait = CallWait::new("c1", "acme__pay__send", "alice", "Pay?",
    ///     json!({"to": "bob"}), "2026-01-01T00:00:00.000Z");
    /// let entry = EntryKind::call_waiting(&wait);
    /// assert_eq!(entry.type_name(), "custom");
    /// assert_eq!(entry.call_wait(), Some(wait));
    /// ```
    pub fn call_waiting(wait: &CallWait) -> Self {
        Self::Custom {
            custom_type: CALL_WAITING.to_owned(),
            data: serde_json::to_value(wait).ok(),
        }
    }

    /// The wait a [`call_waiting`](Self::call_waiting) record holds;
    /// `None` for any other entry, or one whose data is not a wait.
    pub fn call_wait(&self) -> Option<CallWait> {
        match self {
            Self::Custom {
                custom_type,
                data: Some(data),
            } if custom_type == CALL_WAITING => serde_json::from_value(data.clone()).ok(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_that_cannot_be_read_counts_as_expired() {
        let wait = CallWait::new("c1", "t", "alice", "?", json!({}), "not a time");
        assert!(wait.is_expired_at(0));
    }

    #[test]
    fn the_record_is_camel_case_as_pi_keeps_custom_data() {
        let wait = CallWait::new(
            "c1",
            "t",
            "alice",
            "?",
            json!({"a": 1}),
            "2026-01-01T00:00:00.000Z",
        );
        let EntryKind::Custom { data, .. } = EntryKind::call_waiting(&wait) else {
            panic!("a custom entry");
        };
        let data = data.unwrap();
        assert_eq!(data["toolCallId"], "c1");
        assert_eq!(data["expiresAt"], "2026-01-01T00:00:00.000Z");
        let other = EntryKind::Custom {
            custom_type: CALL_WAITING.to_owned(),
            data: Some(json!({"toolCallId": "c1"})),
        };
        assert_eq!(other.call_wait(), None, "an incomplete record is no wait");
    }
}
