//! The `whisper` provider on the models `scripts/ensure-whisper-model.sh`
//! installs, converted from CTranslate2 at load: a known clip is heard,
//! segments are timed across 30-second windows and progress is reported
//! window by window, cancellation, concurrent calls, language checks and
//! offline routing.
//!
//! Needs `scripts/ensure-whisper-model.sh` (tiny.en) and the Debian package
//! pocketsphinx-testdata; `scripts/test.sh` installs both.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::librivox::{clips, joined, normalised, score};
use oscova_speech::{
    CancellationToken, RecognitionProgress, RecognitionRequest, SpeechError, SpeechProviderConfig,
    SpeechRecognitionProvider, SpeechRecognitionRouter, providers::WhisperRecognizer,
    wav::Pcm16kMono, wav::decode_wav, wav::encode_wav,
};

fn tiny() -> SpeechProviderConfig {
    SpeechProviderConfig::new("whisper").model("tiny.en")
}

fn in_language(tag: &str) -> SpeechProviderConfig {
    let mut config = tiny();
    config.language = Some(tag.to_owned());
    config
}

/// The recognizer with tiny.en loaded, or a panic saying how to install it.
async fn loaded() -> WhisperRecognizer {
    let recognizer = WhisperRecognizer::with_limits(2, 1);
    if let Err(err) = recognizer.preload(Some("tiny.en")).await {
        panic!("{err}");
    }
    recognizer
}

/// All five clips joined: 24.7 s, repeated to 49 s.
fn long_audio() -> Vec<u8> {
    let mut samples = Vec::new();
    for _ in 0..2 {
        for clip in clips() {
            samples.extend(decode_wav(&clip.wav).unwrap().samples);
        }
    }
    encode_wav(&Pcm16kMono { samples })
}

#[tokio::test]
async fn a_converted_model_transcribes_a_known_clip() {
    let _cores = oscova_test_support::cores::cores().await;
    let recognizer = loaded().await;
    assert!(recognizer.is_loaded(Some("tiny.en")));
    let clip = clips()
        .into_iter()
        .find(|c| c.id.ends_with("0930"))
        .unwrap();
    let heard = recognizer
        .recognize(RecognitionRequest::new(&tiny(), &clip.wav))
        .await
        .unwrap();
    println!("heard {:?}", heard.text);
    assert_eq!(normalised(&heard.text), normalised(&clip.reference));
    // Whisper's own writing is kept: a capital and a full stop.
    assert_eq!(heard.text, "He might even have been made amiable himself.");
    assert!(!heard.segments.is_empty());
}

#[tokio::test]
async fn long_audio_is_decoded_in_windows_with_timed_segments() {
    let _cores = oscova_test_support::cores::cores().await;
    let recognizer = loaded().await;
    let wav = long_audio();
    let heard = recognizer
        .recognize(RecognitionRequest::new(&tiny(), &wav))
        .await
        .unwrap();
    for s in &heard.segments {
        println!("{:6.2} {:6.2} {}", s.start_seconds, s.end_seconds, s.text);
    }
    let last = heard.segments.last().unwrap();
    assert!(heard.segments.len() >= 4, "{heard:?}");
    assert!(
        last.end_seconds > 35.0 && last.end_seconds < 50.0,
        "{last:?}"
    );
    for pair in heard.segments.windows(2) {
        assert!(pair[0].start_seconds <= pair[1].start_seconds, "{pair:?}");
        assert!(pair[0].end_seconds >= pair[0].start_seconds, "{pair:?}");
    }
    // Both passes over the clips are heard: "amiable" ends clips 4 and 5.
    let amiable = normalised(&heard.text)
        .iter()
        .filter(|w| *w == "amiable")
        .count();
    assert!(amiable >= 3, "{}", heard.text);
}

/// Issue 29: audio longer than one 30-second window (the clips joined,
/// 40.1 s), through a router as a host has it, with the default model:
/// progress before each window and all of it at the end, segments timed
/// across the whole recording, and the words heard.
#[tokio::test]
async fn long_audio_reports_progress_window_by_window() {
    let _cores = oscova_test_support::cores::cores().await;
    let long = joined(35.0);
    assert!(
        long.seconds > 35.0 && long.seconds < 45.0,
        "{}",
        long.seconds
    );
    let router = SpeechRecognitionRouter::builder()
        .builtin(WhisperRecognizer::new())
        .build();
    let config = SpeechProviderConfig::new("whisper");
    let seen: Arc<Mutex<Vec<RecognitionProgress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let heard = router
        .recognize(
            RecognitionRequest::new(&config, &long.wav)
                .offline(true)
                .progress(Arc::new(move |p| sink.lock().unwrap().push(p))),
        )
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    println!("progress {seen:?}");
    for s in &heard.segments {
        println!("{:6.2} {:6.2} {}", s.start_seconds, s.end_seconds, s.text);
    }

    // Progress: of the whole recording, growing, from nothing to all of it.
    for p in &seen {
        assert!((p.seconds_total - long.seconds).abs() < 0.01, "{p:?}");
    }
    assert_eq!(seen.first().unwrap().seconds_done, 0.0, "{seen:?}");
    for pair in seen.windows(2) {
        assert!(pair[0].seconds_done < pair[1].seconds_done, "{pair:?}");
    }
    let last = seen.last().unwrap();
    assert_eq!(last.fraction(), 1.0, "{seen:?}");
    assert_eq!(last.seconds_done, last.seconds_total);
    // More than one window: a report between the first and the end, where
    // the first window ended (at most 30 s in).
    let between: Vec<_> = seen
        .iter()
        .filter(|p| p.fraction() > 0.0 && p.fraction() < 1.0)
        .collect();
    assert!(!between.is_empty(), "one window only: {seen:?}");
    assert!(between[0].seconds_done <= 30.0, "{seen:?}");

    // Segments: in order, inside the recording, covering it without a
    // hole longer than the clips' pauses.
    let segments = &heard.segments;
    assert!(segments.len() >= 4, "{heard:?}");
    assert!(segments[0].start_seconds < 2.0, "{:?}", segments[0]);
    let end = segments.last().unwrap().end_seconds;
    assert!(
        end > long.seconds - 3.0 && end <= long.seconds + 0.5,
        "ends at {end} of {}",
        long.seconds
    );
    for pair in segments.windows(2) {
        assert!(pair[0].start_seconds <= pair[0].end_seconds, "{pair:?}");
        assert!(
            pair[0].end_seconds <= pair[1].start_seconds + 0.01,
            "{pair:?}"
        );
        assert!(
            pair[1].start_seconds - pair[0].end_seconds < 3.0,
            "{pair:?}"
        );
    }
    // The words: close to the clips' (the default model hears 97 % of
    // them one by one).
    let (errors, total) = score(&long.reference, &heard.text);
    println!("{errors} word errors of {total}");
    assert!(errors * 10 <= total, "{errors} of {total}: {}", heard.text);
}

#[tokio::test]
async fn cancellation_returns_promptly_and_the_model_stays_usable() {
    let _cores = oscova_test_support::cores::cores().await;
    let recognizer = loaded().await;
    let wav = long_audio();
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let err = recognizer
        .recognize(RecognitionRequest::new(&tiny(), &wav).cancel(cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Cancelled), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    let clip = &clips()[4];
    let again = recognizer
        .recognize(RecognitionRequest::new(&tiny(), &clip.wav))
        .await
        .unwrap();
    assert!(
        normalised(&again.text).contains(&"amiable".to_owned()),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_one_model() {
    let _cores = oscova_test_support::cores::cores().await;
    let recognizer = loaded().await;
    let clips = clips();
    let config = tiny();
    let call = |i: usize| recognizer.recognize(RecognitionRequest::new(&config, &clips[i].wav));
    let (a, b, c) = tokio::join!(call(0), call(1), call(2));
    for (clip, heard) in clips.iter().zip([a, b, c]) {
        let heard = heard.unwrap();
        let (errors, total) = common::librivox::score(&clip.reference, &heard.text);
        assert!(errors * 4 <= total, "{}: {:?}", clip.id, heard.text);
    }
}

#[tokio::test]
async fn languages_are_checked_against_the_model() {
    let recognizer = loaded().await;
    let clip = &clips()[1];
    let german = in_language("de-DE");
    let err = recognizer
        .recognize(RecognitionRequest::new(&german, &clip.wav))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("only English"), "{err}");
    let unknown = in_language("xx");
    let err = recognizer
        .recognize(RecognitionRequest::new(&unknown, &clip.wav))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no language `xx`"), "{err}");
    let english = in_language("en-GB");
    assert!(
        recognizer
            .recognize(RecognitionRequest::new(&english, &clip.wav))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_router_routes_whisper_offline() {
    let _cores = oscova_test_support::cores::cores().await;
    let router = SpeechRecognitionRouter::builder()
        .builtin(WhisperRecognizer::new())
        .build();
    let clip = &clips()[4];
    let heard = router
        .recognize(RecognitionRequest::new(&tiny(), &clip.wav).offline(true))
        .await
        .unwrap();
    assert_eq!(
        normalised(&heard.text),
        normalised("he might even have been made amiable himself")
    );
    // A remote endpoint is refused before the provider runs.
    let remote = tiny().endpoint("https://speech.example.com/v1");
    let err = router
        .recognize(RecognitionRequest::new(&remote, &clip.wav).offline(true))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::NotLocal { .. }), "{err:?}");
    // Bad audio is refused as such.
    let err = router
        .recognize(RecognitionRequest::new(&tiny(), b"not a wav").offline(true))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::InvalidAudio(_)), "{err:?}");
}
