//! The integration tests of `oscova-mcp`, one binary (as cargo and axum
//! do): a module per concern.

// Fixture plugins and toolsets are `pub` for the macros' sake.
#![allow(unreachable_pub)]

#[cfg(feature = "http")]
mod http;
mod offer;
mod python;
mod results;
mod sources;
mod stdio;
mod studio;
