//! `transcribe` passes a recognizer's progress on as the call's progress,
//! in order and before the result, and always has `segments` in its
//! details; with the test kit's fake recognizer, so it needs no engine
//! (the whisper module has the real one).

use crate::support;

use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
use oscova_speech::SpeechProviderConfig;
use oscova_test_kit::{FakeRecognizer, TestHost, TestUser};
use serde_json::json;
use support::tone_wav;

#[tokio::test]
async fn a_recognizers_progress_becomes_the_calls_in_order() {
    let ears = FakeRecognizer::new("fake-ears")
        .reports_progress([0.0, 24.874_4, 40.12], 40.12)
        .hears("open the door");
    let plugin = SpeechPlugin::default().settings(|_| {
        SpeechSettings::default().recognition(SpeechProviderConfig::new("fake-ears"))
    });
    let kit = TestHost::builder()
        .speech_recognition_provider(ears.clone())
        .plugin_instance(plugin)
        .user(TestUser::new("alice").with_temp_files())
        .build();
    let root = kit.scope().files_root().unwrap().to_path_buf();
    std::fs::write(root.join("door.wav"), tone_wav()).unwrap();

    let call = kit
        .call("transcribe", json!({"path": "door.wav"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "open the door");
    assert_eq!(
        call.progress_messages(),
        [
            "transcribing 0.5 seconds of audio with fake-ears",
            "transcribed 0.0 of 40.1 seconds of audio",
            "transcribed 24.9 of 40.1 seconds of audio",
            "transcribed 40.1 of 40.1 seconds of audio",
        ]
    );
    // The figures are seconds, to the millisecond.
    let figures: Vec<_> = call
        .progress
        .iter()
        .filter_map(|p| Some((p.progress?, p.total?)))
        .collect();
    assert_eq!(figures, [(0.0, 40.12), (24.874, 40.12), (40.12, 40.12)]);
    // A provider without timestamps: an empty list, not a missing key.
    assert_eq!(call.details()["segments"], json!([]));
    assert_eq!(ears.audio_sizes(), [tone_wav().len()]);
}
