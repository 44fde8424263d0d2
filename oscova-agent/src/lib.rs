//! Host-side conveniences built on the Oscova contract.
//!
//! `oscova-core` is the contract: plugins, the host, user scopes, the
//! provider traits. This crate is what a host (or a back end) builds on top
//! of it, using nothing but core's public API:
//!
//! | module | feature | what it is |
//! |---|---|---|
//! | `chat` | `chat` (default) | the tool-calling chat loop over one user scope and one model provider |
//! | `profile` | `profile` (default) | tool input schemas exported in the dialects model APIs accept |
//! | `session` | `session` (by `sqlite`, default) | sessions: the entry tree (pi's format v3), the context built from a branch, compaction (`session::compaction`), the `SessionStore` trait and the in-memory store |
//! | `session::SqliteStore` | `sqlite` (default) | the embedded session store: one SQLite file, WAL |
//! | `session::PostgresStore` | `postgres` | the session store for several processes or machines |
//!
//! The protocol front ends are crates of their own (`oscova-mcp`, over the
//! serving pieces of `oscova-serve`), and the HTTP plumbing model and
//! speech back ends share is `oscova_core::http::backend`.
//!
//! # A chat over a user scope
//!
//! ```no_run
//! # #[cfg(feature = "chat")]
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use oscova_agent::chat::{ChatLoopOptions, model_provider, run_chat};
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ChatMessage, ModelProviderConfig};
//!
//! let host = PluginHost::builder().build()?; // every linked plugin
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let provider = model_provider(&host, "ollama").ok_or("no ollama provider is linked")?;
//! let config = ModelProviderConfig::new("ollama").model("llama3.2");
//! let mut messages = vec![ChatMessage::user("What time is it in Tokyo?")];
//! let outcome = run_chat(&scope, &*provider, &config, &mut messages).await?;
//! println!("{}", outcome.message.content);
//! # Ok(())
//! # }
//! ```

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "chat")]
pub mod chat;
#[cfg(feature = "profile")]
pub mod profile;
#[cfg(feature = "session")]
pub mod session;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
