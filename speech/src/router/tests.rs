//! Unit tests of ranking and the offline rules; routing through real
//! providers is in `tests/`.

use super::*;

fn config(endpoint: Option<&str>) -> SpeechProviderConfig {
    let config = SpeechProviderConfig::new("k");
    match endpoint {
        Some(endpoint) => config.endpoint(endpoint),
        None => config,
    }
}

#[test]
fn offline_rules() {
    // (endpoint, provider local by design, download URL, accepted)
    let cases: [(Option<&str>, bool, Option<&str>, bool); 8] = [
        (None, true, None, true),
        (None, false, None, false),
        (Some("http://127.0.0.1:9"), false, None, true),
        (Some("https://api.openai.com"), true, None, false),
        (None, true, Some("file:///models/x"), true),
        (None, true, Some("https://example.com/x"), false),
        (Some("http://localhost"), true, Some("http://[::1]/m"), true),
        (Some(""), true, None, false),
    ];
    for (endpoint, local, url, accepted) in cases {
        let result = check_offline(&config(endpoint), local, url);
        assert_eq!(
            result.is_ok(),
            accepted,
            "{endpoint:?} {local} {url:?}: {result:?}"
        );
    }
}

#[test]
fn refusals_say_what_was_refused_without_user_info() {
    let err = check_offline(
        &config(Some("https://user:pw@api.example.com/v1")),
        true,
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "offline operation is required, but endpoint `https://[REDACTED]@api.example.com/v1` is not on this machine"
    );
    let err = check_offline(&config(None), false, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "offline operation is required, but provider `k` has no local endpoint configured"
    );
    let err = check_offline(&config(None), true, Some("http://10.0.0.1/model.bin")).unwrap_err();
    assert!(
        matches!(
            err,
            SpeechError::NotLocal {
                what: "download URL",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn refused_text_is_escaped_and_capped() {
    let long = format!("http://example.com/{}", "x".repeat(1_000));
    assert!(shown(&long).chars().count() <= 201);
    assert_eq!(shown("http://a\nb"), "http://a\\nb");
}

#[test]
fn origins_display_their_implementation() {
    let builtin = ProviderOrigin::BuiltIn {
        type_name: "oscova_speech::FliteSynthesizer".into(),
    };
    let plugin = ProviderOrigin::Plugin {
        plugin_id: "acme.tts".into(),
        type_name: "acme::Tts".into(),
    };
    assert_eq!(
        builtin.to_string(),
        "built-in `oscova_speech::FliteSynthesizer`"
    );
    assert_eq!(plugin.to_string(), "`acme::Tts` from plugin `acme.tts`");
    assert_eq!(plugin.plugin_id(), Some("acme.tts"));
    assert_eq!(builtin.plugin_id(), None);
    assert_eq!(plugin.type_name(), "acme::Tts");
}

#[test]
fn routers_are_shareable_and_their_futures_send() {
    use oscova_core::provider::speech::{RecognitionRequest, SynthesisRequest};

    fn shareable<T: Send + Sync + 'static>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let recognition = SpeechRecognitionRouter::builder().build();
    let synthesis = SpeechSynthesisRouter::builder().build();
    shareable(&recognition);
    shareable(&synthesis);
    let config = SpeechProviderConfig::new("k");
    send(recognition.recognize(RecognitionRequest::new(&config, &[])));
    send(synthesis.synthesize(SynthesisRequest::new(&config, "")));
}
