//! The A2A server over a real plugin host, a real session store and a
//! scripted model provider registered by a plugin: raw HTTP for the
//! protocol's edges (`protocol`), the official Python SDK's client for the
//! rest (`sdk`), and the official JavaScript SDK's client over both
//! bindings (`js`).

mod auth_required;
#[cfg(feature = "sqlite")]
mod durable;
#[cfg(feature = "postgres")]
mod fleet;
mod hops;
mod js;
mod oauth;
mod protocol;
mod push;
mod push_bounds;
mod sdk;
mod stores;
mod support;
