//! `oscova speech say --provider piper` end to end: the real binary (whose
//! default build has the `piper` feature), onnxruntime and the test voice
//! as `scripts/ensure-piper.sh` installs them, espeak-ng, and pocketsphinx
//! hearing the result, all with `--offline`. The runs get a fresh HOME, so
//! the assets are handed in by the variables the provider documents; a run
//! without them shows the "not installed" error.

use crate::support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use support::{oscova, run, temp_dir};

const VOICE: &str = "en_US-joe-medium";
const SENTENCE: &str = "open the door and turn on the light";

/// This process's cache folder, by the XDG rule the provider follows.
fn cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .expect("HOME is set")
        .join("oscova")
}

/// `oscova ARGS` with the installed piper assets.
fn with_piper(args: &[&str]) -> Command {
    let mut cmd = oscova(args);
    let voices = std::env::var_os("OSCOVA_PIPER_VOICES")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache().join("piper/voices"));
    let library = std::env::var_os("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache().join("onnxruntime/1.32.0/libonnxruntime.so.1.32.0"));
    assert!(
        voices.join(format!("{VOICE}.onnx")).is_file() && library.is_file(),
        "piper is not installed; run scripts/ensure-piper.sh"
    );
    cmd.env("OSCOVA_PIPER_VOICES", voices)
        .env("ORT_DYLIB_PATH", library)
        .env_remove("XDG_CACHE_HOME");
    cmd
}

#[test]
fn say_with_piper_offline_then_hear_it() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let out = temp_dir("piper-say").join("piper.wav");
    let file = out.to_str().unwrap();
    let (code, stdout, stderr) = run(&mut with_piper(&[
        "speech",
        "say",
        SENTENCE,
        "-o",
        file,
        "--provider",
        "piper",
        "--offline",
    ]));
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("(piper)"), "{stdout}");
    let (code, stdout, stderr) = run(&mut oscova(&["speech", "hear", file, "--offline"]));
    assert_eq!(code, 0, "stderr: {stderr}");
    let heard: Vec<String> = stdout.split_whitespace().map(str::to_lowercase).collect();
    let said: Vec<&str> = SENTENCE.split_whitespace().collect();
    let hits = said
        .iter()
        .filter(|w| heard.iter().any(|h| h == *w))
        .count();
    assert!(hits + 2 >= said.len(), "heard {stdout:?}");
}

#[test]
fn providers_lists_piper_with_its_voice() {
    let (code, stdout, stderr) = run(&mut with_piper(&["--json", "speech", "providers"]));
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let piper = doc["synthesis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "piper")
        .cloned()
        .unwrap_or_else(|| panic!("no piper in {doc}"));
    assert_eq!(
        (
            piper["local"].clone(),
            piper["default"].clone(),
            piper["origin"].clone()
        ),
        (json!(true), json!(false), json!("built-in")),
        "piper is never the default"
    );
    assert!(
        piper["voices"].as_array().unwrap().contains(&json!(VOICE)),
        "{piper}"
    );
}

#[test]
fn without_the_assets_piper_is_not_installed_and_says_how_to_install_it() {
    let out = temp_dir("piper-missing").join("x.wav");
    let mut cmd = oscova(&[
        "speech",
        "say",
        "hello",
        "-o",
        out.to_str().unwrap(),
        "--provider",
        "piper",
        "--offline",
    ]);
    cmd.env_remove("ORT_DYLIB_PATH")
        .env_remove("XDG_CACHE_HOME");
    let (code, _, stderr) = run(&mut cmd);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("not installed") && stderr.contains("scripts/ensure-piper.sh"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing was written");
    let (_, stdout, _) = run(&mut cmd_providers());
    assert!(
        stdout.contains("not installed: run scripts/ensure-piper.sh"),
        "{stdout}"
    );
}

fn cmd_providers() -> Command {
    let mut cmd = oscova(&["speech", "providers"]);
    cmd.env_remove("ORT_DYLIB_PATH")
        .env_remove("XDG_CACHE_HOME");
    cmd
}
