//! Unit tests of ranking and the offline rules; routing through real
//! providers is in `tests/`.

use super::table::{check_offline, shown};
use super::*;

fn config(endpoint: Option<&str>) -> SpeechProviderConfig {
    let config = SpeechProviderConfig::new("k");
    match endpoint {
        Some(endpoint) => config.endpoint(endpoint),
        None => config,
    }
}

#[test]
fn offline_rules() {
    // (endpoint, provider local by design, download URL, accepted)
    let cases: [(Option<&str>, bool, Option<&str>, bool); 8] = [
        (None, true, None, true),
        (None, false, None, false),
        (Some("http://127.0.0.1:9"), false, None, true),
        (Some("https://api.openai.com"), true, None, false),
        (None, true, Some("file:///models/x"), true),
        (None, true, Some("https://example.com/x"), false),
        (Some("http://localhost"), true, Some("http://[::1]/m"), true),
        (Some(""), true, None, false),
    ];
    for (endpoint, local, url, accepted) in cases {
        let result = check_offline(&config(endpoint), local, url);
        assert_eq!(
            result.is_ok(),
            accepted,
            "{endpoint:?} {local} {url:?}: {result:?}"
        );
    }
}

#[test]
fn refusals_say_what_was_refused_without_user_info() {
    let err = check_offline(
        &config(Some("https://user:pw@api.example.com/v1")),
        true,
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "offline operation is required, but endpoint `https://[REDACTED]@api.example.com/v1` is not on this machine"
    );
    let err = check_offline(&config(None), false, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "offline operation is required, but provider `k` has no local endpoint configured"
    );
    let err = check_offline(&config(None), true, Some("http://10.0.0.1/model.bin")).unwrap_err();
    assert!(
        matches!(
            err,
            SpeechError::NotLocal {
                what: "download URL",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn refused_text_is_escaped_and_capped() {
    let long = format!("http://example.com/{}", "x".repeat(1_000));
    assert!(shown(&long).chars().count() <= 201);
    assert_eq!(shown("http://a\nb"), "http://a\\nb");
}

#[test]
fn origins_display_their_implementation() {
    let builtin = ProviderOrigin::BuiltIn {
        type_name: "oscova_speech::providers::FliteSynthesizer".into(),
    };
    let plugin = ProviderOrigin::Plugin {
        plugin_id: "acme.tts".into(),
        type_name: "acme::Tts".into(),
    };
    assert_eq!(
        builtin.to_string(),
        "built-in `oscova_speech::providers::FliteSynthesizer`"
    );
    assert_eq!(plugin.to_string(), "`acme::Tts` from plugin `acme.tts`");
    assert_eq!(plugin.plugin_id(), Some("acme.tts"));
    assert_eq!(builtin.plugin_id(), None);
    assert_eq!(plugin.type_name(), "acme::Tts");
}

#[test]
fn routers_are_shareable_and_their_futures_send() {
    use oscova_core::provider::speech::{RecognitionRequest, SynthesisRequest};

    fn shareable<T: Send + Sync + 'static>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let recognition = SpeechRecognitionRouter::builder().build();
    let synthesis = SpeechSynthesisRouter::builder().build();
    shareable(&recognition);
    shareable(&synthesis);
    let config = SpeechProviderConfig::new("k");
    send(recognition.recognize(RecognitionRequest::new(&config, &[])));
    send(synthesis.synthesize(SynthesisRequest::new(&config, "")));
}

/// A local synthesizer that returns `seconds` of silence (4 kHz, 8-bit,
/// mono, so a long one stays small), or with `ogg_bytes` that many bytes
/// of an Ogg stream (as a plugin provider answering in Opus would), and
/// counts its calls.
#[derive(Default)]
struct Canned {
    seconds: u32,
    ogg_bytes: Option<usize>,
    calls: std::sync::atomic::AtomicUsize,
}

impl SpeechSynthesisProvider for Canned {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("canned")
    }
    fn display_name(&self) -> &str {
        "canned"
    }
    fn default_is_local_endpoint(&self) -> bool {
        true
    }
    fn synthesize<'a>(
        &'a self,
        _: oscova_core::provider::speech::SynthesisRequest<'a>,
    ) -> oscova_core::provider::BoxFuture<
        'a,
        Result<oscova_core::provider::speech::SynthesizedAudio, SpeechError>,
    > {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(bytes) = self.ogg_bytes {
            let mut wav = b"OggS".to_vec();
            wav.resize(bytes, 0);
            return Box::pin(
                async move { Ok(oscova_core::provider::speech::SynthesizedAudio { wav }) },
            );
        }
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 4_000,
            bits_per_sample: 8,
            sample_format: hound::SampleFormat::Int,
        };
        let mut wav = std::io::Cursor::new(Vec::new());
        let mut writer = hound::WavWriter::new(&mut wav, spec).unwrap();
        for _ in 0..self.seconds * 4_000 {
            writer.write_sample(0i8).unwrap();
        }
        writer.finalize().unwrap();
        let wav = wav.into_inner();
        Box::pin(async move { Ok(oscova_core::provider::speech::SynthesizedAudio { wav }) })
    }
}

/// Issue 24: `speech say` and the `speak` tool took any amount of text
/// (110 KB ran piper for minutes). The router caps the text before any
/// provider is entered, and the audio before any caller sees it.
#[tokio::test]
async fn synthesis_caps_text_and_audio_length() {
    use oscova_core::provider::speech::SynthesisRequest;
    use std::sync::atomic::Ordering;

    let router = |seconds| {
        let canned = Arc::new(Canned {
            seconds,
            ..Canned::default()
        });
        let router = SpeechSynthesisRouter::builder()
            .builtin_shared(canned.clone())
            .build();
        (router, canned)
    };
    let config = SpeechProviderConfig::new("canned");

    let (short, canned) = router(1);
    let at_cap = "é".repeat(SpeechSynthesisRouter::MAX_CHARS);
    let audio = short
        .synthesize(SynthesisRequest::new(&config, &at_cap))
        .await
        .unwrap();
    assert_eq!(&audio.wav[..4], b"RIFF");
    let over = format!("{at_cap}x");
    let err = short
        .synthesize(SynthesisRequest::new(&config, &over))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid text: the text has 5001 characters, more than the limit of 5000 characters; \
         split it into shorter parts"
    );
    assert_eq!(canned.calls.load(Ordering::SeqCst), 1, "never entered");

    let (exact, _) = router(SpeechSynthesisRouter::MAX_SECONDS);
    assert!(
        exact
            .synthesize(SynthesisRequest::new(&config, "hi"))
            .await
            .is_ok()
    );
    let (long, canned) = router(SpeechSynthesisRouter::MAX_SECONDS + 1);
    let err = long
        .synthesize(SynthesisRequest::new(&config, "hi"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::InvalidText(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("601.0 seconds of speech, longer than the limit of 600 seconds"),
        "{err}"
    );
    assert_eq!(canned.calls.load(Ordering::SeqCst), 1);
}

/// Review of issue 24: audio that is not WAV skipped the 600 s cap, since
/// only a WAV header says how long audio plays. Such audio is capped by
/// its size: 600 s at 512 kbit/s, above the highest bitrate of Opus and
/// MP3.
#[tokio::test]
async fn synthesis_caps_audio_that_is_not_wav_by_its_size() {
    use oscova_core::provider::speech::SynthesisRequest;
    use std::sync::atomic::Ordering;

    assert_eq!(SpeechSynthesisRouter::MAX_ENCODED_BYTES, 600 * 512_000 / 8);
    let config = SpeechProviderConfig::new("canned");
    let router = |bytes| {
        let canned = Arc::new(Canned {
            ogg_bytes: Some(bytes),
            ..Canned::default()
        });
        let router = SpeechSynthesisRouter::builder()
            .builtin_shared(canned.clone())
            .build();
        (router, canned)
    };

    let (at_cap, _) = router(SpeechSynthesisRouter::MAX_ENCODED_BYTES);
    let audio = at_cap
        .synthesize(SynthesisRequest::new(&config, "hi"))
        .await
        .unwrap();
    assert_eq!(audio.wav.len(), SpeechSynthesisRouter::MAX_ENCODED_BYTES);
    let (over, canned) = router(SpeechSynthesisRouter::MAX_ENCODED_BYTES + 1);
    let err = over
        .synthesize(SynthesisRequest::new(&config, "hi"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::InvalidText(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid text: the text makes 38400001 bytes of audio that is not WAV (Ogg audio), \
         more than the limit of 38400000 bytes (600 seconds at 512 kbit/s); \
         split it into shorter parts"
    );
    assert_eq!(canned.calls.load(Ordering::SeqCst), 1);
    // The bypass the docs name: the provider itself is not capped.
    let provider = over.resolve(&config, false, None).unwrap();
    let direct = provider
        .synthesize(SynthesisRequest::new(&config, "hi"))
        .await
        .unwrap();
    assert_eq!(
        direct.wav.len(),
        SpeechSynthesisRouter::MAX_ENCODED_BYTES + 1
    );
}
