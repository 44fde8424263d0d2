//! The `openai` provider against a real HTTP server on loopback, through the
//! routers: the requests are checked byte for byte, the answers are what an
//! OpenAI-compatible service sends.

use crate::common;

use std::time::{Duration, Instant};

use common::http::{KEY, json_reply, multipart_parts, serve_once};
use common::{recognition_router, synthesis_router};
use oscova_speech::{
    CancellationToken, RecognitionRequest, SecretString, SpeechError, SpeechProviderConfig,
    SpeechRecognitionProvider, SynthesisRequest, providers::OpenAiSpeech, wav::Pcm16kMono,
    wav::encode_wav,
};
use oscova_test_support::http::{Reply, closed_port_url};

fn key() -> SecretString {
    SecretString::from(KEY)
}

fn sample_wav() -> Vec<u8> {
    // Every byte value, including CR, LF and '-', must survive unchanged.
    let samples: Vec<i16> = (0..2_000)
        .map(|i| ((i * 37) % 65_536 - 32_768) as i16)
        .collect();
    encode_wav(&Pcm16kMono { samples })
}

fn assert_key_hidden(err: &SpeechError) {
    let shown = format!("{err} / {err:?}");
    assert!(!shown.contains(KEY), "API key leaked: {shown}");
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        let text = format!("{inner} / {inner:?}");
        assert!(!text.contains(KEY), "API key leaked in a source: {text}");
        source = inner.source();
    }
}

#[tokio::test]
async fn transcription_sends_the_exact_multipart_request() {
    let (base, server) = serve_once(json_reply(200, r#"{"text":"hello world"}"#)).await;
    let wav = sample_wav();
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let key = key();
    let transcript = recognition_router()
        .recognize(
            RecognitionRequest::new(&config, &wav)
                .api_key(Some(&key))
                .offline(true),
        )
        .await
        .unwrap();
    assert_eq!(transcript.text, "hello world");

    let request = server.only_request();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/audio/transcriptions");
    assert_eq!(request.version, "HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let content_type = request.header("content-type").unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("content type {content_type}"));
    assert!(!boundary.is_empty());

    let parts = multipart_parts(&request.body, boundary);
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(
        parts[0].0,
        [
            r#"Content-Disposition: form-data; name="file"; filename="audio.wav""#,
            "Content-Type: audio/wav"
        ]
    );
    assert_eq!(parts[0].1, wav);
    assert_eq!(
        parts[1].0,
        [r#"Content-Disposition: form-data; name="model""#]
    );
    assert_eq!(parts[1].1, b"whisper-1");

    // And the whole body, byte for byte.
    let mut expected = Vec::new();
    expected.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\n\
             Content-Type: audio/wav\r\n\r\n"
        )
        .as_bytes(),
    );
    expected.extend_from_slice(&wav);
    expected.extend_from_slice(
        format!(
            "\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--{boundary}--\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(request.body, expected);
}

#[tokio::test]
async fn configured_model_and_language_are_sent() {
    let (base, server) = serve_once(json_reply(200, r#"{"text":"hallo"}"#)).await;
    let mut config = SpeechProviderConfig::new("openai")
        .endpoint(&base)
        .model("whisper-large-v3");
    config.language = Some("de-DE".to_owned());
    let wav = sample_wav();
    recognition_router()
        .recognize(RecognitionRequest::new(&config, &wav))
        .await
        .unwrap();
    let request = server.only_request();
    let boundary = request
        .header("content-type")
        .and_then(|v| v.strip_prefix("multipart/form-data; boundary="))
        .unwrap()
        .to_owned();
    let parts = multipart_parts(&request.body, &boundary);
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert_eq!(parts[1].1, b"whisper-large-v3");
    assert_eq!(
        parts[2].0,
        [r#"Content-Disposition: form-data; name="language""#]
    );
    assert_eq!(parts[2].1, b"de");
}

#[tokio::test]
async fn no_key_means_no_authorization_header_and_trailing_slash_is_joined() {
    let (base, server) = serve_once(json_reply(200, r#"{"text":""}"#)).await;
    let config = SpeechProviderConfig::new("openai").endpoint(format!("{base}/"));
    let wav = sample_wav();
    let transcript = recognition_router()
        .recognize(RecognitionRequest::new(&config, &wav))
        .await
        .unwrap();
    assert_eq!(transcript.text, "");
    let request = server.only_request();
    assert_eq!(request.path, "/v1/audio/transcriptions");
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn synthesis_sends_the_exact_json_body() {
    let audio = sample_wav();
    let (base, server) = serve_once(Reply::bytes(200, "audio/wav", audio.clone())).await;
    let config = SpeechProviderConfig::new("openai").endpoint(format!("{base}/proxy/"));
    let text = "Say \"hi\" – naïvely\n-o";
    let key = key();
    let result = synthesis_router()
        .synthesize(
            SynthesisRequest::new(&config, text)
                .api_key(Some(&key))
                .offline(true),
        )
        .await
        .unwrap();
    assert_eq!(result.wav, audio);

    let request = server.only_request();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/proxy/v1/audio/speech");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let expected = r#"{"model":"tts-1","input":"Say \"hi\" – naïvely\n-o","voice":"alloy","response_format":"wav"}"#;
    assert_eq!(String::from_utf8(request.body).unwrap(), expected);
}

#[tokio::test]
async fn voice_comes_from_the_request_then_the_configuration() {
    for (request_voice, expected) in [(Some("onyx"), "onyx"), (None, "nova")] {
        let (base, server) = serve_once(Reply::bytes(200, "audio/wav", sample_wav())).await;
        let config = SpeechProviderConfig::new("openai")
            .endpoint(&base)
            .model("gpt-4o-mini-tts")
            .voice("nova");
        synthesis_router()
            .synthesize(SynthesisRequest::new(&config, "hi").voice(request_voice))
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&server.only_request().body).unwrap();
        assert_eq!(body["voice"], expected);
        assert_eq!(body["model"], "gpt-4o-mini-tts");
    }
}

#[tokio::test]
async fn audio_that_is_not_wav_is_an_error() {
    let (base, _server) = serve_once(Reply::bytes(
        200,
        "audio/mpeg",
        b"ID3\x04\x00mp3 frames".to_vec(),
    ))
    .await;
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let err = synthesis_router()
        .synthesize(SynthesisRequest::new(&config, "hi"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Provider { .. }), "{err:?}");
    assert!(err.to_string().contains("not a WAV file"), "{err}");
}

#[tokio::test]
async fn unauthorized_mentions_the_api_key_without_leaking_it() {
    let (base, _server) = serve_once(json_reply(
        401,
        &format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#),
    ))
    .await;
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let key = key();
    let wav = sample_wav();
    let err = recognition_router()
        .recognize(RecognitionRequest::new(&config, &wav).api_key(Some(&key)))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("401 Unauthorized; check the API key (a key is set)"),
        "{message}"
    );
    assert!(message.contains(&base), "{message}");
    assert_key_hidden(&err);
}

#[tokio::test]
async fn server_error_quotes_status_and_body_start_without_the_key() {
    let long = format!("model overloaded, key {KEY} {}", "x".repeat(5_000));
    let (base, _server) = serve_once(json_reply(500, &long)).await;
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let key = key();
    let err = synthesis_router()
        .synthesize(SynthesisRequest::new(&config, "hi").api_key(Some(&key)))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("answered 500: model overloaded, key [REDACTED] xxx"),
        "{message}"
    );
    assert!(message.len() < 800, "{}", message.len());
    assert_key_hidden(&err);
}

#[tokio::test]
async fn malformed_json_is_reported() {
    for body in [r#"{"txt":"hello"}"#, "<html>not json</html>", ""] {
        let (base, _server) = serve_once(json_reply(200, body)).await;
        let config = SpeechProviderConfig::new("openai").endpoint(&base);
        let key = key();
        let wav = sample_wav();
        let err = recognition_router()
            .recognize(RecognitionRequest::new(&config, &wav).api_key(Some(&key)))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("OpenAI-compatible"),
            "{body}: {err}"
        );
        assert!(
            std::error::Error::source(&err)
                .is_some_and(|s| s.downcast_ref::<serde_json::Error>().is_some()),
            "{err:?}"
        );
        assert_key_hidden(&err);
    }
}

#[tokio::test]
async fn unreachable_port_is_a_connect_error_with_the_url() {
    let base = closed_port_url().await;
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let key = key();
    let wav = sample_wav();
    let err = recognition_router()
        .recognize(RecognitionRequest::new(&config, &wav).api_key(Some(&key)))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "could not connect to the speech service at {base}/v1/audio/transcriptions"
        )),
        "{message}"
    );
    assert_key_hidden(&err);
}

#[tokio::test]
async fn cancellation_returns_promptly_when_the_server_never_answers() {
    let (base, server) = serve_once(Reply::silent()).await;
    let config = SpeechProviderConfig::new("openai").endpoint(&base);
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let err = synthesis_router()
        .synthesize(SynthesisRequest::new(&config, "hello").cancel(cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(server);
}

#[tokio::test]
async fn bad_endpoints_are_rejected_before_any_request() {
    let openai = OpenAiSpeech::default();
    for endpoint in [
        "not a url",
        "ftp://example.com",
        "mailto:someone@example.com",
        "unix:/run/tts.sock",
    ] {
        let config = SpeechProviderConfig::new("openai").endpoint(endpoint);
        let err = openai
            .recognize(RecognitionRequest::new(&config, &[]))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("is not a valid http(s) URL"),
            "{endpoint}: {err}"
        );
    }
}

#[tokio::test]
async fn offline_without_a_local_endpoint_is_refused_before_any_request() {
    // No endpoint means api.openai.com; a remote one is refused as such.
    let key = key();
    for config in [
        SpeechProviderConfig::new("openai"),
        SpeechProviderConfig::new("openai").endpoint("https://api.openai.com"),
    ] {
        let err = synthesis_router()
            .synthesize(
                SynthesisRequest::new(&config, "hi")
                    .api_key(Some(&key))
                    .offline(true),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                SpeechError::NoLocalEndpoint { .. } | SpeechError::NotLocal { .. }
            ),
            "{config:?}: {err:?}"
        );
    }
}
