//! The `speak` tool through the `piper` provider (the real onnxruntime,
//! test voice and espeak-ng that `scripts/ensure-piper.sh` and
//! `scripts/ensure-system-packages.sh` install), chosen per call and by a
//! user's settings, with offline operation required as by default; its
//! audio transcribed back by pocketsphinx through the `transcribe` tool.

use crate::support;

use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
use oscova_speech::SpeechProviderConfig;
use oscova_test_support::text::{word_errors, words};
use serde_json::json;
use support::{Fixture, SPEAK, TRANSCRIBE};

const VOICE: &str = "en_US-joe-medium";

#[tokio::test]
async fn speak_with_piper_then_transcribe_round_trips_a_sentence() {
    let f = Fixture::new();
    let sentence = "please open the door and turn on the light";
    let spoken = f
        .ok(
            SPEAK,
            json!({"text": sentence, "path": "piper.wav", "provider": "piper", "voice": VOICE}),
        )
        .await;
    let d = &spoken.details;
    assert_eq!(d["provider"], "piper");
    assert_eq!(d["voice"], VOICE);
    assert_eq!(d["sample_rate"], 22_050);
    assert_eq!(d["offline"], true);
    let seconds = d["duration_seconds"].as_f64().unwrap();
    assert!((1.0..8.0).contains(&seconds), "{seconds}");
    let heard = f
        .ok(
            TRANSCRIBE,
            json!({"path": "piper.wav", "provider": "pocketsphinx"}),
        )
        .await;
    let text = heard.details["text"].as_str().unwrap_or_default();
    let errors = word_errors(&words(sentence), &words(text));
    assert!(errors <= 3, "heard {text:?} for {sentence:?}");
}

#[tokio::test]
async fn a_user_whose_settings_choose_piper_gets_it_by_default() {
    let mut config = SpeechProviderConfig::new("piper");
    config.options.insert("deterministic".into(), json!(true));
    let f = Fixture::with(
        |base| {
            SpeechPlugin::per_user(base)
                .settings(move |_| SpeechSettings::default().synthesis(config.clone()))
        },
        true,
    );
    let spoken = f
        .ok(
            SPEAK,
            json!({"text": "good morning", "path": "morning.wav"}),
        )
        .await;
    assert_eq!(spoken.details["provider"], "piper");
    assert_eq!(spoken.details["sample_rate"], 22_050);
}

#[tokio::test]
async fn an_unknown_piper_voice_lists_the_installed_ones() {
    let f = Fixture::new();
    f.refused(
        SPEAK,
        json!({"text": "hi", "path": "x.wav", "provider": "piper", "voice": "nobody"}),
        VOICE,
    )
    .await;
}
