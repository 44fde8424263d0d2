//! The integration tests of `oscova-agent`, one binary (as cargo and axum
//! do): a module per concern.

// Fixture plugins and toolsets are `pub` for the macros' sake.
#![allow(unreachable_pub)]

#[cfg(feature = "session")]
mod agent;
mod batch;
mod chat;
#[cfg(feature = "sqlite")]
mod session;
#[cfg(feature = "voice")]
mod voice;
