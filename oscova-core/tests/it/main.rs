//! Integration tests of `oscova-core`: the contract and the host end to end, through real `PluginHost`s and `UserScope`s.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

mod support;

pub mod bad_arguments;
pub mod blocking;
pub mod fs_race;
pub mod hooks;
pub mod internet_scope;
pub mod invoke;
pub mod layers;
pub mod metadata;
pub mod network_scope;
pub mod results;
pub mod runtime;
pub mod secrets;
pub mod services;
pub mod spans;
pub mod spawn;
pub mod spawn_denylist;
pub mod toolset;
