//! Integration tests of `oscova-cli`: the `oscova` binary and the library, end to end.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

mod support;
mod validators;

pub mod a2a;
pub mod a2a_follow;
pub mod a2a_waits;
pub mod chat;
pub mod chat_extensions;
pub mod cli;
pub mod docs;
pub mod embedded;
pub mod embedding;
pub mod endpoint_scope;
pub mod files_root;
pub mod guard;
pub mod hardening;
pub mod kokoro;
pub mod mcp;
pub mod mcp_ext_prompts;
pub mod mcp_gateway;
pub mod mcp_http;
pub mod mcp_login;
pub mod mcp_offer;
pub mod mcp_upstream;
pub mod mcp_waits;
pub mod mcp_waits_stdio;
pub mod models;
pub mod network;
pub mod outside_crate;
pub mod piper;
pub mod profiles;
pub mod results;
pub mod secrets;
pub mod serve;
pub mod sessions;
pub mod sessions_compact;
#[cfg(unix)]
pub mod sessions_crash;
#[cfg(unix)]
pub mod sessions_recover;
pub mod sessions_retry;
pub mod sessions_store;
pub mod sessions_waits;
pub mod speech;
pub mod speech_plugins;
#[cfg(feature = "whisper")]
pub mod speech_whisper;
pub mod terminal;
pub mod traces;
pub mod trusted_files;
#[cfg(feature = "voice")]
pub mod voice;
#[cfg(feature = "voice")]
pub mod voice_web;
