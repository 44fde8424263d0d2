//! An A2A 1.0 server over the session agent of `oscova-agent`: each
//! `contextId` is a session of the calling user, each task one run of
//! that session's model with the user's tools.
//!
//! ```no_run
//! use std::sync::Arc;
//! use oscova_a2a::auth::UserToken;
//! use oscova_a2a::{A2aServer, MemoryTaskStore};
//! use oscova_agent::session::MemoryStore;
//! use oscova_agent::session::agent::AgentHost;
//! use oscova_core::PluginHost;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let plugins = PluginHost::builder().build()?;
//! let agents = AgentHost::builder(plugins, Arc::new(MemoryStore::new())).build()?;
//! let server = A2aServer::new(agents, Arc::new(MemoryTaskStore::new()))
//!     .tokens([UserToken::from_token("alice", "a-secret")])
//!     .bind("127.0.0.1:8080".parse()?)
//!     .await?;
//! eprintln!("card at http://{}/.well-known/agent-card.json", server.local_addr());
//! server.serve_until(std::future::pending()).await?; // until the process is stopped
//! # Ok(())
//! # }
//! ```
//!
//! # The crate
//!
//! | module | what it holds | at the root |
//! |---|---|---|
//! | (root) | the server's settings, its request handler, a bound listener; its numeric bounds; the card's settings | [`A2aServer`], [`A2aHandler`], [`BoundA2aServer`], [`Limits`], [`CardConfig`], [`ServeA2aError`], [`A2aBody`], [`FollowUpHook`], [`RESTART_REASON`] |
//! | [`model`] | the A2A 1.0 protocol as both sides speak it: the card, tasks, messages, parts, webhooks, the methods ([`model::Method`]) and their HTTP+JSON requests, the errors and their codes, the card's path, the version header and the follow-up route; the `oscova.a2a` client uses the same types (this module alone is built without the feature `server`) | [`A2aError`] |
//! | [`store`] | where tasks, their webhooks and the calls they wait on ([`store::TaskWait`]) are kept: the [`TaskStore`] trait and its memory, SQLite and Postgres stores, the relay of a run's events between processes | [`TaskStore`], [`MemoryTaskStore`], `SqliteTaskStore`, `PostgresTaskStore` |
//! | [`push`] | webhooks: delivery, retries, the sweep of pushes owed after a restart | |
//! | [`auth`] | who may call: the token and user types the settings take | |
//!
//! A new A2A method is one line in `model/method.rs`'s list (its JSON-RPC
//! name); the compiler then asks for its HTTP+JSON request
//! ([`model::Method::http`]) and for its handler, an arm in `methods.rs`
//! (a streaming method's arm there refuses, and `stream.rs` answers it),
//! and the test in `binding/rest.rs` fails until the HTTP+JSON binding
//! routes that request to it. The JSON-RPC binding (`binding/jsonrpc.rs`)
//! needs nothing: it reads the name.
//!
//! # Rules
//!
//! | where | what |
//! |---|---|
//! | (the listener) | before `binding/`, every path meets the port's Origin and Host policy (`oscova_serve::origin::OriginPolicy`): a foreign browser `Origin` is 403, and on a loopback address a `Host` that is not `localhost` or a loopback IP (DNS rebinding) |
//! | `binding/` | the card is public; with a follow-up hook ([`A2aServer::followups`]), `POST /a2a/followups/{id}` is answered by the hook on the id and the `X-A2A-Notification-Token` header alone (200 or 401; the body never read); everything else needs a user's bearer token; `A2A-Version` 1.0 or `VersionNotSupportedError` (-32009); body cap (413); JSON-RPC at `/` (`jsonrpc.rs`), HTTP+JSON (`rest.rs`) at `/message:send`, `/tasks`, `/tasks/{id}`, `/tasks/{id}:cancel` and the rest of [`model::Method::http`]'s routes, each request to one [`model::Method`] |
//! | `methods.rs` | the unary methods' handlers: `SendMessage` (blocking unless `returnImmediately`), `GetTask`, `ListTasks`, `CancelTask`, the push config methods; the extended card's error when none is configured (`binding/` answers a configured one) |
//! | `push.rs` | webhooks kept in the task store, user-scoped, their secrets never answered; bounded per task and per user (`UnsupportedOperationError` past either, checked in the store's write); status updates POSTed to them through the host's HTTP client (`Internet` scope: private and loopback refused unless allowed), with the config's `Authorization`, retried up to three attempts; a run's final state owed until every webhook took it, swept after a restart |
//! | `stream.rs` | `SendStreamingMessage`, `SubscribeToTask` as server-sent events: the task, then status and artifact updates, closed at a terminal state; per-user bound on streams; a run on another instance streamed from the store, its chunks through the store's relay |
//! | `store/relay.rs`, `store/postgres_relay.rs` | a run's events published through a store several processes share (Postgres `NOTIFY` per task, text joined for 50 ms, payloads under 8000 bytes), so a subscriber on any instance gets the model's text |
//! | `tasks.rs` | a context is the user's session `a2a:<contextId>`; a task is one run; runs of one context in turn; per-user bound on running tasks; every state stored before it is told |
//! | `tasks/ask.rs` | a tool's question puts the task in `INPUT_REQUIRED` and keeps its wait (tool, redacted arguments, user, question, expiry) in the store in the same write, before it is told; a run waiting here gives way when its wait is taken elsewhere; an expired wait ends the task `FAILED` |
//! | `tasks/approve.rs` | a scope tool's approval is the task's confirmation, asked by the session's own approval handler (its wait kept in the session, then beside the task, as a question's); yes runs it once, on any process, anything else refuses it; `A2aServer::allow_approval_required` approves unasked |
//! | `tasks/answer.rs` | the client's next message in the task answers it, through any process on the store: the wait is taken in one conditional statement (one answer goes on, once); a run not waiting here is resumed on the session, the answer given again to the same question, a call that had started reported interrupted unless its tool is idempotent; another user's message finds no task |
//! | `tasks.rs` (credentials) | a run whose tool call came back with a missing credential ends in `AUTH_REQUIRED`, the guidance its status message; the client's next message in the task runs it again |
//! | `events.rs` | every state change is a `statusUpdate`; a blocking send returns at the end or at `INPUT_REQUIRED`/`AUTH_REQUIRED` |
//! | `store/` | every read names the user: another user's task is `TaskNotFound`, as a missing one; tasks left running by a dead process become `FAILED` |
//! | `model/error.rs` | the specification's codes and reasons |
//! | `limits.rs` | every bound in its range when the handler is built; a stream holds its place in its user's bound until it is dropped |
//!
//! Tasks live in a [`TaskStore`]: [`MemoryTaskStore`], (feature `sqlite`,
//! default) `SqliteTaskStore` in the sessions' database file, or (feature
//! `postgres`) `PostgresTaskStore` for a fleet on one database.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "server")]
mod binding;
#[cfg(feature = "server")]
mod body;
#[cfg(feature = "server")]
mod card;
#[cfg(feature = "server")]
mod error;
#[cfg(feature = "server")]
mod events;
#[cfg(feature = "server")]
mod limits;
#[cfg(feature = "server")]
mod methods;
pub mod model;
#[cfg(feature = "server")]
pub mod push;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
pub mod store;
#[cfg(feature = "server")]
mod stream;
#[cfg(feature = "server")]
mod tasks;

/// Who may call the server: the types [`A2aServer`]'s `tokens`, `oauth`
/// and `users` take, from `oscova-serve` (the MCP server takes the same),
/// so a host needs no dependency on that crate to serve A2A.
#[cfg(feature = "server")]
pub mod auth {
    pub use oscova_serve::{OAuthConfig, UserDirectory, UserToken};
}

#[cfg(feature = "server")]
pub use binding::FollowUpHook;
#[cfg(feature = "server")]
pub use body::A2aBody;
#[cfg(feature = "server")]
pub use card::CardConfig;
#[cfg(feature = "server")]
pub use error::ServeA2aError;
#[cfg(feature = "server")]
pub use limits::Limits;
pub use model::A2aError;
#[cfg(feature = "server")]
pub use server::{A2aHandler, A2aServer, BoundA2aServer, RESTART_REASON};
#[cfg(feature = "postgres")]
pub use store::PostgresTaskStore;
#[cfg(feature = "sqlite")]
pub use store::SqliteTaskStore;
#[cfg(feature = "server")]
pub use store::{MemoryTaskStore, TaskStore};

// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
