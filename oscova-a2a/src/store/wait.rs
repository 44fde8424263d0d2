//! [`TaskWait`]: the call an `INPUT_REQUIRED` task waits on, kept beside
//! the task so that any process on the store can answer it.
//!
//! Rules: the wait is written in the same write as the task's
//! `INPUT_REQUIRED` state ([`TaskStore::put_waiting`](super::TaskStore::put_waiting)),
//! before the question goes out; the answer takes it out of the store in
//! one conditional statement
//! ([`TaskStore::take_wait`](super::TaskStore::take_wait): a `DELETE …
//! RETURNING`, or the memory store's removal under its lock), so of two
//! processes given an answer to one question exactly one goes on; a
//! wait past its expiry is taken the same way by the sweep every process
//! runs ([`TaskStore::take_expired_waits`](super::TaskStore::take_expired_waits)). A final
//! state ([`TaskStore::put_final`](super::TaskStore::put_final)) drops the
//! task's wait in the same write: an ended task waits for nothing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call waiting for the person's answer, as the task store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskWait {
    /// The user asked: the task's.
    pub user: String,
    /// The tool asking (its wire name).
    pub tool: String,
    /// The call's arguments, with the host's secrets redacted (`null`
    /// when the run did not see the call start, which the wait does not
    /// need: the session keeps the call itself).
    pub arguments: Value,
    /// What the person is asked: the tool's question, already redacted, as
    /// `oscova_core::interaction::Question` serializes.
    pub asked: Value,
    /// When the wait ends unanswered, in milliseconds since the Unix epoch.
    pub expires_at: i64,
}

impl TaskWait {
    /// `user`'s wait on `tool` called with `arguments` (redacted), asking
    /// `asked`, until `expires_at` (milliseconds since the Unix epoch).
    pub fn new(
        user: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
        asked: Value,
        expires_at: i64,
    ) -> Self {
        Self {
            user: user.into(),
            tool: tool.into(),
            arguments,
            asked,
            expires_at,
        }
    }

    /// Whether the wait had expired at `now` (milliseconds since the Unix
    /// epoch).
    ///
    /// ```
    /// use oscova_a2a::store::TaskWait;
    /// let wait = TaskWait::new("alice", "pay", serde_json::json!({}), serde_json::json!({}), 1_000);
    /// assert!(!wait.is_expired_at(999));
    /// assert!(wait.is_expired_at(1_000));
    /// ```
    pub fn is_expired_at(&self, now: i64) -> bool {
        now >= self.expires_at
    }
}
