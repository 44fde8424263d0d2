//! A plugin's speech providers, registered through its builder and built by a
//! real `PluginHost`, are routable with no extra wiring; a plugin provider
//! that collides with a built-in key is dropped with a warning naming it.

use crate::common;

use common::spy::Spy;
use oscova_core::HostError;
use oscova_core::prelude::*;
use oscova_speech::{
    RecognitionRequest, SpeechError, SpeechProviderConfig, SpeechRecognitionRouter, SpeechRouters,
    SpeechSynthesisRouter, SynthesisRequest, router::PROVIDER_DROPPED,
};

/// Registers two speech providers and one that collides with `flite`.
#[plugin(id = "test.speech", name = "Test speech")]
pub struct SpeechPlugin;

impl AgentPlugin for SpeechPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder
            .add_speech_recognition_provider(|_: &ProviderContext| {
                Spy::new("test.asr")
                    .local_by_design()
                    .answering("plugin heard")
            })
            .add_speech_synthesis_provider(|_: &ProviderContext| {
                Spy::new("test.tts").answering("RIFF plugin audio")
            })
            // Collides with the built-in `flite`: dropped by the router.
            .add_speech_synthesis_provider(|_: &ProviderContext| {
                Spy::new("flite").answering("impostor")
            });
    }
}

fn host() -> Result<PluginHost, HostError> {
    PluginHost::builder().build()
}

#[tokio::test]
async fn plugin_providers_are_routable_from_the_host() {
    let host = host().unwrap();
    let routers = SpeechRouters::from_host(&host);

    let asr = SpeechProviderConfig::new("test.asr");
    let heard = routers
        .recognition()
        .recognize(RecognitionRequest::new(&asr, b"audio").offline(true))
        .await
        .unwrap();
    assert_eq!(heard.text, "plugin heard");
    let origin = routers.recognition().origin("test.asr").unwrap();
    assert_eq!(origin.plugin_id(), Some("test.speech"));
    assert!(origin.type_name().ends_with("Spy"), "{origin}");

    // Not local by design and no endpoint: refused offline, routed online.
    let tts = SpeechProviderConfig::new("test.tts");
    let err = routers
        .synthesis()
        .synthesize(SynthesisRequest::new(&tts, "hi").offline(true))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SpeechError::NoLocalEndpoint { .. }),
        "{err:?}"
    );
    let audio = routers
        .synthesis()
        .synthesize(SynthesisRequest::new(&tts, "hi"))
        .await
        .unwrap();
    assert_eq!(audio.wav, b"RIFF plugin audio");

    let mut recognition = vec!["openai", "pocketsphinx", "test.asr"];
    if cfg!(feature = "whisper") {
        recognition.push("whisper");
    }
    assert_eq!(routers.recognition().keys(), recognition);
    let mut synthesis = vec!["flite", "openai", "test.tts"];
    if cfg!(feature = "piper") {
        // kokoro runs on piper's onnxruntime, under the same feature.
        synthesis.insert(1, "kokoro");
        synthesis.insert(3, "piper");
    }
    assert_eq!(routers.synthesis().keys(), synthesis);
    host.shutdown().await;
}

#[tokio::test]
async fn a_plugin_cannot_take_a_built_in_key() {
    let host = host().unwrap();
    let router = SpeechSynthesisRouter::from_host(&host);
    let [dropped] = router.diagnostics() else {
        panic!("{:?}", router.diagnostics());
    };
    assert_eq!(dropped.kind, PROVIDER_DROPPED);
    assert_eq!(dropped.kind.code(), "provider_dropped");
    assert_eq!(dropped.plugin.as_deref(), Some("test.speech"));
    assert!(
        dropped
            .message
            .contains("from plugin `test.speech` was dropped")
            && dropped.message.contains("type key `flite`")
            && dropped.message.contains("built-in"),
        "{}",
        dropped.message
    );
    assert!(router.origin("flite").unwrap().plugin_id().is_none());

    // The recognition router has no collision.
    assert!(
        SpeechRecognitionRouter::from_host(&host)
            .diagnostics()
            .is_empty()
    );
    let routers = SpeechRouters::from_host(&host);
    assert_eq!(routers.diagnostics().count(), 1);
    host.shutdown().await;
}
