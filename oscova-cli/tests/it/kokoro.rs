//! `oscova speech say` with kokoro end to end: the real binary (whose
//! default build has the `piper` feature, which carries kokoro), Kokoro-82M
//! as `scripts/ensure-kokoro.sh` installs it into the cache the runs see,
//! espeak-ng, and the default recognizer hearing the result, all with
//! `--offline`. With kokoro installed it is the default of `say`.

use crate::support;

use serde_json::Value;
use support::{oscova, run, temp_dir};

const SENTENCE: &str = "open the door and turn on the light";

fn assert_installed() {
    assert_eq!(
        oscova_cli::default_synthesis().provider.as_str(),
        "kokoro",
        "kokoro is not installed; run scripts/ensure-kokoro.sh"
    );
}

/// Speaks with `extra` arguments, hears it back with the default
/// recognizer, and returns (say's JSON, the words heard).
fn say_and_hear(name: &str, extra: &[&str]) -> (Value, String) {
    let out = temp_dir(name).join("kokoro.wav");
    let file = out.to_str().unwrap();
    let mut args = vec!["--json", "speech", "say", SENTENCE, "-o", file, "--offline"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&mut oscova(&args));
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let said: Value = serde_json::from_str(&stdout).unwrap();
    let (code, heard, stderr) = run(&mut oscova(&["speech", "hear", file, "--offline"]));
    assert_eq!(code, 0, "stderr: {stderr}");
    (said, heard)
}

fn hits(heard: &str) -> usize {
    let heard: Vec<String> = heard
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    SENTENCE
        .split_whitespace()
        .filter(|w| heard.iter().any(|h| h == *w))
        .count()
}

#[test]
fn say_without_a_provider_speaks_with_kokoro_af_heart() {
    let _cores = oscova_test_support::cores::cores_blocking();
    assert_installed();
    let (said, heard) = say_and_hear("kokoro-default", &[]);
    assert_eq!(said["provider"], "kokoro", "{said}");
    let seconds = said["duration_seconds"].as_f64().unwrap();
    assert!((1.0..6.0).contains(&seconds), "{said}");
    let words = SENTENCE.split_whitespace().count();
    assert!(hits(&heard) + 1 >= words, "heard {heard:?}");
}

#[test]
fn a_uk_voice_is_chosen_with_voice() {
    let _cores = oscova_test_support::cores::cores_blocking();
    assert_installed();
    let (said, heard) = say_and_hear("kokoro-uk", &["--voice", "bf_emma"]);
    assert_eq!(said["provider"], "kokoro", "{said}");
    let words = SENTENCE.split_whitespace().count();
    assert!(hits(&heard) + 1 >= words, "heard {heard:?}");
    let out = temp_dir("kokoro-bad").join("x.wav");
    let (code, _, stderr) = run(&mut oscova(&[
        "speech",
        "say",
        "hello",
        "-o",
        out.to_str().unwrap(),
        "--voice",
        "zz_nobody",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("unknown voice `zz_nobody`") && stderr.contains("bf_emma"),
        "{stderr}"
    );
}
