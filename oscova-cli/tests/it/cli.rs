//! The `oscova` binary end to end: commands, output and exit codes.

use crate::support;

use serde_json::json;
use support::{oscova, run, run_json, temp_dir};

const ECHO: &str = "acme_search__example__example_echo";
const SEARCH: &str = "acme_search__example__search_records";
const COUNT: &str = "acme_search__example__slow_count";

fn config_file(text: &str) -> String {
    let path = temp_dir("config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn help_and_version_succeed() {
    let (code, out, _) = run(&mut oscova(&["--help"]));
    assert_eq!(code, 0);
    for command in ["plugins", "tools", "mcp"] {
        assert!(out.contains(command), "{out}");
    }
    let (code, out, _) = run(&mut oscova(&["--version"]));
    assert_eq!(code, 0);
    assert!(out.starts_with("oscova "), "{out}");
}

#[test]
fn plugins_lists_what_loaded() {
    let (code, doc) = run_json(&["plugins"]);
    assert_eq!(code, 0);
    let plugins = doc["plugins"].as_array().unwrap();
    let seed = plugins.iter().find(|p| p["id"] == "acme.search").unwrap();
    assert_eq!(seed["name"], "Acme Search");
    assert_eq!(seed["tools"], 3);
    assert!(seed["version"].is_string());
    assert_eq!(doc["diagnostics"], json!([]));

    let (code, out, _) = run(&mut oscova(&["plugins"]));
    assert_eq!(code, 0);
    assert!(
        out.contains("acme.search") && out.contains("(3 tools)"),
        "{out}"
    );
}

#[test]
fn tools_list_shows_the_catalog() {
    let (code, doc) = run_json(&["tools", "list"]);
    assert_eq!(code, 0);
    assert_eq!(doc["user"], "local");
    assert_eq!(doc["profile"], "raw");
    assert_eq!(doc["unsupported"], json!([]));
    let tools = doc["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [ECHO, SEARCH, COUNT] {
        assert!(names.contains(&name), "{names:?}");
    }
    let search = tools.iter().find(|t| t["name"] == SEARCH).unwrap();
    assert_eq!(search["approval"], "required");
    assert_eq!(search["network_scope"], "none");
    assert_eq!(search["plugin"], "acme.search");
    assert_eq!(search["input_schema"]["type"], "object");

    let (code, out, _) = run(&mut oscova(&["tools", "list"]));
    assert_eq!(code, 0);
    assert!(out.contains(ECHO) && out.contains("required"), "{out}");
}

#[test]
fn the_user_comes_from_the_flag_the_environment_or_the_config() {
    let config = config_file("default_user = \"alice\"\n");
    let (_, doc) = run_json(&["--config", &config, "tools", "list"]);
    assert_eq!(doc["user"], "alice");
    let (_, doc) = run_json(&["--config", &config, "tools", "list", "--user", "bob"]);
    assert_eq!(doc["user"], "bob");
    let mut cmd = oscova(&["--json", "--config", &config, "tools", "list"]);
    cmd.env("OSCOVA_USER", "carol");
    let (_, out, _) = run(&mut cmd);
    assert!(out.contains("\"user\": \"carol\""), "{out}");
    let mut cmd = oscova(&["--json", "tools", "list"]);
    cmd.env("OSCOVA_CONFIG", &config);
    let (_, out, _) = run(&mut cmd);
    assert!(out.contains("\"user\": \"alice\""), "{out}");
}

#[test]
fn tools_show_describes_one_tool() {
    let (code, doc) = run_json(&["tools", "show", SEARCH]);
    assert_eq!(code, 0);
    assert_eq!(doc["name"], SEARCH);
    assert_eq!(doc["approval"], "required");
    assert_eq!(doc["network_scope"], "none");
    assert_eq!(doc["toolset"], "ExampleToolset");
    assert!(doc["description"].as_str().unwrap().contains("records"));
    assert_eq!(doc["input_schema"]["properties"]["query"]["type"], "string");

    let (code, doc) = run_json(&["tools", "show", SEARCH, "--profile", "openai"]);
    assert_eq!(code, 0);
    assert_eq!(doc["input_schema"]["additionalProperties"], false);

    let (code, out, _) = run(&mut oscova(&["tools", "show", ECHO]));
    assert_eq!(code, 0);
    assert!(
        out.contains("approval:") && out.contains("\"text\""),
        "{out}"
    );

    let (code, doc) = run_json(&["tools", "show", "no_such__tool__x"]);
    assert_eq!(code, 2);
    assert_eq!(doc["error"]["kind"], "unknown_tool");
}

#[test]
fn tools_call_prints_the_result() {
    let (code, out, err) = run(&mut oscova(&[
        "tools",
        "call",
        ECHO,
        "--args",
        r#"{"text":"hi"}"#,
    ]));
    assert_eq!((code, out.as_str(), err.as_str()), (0, "hi\n", ""));

    let (code, doc) = run_json(&["tools", "call", ECHO, "--args", r#"{"text":"hi"}"#]);
    assert_eq!(code, 0);
    assert_eq!(doc, json!({"content": "hi", "is_error": false}));
}

#[test]
fn a_tool_error_exits_1_with_the_message() {
    let args = [
        "tools",
        "call",
        SEARCH,
        "--args",
        r#"{"query":"  "}"#,
        "--yes",
    ];
    let (code, out, err) = run(&mut oscova(&args));
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(err.contains("the query is empty"), "{err}");

    let (code, doc) = run_json(&args);
    assert_eq!(code, 1);
    assert_eq!(doc["is_error"], true);
    assert!(
        doc["content"]
            .as_str()
            .unwrap()
            .contains("the query is empty")
    );
}

#[test]
fn a_required_tool_without_a_terminal_runs_only_with_yes() {
    let args = ["tools", "call", SEARCH, "--args", r#"{"query":"plan"}"#];
    let (code, out, err) = run(&mut oscova(&args));
    assert_eq!(code, 3, "{err}");
    assert_eq!(out, "");
    assert!(
        err.contains("not approved") && err.contains("--yes"),
        "{err}"
    );

    let (code, doc) = run_json(&args);
    assert_eq!(code, 3);
    assert_eq!(doc["error"]["kind"], "denied");
    assert_eq!(doc["error"]["exit_code"], 3);

    let mut with_yes = args.to_vec();
    with_yes.push("--yes");
    let (code, doc) = run_json(&with_yes);
    assert_eq!(code, 0);
    assert_eq!(
        doc["details"],
        json!([{"id": 3, "title": "Quarterly plan"}])
    );
}

#[test]
fn default_approval_from_the_config_covers_default_tools() {
    let config = config_file("default_approval = \"required\"\n");
    let args = [
        "--config",
        &config,
        "tools",
        "call",
        ECHO,
        "--args",
        r#"{"text":"x"}"#,
    ];
    let (code, _, err) = run(&mut oscova(&args));
    assert_eq!(code, 3, "{err}");
    let mut with_yes = args.to_vec();
    with_yes.push("-y");
    let (code, out, _) = run(&mut oscova(&with_yes));
    assert_eq!((code, out.as_str()), (0, "x\n"));
}

#[test]
fn usage_and_config_errors_exit_2() {
    let cases: [&[&str]; 6] = [
        &["tools", "call", ECHO, "--args", "{not json"],
        &["tools", "call", ECHO, "--args", "[1]"],
        &["tools", "call", ECHO, "--args", r#"{"txt":"hi"}"#],
        &["tools", "call", "no_such__tool__x"],
        &["tools", "list", "--profile", "claude"],
        &["tools", "frobnicate"],
    ];
    for args in cases {
        let (code, out, err) = run(&mut oscova(args));
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert!(!err.is_empty(), "{args:?}");
    }
    let (_, doc) = run_json(&["tools", "call", ECHO, "--args", r#"{"txt":"hi"}"#]);
    assert_eq!(doc["error"]["kind"], "invalid_arguments");
    assert!(doc["error"]["message"].as_str().unwrap().contains("text"));

    let bad = config_file("default_user = 3\n");
    let (code, doc) = run_json(&["--config", &bad, "plugins"]);
    assert_eq!(code, 2);
    assert_eq!(doc["error"]["kind"], "config");
    let (code, doc) = run_json(&["--config", "/nonexistent/oscova.toml", "plugins"]);
    assert_eq!(code, 2);
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/oscova.toml")
    );
}

#[test]
fn progress_stays_off_a_non_terminal() {
    let args = ["tools", "call", COUNT, "--args", r#"{"to":3,"delay_ms":1}"#];
    let (code, out, err) = run(&mut oscova(&args));
    assert_eq!((code, out.as_str(), err.as_str()), (0, "3\n", ""));
}

#[test]
fn the_time_zone_reaches_the_tools() {
    const NOW: &str = "oscova_time__time__now";
    let mut cmd = oscova(&["--json", "tools", "call", NOW]);
    cmd.env("OSCOVA_TIME_ZONE", "Asia/Tokyo");
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["details"]["time"]["zone"], "Asia/Tokyo", "{doc}");
    assert_eq!(doc["details"]["zone_source"], "user");

    let config = config_file("[users.alice]\ntime_zone = \"America/New_York\"\n");
    let (code, doc) = run_json(&["--config", &config, "tools", "call", NOW, "--user", "alice"]);
    assert_eq!(code, 0);
    assert_eq!(doc["details"]["time"]["zone"], "America/New_York", "{doc}");
}

#[test]
fn the_first_party_plugins_are_linked() {
    let (_, doc) = run_json(&["plugins"]);
    let ids: Vec<&str> = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    // In the order `main.rs` names them, whatever the linker kept.
    assert_eq!(
        ids,
        [
            "acme.search",
            "oscova.time",
            "oscova.files",
            "oscova.web",
            "oscova.speech",
            "oscova.openai",
            "oscova.ollama",
            "oscova.a2a",
            "oscova.llamacpp",
            "oscova.mcp"
        ]
    );
}
