//! Helpers shared by the integration tests: routers over the built-in
//! providers, flite audio, a spy provider, a loopback HTTP server and a
//! tracing collector. Word errors come from `oscova_test_support::text`.

#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod http;
// Read only by the whisper tests (`wer`, `whisper`), built with that feature.
#[cfg(feature = "whisper")]
pub mod librivox;
pub mod spy;
pub mod warnings;

use oscova_speech::{
    SpeechProviderConfig, SpeechRecognitionRouter, SpeechSynthesisRouter, SynthesisRequest,
    providers::FliteSynthesizer, providers::OpenAiSpeech, providers::PocketsphinxRecognizer,
};

/// The sentences of the round-trip test.
pub const SENTENCES: [&str; 5] = [
    "the quick brown fox jumps over the lazy dog",
    "please call stella",
    "open the door and turn on the light",
    "what time is it in berlin",
    "the weather today is sunny and warm",
];

/// The built-in recognition providers, as a host without plugins has them.
pub fn recognition_router() -> SpeechRecognitionRouter {
    SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .builtin(OpenAiSpeech::default())
        .build()
}

/// The built-in synthesis providers, as a host without plugins has them.
pub fn synthesis_router() -> SpeechSynthesisRouter {
    SpeechSynthesisRouter::builder()
        .builtin(FliteSynthesizer::new())
        .builtin(OpenAiSpeech::default())
        .build()
}

/// WAV bytes of `text` spoken by flite's `kal16` voice, through a router.
pub async fn speak(text: &str) -> Vec<u8> {
    let config = SpeechProviderConfig::new("flite").voice("kal16");
    synthesis_router()
        .synthesize(SynthesisRequest::new(&config, text).offline(true))
        .await
        .expect("flite synthesis")
        .wav
}
