//! The A2A server over a real plugin host, a real session store and a
//! scripted model provider registered by a plugin: raw HTTP for the
//! protocol's edges (`protocol`), and the official client SDKs
//! (`clients`: Python's and JavaScript's) for the rest, each scenario of
//! `sdk` run with both.

mod auth_required;
mod clients;
#[cfg(feature = "sqlite")]
mod durable;
#[cfg(feature = "postgres")]
mod fleet;
mod hops;
mod oauth;
mod protocol;
mod push;
mod push_bounds;
mod sdk;
mod stores;
mod support;
mod waits;
