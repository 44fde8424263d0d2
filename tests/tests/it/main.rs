//! Integration tests of `oscova-tests`: plugin crates linked into one binary, failure isolation, link-time collection.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

pub mod approval;
pub mod context;
pub mod host_failures;
pub mod lifecycle;
pub mod linking;
pub mod load_order;
pub mod null_rows;
pub mod offline_resolution;
