//! Integration tests of `oscova-plugin-mcp`: MCP servers as toolsets (and their prompts and resources through `McpUpstreams`), against real server processes.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

mod support;

pub mod bounds;
pub mod network;
pub mod oauth;
pub mod oauth_user;
pub mod pins;
pub mod servers;
pub mod tasks;
pub mod tasks_rmcp;
pub mod tls;
pub mod upstream;
pub mod url;
