//! Cross-crate integration tests for Oscova for Rust; the tests are in
//! `tests/`. This library only links the plugin crates under test, the
//! way a host binary would.

pub use example_hello_plugin;
pub use oscova_test_plugin_alpha;
pub use oscova_test_plugin_beta;
