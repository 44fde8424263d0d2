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
//! # Rules
//!
//! | where | what |
//! |---|---|
//! | (the listener) | before `http.rs`, every path meets the port's Origin and Host policy (`oscova_serve::OriginPolicy`): a foreign browser `Origin` is 403, and on a loopback address a `Host` that is not `localhost` or a loopback IP (DNS rebinding) |
//! | `http.rs` | the card is public; with a follow-up hook ([`A2aServer::followups`]), `POST /a2a/followups/{id}` is answered by the hook on the id and the `X-A2A-Notification-Token` header alone (200 or 401; the body never read); everything else needs a user's bearer token; `A2A-Version` 1.0 or `VersionNotSupportedError` (-32009); body cap (413); JSON-RPC at `/`, HTTP+JSON at `/message:send`, `/tasks`, `/tasks/{id}`, `/tasks/{id}:cancel` |
//! | `rpc.rs` | the methods: `SendMessage` (blocking unless `returnImmediately`), `GetTask`, `ListTasks`, `CancelTask`, the push config methods; the extended card's error when none is configured (`http.rs` answers a configured one) |
//! | `push.rs` | webhooks kept in the task store, owner-scoped, their secrets never answered; bounded per task and per user (`UnsupportedOperationError` past either, checked in the store's write); status updates POSTed to them through the host's HTTP client (`Internet` scope: private and loopback refused unless allowed), with the config's `Authorization`, retried up to three attempts; a run's final state owed until every webhook took it, swept after a restart |
//! | `stream.rs` | `SendStreamingMessage`, `SubscribeToTask` as server-sent events: the task, then status and artifact updates, closed at a terminal state; per-user bound on streams; a run on another instance followed through the store, its chunks through the store's relay |
//! | `relay.rs`, `pg_relay.rs` | a run's events published through a store several processes share (Postgres `NOTIFY` per task, text joined for 50 ms, payloads under 8000 bytes), so a subscriber on any instance gets the model's text |
//! | `tasks.rs` | a context is the user's session `a2a:<contextId>`; a task is one run; runs of one context in turn; per-user bound on running tasks; every state stored before it is told |
//! | `ask.rs` | a tool's question puts the task in `INPUT_REQUIRED`; the client's next message in the task answers it |
//! | `tasks.rs` (credentials) | a run whose tool call came back with a missing credential ends in `AUTH_REQUIRED`, the guidance its status message; the client's next message in the task runs it again |
//! | `events.rs` | every state change is a `statusUpdate`; a blocking send returns at the end or at `INPUT_REQUIRED`/`AUTH_REQUIRED` |
//! | `store.rs` | every read names the owner: another user's task is `TaskNotFound`, as a missing one; tasks left running by a dead process become `FAILED` |
//! | `error.rs` | the specification's codes and reasons |
//!
//! Tasks live in a [`TaskStore`]: [`MemoryTaskStore`], (feature `sqlite`,
//! default) `SqliteTaskStore` in the sessions' database file, or (feature
//! `postgres`) `PostgresTaskStore` for a fleet on one database.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod ask;
mod card;
mod error;
mod events;
mod http;
pub mod model;
mod push;
mod rpc;
mod server;
mod store;
mod stream;
mod tasks;

/// Who may call the server: the types [`A2aServer`]'s `tokens`, `oauth`
/// and `users` take, from `oscova-serve` (the MCP server takes the same),
/// so a host needs no dependency on that crate to serve A2A.
pub mod auth {
    pub use oscova_serve::{OAuthConfig, UserDirectory, UserToken};
}

pub use card::{CardConfig, Skill};
pub use error::ServeA2aError;
pub use model::A2aError;
pub use http::{A2aBody, CARD_PATH, FOLLOWUPS_PATH, FollowUpHook, VERSION_HEADER};
#[cfg(feature = "postgres")]
pub use store::PostgresTaskStore;
pub use push::{
    CLAIM_LEASE, DEFAULT_MAX_PUSH_CONFIGS_PER_TASK, DEFAULT_MAX_PUSH_CONFIGS_PER_USER, MAX_CLAIMS,
    PushAuthentication, PushConfig, PushLimits, PushWrite, SWEEP_EVERY,
};
pub use server::{
    A2aServer, A2aService, BoundA2aServer, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_STREAMS_PER_USER,
    DEFAULT_MAX_TASKS_PER_USER, DEFAULT_STREAM_IDLE_TIMEOUT, MAX_BODY_BYTES_RANGE,
    MAX_PUSH_CONFIGS_RANGE, MAX_STREAMS_PER_USER_RANGE, MAX_TASKS_PER_USER_RANGE, RESTART_REASON,
    STREAM_IDLE_TIMEOUT_RANGE,
};
#[cfg(feature = "sqlite")]
pub use store::SqliteTaskStore;
pub use store::{MemoryTaskStore, Relayed, StoreError, TaskPage, TaskQuery, TaskStore};

// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
