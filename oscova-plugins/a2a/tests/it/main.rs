//! Integration tests of `oscova-plugin-a2a`: the four tools through a real
//! host (the test kit), against the official A2A Python SDK's server
//! (`scripts/a2a/agents.py`) and, for the boundaries, loopback servers and
//! network namespaces that count the connections made.
//!
//! One test binary for the crate, one module per concern. Test names are
//! `module::test`.

mod support;

pub mod boundaries;
pub mod follow;
pub mod pending;
pub mod sdk;
