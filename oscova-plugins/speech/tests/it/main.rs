//! Integration tests of `oscova-plugin-speech`: the speech tools through a real host.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

mod support;

pub mod piper;
pub mod progress;
pub mod routing;
pub mod special_files;
pub mod speech;
#[cfg(feature = "whisper")]
pub mod whisper;
