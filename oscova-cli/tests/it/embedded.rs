//! The embedded model (`llamacpp`, the binary's default provider) end to
//! end: `oscova chat` with no config and no `--provider` answers offline
//! with a tool call, `models list` shows the catalog, and a missing model
//! is named with the command that installs it. Needs the default model,
//! installed by `scripts/ensure-llamacpp-model.sh` (`scripts/test.sh`).

use serde_json::Value;

use crate::support::{oscova, run, run_json, temp_dir};

/// The cache holding the installed model, as `clean_env` passes it on.
fn installed() {
    let (code, doc) = run_json(&["models", "list"]);
    assert_eq!(code, 0, "{doc}");
    let default = doc["models"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == "qwen2.5-coder-0.5b"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        default["installed"], true,
        "these tests need the model qwen2.5-coder-0.5b: run scripts/ensure-llamacpp-model.sh"
    );
}

#[test]
fn models_list_shows_the_embedded_catalog_with_sizes_and_licences() {
    installed();
    let (code, doc) = run_json(&["models", "list"]);
    assert_eq!(code, 0);
    assert_eq!(doc["provider"], "llamacpp");
    let models = doc["models"].as_array().unwrap();
    let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]);
    assert_eq!(models[0]["size"], 491_400_064u64);
    assert!(models.iter().all(|m| m["license"] == "Apache-2.0"));
    let (code, out, _) = run(&mut oscova(&["models", "list"]));
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("qwen2.5-coder-0.5b")
            && first.contains("MiB")
            && first.contains("Apache-2.0")
            && first.ends_with("  installed"),
        "{out}"
    );
    // An installed model pulls as done at once, with no download.
    let (code, out, err) = run(&mut oscova(&["models", "pull", "qwen2.5-coder-0.5b"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("pulled qwen2.5-coder-0.5b"), "{out}");
}

#[test]
fn chat_with_no_config_runs_the_embedded_model_offline_and_answers_from_the_time_tool() {
    let _cores = oscova_test_support::cores::cores_blocking();
    installed();
    let (code, doc) = run_json(&["chat", "--offline", "-m", "What time is it in Tokyo?"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["provider"], "llamacpp");
    assert_eq!(doc["model"], "qwen2.5-coder-0.5b");
    let calls = doc["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{doc}");
    assert_eq!(calls[0]["name"], "oscova_time__time__now");
    assert_eq!(calls[0]["arguments"]["zone"], "Asia/Tokyo");
    // The answer gives the hour and minute the tool returned.
    let result = calls[0]["result"]["content"].as_str().unwrap_or_default();
    let clock = result
        .split_whitespace()
        .find(|w| w.len() == 8 && w.as_bytes()[2] == b':')
        .unwrap_or_else(|| panic!("no time in the tool's result: {result}"));
    let answer = doc["answer"].as_str().unwrap();
    let minutes = &clock[..5];
    let unpadded = minutes.trim_start_matches('0');
    assert!(
        answer.contains(minutes) || answer.contains(unpadded),
        "{answer:?} does not say {minutes}"
    );
}

#[test]
fn without_the_model_chat_names_the_command_that_installs_it() {
    let mut cmd = oscova(&["chat", "--offline", "-m", "hi"]);
    cmd.env("XDG_CACHE_HOME", temp_dir("embedded-no-model"));
    let (code, _, err) = run(&mut cmd);
    assert_ne!(code, 0);
    assert!(
        err.contains("oscova models pull qwen2.5-coder-0.5b --provider llamacpp"),
        "{err}"
    );
}
