//! `oscova speech say|hear|providers` end to end: the real binary with the
//! local providers (flite and pocketsphinx, installed here), offline
//! refusals that make no connection, an OpenAI-compatible server on
//! 127.0.0.1 for the remote provider, bad input, `--json` shapes, Ctrl-C,
//! and the speech plugin's tools sharing the files root. Nothing here
//! connects anywhere but 127.0.0.1 (192.0.2.1 is refused before any
//! connection, which is the point of those tests).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use oscova_test_support::http::{Framing, Reply, Request, TestServer};
use serde_json::{Value, json};
use support::{oscova, run, run_async, run_json, temp_dir};

const SENTENCE: &str = "open the door and turn on the light";
const KEY: &str = "sk-test-speech-0123456789";
const KEY_VAR: &str = "OSCOVA_CREDENTIAL_OPENAI_API_KEY";

/// A 16-bit mono PCM WAV file of `samples` samples at `rate`.
fn wav_bytes(rate: u32, samples: usize) -> Vec<u8> {
    let data = (samples * 2) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for i in 0..samples {
        let sample = ((i * 97) % 2_000) as i16 - 1_000;
        out.extend_from_slice(&sample.to_le_bytes());
    }
    out
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Lowercase words without punctuation: whisper writes "Open the door.",
/// pocketsphinx "open the door".
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Speaks `text` offline into a fresh file and returns its path.
fn say_offline(text: &str) -> PathBuf {
    let out = temp_dir("speech-say").join("spoken.wav");
    let (code, stdout, stderr) = run(&mut oscova(&[
        "speech",
        "say",
        text,
        "-o",
        path_str(&out),
        "--offline",
    ]));
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    // kokoro where scripts/ensure-kokoro.sh installed it, else flite.
    let default = oscova_cli::default_synthesis().provider.as_str().to_owned();
    assert!(
        stdout.contains("s of speech") && stdout.contains(&default),
        "{stdout}"
    );
    out
}

#[test]
fn say_then_hear_offline_round_trip_with_the_local_providers() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let out = say_offline(SENTENCE);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    let (code, stdout, stderr) = run(&mut oscova(&[
        "speech",
        "hear",
        path_str(&out),
        "--offline",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let heard = words(&stdout);
    let expected = words(SENTENCE);
    let missing: Vec<&String> = expected.iter().filter(|w| !heard.contains(w)).collect();
    assert!(
        missing.len() <= 2
            && heard.contains(&"door".to_owned())
            && heard.contains(&"light".to_owned()),
        "said {SENTENCE:?}, heard {stdout:?}"
    );
}

#[test]
fn json_shapes_of_say_and_hear() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let out = temp_dir("speech-json").join("call.wav");
    let (code, doc) = run_json(&["speech", "say", "please call stella", "-o", path_str(&out)]);
    assert_eq!(code, 0, "{doc}");
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["bytes", "duration_seconds", "file", "provider"]);
    assert_eq!(
        doc["provider"],
        oscova_cli::default_synthesis().provider.as_str()
    );
    assert_eq!(doc["file"], path_str(&out));
    let size = std::fs::metadata(&out).unwrap().len();
    assert_eq!(doc["bytes"], size);
    let seconds = doc["duration_seconds"].as_f64().unwrap();
    // 16-bit mono at the default's rate (kokoro 24 kHz, flite kal16
    // 16 kHz): the duration follows from the size.
    let rate = if doc["provider"] == "kokoro" {
        24_000.0
    } else {
        16_000.0
    };
    let expected = (size - 44) as f64 / (2.0 * rate);
    assert!((seconds - expected).abs() < 0.01, "{seconds} vs {expected}");
    assert!(seconds > 0.5, "{seconds}");

    let (code, doc) = run_json(&["speech", "hear", path_str(&out), "--offline"]);
    assert_eq!(code, 0, "{doc}");
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // The default recognizer: whisper (which times its segments) when its
    // model is installed, else pocketsphinx.
    let default = oscova_cli::default_recognizer();
    if default == "whisper" {
        assert_eq!(keys, ["provider", "segments", "text"]);
        let segment = &doc["segments"][0];
        assert!(segment["end_seconds"].as_f64().unwrap() > 0.5, "{doc}");
    } else {
        assert_eq!(keys, ["provider", "text"]);
    }
    assert_eq!(doc["provider"], default);
    let text = doc["text"].as_str().unwrap().to_lowercase();
    assert!(text.contains("stella"), "{doc}");
}

#[test]
fn offline_refuses_a_remote_endpoint_fast_before_reading_anything() {
    let dir = temp_dir("speech-refused");
    let out = dir.join("never.wav");
    let missing = dir.join("missing.wav");
    let remote = "http://192.0.2.1:9";
    let cases: [Vec<&str>; 3] = [
        vec!["speech", "say", "hello", "-o", path_str(&out)],
        // The route is refused before the (missing) file is looked at.
        vec!["speech", "hear", path_str(&missing)],
        vec!["speech", "hear", path_str(&missing), "--provider", "openai"],
    ];
    for (i, base) in cases.iter().enumerate() {
        let mut args = base.clone();
        if i < 2 {
            args.extend(["--provider", "openai", "--endpoint", remote]);
        }
        args.push("--offline");
        let started = Instant::now();
        let (code, stdout, stderr) = run(&mut oscova(&args));
        assert_eq!(code, 3, "{args:?}: {stdout} {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{args:?} took {:?}",
            started.elapsed()
        );
        assert!(stderr.contains("offline operation is required"), "{stderr}");
        if i < 2 {
            assert!(
                stderr.contains("192.0.2.1") && stderr.contains("not on this machine"),
                "{stderr}"
            );
        }
        assert!(!out.exists());
    }
    let (code, doc) = run_json(&[
        "speech",
        "say",
        "hello",
        "-o",
        path_str(&out),
        "--provider",
        "openai",
        "--endpoint",
        remote,
        "--offline",
    ]);
    assert_eq!(code, 3);
    assert_eq!(doc["error"]["kind"], "not_local");
    assert_eq!(doc["error"]["exit_code"], 3);
}

fn transcription_server() -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    |request| match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/v1/audio/transcriptions") => {
            Reply::json(200, json!({"text": "hello from the loopback"}))
        }
        ("POST", "/v1/audio/speech") => Reply::stream(
            "audio/wav",
            Framing::Length,
            vec![wav_bytes(24_000, 12_000)],
        ),
        _ => Reply::json(404, json!({"error": {"message": "not found"}})),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_spelled_non_locally_gets_no_connection_offline() {
    let server = TestServer::start(transcription_server()).await;
    // `127.1` reaches 127.0.0.1, but the locality rule accepts only
    // canonical loopback literals, so offline it is refused.
    let endpoint = format!("http://127.1:{}", server.addr.port());
    let dir = temp_dir("speech-127-1");
    let input = dir.join("in.wav");
    std::fs::write(&input, wav_bytes(16_000, 8_000)).unwrap();
    let out = dir.join("out.wav");
    for args in [
        vec!["speech", "say", "hello", "-o", path_str(&out)],
        vec!["speech", "hear", path_str(&input)],
    ] {
        let mut args = args;
        args.extend(["--provider", "openai", "--endpoint", &endpoint, "--offline"]);
        let (code, _, stderr) = run_async(oscova(&args), None).await;
        assert_eq!(code, 3, "{args:?}: {stderr}");
        assert!(stderr.contains("127.1"), "{stderr}");
    }
    assert_eq!(server.connections(), 0, "no connection while offline");
    assert!(!out.exists());

    // The control: without --offline the same spelling does connect.
    let mut cmd = oscova(&[
        "speech",
        "hear",
        path_str(&input),
        "--provider",
        "openai",
        "--endpoint",
        &endpoint,
    ]);
    cmd.env(KEY_VAR, KEY);
    let (code, stdout, stderr) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "hello from the loopback");
    assert_eq!(server.connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_server_on_loopback_says_and_hears() {
    let server = TestServer::start(transcription_server()).await;
    let url = server.url();
    let dir = temp_dir("speech-openai");
    let out = dir.join("nova.wav");
    let mut cmd = oscova(&[
        "--json",
        "speech",
        "say",
        "Say \"hi\" -o naïvely",
        "-o",
        path_str(&out),
        "--provider",
        "openai",
        "--endpoint",
        &url,
        "--voice",
        "nova",
        "--offline",
    ]);
    cmd.env(KEY_VAR, KEY);
    let (code, stdout, stderr) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{stdout} {stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["provider"], "openai");
    assert_eq!(doc["bytes"], 44 + 24_000);
    assert_eq!(doc["duration_seconds"], 0.5);
    assert_eq!(std::fs::read(&out).unwrap(), wav_bytes(24_000, 12_000));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let speech = &requests[0];
    assert_eq!(
        (speech.method.as_str(), speech.path.as_str()),
        ("POST", "/v1/audio/speech")
    );
    assert_eq!(
        speech.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        speech.json(),
        json!({"model": "tts-1", "input": "Say \"hi\" -o naïvely", "voice": "nova", "response_format": "wav"})
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    // `hear` through the config's [speech] section: provider, endpoint,
    // model and offline from the file, the key from the user's credentials.
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[speech]\noffline = true\n[speech.hear]\nprovider = \"openai\"\nendpoint = \"{url}\"\nmodel = \"whisper-large-v3\"\n\
             [users.local.credentials]\n\"openai.api_key\" = \"{KEY}\"\n"
        ),
    )
    .unwrap();
    let cmd = oscova(&[
        "--config",
        path_str(&config),
        "speech",
        "hear",
        path_str(&out),
    ]);
    let (code, stdout, stderr) = run_async(cmd, None).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "hello from the loopback\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let heard = &requests[1];
    assert_eq!(heard.path, "/v1/audio/transcriptions");
    assert_eq!(
        heard.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = String::from_utf8_lossy(&heard.body);
    assert!(
        body.contains("whisper-large-v3") && body.contains("name=\"file\""),
        "{body}"
    );
    assert!(!stderr.contains(KEY));
}

#[test]
fn bad_input_files_are_usage_errors_with_the_reason() {
    let dir = temp_dir("speech-bad");
    let text = dir.join("notes.wav");
    std::fs::write(&text, "these are notes, not audio\n").unwrap();
    let empty = dir.join("empty.wav");
    std::fs::write(&empty, "").unwrap();
    let mp3 = dir.join("song.wav");
    std::fs::write(&mp3, b"ID3\x04\x00\x00\x00\x00\x00\x00mp3 frames").unwrap();
    let missing = dir.join("missing.wav");
    for (path, reason) in [
        (&text, "it is not a WAV file: it looks like text"),
        (&empty, "it is not a WAV file: it is empty"),
        (&mp3, "it is not a WAV file: it looks like MP3 audio"),
        (&missing, "No such file"),
        (&dir, "it is a folder"),
    ] {
        let (code, stdout, stderr) = run(&mut oscova(&["speech", "hear", path_str(path)]));
        assert_eq!(code, 2, "{path:?}: {stdout} {stderr}");
        assert_eq!(stdout, "");
        assert!(
            stderr.contains(&format!("cannot use {}", path.display())) && stderr.contains(reason),
            "{stderr}"
        );
    }
    let (code, doc) = run_json(&["speech", "hear", path_str(&text)]);
    assert_eq!(code, 2);
    assert_eq!(doc["error"]["kind"], "file");
}

#[test]
fn unknown_voices_providers_empty_text_and_missing_folders_are_usage_errors() {
    let dir = temp_dir("speech-usage");
    let out = dir.join("x.wav");
    let out_str = path_str(&out);
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &[
                "speech",
                "say",
                "hello",
                "-o",
                out_str,
                "--provider",
                "flite",
                "--voice",
                "kal17",
            ],
            "unknown_voice",
            "unknown voice `kal17`; available voices: kal16, slt, rms, awb, kal",
        ),
        (
            &[
                "speech",
                "say",
                "hello",
                "-o",
                out_str,
                "--provider",
                "acme.nope",
            ],
            "unknown_provider",
            if cfg!(feature = "piper") {
                "no speech provider has type `acme.nope`; known types: flite, kokoro, openai, piper"
            } else {
                "no speech provider has type `acme.nope`; known types: flite, openai"
            },
        ),
        (
            &["speech", "hear", out_str, "--provider", "flite"],
            "unknown_provider",
            if cfg!(feature = "whisper") {
                "known types: openai, pocketsphinx, whisper"
            } else {
                "known types: openai, pocketsphinx"
            },
        ),
        (
            &["speech", "say", "   ", "-o", out_str],
            "invalid_text",
            "invalid text: there is nothing to say",
        ),
        (
            &["speech", "say", "hello", "-o", "/nonexistent-oscova/x.wav"],
            "file",
            "the folder /nonexistent-oscova does not exist",
        ),
    ];
    for (args, kind, message) in cases {
        let (code, stdout, stderr) = run(&mut oscova(args));
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        let mut json_args = vec!["--json"];
        json_args.extend_from_slice(args);
        let (code, stdout, _) = run(&mut oscova(&json_args));
        assert_eq!(code, 2);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["error"]["kind"], kind, "{args:?}");
    }
    assert!(!out.exists(), "nothing was written");
}

#[test]
fn providers_lists_both_directions_with_voices_and_defaults() {
    let (code, doc) = run_json(&["speech", "providers"]);
    assert_eq!(code, 0, "{doc}");
    let find = |direction: &str, key: &str| -> Value {
        doc[direction]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("{direction} {key}: {doc}"))
    };
    let say_default = oscova_cli::default_synthesis().provider.as_str().to_owned();
    let flite = find("synthesis", "flite");
    assert_eq!(
        (
            flite["local"].clone(),
            flite["default"].clone(),
            flite["origin"].clone()
        ),
        (
            json!(true),
            json!(say_default == "flite"),
            json!("built-in")
        )
    );
    if cfg!(feature = "piper") {
        let kokoro = find("synthesis", "kokoro");
        assert_eq!(
            (kokoro["local"].clone(), kokoro["default"].clone()),
            (json!(true), json!(say_default == "kokoro"))
        );
    }
    assert_eq!(
        flite["voices"],
        json!(["kal16", "slt", "rms", "awb", "kal"])
    );
    let default = oscova_cli::default_recognizer();
    let sphinx = find("recognition", "pocketsphinx");
    assert_eq!(
        (sphinx["local"].clone(), sphinx["default"].clone()),
        (json!(true), json!(default == "pocketsphinx"))
    );
    if cfg!(feature = "whisper") {
        let whisper = find("recognition", "whisper");
        assert_eq!(
            (whisper["local"].clone(), whisper["default"].clone()),
            (json!(true), json!(default == "whisper"))
        );
        assert!(
            whisper["name"].as_str().unwrap().contains("model"),
            "{whisper}"
        );
    }
    for direction in ["synthesis", "recognition"] {
        let openai = find(direction, "openai");
        assert_eq!(
            (openai["local"].clone(), openai["default"].clone()),
            (json!(false), json!(false))
        );
    }
    let (code, stdout, _) = run(&mut oscova(&["speech", "providers"]));
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("synthesis (oscova speech say)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("recognition (oscova speech hear)"),
        "{stdout}"
    );
}

#[test]
fn the_speech_tools_share_the_files_root_with_the_files_plugin() {
    let root = temp_dir("speech-root");
    let call = |tool: &str, args: &str| {
        let mut cmd = oscova(&[
            "--json", "tools", "call", tool, "--yes", "--user", "alice", "--args", args,
        ]);
        cmd.env("OSCOVA_FILES_ROOT", &root);
        let (code, stdout, stderr) = run(&mut cmd);
        assert_eq!(code, 0, "{tool}: {stdout} {stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let spoken = call(
        "oscova_speech__speech__speak",
        r#"{"text": "what time is it in berlin", "path": "berlin.wav"}"#,
    );
    assert_eq!(spoken["is_error"], false, "{spoken}");
    assert!(root.join("alice/berlin.wav").is_file());
    let listed = call("oscova_files__files__list", r#"{"path": "."}"#);
    assert!(
        listed["content"].as_str().unwrap().contains("berlin.wav"),
        "{listed}"
    );
    let heard = call(
        "oscova_speech__speech__transcribe",
        r#"{"path": "berlin.wav"}"#,
    );
    // Whisper (the default when its model is installed) writes "Berlin".
    let text = heard["content"].as_str().unwrap().to_lowercase();
    assert!(text.contains("berlin"), "{heard}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_say_and_drops_the_connection() {
    let server = TestServer::start(|_| {
        let head = wav_bytes(24_000, 100)[..44].to_vec();
        Reply::stream("audio/wav", Framing::Chunked, vec![head]).hanging()
    })
    .await;
    let out = temp_dir("speech-ctrl-c").join("never.wav");
    let cmd = oscova(&[
        "--json",
        "speech",
        "say",
        "a long speech",
        "-o",
        path_str(&out),
        "--provider",
        "openai",
        "--endpoint",
        &server.url(),
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(std::process::Stdio::piped()).kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests().is_empty() {
        assert!(Instant::now() < deadline, "no request arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    support::interrupt(child.id().unwrap());
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "cancelled");
    assert!(server.wait_dropped(Duration::from_secs(10)).await);
    assert!(!out.exists());
}
