//! `oscova speech hear --model` and the model `speech providers` names
//! for whisper (the config's, else the installed default).

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{oscova, run, run_json, temp_dir};

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn hear_takes_a_model_and_providers_names_the_one_it_would_use() {
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
        json!(oscova_speech::WhisperRecognizer::installed_model())
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
    let pcm = oscova_speech::Pcm16kMono {
        samples: (0..16_000)
            .map(|i| ((i * 97) % 2_000) as i16 - 1_000)
            .collect(),
    };
    std::fs::write(&wav, oscova_speech::encode_wav(&pcm)).unwrap();
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
    if oscova_speech::WhisperRecognizer::installed_model().is_some() {
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
