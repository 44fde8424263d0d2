//! Type-key collisions: built-in providers win over plugins whatever the
//! registration order, the first plugin wins over later ones, and every
//! dropped implementation is an operator warning (a `tracing` event and a
//! diagnostic) that names it.

use crate::common;

use std::sync::Arc;

use common::spy::Spy;
use common::warnings::Warnings;
use oscova_core::diagnostic::Severity;
use oscova_speech::{
    RecognitionRequest, SpeechProviderConfig, SpeechRecognitionRouter, SpeechSynthesisRouter,
    SynthesisRequest, providers::FliteSynthesizer, providers::OpenAiSpeech,
    providers::PocketsphinxRecognizer, router::PROVIDER_DROPPED, router::ProviderOrigin,
};

#[tokio::test]
async fn built_in_beats_plugin_whatever_the_order() {
    let impostor = Spy::new("flite").local_by_design();
    let warnings = Warnings::default();
    let router = warnings.capture(|| {
        SpeechSynthesisRouter::builder()
            .plugin(
                "acme.tts",
                "acme_tts::FakeFlite",
                Arc::new(impostor.clone()),
            )
            .builtin(FliteSynthesizer::new())
            .build()
    });

    assert_eq!(
        router.origin("flite"),
        Some(&ProviderOrigin::BuiltIn {
            type_name: "oscova_speech::providers::flite::FliteSynthesizer".to_owned()
        })
    );
    let [diagnostic] = router.diagnostics() else {
        panic!("{:?}", router.diagnostics());
    };
    assert_eq!(diagnostic.kind, PROVIDER_DROPPED);
    assert_eq!(diagnostic.severity, Severity::Warning);
    assert_eq!(diagnostic.plugin.as_deref(), Some("acme.tts"));
    assert_eq!(
        diagnostic.message,
        "speech synthesis provider `acme_tts::FakeFlite` from plugin `acme.tts` was dropped: \
         type key `flite` is already taken by built-in `oscova_speech::providers::flite::FliteSynthesizer` \
         (built-in providers take precedence over plugin providers)"
    );
    let logged = warnings.lines();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].contains(&diagnostic.message), "{logged:?}");
    assert!(logged[0].contains("acme.tts"), "{logged:?}");

    // The plugin's provider is never entered.
    let config = SpeechProviderConfig::new("flite");
    let audio = router
        .synthesize(SynthesisRequest::new(&config, "hello").offline(true))
        .await
        .unwrap();
    assert_eq!(&audio.wav[..4], b"RIFF");
    assert_eq!(impostor.calls(), 0);
}

#[tokio::test]
async fn first_plugin_beats_later_plugins() {
    let first = Spy::new("acme.asr").answering("first");
    let second = Spy::new("acme.asr").answering("second");
    let third = Spy::new("acme.asr").answering("third");
    let warnings = Warnings::default();
    let router = warnings.capture(|| {
        SpeechRecognitionRouter::builder()
            .plugin("acme.one", "one::Asr", Arc::new(first.clone()))
            .plugin("acme.two", "two::Asr", Arc::new(second.clone()))
            .builtin(PocketsphinxRecognizer::new())
            .plugin("acme.three", "three::Asr", Arc::new(third.clone()))
            .build()
    });

    let origin = router.origin("acme.asr").unwrap();
    assert_eq!(origin.plugin_id(), Some("acme.one"));
    assert_eq!(origin.type_name(), "one::Asr");

    let dropped: Vec<_> = router
        .diagnostics()
        .iter()
        .map(|d| (d.plugin.as_deref().unwrap(), d.message.as_str()))
        .collect();
    assert_eq!(
        dropped,
        [
            (
                "acme.two",
                "speech recognition provider `two::Asr` from plugin `acme.two` was dropped: type key \
                 `acme.asr` is already taken by `one::Asr` from plugin `acme.one` (the first \
                 registration of a type key is kept)"
            ),
            (
                "acme.three",
                "speech recognition provider `three::Asr` from plugin `acme.three` was dropped: type \
                 key `acme.asr` is already taken by `one::Asr` from plugin `acme.one` (the first \
                 registration of a type key is kept)"
            ),
        ]
    );
    assert_eq!(warnings.lines().len(), 2, "{:?}", warnings.lines());

    let config = SpeechProviderConfig::new("acme.asr");
    let heard = router
        .recognize(RecognitionRequest::new(&config, b"audio"))
        .await
        .unwrap();
    assert_eq!(heard.text, "first");
    assert_eq!((first.calls(), second.calls(), third.calls()), (1, 0, 0));
}

#[test]
fn a_second_built_in_for_a_key_is_dropped_too() {
    let warnings = Warnings::default();
    let router = warnings.capture(|| {
        SpeechRecognitionRouter::builder()
            .builtin(OpenAiSpeech::default())
            .builtin(Spy::new("openai"))
            .build()
    });
    let [diagnostic] = router.diagnostics() else {
        panic!("{:?}", router.diagnostics());
    };
    assert_eq!(diagnostic.plugin, None);
    assert!(
        diagnostic
            .message
            .starts_with("built-in speech recognition provider `")
            && diagnostic
                .message
                .contains("common::spy::Spy` was dropped: type key `openai` is already taken by built-in `oscova_speech::providers::openai::OpenAiSpeech` (the first registration of a type key is kept)"),
        "{}",
        diagnostic.message
    );
    assert_eq!(
        router.origin("openai").map(ProviderOrigin::type_name),
        Some("oscova_speech::providers::openai::OpenAiSpeech")
    );
}

#[test]
fn no_collision_no_warning() {
    let warnings = Warnings::default();
    let router = warnings.capture(|| {
        SpeechSynthesisRouter::builder()
            .builtin(FliteSynthesizer::new())
            .builtin(OpenAiSpeech::default())
            .plugin("acme.a", "a::Tts", Arc::new(Spy::new("acme.a")))
            .plugin("acme.b", "b::Tts", Arc::new(Spy::new("acme.b")))
            .build()
    });
    assert!(router.diagnostics().is_empty());
    assert!(warnings.lines().is_empty());
    assert_eq!(router.keys(), ["acme.a", "acme.b", "flite", "openai"]);
}
