//! Integration tests of `oscova-test-kit`: the kit's own behaviour.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

pub mod capture;
pub mod names;
pub mod network;
pub mod running;
