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
//! | [`http`] | always | the HTTP plumbing model and speech back ends share: bounded reads, streamed lines, scrubbed errors |
//! | `mcp` | `mcp` | an MCP server serving one user scope over stdio or any `rmcp` transport |
//!
//! Back ends depend on this crate with `default-features = false` and get
//! [`http`] alone; hosts turn on what they use.
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
//! let mut config = ModelProviderConfig::new("ollama");
//! config.model = Some("llama3.2".into());
//! let mut messages = vec![ChatMessage::user("What time is it in Tokyo?")];
//! let outcome = run_chat(&scope, &*provider, &config, None, &mut messages, ChatLoopOptions::new()).await?;
//! println!("{}", outcome.message.content);
//! # Ok(())
//! # }
//! ```
//!
//! # Serving MCP
//!
//! With the `mcp` feature, one user's tools become an MCP server in a few
//! lines (see `mcp::McpServer`):
//!
//! ```no_run
//! # #[cfg(feature = "mcp")]
//! # async fn demo(scope: oscova_core::UserScope) -> Result<(), oscova_agent::mcp::McpError> {
//! oscova_agent::mcp::McpServer::new(scope)
//!     .allow_approval_required(false)
//!     .max_in_flight(16)
//!     .serve_stdio()
//!     .await?;
//! # Ok(())
//! # }
//! ```

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "chat")]
pub mod chat;
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "profile")]
pub mod profile;
