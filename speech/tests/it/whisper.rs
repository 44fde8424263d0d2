//! The `whisper` provider on the models `scripts/ensure-whisper-model.sh`
//! installs, converted from CTranslate2 at load: a known clip is heard,
//! segments are timed across 30-second windows, cancellation, concurrent
//! calls, language checks and offline routing.
//!
//! Needs `scripts/ensure-whisper-model.sh` (tiny.en) and the Debian package
//! pocketsphinx-testdata; `scripts/test.sh` installs both.

use crate::common;

use std::time::{Duration, Instant};

use common::librivox::{clips, normalised};
use oscova_speech::{
    CancellationToken, Pcm16kMono, RecognitionRequest, SpeechError, SpeechProviderConfig,
    SpeechRecognitionProvider, SpeechRecognitionRouter, WhisperRecognizer, decode_wav, encode_wav,
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

#[tokio::test]
async fn cancellation_returns_promptly_and_the_model_stays_usable() {
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
