//! Offline routing: a table of endpoints through both routers, with spy
//! providers that count how often they are entered. A refused endpoint never
//! reaches the provider; an accepted one reaches it exactly once.

use crate::common;

use std::sync::Arc;

use common::spy::Spy;
use common::{recognition_router, synthesis_router};
use oscova_speech::{
    RecognitionRequest, SpeechError, SpeechProviderConfig, SpeechRecognitionRouter,
    SpeechSynthesisRouter, SynthesisRequest, providers::FliteSynthesizer, providers::OpenAiSpeech,
    providers::PocketsphinxRecognizer,
};

/// (endpoint, local). Where a form is ambiguous between URL parsers it is
/// "not local"; `oscova_core::locality::is_local_endpoint` documents each rule.
const ENDPOINTS: &[(&str, bool)] = &[
    // Local.
    ("http://127.0.0.1", true),
    ("http://127.0.0.1:8080/v1", true),
    ("http://127.8.9.10:9000", true),
    ("http://127.255.255.254", true),
    ("http://[::1]", true),
    ("http://[::1]:8000/", true),
    ("http://[0:0:0:0:0:0:0:1]", true),
    ("http://[::ffff:127.0.0.1]", true),
    ("http://[::FFFF:7f00:1]", true),
    ("http://localhost", true),
    ("http://localhost:11434", true),
    ("https://localhost/", true),
    ("http://LOCALHOST.", true),
    ("HTTP://LocalHost", true),
    ("http://api.localhost", true),
    ("http://user:pw@127.0.0.1", true),
    ("http://127.0.0.1/@evil.com", true),
    ("localhost:8080", true),
    ("unix:/run/tts.sock", true),
    ("unix:///run/tts.sock", true),
    ("file:///models/en-us", true),
    // Not local.
    ("http://127.0.0.1.example.com", false),
    ("http://localhost.example.com", false),
    ("http://127.0.0.1@example.com", false),
    ("http://localhost@evil.com", false),
    ("http://a@b@127.0.0.1", false),
    ("http://example.com#@127.0.0.1", false),
    ("http://example.com?@127.0.0.1", false),
    ("http://example.com\\@127.0.0.1", false),
    ("http://0.0.0.0", false),
    ("http://[::]", false),
    ("http://10.0.0.5", false),
    ("http://192.168.1.2", false),
    ("http://169.254.169.254", false),
    ("http://2130706433", false),
    ("http://0x7f.1", false),
    ("http://0177.0.0.1", false),
    ("http://127.1", false),
    ("http://127.0.0.1.", false),
    ("http://[::1%25lo]", false),
    ("http://%6c%6fcalhost", false),
    ("http://localhost:99999", false),
    ("http:///localhost", false),
    ("//localhost", false),
    ("ftp://localhost", false),
    (" http://localhost", false),
    ("", false),
    ("garbage", false),
    ("not a url at all", false),
    ("https://api.openai.com", false),
];

#[test]
fn the_table_is_large_and_balanced() {
    assert!(ENDPOINTS.len() >= 40, "{}", ENDPOINTS.len());
    let local = ENDPOINTS.iter().filter(|(_, local)| *local).count();
    assert!(local >= 15 && ENDPOINTS.len() - local >= 20);
}

fn routers(spy: &Spy) -> (SpeechRecognitionRouter, SpeechSynthesisRouter) {
    let recognition = SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .builtin(OpenAiSpeech::default())
        .plugin("test.spy", "common::spy::Spy", Arc::new(spy.clone()))
        .build();
    let synthesis = SpeechSynthesisRouter::builder()
        .builtin(FliteSynthesizer::new())
        .builtin(OpenAiSpeech::default())
        .plugin("test.spy", "common::spy::Spy", Arc::new(spy.clone()))
        .build();
    (recognition, synthesis)
}

#[tokio::test]
async fn offline_endpoints_through_both_routers() {
    let recognizer_spy = Spy::new("test.spy").answering("heard");
    let synthesizer_spy = Spy::new("test.spy").answering("RIFF");
    let (recognition, _) = routers(&recognizer_spy);
    let (_, synthesis) = routers(&synthesizer_spy);

    for (index, &(endpoint, local)) in ENDPOINTS.iter().enumerate() {
        let config = SpeechProviderConfig::new("test.spy").endpoint(endpoint);
        let before = (recognizer_spy.calls(), synthesizer_spy.calls());

        let heard = recognition
            .recognize(RecognitionRequest::new(&config, b"audio").offline(true))
            .await;
        let spoken = synthesis
            .synthesize(SynthesisRequest::new(&config, "text").offline(true))
            .await;

        let entered = (
            recognizer_spy.calls() - before.0,
            synthesizer_spy.calls() - before.1,
        );
        if local {
            assert_eq!(heard.unwrap().text, "heard", "{endpoint:?}");
            assert_eq!(spoken.unwrap().wav, b"RIFF", "{endpoint:?}");
            assert_eq!(entered, (1, 1), "{endpoint:?} must be routed once");
        } else {
            for err in [heard.unwrap_err(), spoken.unwrap_err()] {
                assert!(
                    matches!(
                        err,
                        SpeechError::NotLocal {
                            what: "endpoint",
                            ..
                        }
                    ),
                    "{endpoint:?}: {err:?}"
                );
                assert!(
                    err.to_string().starts_with("offline operation is required"),
                    "{err}"
                );
            }
            assert_eq!(entered, (0, 0), "{endpoint:?} reached the provider");
        }
        // The same endpoint online is always routed.
        recognition
            .recognize(RecognitionRequest::new(&config, b"audio"))
            .await
            .unwrap();
        synthesis
            .synthesize(SynthesisRequest::new(&config, "text"))
            .await
            .unwrap();
        assert_eq!(recognizer_spy.calls(), before.0 + entered.0 + 1, "{index}");
        assert_eq!(synthesizer_spy.calls(), before.1 + entered.1 + 1, "{index}");
    }
    let accepted = ENDPOINTS.iter().filter(|(_, local)| *local).count();
    assert_eq!(recognizer_spy.calls(), accepted + ENDPOINTS.len());
    assert_eq!(synthesizer_spy.calls(), accepted + ENDPOINTS.len());
}

#[tokio::test]
async fn offline_download_urls_through_both_routers() {
    let spy = Spy::new("test.spy").local_by_design();
    let (recognition, synthesis) = routers(&spy);
    let config = SpeechProviderConfig::new("test.spy");
    for &(url, local) in ENDPOINTS {
        let before = spy.calls();
        let heard = recognition
            .recognize(
                RecognitionRequest::new(&config, b"audio")
                    .download_url(Some(url))
                    .offline(true),
            )
            .await;
        let spoken = synthesis
            .synthesize(
                SynthesisRequest::new(&config, "text")
                    .download_url(Some(url))
                    .offline(true),
            )
            .await;
        if local {
            assert!(heard.is_ok() && spoken.is_ok(), "{url:?}");
            assert_eq!(spy.calls(), before + 2, "{url:?}");
        } else {
            for err in [heard.unwrap_err(), spoken.unwrap_err()] {
                assert!(
                    matches!(
                        err,
                        SpeechError::NotLocal {
                            what: "download URL",
                            ..
                        }
                    ),
                    "{url:?}: {err:?}"
                );
            }
            assert_eq!(spy.calls(), before, "{url:?} reached the provider");
        }
    }
}

#[tokio::test]
async fn no_endpoint_is_local_only_for_providers_local_by_design() {
    let remote_by_design = Spy::new("test.spy");
    let (recognition, synthesis) = routers(&remote_by_design);
    let config = SpeechProviderConfig::new("test.spy");
    let err = recognition
        .recognize(RecognitionRequest::new(&config, b"audio").offline(true))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::NoLocalEndpoint { ref key } if key == "test.spy"));
    let err = synthesis
        .synthesize(SynthesisRequest::new(&config, "text").offline(true))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SpeechError::NoLocalEndpoint { .. }),
        "{err:?}"
    );
    assert_eq!(remote_by_design.calls(), 0);

    let local_by_design = Spy::new("test.spy").local_by_design();
    let (recognition, synthesis) = routers(&local_by_design);
    recognition
        .recognize(RecognitionRequest::new(&config, b"audio").offline(true))
        .await
        .unwrap();
    synthesis
        .synthesize(SynthesisRequest::new(&config, "text").offline(true))
        .await
        .unwrap();
    assert_eq!(local_by_design.calls(), 2);

    // A configured endpoint decides even for a provider local by design.
    let remote = SpeechProviderConfig::new("test.spy").endpoint("https://tts.example.com");
    let err = synthesis
        .synthesize(SynthesisRequest::new(&remote, "text").offline(true))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::NotLocal { .. }), "{err:?}");
    assert_eq!(local_by_design.calls(), 2);
}

#[test]
fn built_in_providers_offline() {
    let recognition = recognition_router();
    let synthesis = synthesis_router();
    // Local by design.
    assert!(
        recognition
            .resolve(&SpeechProviderConfig::new("pocketsphinx"), true, None)
            .is_ok()
    );
    assert!(
        synthesis
            .resolve(&SpeechProviderConfig::new("flite"), true, None)
            .is_ok()
    );
    // openai: only with a local endpoint.
    let openai = SpeechProviderConfig::new("openai");
    for result in [
        recognition.resolve(&openai, true, None).map(|_| ()),
        synthesis.resolve(&openai, true, None).map(|_| ()),
    ] {
        let err = result.unwrap_err();
        assert_eq!(
            err.to_string(),
            "offline operation is required, but provider `openai` has no local endpoint configured"
        );
    }
    let local = openai.clone().endpoint("http://127.0.0.1:8000");
    assert!(recognition.resolve(&local, true, None).is_ok());
    assert!(synthesis.resolve(&local, true, None).is_ok());
    // Not offline: anything goes.
    assert!(recognition.resolve(&openai, false, None).is_ok());
}

#[tokio::test]
async fn unknown_keys_list_the_known_ones() {
    let spy = Spy::new("test.spy");
    let (recognition, synthesis) = routers(&spy);
    for key in ["", "Flite", "acme.nothing", "openai "] {
        let config = SpeechProviderConfig::new(key);
        let err = recognition
            .recognize(RecognitionRequest::new(&config, b"audio"))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "no speech provider has type `{key}`; known types: openai, pocketsphinx, test.spy"
            )
        );
        let err = synthesis
            .synthesize(SynthesisRequest::new(&config, "text").offline(true))
            .await
            .unwrap_err();
        let SpeechError::UnknownProvider { known, .. } = err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(known, ["flite", "openai", "test.spy"]);
    }
    assert_eq!(spy.calls(), 0);
}
