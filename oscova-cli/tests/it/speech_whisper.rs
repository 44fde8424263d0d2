//! `oscova speech hear --model` and the model `speech providers` names
//! for whisper (the config's, else the installed default); long audio's
//! progress on stderr and timed segments in `--json`; and `oscova mcp`
//! keeping the model loaded between calls.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{oscova, run, run_json, temp_dir};

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn hear_takes_a_model_and_providers_names_the_one_it_would_use() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let whisper = |doc: &Value| -> Value {
        doc["recognition"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == "whisper")
            .cloned()
            .unwrap_or_else(|| panic!("{doc}"))
    };
    // Without a config: whisper's installed default (none: no model).
    let (code, doc) = run_json(&["speech", "providers"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        whisper(&doc)["model"],
        json!(oscova_speech::providers::WhisperRecognizer::installed_model())
    );
    // The config's [speech.hear] model, when the table is whisper's.
    let dir = temp_dir("speech-model");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[speech.hear]\nprovider = \"whisper\"\nmodel = \"tiny.en-q8_0\"\n",
    )
    .unwrap();
    let (code, doc) = run_json(&["--config", path_str(&config), "speech", "providers"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(whisper(&doc)["model"], "tiny.en-q8_0");

    // `--model` overrides the config's: a model that is not there is named
    // in the refusal, before anything is decoded.
    let wav = dir.join("quiet.wav");
    let pcm = oscova_speech::wav::Pcm16kMono {
        samples: (0..16_000)
            .map(|i| ((i * 97) % 2_000) as i16 - 1_000)
            .collect(),
    };
    std::fs::write(&wav, oscova_speech::wav::encode_wav(&pcm)).unwrap();
    let missing = dir.join("no-such-model");
    let (code, _, stderr) = run(&mut oscova(&[
        "--config",
        path_str(&config),
        "speech",
        "hear",
        path_str(&wav),
        "--model",
        path_str(&missing),
    ]));
    assert_ne!(code, 0);
    assert!(stderr.contains(path_str(&missing)), "{stderr}");
    let (code, _, stderr) = run(&mut oscova(&[
        "speech",
        "hear",
        path_str(&wav),
        "--provider",
        "whisper",
        "--model",
        "base-q4_0",
    ]));
    assert_ne!(code, 0);
    assert!(stderr.contains("-q8_0 or -q5_0"), "{stderr}");
    // An installed model by name decodes (1 s of silence: few or no words).
    if oscova_speech::providers::WhisperRecognizer::installed_model().is_some() {
        let (code, doc) = run_json(&[
            "speech",
            "hear",
            path_str(&wav),
            "--provider",
            "whisper",
            "--model",
            "tiny.en",
        ]);
        assert_eq!((code, &doc["provider"]), (0, &json!("whisper")), "{doc}");
    }
}

/// `[a/b] seconds of audio heard` lines of stderr, as (a, b).
fn progress_lines(stderr: &str) -> Vec<(f64, f64)> {
    stderr
        .lines()
        .filter(|l| l.ends_with("] seconds of audio heard"))
        .map(|l| {
            let figures = l.split_once('[').unwrap().1.split_once(']').unwrap().0;
            let (done, total) = figures.split_once('/').unwrap();
            (done.parse().unwrap(), total.parse().unwrap())
        })
        .collect()
}

/// Issue 29: 40 s of speech (the LibriVox clips joined) is heard by
/// whisper's default model window by window: progress on stderr, a line
/// per window and one at the end; on stdout the JSON document alone, with
/// the segments' times. A short clip shows no progress, and its transcript
/// is all of stdout.
#[test]
fn hear_shows_the_progress_of_long_audio_on_stderr() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let dir = temp_dir("speech-long");
    let long = oscova_test_support::librivox::joined(35.0);
    let file = dir.join("long.wav");
    std::fs::write(&file, &long.wav).unwrap();
    let (code, stdout, stderr) = run(&mut oscova(&[
        "--json",
        "speech",
        "hear",
        path_str(&file),
        "--provider",
        "whisper",
    ]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    println!("{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(doc["provider"], "whisper");
    let (errors, total) =
        oscova_test_support::librivox::score(&long.reference, doc["text"].as_str().unwrap());
    assert!(errors * 10 <= total, "{errors} of {total}: {doc}");

    let progress = progress_lines(&stderr);
    let whole = (long.seconds * 10.0).round() / 10.0;
    assert!(progress.iter().all(|p| p.1 == whole), "{progress:?}");
    assert_eq!(progress.first().map(|p| p.0), Some(0.0), "{stderr}");
    assert_eq!(progress.last().map(|p| p.0), Some(whole), "{stderr}");
    assert!(progress.windows(2).all(|w| w[0].0 < w[1].0), "{progress:?}");
    assert!(
        progress.iter().any(|p| p.0 > 0.0 && p.0 <= 30.0),
        "one window only: {progress:?}"
    );

    let segments = doc["segments"].as_array().unwrap();
    let times: Vec<(f64, f64)> = segments
        .iter()
        .map(|s| {
            (
                s["start_seconds"].as_f64().unwrap(),
                s["end_seconds"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(times.len() >= 4 && times[0].0 < 2.0, "{times:?}");
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

    let clip = &oscova_test_support::librivox::clips()[4];
    let short = dir.join("short.wav");
    std::fs::write(&short, &clip.wav).unwrap();
    let (code, stdout, stderr) = run(&mut oscova(&[
        "speech",
        "hear",
        path_str(&short),
        "--provider",
        "whisper",
        "--model",
        "tiny.en",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(progress_lines(&stderr).is_empty(), "{stderr}");
    assert_eq!(stdout, "He might even have been made amiable himself.\n");
}

/// The warm host: `oscova mcp` loads the model on the first call
/// and keeps it. The model is a folder of links to tiny.en that the test
/// owns; once the first call has heard a clip, the folder's model.bin is
/// replaced by junk, and the next call still hears it, which it could not
/// if the host loaded the model again.
#[tokio::test]
async fn a_long_running_host_keeps_the_model_loaded_between_calls() {
    let _cores = oscova_test_support::cores::cores().await;
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;

    let dir = temp_dir("speech-warm");
    let installed = oscova_speech::providers::WhisperRecognizer::cache_dir()
        .unwrap()
        .join("tiny.en");
    assert!(
        installed.join("model.bin").is_file(),
        "tiny.en is not installed; run scripts/ensure-whisper-model.sh"
    );
    let model = dir.join("model");
    std::fs::create_dir(&model).unwrap();
    for file in ["model.bin", "vocabulary.txt"] {
        std::os::unix::fs::symlink(installed.join(file), model.join(file)).unwrap();
    }
    let root = dir.join("files");
    std::fs::create_dir_all(root.join("alice")).unwrap();
    let clip = &oscova_test_support::librivox::clips()[4];
    std::fs::write(root.join("alice/clip.wav"), &clip.wav).unwrap();

    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.args(["mcp", "--user", "alice"]);
    support::clean_env(cmd.as_std_mut());
    cmd.env("OSCOVA_FILES_ROOT", &root)
        .env("OSCOVA_WHISPER_MODEL", &model);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let transcribe = || async {
        let arguments = json!({"path": "clip.wav"}).as_object().unwrap().clone();
        let result = client
            .call_tool(
                CallToolRequestParams::new("oscova_speech__speech__transcribe")
                    .with_arguments(arguments),
            )
            .await
            .unwrap();
        let doc = serde_json::to_value(&result).unwrap();
        assert_ne!(doc["isError"], json!(true), "{doc}");
        doc["content"][0]["text"].as_str().unwrap().to_owned()
    };
    let first = transcribe().await;
    assert_eq!(first, "He might even have been made amiable himself.");
    std::fs::remove_file(model.join("model.bin")).unwrap();
    std::fs::write(model.join("model.bin"), b"not a model").unwrap();
    assert_eq!(transcribe().await, first);
    client.cancel().await.unwrap();

    // A new process loads the folder afresh, and finds the junk.
    let (code, _, stderr) = run(oscova(&[
        "speech",
        "hear",
        path_str(&root.join("alice/clip.wav")),
        "--provider",
        "whisper",
        "--model",
        path_str(&model),
    ])
    .env("OSCOVA_FILES_ROOT", &root));
    assert_ne!(code, 0);
    assert!(stderr.contains(path_str(&model)), "{stderr}");
}
