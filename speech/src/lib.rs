//! Speech for Oscova: routers that pick a recognition or synthesis provider by
//! its stable type key, refuse to leave the machine when offline operation is
//! required, and the built-in providers behind them.
//!
//! | type key | provider | direction | local |
//! |---|---|---|---|
//! | `flite` | [`FliteSynthesizer`](providers::FliteSynthesizer) (the `flite` program) | synthesis | yes |
//! | `pocketsphinx` | `PocketsphinxRecognizer` (libpocketsphinx, US English; feature `pocketsphinx`, on by default) | recognition | yes |
//! | `openai` | [`OpenAiSpeech`](providers::OpenAiSpeech) (any OpenAI-compatible server) | both | only with a local endpoint |
//! | `kokoro` | `KokoroSynthesizer` (Kokoro-82M on onnxruntime, feature `piper`; the default synthesizer when installed) | synthesis | yes |
//! | `piper` | `PiperSynthesizer` (Piper voices on onnxruntime, feature `piper`) | synthesis | yes |
//! | `whisper` | `WhisperRecognizer` (whisper.cpp; feature `whisper`) | recognition | yes |
//!
//! Any other key a plugin registers routes the same way; [`SpeechProviderKeys`]
//! is a list of well-known keys, not an allow-list.
//!
//! The crate root holds what most code names: the routers, the requests
//! and results, the provider traits and their error. The rest lives in
//! four modules, by concept:
//!
//! - [`router`]: the one generic [`Router`](router::Router) and its
//!   [`RouterBuilder`](router::RouterBuilder) behind both directions,
//!   where a provider came from, and the warning kind for a dropped one;
//! - [`providers`]: the built-in providers (one folder each in the
//!   source, and the one list that registers them), their defaults as
//!   associated constants (`FliteSynthesizer::DEFAULT_VOICE`,
//!   `WhisperRecognizer::INSTALL_COMMAND`, …), and which one a host uses
//!   when nothing names one;
//! - [`wav`]: WAV decoding, encoding and header checks, for recognizers
//!   and for provider authors;
//! - [`stream`]: streaming recognition (frames in as they arrive, partial
//!   transcripts, a final one), opened through
//!   [`SpeechRecognitionRouter::open_stream`](router::Router::open_stream).
//!
//! Size caps hold for every provider, for callers that go through the
//! routers: [`SpeechSynthesisRouter::synthesize`](router::Router::synthesize)
//! speaks at most [`SpeechSynthesisRouter::MAX_CHARS`](router::Router::MAX_CHARS)
//! characters (5,000, refused before the provider is entered) into at most
//! [`MAX_SECONDS`](router::Router::MAX_SECONDS) of audio (600 s, refused
//! before the caller sees it; audio that is not WAV, whose length is
//! unknown, at most [`MAX_ENCODED_BYTES`](router::Router::MAX_ENCODED_BYTES),
//! 600 s at 512 kbit/s); a provider taken from `resolve` and called
//! directly is not capped. [`decode_wav`](wav::decode_wav), which the local
//! recognizers use, takes at most [`wav::MAX_AUDIO_SECONDS`] (300 s). Each
//! refusal is an `InvalidText` or `InvalidAudio` error that says the limit.
//!
//! # 1. Route a synthesis
//!
//! A host builds the routers once from its [`PluginHost`](oscova_core::PluginHost),
//! then hands each operation its configuration and session input. With
//! `offline(true)` a provider that would leave the machine is refused before
//! it is called.
//!
//! ```no_run
//! use oscova_core::PluginHost;
//! use oscova_speech::{SpeechProviderConfig, SpeechRouters, SynthesisRequest};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder().build()?;
//! let routers = SpeechRouters::from_host(&host);
//!
//! let config = SpeechProviderConfig::new("flite");
//! let audio = routers
//!     .synthesis()
//!     .synthesize(SynthesisRequest::new(&config, "Hello from Oscova.").voice(Some("slt")).offline(true))
//!     .await?;
//! std::fs::write("hello.wav", &audio.wav)?;
//! # Ok(()) }
//! ```
//!
//! # 2. Route a recognition
//!
//! The host resolves the API key (a [`SecretString`]) for remote providers;
//! local ones ignore it. Audio is WAV bytes in any common PCM layout.
//!
//! ```no_run
//! use oscova_core::PluginHost;
//! use oscova_speech::{RecognitionRequest, SecretString, SpeechProviderConfig, SpeechRouters};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder().build()?;
//! let routers = SpeechRouters::from_host(&host);
//! let wav = std::fs::read("hello.wav")?;
//!
//! // Locally:
//! let local = SpeechProviderConfig::new("pocketsphinx");
//! let heard = routers.recognition().recognize(RecognitionRequest::new(&local, &wav)).await?;
//! println!("pocketsphinx heard: {}", heard.text);
//!
//! // Remotely, with a key; offline this would be refused before any request.
//! let key = SecretString::from(std::env::var("OPENAI_API_KEY")?);
//! let remote = SpeechProviderConfig::new("openai").model("whisper-1");
//! let heard = routers
//!     .recognition()
//!     .recognize(RecognitionRequest::new(&remote, &wav).api_key(Some(&key)))
//!     .await?;
//! println!("openai heard: {}", heard.text);
//! # Ok(()) }
//! ```
//!
//! Long audio: a request may carry a progress sink, called with seconds
//! heard of the whole as the provider goes (whisper: before each
//! 30-second window, then all of it at the end; providers that cannot
//! tell say nothing), and the transcript's `segments` carry start and end
//! times where the provider has them (whisper does). The sink may be called
//! from a blocking thread, so it only hands the update on:
//!
//! ```no_run
//! use std::sync::Arc;
//! use oscova_speech::{RecognitionProgress, RecognitionRequest, SpeechProviderConfig, SpeechRouters};
//!
//! # async fn demo(routers: &SpeechRouters, wav: Vec<u8>) -> Result<(), oscova_speech::SpeechError> {
//! let config = SpeechProviderConfig::new("whisper");
//! let progress = Arc::new(|p: RecognitionProgress| {
//!     eprintln!("{:.0} % ({:.1} of {:.1} s)", p.fraction() * 100.0, p.seconds_done, p.seconds_total)
//! });
//! let heard = routers
//!     .recognition()
//!     .recognize(RecognitionRequest::new(&config, &wav).offline(true).progress(progress))
//!     .await?;
//! for part in &heard.segments {
//!     println!("{:7.2} {:7.2} {}", part.start_seconds, part.end_seconds, part.text);
//! }
//! # Ok(()) }
//! ```
//!
//! # 3. Add a custom provider through a plugin
//!
//! Implement the provider trait, register it in your plugin's `configure`,
//! and it is routable by its key with no other wiring. Built-in providers win
//! a key collision; between plugins the first registration wins, first in
//! the host's load order, which does not depend on the linker (the host's
//! explicit plugin list in its order, then every other linked plugin sorted
//! by normalised id, then type name; see `PluginHostBuilder::build`); each
//! dropped provider is a warning in the router's `diagnostics()`.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_speech::wav::{Pcm16kMono, encode_wav};
//! use oscova_speech::{
//!     BoxFuture, ProviderTypeKey, SpeechError, SpeechProviderConfig, SpeechSynthesisProvider,
//!     SpeechSynthesisRouter, SynthesisRequest, SynthesizedAudio,
//! };
//!
//! /// Speaks every text as a moment of silence.
//! struct Silence;
//!
//! impl SpeechSynthesisProvider for Silence {
//!     fn type_key(&self) -> ProviderTypeKey {
//!         ProviderTypeKey::from_static("acme.silence")
//!     }
//!     fn display_name(&self) -> &str {
//!         "Acme silence"
//!     }
//!     fn default_is_local_endpoint(&self) -> bool {
//!         true // nothing leaves the machine
//!     }
//!     fn synthesize<'a>(
//!         &'a self,
//!         request: SynthesisRequest<'a>,
//!     ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
//!         let samples = vec![0; 160 * request.text.len()];
//!         Box::pin(async move { Ok(SynthesizedAudio { wav: encode_wav(&Pcm16kMono { samples }) }) })
//!     }
//! }
//!
//! #[plugin(id = "acme.silence")]
//! pub struct SilencePlugin;
//!
//! impl AgentPlugin for SilencePlugin {
//!     fn configure(&self, builder: &mut AgentPluginBuilder) {
//!         builder.add_speech_synthesis_provider(|_: &ProviderContext| Silence);
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let host = PluginHost::builder().build()?;
//! let router = SpeechSynthesisRouter::from_host(&host);
//! let config = SpeechProviderConfig::new("acme.silence");
//! let audio = router.synthesize(SynthesisRequest::new(&config, "hi").offline(true)).await?;
//! assert_eq!(audio.wav.len(), 44 + 2 * 320);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What routing checks
//!
//! [`resolve`](router::Router::resolve), the same for both directions, is
//! the whole decision, made before a provider runs: the exact type key
//! (an unknown key is [`SpeechError::UnknownProvider`] listing the known
//! ones), then, when offline operation is required, the configured endpoint
//! and download URL must pass [`oscova_core::locality::is_local_endpoint`], and a
//! configuration without an endpoint is accepted only for a provider that is
//! local by design. The table is precomputed, so this costs well under a
//! microsecond.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
#[cfg(feature = "piper")]
mod onnx;
pub mod providers;
pub mod router;
pub mod stream;
#[cfg(feature = "voice")]
pub mod voice;
pub mod wav;

pub use router::{SpeechRecognitionRouter, SpeechRouters, SpeechSynthesisRouter};

/// The speech contracts of `oscova-core`, so provider authors need one import.
pub use oscova_core::provider::speech::{
    RecognitionProgress, RecognitionProgressSink, RecognitionRequest, SpeechError,
    SpeechProviderConfig, SpeechProviderKeys, SpeechRecognitionProvider, SpeechSynthesisProvider,
    SynthesisRequest, SynthesizedAudio, Transcript, TranscriptSegment,
};
pub use oscova_core::provider::{BoxFuture, ProviderTypeKey};
pub use oscova_core::{CancellationToken, SecretString};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
