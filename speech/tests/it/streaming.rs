//! Streaming recognition through the router: routed by type key with the
//! same offline check as `recognize`, the format checked, all before any
//! provider is entered; the buffering default for providers without a
//! streaming form (every existing one keeps working); a native streaming
//! form's partials and final event; bad input refused with clear errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::spy::Spy;
use oscova_speech::stream::{
    MAX_SECONDS, PartialTranscript, RecognitionEvent, RecognitionStream, StreamInput,
    StreamRequest, StreamingRecognizer,
};
use oscova_speech::wav::decode_wav;
use oscova_speech::{
    BoxFuture, ProviderTypeKey, RecognitionRequest, SpeechError, SpeechProviderConfig,
    SpeechRecognitionProvider, SpeechRecognitionRouter, Transcript,
    providers::PocketsphinxRecognizer,
};

/// A provider that streams natively: counts opens and `recognize` calls;
/// its stream sends a partial per frame (the frames' sizes so far) and
/// the final transcript at the end.
#[derive(Clone, Default)]
struct Streamer {
    opens: Arc<AtomicUsize>,
    recognitions: Arc<AtomicUsize>,
}

impl SpeechRecognitionProvider for Streamer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("test.streamer")
    }
    fn display_name(&self) -> &str {
        "streamer"
    }
    fn recognize<'a>(
        &'a self,
        _: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        self.recognitions.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Transcript::new("whole")) })
    }
}

impl StreamingRecognizer for Streamer {
    fn open_stream(
        &self,
        request: StreamRequest,
    ) -> BoxFuture<'_, Result<RecognitionStream, SpeechError>> {
        self.opens.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let (stream, mut feed) = RecognitionStream::channel(&request);
            tokio::spawn(async move {
                let mut sizes: Vec<String> = Vec::new();
                loop {
                    match feed.recv().await {
                        StreamInput::Audio(samples) => {
                            sizes.push(samples.len().to_string());
                            feed.partial(PartialTranscript {
                                committed: sizes[..sizes.len() - 1].join(" "),
                                tentative: sizes[sizes.len() - 1].clone(),
                                audio_seconds: 0.0,
                            });
                        }
                        StreamInput::End => break,
                        StreamInput::Cancelled => {
                            feed.finish(Err(SpeechError::Cancelled));
                            return;
                        }
                    }
                }
                feed.finish(Ok(Transcript::new(sizes.join(" "))));
            });
            Ok(stream)
        })
    }
}

/// A provider that keeps the WAV it was asked to recognize.
#[derive(Clone, Default)]
struct Recorder {
    heard: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl SpeechRecognitionProvider for Recorder {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("test.recorder")
    }
    fn display_name(&self) -> &str {
        "recorder"
    }
    fn default_is_local_endpoint(&self) -> bool {
        true
    }
    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        self.heard.lock().unwrap().push(request.audio.to_vec());
        Box::pin(async { Ok(Transcript::new("recorded")) })
    }
}

fn router(spy: &Spy, streamer: &Streamer, recorder: &Recorder) -> SpeechRecognitionRouter {
    SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .plugin("test.spy", "Spy", Arc::new(spy.clone()))
        .plugin_streaming("test.streamer", "Streamer", Arc::new(streamer.clone()))
        .plugin("test.recorder", "Recorder", Arc::new(recorder.clone()))
        .build()
}

fn parts() -> (Spy, Streamer, Recorder) {
    (
        Spy::new("test.spy"),
        Streamer::default(),
        Recorder::default(),
    )
}

#[tokio::test]
async fn offline_refuses_online_only_providers_before_they_are_entered() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    assert!(router.streams_natively("test.streamer"));
    assert!(!router.streams_natively("test.spy"));
    assert!(!router.streams_natively("pocketsphinx"));

    for key in ["test.spy", "test.streamer"] {
        // Not local by design, no endpoint: refused.
        let config = SpeechProviderConfig::new(key);
        let err = router
            .open_stream(StreamRequest::new(config.clone()).offline(true))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, SpeechError::NoLocalEndpoint { key: k } if k == key),
            "{err:?}"
        );
        // A remote endpoint: refused, naming it.
        let remote = config.clone().endpoint("https://api.openai.com/v1");
        let err = router
            .open_stream(StreamRequest::new(remote).offline(true))
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                SpeechError::NotLocal {
                    what: "endpoint",
                    ..
                }
            ),
            "{err:?}"
        );
        // A remote download URL for a local endpoint: refused too.
        let local = config.clone().endpoint("http://127.0.0.1:9");
        let err = router
            .open_stream(
                StreamRequest::new(local)
                    .download_url(Some("https://example.com/model".into()))
                    .offline(true),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                SpeechError::NotLocal {
                    what: "download URL",
                    ..
                }
            ),
            "{err:?}"
        );
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(spy.calls(), 0, "the buffering default entered the provider");
    assert_eq!(streamer.opens.load(Ordering::SeqCst), 0);
    assert_eq!(streamer.recognitions.load(Ordering::SeqCst), 0);

    // Online, the same streams open and reach their providers.
    let stream = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new("test.spy")))
        .await
        .unwrap();
    stream.push(&[1, 2, 3]).unwrap();
    stream.finish().await.unwrap();
    assert_eq!(spy.calls(), 1);
    let stream = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new(
            "test.streamer",
        )))
        .await
        .unwrap();
    stream.push(&[1]).unwrap();
    assert_eq!(stream.finish().await.unwrap().text, "1");
    assert_eq!(streamer.opens.load(Ordering::SeqCst), 1);
    assert_eq!(streamer.recognitions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unknown_keys_and_wrong_formats_are_refused_before_any_provider() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    let err = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new("nope")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, SpeechError::UnknownProvider { known, .. } if known.contains(&"test.streamer".to_owned())),
        "{err:?}"
    );
    for key in ["test.streamer", "test.recorder"] {
        let config = SpeechProviderConfig::new(key);
        for (request, says) in [
            (
                StreamRequest::new(config.clone()).sample_rate(44_100),
                "44100 Hz",
            ),
            (StreamRequest::new(config.clone()).sample_rate(0), "0 Hz"),
            (StreamRequest::new(config.clone()).channels(2), "2 channels"),
            (StreamRequest::new(config.clone()).channels(0), "0 channels"),
        ] {
            let err = router.open_stream(request).await.unwrap_err();
            let SpeechError::InvalidAudio(text) = &err else {
                panic!("{err:?}");
            };
            assert!(text.contains(says) && text.contains("16 kHz"), "{text}");
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(streamer.opens.load(Ordering::SeqCst), 0);
    assert!(recorder.heard.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_buffering_default_recognizes_the_whole_audio_once_after_its_end() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    let config = SpeechProviderConfig::new("test.recorder");
    let mut stream = router
        .open_stream(StreamRequest::new(config).offline(true))
        .await
        .unwrap();
    let samples: Vec<i16> = (0..16_000)
        .map(|i| ((i % 200) * 100 - 10_000) as i16)
        .collect();
    for frame in samples.chunks(320) {
        stream.push(frame).unwrap();
    }
    stream.push(&[]).unwrap();
    assert!((stream.seconds_pushed() - 1.0).abs() < 1e-9);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        recorder.heard.lock().unwrap().is_empty(),
        "entered before the audio ended"
    );
    stream.end_audio();
    assert!(matches!(
        stream.push(&[1]),
        Err(SpeechError::InvalidAudio(text)) if text.contains("finished")
    ));
    let event = stream.next_event().await.unwrap().unwrap();
    assert_eq!(event, RecognitionEvent::Final(Transcript::new("recorded")));
    assert!(stream.next_event().await.is_none());
    assert!(
        stream.latest_partial().is_none(),
        "the default has no partials"
    );
    let heard = recorder.heard.lock().unwrap();
    assert_eq!(heard.len(), 1);
    assert_eq!(decode_wav(&heard[0]).unwrap().samples, samples);
}

#[tokio::test]
async fn a_native_stream_sends_partials_then_its_final_event() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    let stream = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new(
            "test.streamer",
        )))
        .await
        .unwrap();
    let (audio, mut events) = stream.split();
    audio.push(&[0; 320]).unwrap();
    let Some(Ok(RecognitionEvent::Partial(first))) = events.next().await else {
        panic!("no partial");
    };
    assert_eq!(first.text(), "320");
    audio.push(&[0; 640]).unwrap();
    audio.push(&[0; 1600]).unwrap();
    audio.finish();
    // Partials are coalesced: whatever the reader sees ends with the
    // newest, then the final event, then nothing.
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        seen.push(event.unwrap());
    }
    let Some(RecognitionEvent::Final(transcript)) = seen.pop() else {
        panic!("{seen:?}");
    };
    assert_eq!(transcript.text, "320 640 1600");
    for event in &seen {
        let RecognitionEvent::Partial(p) = event else {
            panic!("{event:?}");
        };
        assert!(p.committed.starts_with("320"), "{p:?}");
    }
    assert_eq!(events.latest_partial().unwrap().text(), "320 640 1600");
    assert_eq!(streamer.recognitions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn cancelled_and_dropped_streams_never_enter_the_buffered_provider() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    let config = SpeechProviderConfig::new("test.recorder");

    // Cancelled by its token: the final event says so.
    let request = StreamRequest::new(config.clone());
    let cancel = request.cancel.clone();
    let mut stream = router.open_stream(request).await.unwrap();
    stream.push(&[5; 1600]).unwrap();
    cancel.cancel();
    assert!(matches!(
        stream.next_event().await,
        Some(Err(SpeechError::Cancelled))
    ));

    // The audio half dropped without finishing: cancelled too.
    let stream = router
        .open_stream(StreamRequest::new(config.clone()))
        .await
        .unwrap();
    let (audio, events) = stream.split();
    audio.push(&[5; 1600]).unwrap();
    drop(audio);
    assert!(matches!(
        events.final_transcript().await,
        Err(SpeechError::Cancelled)
    ));

    // A native stream dropped whole: its provider sees the cancellation.
    let stream = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new(
            "test.streamer",
        )))
        .await
        .unwrap();
    stream.push(&[1; 16]).unwrap();
    drop(stream);

    // No audio at all: a clear error, and the provider is not entered.
    let stream = router
        .open_stream(StreamRequest::new(config))
        .await
        .unwrap();
    let err = stream.finish().await.unwrap_err();
    assert!(
        matches!(&err, SpeechError::InvalidAudio(text) if text.contains("no audio")),
        "{err:?}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(recorder.heard.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_stream_takes_at_most_its_cap_of_audio() {
    let (spy, streamer, recorder) = parts();
    let router = router(&spy, &streamer, &recorder);
    let stream = router
        .open_stream(StreamRequest::new(SpeechProviderConfig::new(
            "test.recorder",
        )))
        .await
        .unwrap();
    let minute = vec![0i16; 60 * 16_000];
    for _ in 0..MAX_SECONDS / 60 {
        stream.push(&minute).unwrap();
    }
    let err = stream.push(&[0]).unwrap_err();
    assert!(
        matches!(&err, SpeechError::InvalidAudio(text) if text.contains(&format!("{MAX_SECONDS} seconds"))),
        "{err:?}"
    );
    // The refused frame is not counted; what was taken is recognized.
    assert!((stream.seconds_pushed() - f64::from(MAX_SECONDS)).abs() < 1e-9);
    assert_eq!(stream.finish().await.unwrap().text, "recorded");
}

#[tokio::test]
async fn pocketsphinx_streams_through_the_buffering_default() {
    let clips = oscova_test_support::librivox::clips();
    let clip = clips
        .first()
        .expect("the LibriVox clips (pocketsphinx-testdata)");
    let router = SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .build();
    let config = SpeechProviderConfig::new("pocketsphinx");
    let whole = router
        .recognize(RecognitionRequest::new(&config, &clip.wav).offline(true))
        .await
        .unwrap();
    let mut stream = router
        .open_stream(StreamRequest::new(config).offline(true))
        .await
        .unwrap();
    let samples = decode_wav(&clip.wav).unwrap().samples;
    for frame in samples.chunks(640) {
        stream.push(frame).unwrap();
    }
    stream.end_audio();
    let Some(Ok(RecognitionEvent::Final(streamed))) = stream.next_event().await else {
        panic!("no final transcript");
    };
    assert!(!whole.text.is_empty());
    assert_eq!(streamed.text, whole.text);
}
