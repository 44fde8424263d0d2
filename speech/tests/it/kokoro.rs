//! The `kokoro` provider with the real parts: Kokoro-82M (int8 ONNX), its
//! voices and vocabulary as `scripts/ensure-kokoro.sh` installs them,
//! onnxruntime 1.32.0 and the `espeak-ng` program. The assertions are
//! thresholds, never hashes. Without the files these tests fail, saying
//! which command installs them.

#![cfg(feature = "piper")]

use crate::common;

use common::{SENTENCES, recognition_router};
use oscova_speech::{
    CancellationToken, RecognitionRequest, SpeechError, SpeechProviderConfig,
    SpeechRecognitionRouter, SpeechSynthesisProvider, SpeechSynthesisRouter, SynthesisRequest,
    providers::KokoroSynthesizer, wav::decode_wav,
};
use oscova_test_support::text::{word_errors, words};

fn installed() -> KokoroSynthesizer {
    let kokoro = KokoroSynthesizer::new();
    assert!(
        kokoro.voices().iter().any(|v| v == "af_heart") && KokoroSynthesizer::installed(),
        "kokoro is not installed; run {}",
        KokoroSynthesizer::INSTALL_COMMAND
    );
    kokoro
}

fn router() -> SpeechSynthesisRouter {
    SpeechSynthesisRouter::builder()
        .builtin(installed())
        .build()
}

fn config(voice: &str) -> SpeechProviderConfig {
    SpeechProviderConfig::new("kokoro").voice(voice)
}

/// Samples of a 16-bit mono WAV and its rate.
fn samples(wav: &[u8]) -> (Vec<i16>, u32) {
    let mut reader = hound::WavReader::new(std::io::Cursor::new(wav)).expect("a WAV file");
    let spec = reader.spec();
    assert_eq!((spec.channels, spec.bits_per_sample), (1, 16));
    let samples = reader.samples::<i16>().map(Result::unwrap).collect();
    (samples, spec.sample_rate)
}

#[tokio::test]
async fn kokoro_speaks_at_24_khz_through_the_router_with_offline_required() {
    let _cores = oscova_test_support::cores::cores().await;
    let text = "The quick brown fox jumps over the lazy dog.";
    let audio = router()
        .synthesize(SynthesisRequest::new(&config("af_heart"), text).offline(true))
        .await
        .unwrap();
    let (samples, rate) = samples(&audio.wav);
    assert_eq!(rate, 24_000);
    let seconds = samples.len() as f64 / f64::from(rate);
    assert!((1.2..6.0).contains(&seconds), "{seconds:.2} s");
    let sum: f64 = samples.iter().map(|s| f64::from(*s).powi(2)).sum();
    let rms = (sum / samples.len() as f64).sqrt();
    assert!(rms > 1_000.0, "speech, not silence: RMS {rms:.0}");
}

/// A text far over one chunk's 510 tokens is cut at clause boundaries and
/// every part is spoken: the audio is about as long as its parts spoken
/// one by one.
#[tokio::test]
async fn a_text_over_510_tokens_is_spoken_in_chunks() {
    let _cores = oscova_test_support::cores::cores().await;
    let kokoro = installed();
    let config = config("af_heart");
    let sentence = "Open the door and turn on the light in the kitchen, then close the window \
                    and bring the umbrella from the hall";
    // One long sentence of clauses, no full stop: about 7 × 80 tokens,
    // past one chunk (the cut itself is `chunks.rs`'s unit tests').
    let long: String = [sentence; 7].join(", ") + ".";
    let one = kokoro
        .synthesize(SynthesisRequest::new(&config, &format!("{sentence}.")))
        .await
        .unwrap();
    let all = kokoro
        .synthesize(SynthesisRequest::new(&config, &long))
        .await
        .unwrap();
    let one = decode_wav(&one.wav).unwrap().duration().as_secs_f64();
    let all = decode_wav(&all.wav).unwrap().duration().as_secs_f64();
    println!("one clause {one:.1} s, seven {all:.1} s");
    assert!(
        all > 5.25 * one && all < 8.75 * one,
        "seven clauses ({all:.1} s) against one ({one:.1} s)"
    );
}

#[tokio::test]
async fn an_unknown_voice_lists_the_installed_ones() {
    for voice in ["af_nobody", "../voices/af_heart", "jf_alpha"] {
        let err = installed()
            .synthesize(SynthesisRequest::new(&config(voice), "hello"))
            .await
            .unwrap_err();
        let SpeechError::UnknownVoice {
            voice: named,
            known,
        } = &err
        else {
            panic!("{voice}: unexpected {err:?}");
        };
        assert_eq!(named, voice);
        assert_eq!(known.len(), 28, "{known:?}");
        assert!(known.iter().any(|k| k == "bf_emma"), "{known:?}");
    }
}

#[tokio::test]
async fn missing_files_are_not_installed_errors_naming_the_installer() {
    let empty = tempfile::tempdir().unwrap();
    let no_files = KokoroSynthesizer::new().with_dir(empty.path());
    assert!(
        no_files
            .display_name()
            .contains(KokoroSynthesizer::INSTALL_COMMAND)
    );
    assert!(no_files.voices().is_empty());
    let no_library = installed().with_onnxruntime(empty.path().join("libonnxruntime.so"));
    for kokoro in [no_files, no_library] {
        let err = kokoro
            .synthesize(SynthesisRequest::new(&config("af_heart"), "hello"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, SpeechError::NotInstalled { provider, install, .. }
                if provider == "kokoro" && install == KokoroSynthesizer::INSTALL_COMMAND),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(KokoroSynthesizer::INSTALL_COMMAND),
            "{err}"
        );
    }
}

#[tokio::test]
async fn nothing_to_say_bad_settings_and_cancellation_are_refused() {
    let kokoro = installed();
    for text in ["   ", "?! ..."] {
        let err = kokoro
            .synthesize(SynthesisRequest::new(&config("af_heart"), text))
            .await
            .unwrap_err();
        assert!(
            matches!(err, SpeechError::InvalidText(_)),
            "{text:?}: {err:?}"
        );
    }
    let mut bad = config("af_heart");
    bad.options.insert("speed".into(), 5.into());
    let err = kokoro
        .synthesize(SynthesisRequest::new(&bad, "hello"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`speed`"), "{err}");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = kokoro
        .synthesize(SynthesisRequest::new(&config("af_heart"), "hello world").cancel(cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Cancelled), "{err:?}");
}

#[tokio::test]
async fn speed_changes_the_length() {
    let _cores = oscova_test_support::cores::cores().await;
    let kokoro = installed();
    let text = "Please open the door and turn on the light.";
    let mut fast = config("af_heart");
    fast.options.insert("speed".into(), 1.5.into());
    let normal = kokoro
        .synthesize(SynthesisRequest::new(&config("af_heart"), text))
        .await
        .unwrap();
    let fast = kokoro
        .synthesize(SynthesisRequest::new(&fast, text))
        .await
        .unwrap();
    let normal = decode_wav(&normal.wav).unwrap().duration().as_secs_f64();
    let fast = decode_wav(&fast.wav).unwrap().duration().as_secs_f64();
    assert!(
        fast < 0.85 * normal,
        "speed 1.5: {fast:.2} s against {normal:.2} s"
    );
}

/// The round trips' sentences: the shared ones and piper's five more.
fn round_trip_sentences() -> Vec<&'static str> {
    SENTENCES
        .iter()
        .chain(&super::piper::MORE)
        .copied()
        .collect()
}

/// [`round_trip_sentences`] spoken by kokoro's `af_heart`, synthesized once
/// for the test binary: the whisper and pocketsphinx round trips hear the
/// same audio, so it is not made twice.
async fn af_heart_round_trip_audio() -> &'static [Vec<u8>] {
    static AUDIO: tokio::sync::OnceCell<Vec<Vec<u8>>> = tokio::sync::OnceCell::const_new();
    AUDIO
        .get_or_init(|| async { speak_all("af_heart", &round_trip_sentences()).await })
        .await
}

/// Each of `sentences` spoken by kokoro with `voice`, offline.
async fn speak_all(voice: &str, sentences: &[&str]) -> Vec<Vec<u8>> {
    let synthesis = router();
    let speak = config(voice);
    let mut audio = Vec::new();
    for sentence in sentences {
        let spoken = synthesis
            .synthesize(SynthesisRequest::new(&speak, sentence).offline(true))
            .await
            .unwrap();
        audio.push(spoken.wav);
    }
    audio
}

/// Word errors and words of `sentences`, spoken as `audio` by kokoro with
/// `voice`, heard by `hear`, printing each.
async fn round_trip(
    recognition: &SpeechRecognitionRouter,
    hear: &SpeechProviderConfig,
    voice: &str,
    sentences: &[&str],
    audio: &[Vec<u8>],
) -> (usize, usize) {
    assert_eq!(sentences.len(), audio.len());
    let (mut errors, mut total) = (0, 0);
    for (sentence, wav) in sentences.iter().zip(audio) {
        let heard = recognition
            .recognize(RecognitionRequest::new(hear, wav).offline(true))
            .await
            .unwrap();
        let (reference, hypothesis) = (words(sentence), words(&heard.text));
        let e = word_errors(&reference, &hypothesis);
        println!(
            "  kokoro {voice} → {}: {e}/{} said {sentence:?}, heard {:?}",
            hear.provider,
            reference.len(),
            heard.text
        );
        errors += e;
        total += reference.len();
    }
    (errors, total)
}

/// Kokoro's US default voice and a UK voice heard by whisper tiny.en (the
/// default recognizer) on the sentences piper's round trip uses: each held
/// to at most 10 % word error rate.
#[cfg(feature = "whisper")]
#[tokio::test]
async fn round_trip_word_error_rates_of_kokoro_through_whisper() {
    let _cores = oscova_test_support::cores::cores().await;
    use oscova_speech::providers::WhisperRecognizer;

    let whisper = WhisperRecognizer::new();
    let model = std::env::var("OSCOVA_ROUND_TRIP_MODEL").unwrap_or_else(|_| "tiny.en".into());
    whisper.preload(Some(&model)).await.unwrap();
    let recognition = SpeechRecognitionRouter::builder().builtin(whisper).build();
    let hear = SpeechProviderConfig::new("whisper").model(model.as_str());
    let sentences = round_trip_sentences();
    for voice in ["af_heart", "bf_emma"] {
        let bf_emma;
        let audio = if voice == "af_heart" {
            af_heart_round_trip_audio().await
        } else {
            bf_emma = speak_all(voice, &sentences).await;
            &bf_emma
        };
        let (errors, total) = round_trip(&recognition, &hear, voice, &sentences, audio).await;
        let rate = errors as f64 / total as f64;
        println!(
            "round trip kokoro {voice} through whisper {model}: WER {:.1} % ({errors}/{total})",
            rate * 100.0
        );
        assert!(
            rate <= 0.10,
            "kokoro {voice} through whisper {model}: WER {:.1} % is above 10 %",
            rate * 100.0
        );
    }
}

/// Kokoro through pocketsphinx, reported for comparison with piper and
/// flite, held to the same 25 % as piper.
#[tokio::test]
async fn round_trip_word_error_rate_of_kokoro_through_pocketsphinx() {
    let _cores = oscova_test_support::cores::cores().await;
    let hear = SpeechProviderConfig::new("pocketsphinx");
    let sentences = round_trip_sentences();
    let audio = af_heart_round_trip_audio().await;
    let (errors, total) =
        round_trip(&recognition_router(), &hear, "af_heart", &sentences, audio).await;
    let rate = errors as f64 / total as f64;
    println!(
        "round trip kokoro af_heart through pocketsphinx: WER {:.1} % ({errors}/{total})",
        rate * 100.0
    );
    assert!(rate <= 0.25, "WER {:.1} % is above 25 %", rate * 100.0);
}

/// Issue 24's length cap holds for kokoro too: it stops between chunks.
#[tokio::test]
async fn kokoro_stops_once_past_its_length_limit() {
    let _cores = oscova_test_support::cores::cores().await;
    let kokoro = installed().with_max_seconds(2);
    let text = "Open the door. Is it raining? Yes, it is. Bring an umbrella. \
                Close the window. Please call Stella. Ask her to bring these things.";
    let err = kokoro
        .synthesize(SynthesisRequest::new(&config("af_heart"), text))
        .await
        .unwrap_err();
    let SpeechError::InvalidText(message) = &err else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("more than 2 seconds of speech"),
        "{message}"
    );
}
