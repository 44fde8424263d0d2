//! Bounded loops: how many A2A hops the message being handled has made.
//!
//! Rules: every message this client sends carries its hop count in the
//! message metadata under [`HOPS_KEY`]: one more than the hops of the
//! inbound message the host is handling when the tool runs (0 when the
//! call did not start from an A2A message). A host that serves A2A reads
//! the count from the inbound message's metadata ([`hops_in`]) and runs
//! the agent's work inside [`with_inbound_hops`] (`oscova-a2a` does); a
//! `send` made there whose inbound count is already at the configured
//! `max_hops` or past it is refused before any connection. The count is
//! the host's task-local of `oscova_core::tool::origin`, re-exported here:
//! it follows the call through the host's invoke pipeline (which polls a
//! tool on the caller's task) and cannot be set by a tool's arguments,
//! that is by the model.

pub use oscova_core::tool::origin::{HOPS_KEY, hops_in, inbound_hops, with_inbound_hops};
