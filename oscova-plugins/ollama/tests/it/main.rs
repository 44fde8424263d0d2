//! Integration tests of `oscova-plugin-ollama`: the Ollama provider against loopback servers.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

pub mod chat;
pub mod errors;
pub mod pull;
