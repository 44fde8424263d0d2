//! `transcribe` on long audio with the built-in whisper recognizer (feature
//! `whisper`), through the test kit's real host: the call's progress, the
//! timed segments in its details, and a model kept loaded between calls
//! and users of one host.
//!
//! Needs `scripts/ensure-whisper-model.sh` (tiny.en; the default model is
//! base-q8_0 when base is installed too) and the Debian package
//! pocketsphinx-testdata; `scripts/test.sh` installs them.

use std::path::{Path, PathBuf};

use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
use oscova_speech::providers::WhisperRecognizer;
use oscova_speech::{SpeechProviderConfig, SpeechRouters};
use oscova_test_kit::{TestHost, TestUser};
use oscova_test_support::librivox::{clips, joined, score};
use serde_json::json;

/// A model folder of its own, whose files link to the installed tiny.en:
/// the recognizer keys loaded models by folder, so this test alone loads
/// it, and may then break the folder.
fn own_model(dir: &Path) -> PathBuf {
    let installed = WhisperRecognizer::cache_dir().unwrap().join("tiny.en");
    assert!(
        installed.join("model.bin").is_file(),
        "tiny.en is not installed; run scripts/ensure-whisper-model.sh"
    );
    let model = dir.join("tiny.en-own");
    std::fs::create_dir(&model).unwrap();
    for file in ["model.bin", "vocabulary.txt", "config.json"] {
        if installed.join(file).exists() {
            std::os::unix::fs::symlink(installed.join(file), model.join(file)).unwrap();
        }
    }
    model
}

/// A host over the speech plugin with `recognition` for everyone, its
/// speech routers a host service (as `oscova mcp` has them).
fn host(recognition: SpeechProviderConfig) -> TestHost {
    let plugin = SpeechPlugin::default()
        .settings(move |_| SpeechSettings::default().recognition(recognition.clone()));
    TestHost::builder()
        .plugin_instance(plugin)
        .host(|b| b.service_with(SpeechRouters::from_context))
        .user(TestUser::new("alice").with_temp_files())
        .build()
}

/// Issue 29: a 40 s recording (the LibriVox clips joined) is heard by the
/// default recognizer in two windows; the call reports its progress and
/// returns timed segments.
#[tokio::test]
async fn long_audio_reports_progress_and_returns_timed_segments() {
    let kit = host(SpeechProviderConfig::new("whisper"));
    let root = kit.scope().files_root().unwrap().to_path_buf();
    let long = joined(35.0);
    std::fs::write(root.join("long.wav"), &long.wav).unwrap();

    let call = kit
        .call("transcribe", json!({"path": "long.wav"}))
        .await
        .assert_ok();
    println!("{:#?}", call.progress);
    println!("{:#}", call.details());

    // The text stays the content, and is the clips' words.
    let (errors, total) = score(&long.reference, call.text());
    assert!(errors * 10 <= total, "{errors} of {total}: {}", call.text());
    assert_eq!(call.details()["text"], call.text());

    // Progress: the announcement, then seconds heard of the whole, growing
    // to all of it, with a stop between (two windows).
    let heard: Vec<_> = call
        .progress
        .iter()
        .filter(|p| p.progress.is_some())
        .collect();
    assert!(call.progress[0].progress.is_none(), "{:?}", call.progress);
    let total_seconds = (long.seconds * 1000.0).round() / 1000.0;
    for p in &heard {
        assert_eq!(p.total, Some(total_seconds), "{p:?}");
        assert!(p.message.starts_with("transcribed "), "{p:?}");
    }
    let done: Vec<f64> = heard.iter().map(|p| p.progress.unwrap()).collect();
    assert_eq!(done.first(), Some(&0.0), "{done:?}");
    assert_eq!(done.last(), Some(&total_seconds), "{done:?}");
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{done:?}");
    assert!(
        done.iter().any(|d| *d > 0.0 && *d <= 30.0),
        "no window boundary: {done:?}"
    );

    // Segments with their times, in order, across the whole recording.
    let segments = call.details()["segments"].as_array().unwrap().clone();
    assert!(segments.len() >= 4, "{segments:?}");
    let times: Vec<(f64, f64)> = segments
        .iter()
        .map(|s| {
            assert!(s["text"].as_str().is_some_and(|t| !t.is_empty()), "{s}");
            (
                s["start_seconds"].as_f64().unwrap(),
                s["end_seconds"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(times[0].0 < 2.0, "{times:?}");
    assert!(
        times
            .windows(2)
            .all(|w| w[0].0 <= w[0].1 && w[0].1 <= w[1].0 + 0.01)
    );
    let end = times.last().unwrap().1;
    assert!(
        end > long.seconds - 3.0 && end <= long.seconds + 0.5,
        "{times:?}"
    );
    assert!(
        times.iter().any(|t| t.0 >= 30.0),
        "nothing after the first window: {times:?}"
    );
}

/// The warm host: once a call has loaded the model, the next
/// calls, this user's and another's, decode with the model the host kept,
/// though its folder no longer holds a model; a new host loads afresh and
/// finds the junk.
#[tokio::test]
async fn the_host_keeps_a_loaded_model_between_calls_and_users() {
    let models = tempfile::tempdir().unwrap();
    let model = own_model(models.path());
    let config = SpeechProviderConfig::new("whisper").model(model.to_str().unwrap());
    let kit = host(config.clone());
    let clip = &clips()[4];
    let root = kit.scope().files_root().unwrap().to_path_buf();
    std::fs::write(root.join("clip.wav"), &clip.wav).unwrap();
    let first = kit
        .call("transcribe", json!({"path": "clip.wav"}))
        .await
        .assert_ok();
    let (errors, _) = score(&clip.reference, first.text());
    assert!(errors <= 1, "{}", first.text());

    std::fs::remove_file(model.join("model.bin")).unwrap();
    std::fs::write(model.join("model.bin"), b"no longer a model").unwrap();
    let again = kit
        .call("transcribe", json!({"path": "clip.wav"}))
        .await
        .assert_ok();
    assert_eq!(again.text(), first.text());
    let bob = kit.scope_for(TestUser::new("bob").with_temp_files());
    std::fs::write(bob.files_root().unwrap().join("clip.wav"), &clip.wav).unwrap();
    let bobs = bob
        .call("transcribe", json!({"path": "clip.wav"}))
        .await
        .assert_ok();
    assert_eq!(bobs.text(), first.text());

    let fresh = host(config);
    std::fs::write(
        fresh.scope().files_root().unwrap().join("clip.wav"),
        &clip.wav,
    )
    .unwrap();
    fresh
        .call("transcribe", json!({"path": "clip.wav"}))
        .await
        .assert_error("model");
}
