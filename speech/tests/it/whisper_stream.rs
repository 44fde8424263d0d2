//! Whisper's streaming form, measured on the five LibriVox clips of
//! Debian's `pocketsphinx-testdata`: each clip pushed in frames of 20 to
//! 100 ms, as fast as recognition allows (after each step's worth of
//! audio the test waits for the partial that heard it, so every step is
//! decoded, whatever this machine's speed), then finished. The streamed
//! final transcripts' word error rate must stay within 2 points of the
//! same model's whole-clip recognition, committed text must never change
//! once committed, and the final text must begin with the last committed
//! text. The numbers (WER streamed and whole, how early the first partial
//! came, how long after the audio's end the final did) are printed; run
//! with `-- --nocapture` to see them.
//!
//! Needs `scripts/ensure-whisper-model.sh` and pocketsphinx-testdata.

use crate::common;

use std::time::{Duration, Instant};

use common::librivox::{clips, score};
use oscova_speech::stream::{RecognitionEvent, StreamRequest};
use oscova_speech::wav::decode_wav;
use oscova_speech::{
    RecognitionRequest, SpeechError, SpeechProviderConfig, SpeechRecognitionProvider,
    SpeechRecognitionRouter, providers::WhisperRecognizer,
};

/// The frame sizes pushed in turn, in ms.
const FRAMES_MS: [usize; 5] = [20, 40, 60, 80, 100];
/// The step the test asks for (the default's, said explicitly).
const STEP_MS: u64 = 1000;

fn router(recognizer: &WhisperRecognizer) -> SpeechRecognitionRouter {
    SpeechRecognitionRouter::builder()
        .builtin_streaming(recognizer.clone())
        .build()
}

/// CPU seconds this process has used (all threads; `/proc/self/stat`'s
/// user and system time at Linux's 100 ticks a second). Decode work
/// measured this way does not depend on what else the machine runs.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command's closing parenthesis: state is field 3,
    // utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// What streaming one clip gave.
struct Streamed {
    text: String,
    /// Wall time from the first push to the first partial with words.
    first_words: Option<Duration>,
    /// Audio heard by then, in seconds.
    first_words_audio: f64,
    /// Wall time from the audio's end to the final transcript.
    final_after_end: Duration,
    /// CPU seconds spent from the audio's end to the final transcript.
    final_cpu: f64,
    partials: usize,
}

async fn stream_clip(
    router: &SpeechRecognitionRouter,
    config: &SpeechProviderConfig,
    wav: &[u8],
) -> Streamed {
    let samples = decode_wav(wav).unwrap().samples;
    let mut stream = router
        .open_stream(StreamRequest::new(config.clone()).offline(true))
        .await
        .unwrap();
    let step = STEP_MS as usize * 16;
    let (mut at, mut since_wait, mut turn) = (0, 0, 0);
    let mut committed = String::new();
    let mut partials = 0;
    let (mut first_words, mut first_words_audio) = (None, 0.0);
    let started = Instant::now();
    while at < samples.len() {
        let len = (FRAMES_MS[turn % FRAMES_MS.len()] * 16).min(samples.len() - at);
        turn += 1;
        stream.push(&samples[at..at + len]).unwrap();
        at += len;
        since_wait += len;
        if since_wait < step || at == samples.len() {
            continue;
        }
        since_wait = 0;
        let pushed = at as f64 / 16_000.0;
        loop {
            match stream.next_event().await.unwrap().unwrap() {
                RecognitionEvent::Partial(p) => {
                    partials += 1;
                    assert!(
                        p.committed.starts_with(&committed),
                        "committed text changed: {committed:?} then {:?}",
                        p.committed
                    );
                    committed = p.committed.clone();
                    if first_words.is_none() && !p.text().trim().is_empty() {
                        first_words = Some(started.elapsed());
                        first_words_audio = p.audio_seconds;
                    }
                    if p.audio_seconds + 1e-6 >= pushed {
                        break;
                    }
                }
                RecognitionEvent::Final(t) => panic!("final before the end: {t:?}"),
            }
        }
    }
    let ended = Instant::now();
    let cpu_at_end = cpu_seconds();
    stream.end_audio();
    let text = loop {
        match stream.next_event().await.unwrap().unwrap() {
            RecognitionEvent::Partial(p) => {
                assert!(
                    p.committed.starts_with(&committed),
                    "{committed:?} then {p:?}"
                );
                committed = p.committed;
            }
            RecognitionEvent::Final(t) => break t.text,
        }
    };
    let final_after_end = ended.elapsed();
    let final_cpu = cpu_seconds() - cpu_at_end;
    assert!(
        text.starts_with(&committed),
        "the final text {text:?} drops committed {committed:?}"
    );
    assert!(stream.next_event().await.is_none());
    Streamed {
        text,
        first_words,
        first_words_audio,
        final_after_end,
        final_cpu,
        partials,
    }
}

async fn streamed_against_whole(model: Option<&str>) {
    let clips = clips();
    assert_eq!(clips.len(), 5, "install pocketsphinx-testdata");
    let recognizer = WhisperRecognizer::new();
    recognizer.preload(model).await.unwrap();
    let router = router(&recognizer);
    let mut config = SpeechProviderConfig::new("whisper").option("stream_step_ms", STEP_MS);
    if let Some(model) = model {
        config = config.model(model);
    }
    let name = model.map_or_else(
        || WhisperRecognizer::installed_model().unwrap_or_default(),
        str::to_owned,
    );
    let (mut whole_errors, mut streamed_errors, mut words) = (0, 0, 0);
    let (mut first_ms, mut first_audio, mut final_ms) = (Vec::new(), Vec::new(), Vec::new());
    for clip in &clips {
        let timer = Instant::now();
        let cpu = cpu_seconds();
        let whole = recognizer
            .recognize(RecognitionRequest::new(&config, &clip.wav))
            .await
            .unwrap();
        let whole_time = timer.elapsed();
        let whole_cpu = cpu_seconds() - cpu;
        let streamed = stream_clip(&router, &config, &clip.wav).await;
        let (we, n) = score(&clip.reference, &whole.text);
        let (se, _) = score(&clip.reference, &streamed.text);
        println!(
            "  {name} {}: whole {we}/{n} in {whole_time:?} ({whole_cpu:.2} CPU s), streamed \
             {se}/{n} over {} partials; first words after {:?} ({:.1} s of audio), final {:?} \
             ({:.2} CPU s) after the end\n    whole:    {:?}\n    streamed: {:?}",
            clip.id,
            streamed.partials,
            streamed.first_words,
            streamed.first_words_audio,
            streamed.final_after_end,
            streamed.final_cpu,
            whole.text,
            streamed.text
        );
        whole_errors += we;
        streamed_errors += se;
        words += n;
        if let Some(first) = streamed.first_words {
            first_ms.push(first.as_millis());
            first_audio.push(streamed.first_words_audio);
        }
        final_ms.push(streamed.final_after_end.as_millis());
    }
    let whole_wer = 100.0 * whole_errors as f64 / words as f64;
    let streamed_wer = 100.0 * streamed_errors as f64 / words as f64;
    final_ms.sort_unstable();
    println!(
        "{name}: WER whole {whole_wer:.1} % ({whole_errors}/{words}), streamed {streamed_wer:.1} % \
         ({streamed_errors}/{words}); final after the audio's end {final_ms:?} ms (median {} ms); \
         first words after {first_ms:?} ms, at {first_audio:?} s of audio",
        final_ms[final_ms.len() / 2]
    );
    assert_eq!(
        first_ms.len(),
        clips.len(),
        "a clip had no partial with words"
    );
    assert!(
        streamed_wer <= whole_wer + 2.0,
        "{name}: streamed WER {streamed_wer:.1} % is more than 2 points above whole {whole_wer:.1} %"
    );
}

#[tokio::test]
async fn streamed_default_model_stays_within_2_points_of_whole_clips() {
    let _cores = oscova_test_support::cores::cores().await;
    streamed_against_whole(None).await;
}

#[tokio::test]
async fn streams_refuse_a_missing_model_and_bad_options_when_opened() {
    let recognizer = WhisperRecognizer::new();
    let router = router(&recognizer);
    let missing = SpeechProviderConfig::new("whisper").model("/nonexistent/whisper-model");
    let err = router
        .open_stream(StreamRequest::new(missing).offline(true))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::NotInstalled { .. }), "{err:?}");
    let bad = SpeechProviderConfig::new("whisper").option("stream_step_ms", 5);
    let err = router
        .open_stream(StreamRequest::new(bad))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("stream_step_ms"), "{err}");
    let english_only = SpeechProviderConfig::new("whisper")
        .model("tiny.en")
        .language("de");
    let err = router
        .open_stream(StreamRequest::new(english_only))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tiny.en"), "{err}");
}

#[tokio::test]
async fn a_cancelled_whisper_stream_stops_promptly() {
    let _cores = oscova_test_support::cores::cores().await;
    let recognizer = WhisperRecognizer::new();
    recognizer.preload(Some("tiny.en")).await.unwrap();
    let router = router(&recognizer);
    let clips = clips();
    let samples = decode_wav(&clips[0].wav).unwrap().samples;
    let config = SpeechProviderConfig::new("whisper")
        .model("tiny.en")
        .option("stream_step_ms", 200);
    let request = StreamRequest::new(config.clone());
    let cancel = request.cancel.clone();
    let stream = router.open_stream(request).await.unwrap();
    for frame in samples.chunks(320) {
        stream.push(frame).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cancelled = Instant::now();
    cancel.cancel();
    let err = stream.finish().await.unwrap_err();
    assert!(matches!(err, SpeechError::Cancelled), "{err:?}");
    assert!(
        cancelled.elapsed() < Duration::from_secs(2),
        "{:?}",
        cancelled.elapsed()
    );
    // The model still hears a stream afterwards.
    let stream = router
        .open_stream(StreamRequest::new(config))
        .await
        .unwrap();
    for frame in samples.chunks(1600) {
        stream.push(frame).unwrap();
    }
    let heard = stream.finish().await.unwrap();
    let (errors, words) = score(&clips[0].reference, &heard.text);
    assert!(errors * 5 <= words, "{errors}/{words}: {:?}", heard.text);
}
