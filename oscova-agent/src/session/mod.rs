//! Sessions: a user's conversation as a tree of entries that outlives the
//! process, branches, and resumes anywhere the store is reachable.
//!
//! Rules:
//!
//! - A session belongs to one user and holds entries, each with an id and
//!   a parent id; the **leaf** marks the active branch, and the model's
//!   context is built by walking from the leaf to the root
//!   ([`Session::context`], pi's `buildSessionContext`).
//! - Entries are pi's session format v3, kind for kind and field for field
//!   ([`SessionEntry`], [`EntryKind`], [`AgentMessage`]): message, model
//!   change, thinking-level change, usage, compaction, branch summary,
//!   custom (extension state, never in the context), custom message (in
//!   the context), context edit, label, session info.
//! - Entries are append-only. A fork moves the leaf to any entry; the next
//!   append starts a branch there ([`Session::fork`]); [`Session::tree`]
//!   lists the branches.
//! - A [`SessionStore`] keeps sessions per user, checks each write against
//!   the leaf the writer last saw (a conflict is [`SessionError::Changed`]:
//!   resume and decide anew) and keeps a batch whole or not at all, so a
//!   killed process loses at most what it had not yet appended and never
//!   leaves the store corrupt.
//!
//! What is durable: an entry, once its append returned. The session agent
//! ([`agent`]) appends each message as it is final (the person's before
//! the model is asked, the answer, each tool message), and a tool call's
//! started mark ([`CALL_STARTED`]) once the call is approved and before
//! its tool runs, so a call is never run twice by a crash: the next run
//! reports a started call without a result as interrupted instead of
//! running it again, unless its tool is idempotent
//! ([`agent::AgentSession::recover`]). A call waiting for a person's
//! approval is recorded before the person is asked ([`CALL_WAITING`],
//! [`CallWait`], with an expiry): the next run of the session, in any
//! process sharing the store, asks again until the wait expires, and
//! ends the call as expired after. What is not: a model answer still
//! streaming, a tool's result before its tool message is appended (its
//! effect is then unknown, and said so), a tool's own question asked
//! while its body runs (the call has started: it is reported
//! interrupted), and an extension's state it did not append as an
//! entry.
//!
//! The files: `entry.rs` (the entry kinds), `wait.rs` (a call waiting
//! for a person), `message.rs` (pi's messages
//! and what each is for the model), `view.rs` (the model's context of a
//! branch: compaction, edits), `line.rs` (an entry line read in one pass), `tree.rs` (roots, children, branches, labels), `handle.rs`
//! ([`Session`]), `id.rs` (ids and timestamps), `error.rs`, `pi.rs` (pi's
//! JSONL files, export and import), and `store/`
//! (the trait, the memory, SQLite and Postgres stores), and
//! `compaction/` (summarising the older part of a long branch).

pub mod agent;
pub mod compaction;
mod entry;
mod error;
mod handle;
mod id;
mod line;
mod message;
pub mod pi;
pub mod store;
mod tree;
mod view;
#[cfg(feature = "voice")]
pub mod voice;
mod wait;

pub use entry::{CALL_STARTED, ContextReplacement, EntryKind, SessionEntry};
pub use error::SessionError;
pub use handle::Session;
pub use id::{EntryId, SessionId, iso_to_millis, millis_to_iso, now_iso};
pub use message::{
    AgentMessage, AssistantMessage, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX,
    BashExecutionMessage, BranchSummaryMessage, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, CompactionSummaryMessage, ContentPart, CustomMessage, Extra,
    MessageContent, ModelRef, SystemMessage, ToolResultMessage, UserMessage,
};
#[cfg(feature = "postgres")]
pub use store::PostgresStore;
#[cfg(feature = "sqlite")]
pub use store::SqliteStore;
pub use store::{LEASE_TTL, MemoryStore, SessionInfo, SessionLease, SessionSnapshot, SessionStore};
pub use tree::{Branch, SessionTree};
pub use view::ModelView;
pub use wait::{CALL_WAITING, CallWait};
