//! Integration tests of `oscova-speech`: the providers and routers against real engines and loopback servers.
//!
//! One test binary for the crate, one module per concern (as cargo and
//! axum lay theirs out), so tokio, reqwest and rustls link once. Test
//! names are `module::test`. The modules are `pub` so their fixtures obey
//! the same `missing_docs`/`unreachable_pub` rules they did as crate roots;
//! helpers shared by several modules are private modules here.

mod common;

pub mod bad_audio;
pub mod collisions;
pub mod kokoro;
pub mod offline_routing;
pub mod openai;
pub mod piper;
pub mod plugin_host;
pub mod round_trip;
pub mod streaming;
#[cfg(feature = "voice")]
pub mod voice;
#[cfg(feature = "whisper")]
pub mod wer;
#[cfg(feature = "whisper")]
pub mod whisper;
#[cfg(feature = "whisper")]
pub mod whisper_stream;
