//! The built-in providers, one folder each, and the one list that
//! registers them with the routers.
//!
//! Rules: a provider's folder holds everything of its own (engine, files,
//! settings, its error type and its conversion to `SpeechError`, unit
//! tests); what two providers share lives outside both (kokoro and
//! piper's onnxruntime and espeak-ng parts: the private `onnx` module); the
//! only list of built-in providers is `register`, at the end of this file.
//!
//! | folder | type | type key | direction | feature |
//! |---|---|---|---|---|
//! | `flite/` | [`FliteSynthesizer`] (the `flite` program) | `flite` | synthesis | |
//! | `pocketsphinx/` | `PocketsphinxRecognizer`, `ModelPaths` (libpocketsphinx) | `pocketsphinx` | recognition | `pocketsphinx` (default) |
//! | `whisper/` | `WhisperRecognizer` (whisper.cpp) | `whisper` | recognition | `whisper` |
//! | `kokoro/` | `KokoroSynthesizer` (Kokoro-82M on onnxruntime) | `kokoro` | synthesis | `piper` |
//! | `piper/` | `PiperSynthesizer` (Piper voices on onnxruntime) | `piper` | synthesis | `piper` |
//! | `openai/` | [`OpenAiSpeech`] (any OpenAI-compatible server) | `openai` | both | |
//!
//! kokoro and piper share onnxruntime, the espeak-ng phonemizer and one
//! error type through the crate's private `onnx` module, not through each
//! other. Which provider a host uses when nothing names one is
//! [`default_offline_synthesis`] and [`default_offline_recognizer`].
//!
//! # Adding a built-in provider
//!
//! A provider is a type that implements `SpeechRecognitionProvider` or
//! `SpeechSynthesisProvider` (or both), with a stable type key (add it to
//! `SpeechProviderKeys` if it is well known). To make it built in:
//!
//! 1. Put it in a folder of its own here, `src/providers/NAME/mod.rs`, with
//!    its own error type converted to `SpeechError` in the folder (see
//!    `piper/error.rs`), its tests beside it, and `mod NAME;` plus its
//!    `pub use` below.
//! 2. Register it with one line in `register` (below, in this file):
//!    `builtins.recognizer(..)` (or `builtins.streaming_recognizer(..)`
//!    for one that also implements `StreamingRecognizer`),
//!    `builtins.synthesizer(..)` or `builtins.both(..)`, built on the host's HTTP client
//!    (`builtins.http()`) or spawn policy (`builtins.spawn()`) if it uses
//!    them.
//!
//! Every router built from a host, [`SpeechRouters`](crate::SpeechRouters)
//! and each direction's `from_host`, then routes it with the offline
//! checks and the collision rules; nothing else names the list. A provider
//! behind a system library gets a Cargo feature of its own, and its line
//! and `mod` a `#[cfg(feature = "...")]`. A provider that is not built in
//! needs none of this: a plugin registers it (see the crate's docs).

mod defaults;
mod flite;
#[cfg(feature = "piper")]
mod kokoro;
pub(crate) mod openai;
#[cfg(feature = "piper")]
mod piper;
#[cfg(feature = "pocketsphinx")]
mod pocketsphinx;
#[cfg(feature = "whisper")]
pub(crate) mod whisper;

pub use defaults::{
    default_offline_recognizer, default_offline_synthesis, default_offline_synthesizer,
};
pub use flite::FliteSynthesizer;
#[cfg(feature = "piper")]
pub use kokoro::KokoroSynthesizer;
pub use openai::OpenAiSpeech;
#[cfg(feature = "piper")]
pub use piper::PiperSynthesizer;
#[cfg(feature = "pocketsphinx")]
pub use pocketsphinx::{ModelPaths, PocketsphinxRecognizer};
#[cfg(feature = "whisper")]
pub use whisper::WhisperRecognizer;

use crate::router::Builtins;

/// The built-in providers, one line each: what every router built from a
/// host starts with. Built-in providers win a type-key collision with a
/// plugin's; among themselves the first line wins.
pub(crate) fn register(builtins: &mut Builtins) {
    #[cfg(feature = "pocketsphinx")]
    builtins.recognizer(PocketsphinxRecognizer::new());
    builtins.both(OpenAiSpeech::new(builtins.http()));
    #[cfg(feature = "whisper")]
    builtins.streaming_recognizer(WhisperRecognizer::new());
    builtins.synthesizer(FliteSynthesizer::new().with_policy(builtins.spawn()));
    #[cfg(feature = "piper")]
    builtins.synthesizer(KokoroSynthesizer::new().with_policy(builtins.spawn()));
    #[cfg(feature = "piper")]
    builtins.synthesizer(PiperSynthesizer::new().with_policy(builtins.spawn()));
}
