//! Unit tests of the `flite` provider; they run the real `flite` program.

use super::*;
use crate::wav::decode;
use oscova_core::provider::speech::SpeechProviderConfig;
use std::time::{Duration, Instant};

fn spec_of(wav: &[u8]) -> hound::WavSpec {
    hound::WavReader::new(std::io::Cursor::new(wav))
        .unwrap()
        .spec()
}

/// A shell script at `path` that runs `body`, executable.
fn script(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn every_known_voice_speaks() {
    let flite = FliteSynthesizer::new();
    for voice in FLITE_VOICES {
        let wav = flite
            .speak("hello world", voice, &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{voice}: {e}"));
        let expected_rate = if voice == "kal" { 8_000 } else { 16_000 };
        assert_eq!(spec_of(&wav).sample_rate, expected_rate, "{voice}");
        assert!(decode(&wav).unwrap().duration() > Duration::from_millis(300));
    }
}

#[tokio::test]
async fn the_provider_picks_request_then_config_then_default_voice() {
    let flite = FliteSynthesizer::new();
    let config = SpeechProviderConfig::new("flite").voice("kal");
    let rate = |audio: SynthesizedAudio| spec_of(&audio.wav).sample_rate;
    // The configuration's 8 kHz voice...
    let audio = flite
        .synthesize(SynthesisRequest::new(&config, "hello"))
        .await
        .unwrap();
    assert_eq!(rate(audio), 8_000);
    // ...unless the request names another.
    let audio = flite
        .synthesize(SynthesisRequest::new(&config, "hello").voice(Some("slt")))
        .await
        .unwrap();
    assert_eq!(rate(audio), 16_000);
    // No voice anywhere: kal16.
    let plain = SpeechProviderConfig::new("flite");
    let audio = flite
        .synthesize(SynthesisRequest::new(&plain, "hello"))
        .await
        .unwrap();
    assert_eq!(rate(audio), 16_000);
    assert_eq!(flite.voices(), FLITE_VOICES.map(String::from));
    assert!(flite.default_is_local_endpoint());
    assert_eq!(flite.type_key(), "flite");
}

#[tokio::test]
async fn unknown_voice_fails_before_running() {
    // A program that does not exist proves nothing was started.
    let flite = FliteSynthesizer::new().with_program("oscova-no-such-flite");
    let config = SpeechProviderConfig::new("flite");
    let err = flite
        .synthesize(SynthesisRequest::new(&config, "hello").voice(Some("kal17")))
        .await
        .unwrap_err();
    let SpeechError::UnknownVoice { voice, known } = &err else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(voice, "kal17");
    assert_eq!(known, &FLITE_VOICES.map(String::from));
    assert_eq!(
        err.to_string(),
        "unknown voice `kal17`; available voices: kal16, slt, rms, awb, kal"
    );
}

#[tokio::test]
async fn text_that_looks_like_options_is_spoken() {
    let flite = FliteSynthesizer::new();
    let cancel = CancellationToken::new();
    for text in ["-o", "--help", "-voice slt", "-f /etc/passwd"] {
        let wav = flite.speak(text, "kal16", &cancel).await.unwrap();
        assert_eq!(spec_of(&wav).sample_rate, 16_000, "{text}");
        let pcm = decode(&wav).unwrap();
        assert!(
            pcm.duration() < Duration::from_secs(5),
            "{text}: {:?}",
            pcm.duration()
        );
    }
}

#[tokio::test]
async fn empty_text_is_invalid_text() {
    let config = SpeechProviderConfig::new("flite");
    let err = FliteSynthesizer::new()
        .synthesize(SynthesisRequest::new(&config, " \n\t"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::InvalidText(_)), "{err:?}");
    assert!(err.to_string().contains("no text to speak"), "{err}");
}

#[tokio::test]
async fn missing_program_names_the_debian_package() {
    let config = SpeechProviderConfig::new("flite");
    let err = FliteSynthesizer::new()
        .with_program("oscova-no-such-flite")
        .synthesize(SynthesisRequest::new(&config, "hello"))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Provider { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("oscova-no-such-flite"), "{message}");
    assert!(message.contains("apt-get install flite"), "{message}");
    let source = std::error::Error::source(&err).unwrap();
    assert!(source.downcast_ref::<SpawnError>().is_some(), "{source:?}");
}

#[tokio::test]
async fn a_failing_program_reports_its_stderr() {
    let scratch = tempfile::tempdir().unwrap();
    let fake = scratch.path().join("flite");
    script(&fake, "echo 'cannot open voice' >&2\nexit 4");
    let err = FliteSynthesizer::new()
        .with_program(fake.to_str().unwrap())
        .speak("hello", "kal16", &CancellationToken::new())
        .await
        .unwrap_err();
    let message = SpeechError::from(err).to_string();
    assert!(message.contains("cannot open voice"), "{message}");
    assert!(message.contains("exit status: 4"), "{message}");
}

#[tokio::test]
async fn exit_status_zero_without_audio_is_still_an_error() {
    // flite's own habit: status 0 although nothing was written.
    let scratch = tempfile::tempdir().unwrap();
    let fake = scratch.path().join("flite");
    script(&fake, "exit 0");
    let err = FliteSynthesizer::new()
        .with_program(fake.to_str().unwrap())
        .speak("hello", "kal16", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Io { .. }), "{err:?}");
    // And a file that is not a WAV.
    script(&fake, "printf 'garbage' > \"$6\"");
    let err = FliteSynthesizer::new()
        .with_program(fake.to_str().unwrap())
        .speak("hello", "kal16", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::EngineOutput { .. }), "{err:?}");
}

#[tokio::test]
async fn cancellation_stops_a_long_synthesis() {
    let text = "this sentence is spoken many times over. ".repeat(400);
    let config = SpeechProviderConfig::new("flite");
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let err = FliteSynthesizer::new()
        .synthesize(SynthesisRequest::new(&config, &text).cancel(cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, SpeechError::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn runs_flite_with_a_text_file_and_removes_temporary_files() {
    // A wrapper that records its arguments, then runs the real flite.
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("args.log");
    let wrapper = scratch.path().join("flite-wrapper");
    script(
        &wrapper,
        &format!(
            "printf '%s\\n' \"$@\" > '{}'\nexec flite \"$@\"",
            log.display()
        ),
    );

    let wav = FliteSynthesizer::new()
        .with_program(wrapper.to_str().unwrap())
        .speak("-clean up after yourself", "slt", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(spec_of(&wav).sample_rate, 16_000);

    let logged = std::fs::read_to_string(&log).unwrap();
    let args: Vec<&str> = logged.lines().collect();
    assert_eq!(args.len(), 6, "{args:?}");
    assert_eq!(&args[..3], ["-voice", "slt", "-f"]);
    assert!(args[3].ends_with("/input.txt"), "{args:?}");
    assert_eq!(args[4], "-o");
    assert!(args[5].ends_with("/output.wav"), "{args:?}");
    let work_dir = std::path::Path::new(args[3]).parent().unwrap();
    assert!(!work_dir.exists(), "{} was left behind", work_dir.display());
}

#[tokio::test]
async fn flite_runs_with_the_policy_environment_without_secrets() {
    // The provider's policy builds the child's whole environment: a fixed
    // base here, holding secrets the child must not see.
    let scratch = tempfile::tempdir().unwrap();
    let env_log = scratch.path().join("env.log");
    let wrapper = scratch.path().join("flite-env");
    script(
        &wrapper,
        &format!("env > '{}'\nexec flite \"$@\"", env_log.display()),
    );
    let path = std::env::var("PATH").unwrap();
    let policy = ProcessSpawnPolicy::with_base_env([
        ("PATH", path.as_str()),
        ("LANG", "C.UTF-8"),
        ("OPENAI_API_KEY", "sk-must-not-leak"),
        ("Speech__ApiKey", "sk-must-not-leak-2"),
        ("GITHUB_TOKEN", "ghp-must-not-leak"),
        ("DB_PASSWORD", "pw-must-not-leak"),
    ]);
    let config = SpeechProviderConfig::new("flite");
    let audio = FliteSynthesizer::new()
        .with_policy(policy)
        .with_program(wrapper.to_str().unwrap())
        .synthesize(SynthesisRequest::new(&config, "hello"))
        .await
        .unwrap();
    assert!(!audio.wav.is_empty());

    let env = std::fs::read_to_string(&env_log).unwrap();
    let names: Vec<&str> = env
        .lines()
        .filter_map(|line| line.split('=').next())
        .collect();
    assert!(
        names.contains(&"PATH") && names.contains(&"LANG"),
        "{names:?}"
    );
    for secret in [
        "OPENAI_API_KEY",
        "Speech__ApiKey",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
    ] {
        assert!(!names.contains(&secret), "{secret} leaked: {names:?}");
    }
    assert!(!env.contains("must-not-leak"), "{env}");
}

#[test]
fn byte_rate_is_repaired_for_8k_voices() {
    let mut wav = crate::wav::encode_wav(&crate::wav::Pcm16kMono {
        samples: vec![1; 8],
    });
    wav[24..28].copy_from_slice(&8_000u32.to_le_bytes());
    wav[28..32].copy_from_slice(&32_000u32.to_le_bytes());
    repair_byte_rate(&mut wav);
    assert_eq!(
        u32::from_le_bytes([wav[28], wav[29], wav[30], wav[31]]),
        16_000
    );
    // Too short to be flite's header: left alone.
    let mut short = b"RIFF".to_vec();
    repair_byte_rate(&mut short);
    assert_eq!(short, b"RIFF");
}
