//! Waiting calls kept in a store: a `tools/call` parked between the rounds
//! of a 2026-07-28 request, readable by every server sharing the store.
//!
//! Rules: with a [`WaitStore`] (set with `http::McpHttpServer::wait_store`
//! or [`McpServer::wait_store`](crate::McpServer::wait_store)),
//! a call that asks the person is written to the store ([`KeptWait`]:
//! the tool, its arguments and the question with the scope's secrets
//! redacted, the user, the answers given so far, whether its body had
//! started, an expiry) before its `input_required` answer goes out, under
//! the same 128-bit random `requestState` handle that names it in memory.
//! A retry takes the wait out of the store in one conditional statement
//! ([`WaitStore::take`], matching handle, user and tool), so of two
//! instances given one handle exactly one gets it, and a handle is good
//! for one retry across every instance. Then:
//!
//! 1. no wait (used already, here or elsewhere; given way; another user's
//!    or another tool's; never kept): an invalid-params error, as without
//!    a store;
//! 2. an expired wait: a tool error result saying so (`details.error`
//!    `expired`); the call does not run;
//! 3. the call is parked in this process: it gets the answer and goes on;
//! 4. parked elsewhere (another instance, or this process before a
//!    restart) after its body started (it asked a question of its own):
//!    not run again, a tool error result saying it was interrupted
//!    (`details.error` `interrupted`), unless the tool is idempotent
//!    (`annotations.idempotent`);
//! 5. otherwise the call runs afresh on this instance with the retry's
//!    arguments (which must be the call's, compared redacted), the
//!    recorded answers given again to the same questions in order, and
//!    the new answer to the question the wait asked; a question that
//!    differs is asked of the person. A call whose approval was waited for
//!    runs once, where the yes arrived.
//!
//! A wait
//! is kept until it is taken, given way to (a user keeps at most their
//! bound of waits, the oldest dropped first, as in memory), or until
//! [`KEPT_AFTER_EXPIRY`] past its expiry: until then a late retry is
//! answered that the wait expired, after it the handle names nothing.
//! The answers the person gave are kept as given (a replayed call needs
//! them), so the store is as private as the sessions beside it. A call
//! that never asks touches no store.
//!
//! Every instance of a fleet on one Postgres database (the sessions'),
//! each answering any retry:
//!
//! ```no_run
//! # #[cfg(all(feature = "http", feature = "postgres"))]
//! # async fn demo(
//! #     host: oscova_core::PluginHost,
//! #     tokens: Vec<oscova_mcp::http::UserToken>,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//! use oscova_mcp::http::McpHttpServer;
//! use oscova_mcp::wait::PostgresWaitStore;
//!
//! let waits = PostgresWaitStore::connect("host=db.internal user=oscova dbname=oscova").await?;
//! let server = McpHttpServer::new(host)
//!     .tokens(tokens)
//!     .wait_store(waits)
//!     .bind("0.0.0.0:8080".parse()?)
//!     .await?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::task::TaskStore;

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::PostgresWaitStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteWaitStore;

/// How long an expired wait is kept, so that a late retry is told it
/// expired rather than that its handle names nothing.
pub const KEPT_AFTER_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);

/// A question a call asked and the answer it got, as the client sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Answered {
    /// The elicitation request's parameters, with the scope's secrets
    /// redacted.
    pub asked: Value,
    /// The client's elicitation result (`inputResponses["oscova.ask"]`),
    /// as sent; `null` when the retry carried none.
    pub answer: Value,
}

impl Answered {
    /// `answer` to `asked`.
    pub fn new(asked: Value, answer: Value) -> Self {
        Self { asked, answer }
    }
}

/// A call waiting for the person's answer, as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KeptWait {
    /// The `requestState` handle naming it: 128 random bits in hex.
    pub handle: String,
    /// Whose call it is.
    pub user: String,
    /// The tool called (its wire name).
    pub tool: String,
    /// The call's arguments, with the scope's secrets redacted.
    pub arguments: Value,
    /// What the person is asked: the elicitation request's parameters,
    /// redacted.
    pub asked: Value,
    /// The questions answered before this one, in order.
    pub answered: Vec<Answered>,
    /// Whether the tool's body had started: `false` while its approval is
    /// asked (before the body), `true` for a question the tool asks.
    pub started: bool,
    /// When the wait ends unanswered, in milliseconds since the Unix epoch.
    pub expires_at: i64,
}

impl KeptWait {
    /// A wait under `handle` for `user`'s call of `tool` with `arguments`
    /// (redacted), asking `asked`, its body `started` or not, until
    /// `expires_at` (milliseconds since the Unix epoch), with no answer
    /// yet ([`with_answered`](Self::with_answered) adds them).
    pub fn new(
        handle: impl Into<String>,
        (user, tool): (impl Into<String>, impl Into<String>),
        arguments: Value,
        asked: Value,
        started: bool,
        expires_at: i64,
    ) -> Self {
        Self {
            handle: handle.into(),
            user: user.into(),
            tool: tool.into(),
            arguments,
            asked,
            answered: Vec::new(),
            started,
            expires_at,
        }
    }

    /// The same wait, with these questions answered before it.
    pub fn with_answered(mut self, answered: Vec<Answered>) -> Self {
        self.answered = answered;
        self
    }

    /// Whether the wait had expired at `now` (milliseconds since the Unix
    /// epoch).
    pub fn is_expired_at(&self, now: i64) -> bool {
        now >= self.expires_at
    }
}

/// Why a store could not keep or give back a wait.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitStoreError {
    /// The database failed or refused the statement.
    #[error("the waiting calls' store failed: {0}")]
    Database(String),
    /// A kept wait could not be written or read as JSON.
    #[error("a waiting call could not be encoded or decoded: {0}")]
    Data(#[from] serde_json::Error),
}

/// Where waiting calls are kept, for every server instance that shares it
/// (see [the module](self)). Implemented for SQLite
/// ([`SqliteWaitStore`], feature `sqlite`) and Postgres
/// ([`PostgresWaitStore`], feature `postgres`). The same store keeps the
/// tasks ([`TaskStore`], a table of its own): the calls served as MCP
/// tasks ([`crate::task`]).
#[async_trait::async_trait]
pub trait WaitStore: TaskStore {
    /// Keeps `wait` under its handle; in the same write, removes the
    /// user's oldest waits past `per_user` and the waits expired more than
    /// [`KEPT_AFTER_EXPIRY`] ago. Returns once the write is durable.
    async fn put(&self, wait: &KeptWait, per_user: usize) -> Result<(), WaitStoreError>;

    /// Removes and returns the wait `handle` names, if it is `user`'s wait
    /// on `tool`, in one conditional statement: of several takers, on any
    /// instance, one gets it. Another user's or tool's handle is `None`, as
    /// an unknown one is, and stays in the store.
    async fn take(
        &self,
        handle: &str,
        user: &str,
        tool: &str,
    ) -> Result<Option<KeptWait>, WaitStoreError>;
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_millis() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// The expiry of a wait that starts now and lasts `wait`.
pub(crate) fn expiry_after(wait: Duration) -> i64 {
    let wait = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
    now_millis().saturating_add(wait)
}

/// The time before which an expired wait is dropped.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn dropped_before() -> i64 {
    let kept = i64::try_from(KEPT_AFTER_EXPIRY.as_millis()).unwrap_or(i64::MAX);
    now_millis().saturating_sub(kept)
}

/// What a row keeps beside its indexed columns.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Serialize, Deserialize)]
struct Body {
    arguments: Value,
    asked: Value,
    answered: Vec<Answered>,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Body {
    fn of(wait: &KeptWait) -> Result<String, WaitStoreError> {
        let body = Body {
            arguments: wait.arguments.clone(),
            asked: wait.asked.clone(),
            answered: wait.answered.clone(),
        };
        Ok(serde_json::to_string(&body)?)
    }

    /// The wait a row holds.
    fn wait(
        json: &str,
        (handle, user, tool): (&str, &str, &str),
        started: bool,
        expires_at: i64,
    ) -> Result<KeptWait, WaitStoreError> {
        let body: Body = serde_json::from_str(json)?;
        Ok(KeptWait {
            handle: handle.to_owned(),
            user: user.to_owned(),
            tool: tool.to_owned(),
            arguments: body.arguments,
            asked: body.asked,
            answered: body.answered,
            started,
            expires_at,
        })
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn db(error: impl std::fmt::Display) -> WaitStoreError {
    WaitStoreError::Database(error.to_string())
}
