//! Helpers shared by the integration tests: routers over the built-in
//! providers, flite audio, word error rate, a spy provider, a loopback HTTP
//! server and a tracing collector.

#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod http;
pub mod spy;
pub mod warnings;

use oscova_speech::{
    FliteSynthesizer, OpenAiSpeech, PocketsphinxRecognizer, SpeechProviderConfig,
    SpeechRecognitionRouter, SpeechSynthesisRouter, SynthesisRequest,
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

/// Lowercase words with punctuation stripped.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word-level Levenshtein distance: substitutions + deletions + insertions.
pub fn word_errors(reference: &[String], hypothesis: &[String]) -> usize {
    let mut previous: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut current = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = previous[j] + usize::from(r != h);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[hypothesis.len()]
}
