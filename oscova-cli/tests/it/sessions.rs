//! `oscova sessions` and `oscova chat --session` end to end: the real
//! binary, a SQLite store in a temporary folder (named by `[sessions]
//! path` in a config file, relative to it), and an OpenAI-compatible
//! model on 127.0.0.1 that records every request, so a test sees what
//! context the model was sent. `sessions_store` checks the `[sessions]`
//! section and runs the same commands on Postgres.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use oscova_test_support::http::{Framing, Reply, Request, TestServer, awkward};
use serde_json::{Value, json};
use support::{oscova, run, run_async, temp_dir};

const ECHO: &str = "acme_search__example__example_echo";
const KEY: &str = "sk-sessions-test-0123456789abcdef";

/// A config file whose `[sessions]` section is `section`, in a fresh
/// folder.
pub(crate) fn config_with(section: &str) -> PathBuf {
    let dir = temp_dir("sessions");
    let path = dir.join("config.toml");
    std::fs::write(&path, format!("[sessions]\n{section}\n")).unwrap();
    path
}

/// A config keeping sessions in `sessions.db` beside it.
pub(crate) fn sqlite_config() -> PathBuf {
    config_with("path = \"sessions.db\"")
}

pub(crate) fn cmd(config: &Path, args: &[&str]) -> Command {
    let mut all = vec!["--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    oscova(&all)
}

/// Runs with `--json`; (exit code, stdout as JSON).
pub(crate) fn json_of(config: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&mut cmd(config, &all));
    let value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}\nstderr: {err}"));
    (code, value)
}

pub(crate) fn sse_event(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

pub(crate) fn text_reply(text: &str) -> Reply {
    let body = sse_event(json!({"role": "assistant", "content": text}), None)
        + &sse_event(json!({}), Some("stop"))
        + "data: [DONE]\n\n";
    Reply::stream(
        "text/event-stream",
        Framing::Chunked,
        awkward(body.as_bytes()),
    )
}

/// A streamed answer that calls tool `name` (id `call_1`) with
/// `arguments`, a JSON text.
pub(crate) fn call_reply(name: &str, arguments: &str) -> Reply {
    let call = sse_event(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": name, "arguments": arguments}}]}),
        None,
    ) + &sse_event(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n";
    Reply::stream(
        "text/event-stream",
        Framing::Chunked,
        awkward(call.as_bytes()),
    )
}

/// "first" gets a call of the echo tool, then an answer with what it
/// said; any other message gets "Answer to <message>".
pub(crate) fn model(request: &Request) -> Reply {
    let last = request.json()["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return text_reply(&format!("Echoed: {}", last["content"].as_str().unwrap()));
    }
    let said = last["content"].as_str().unwrap_or_default();
    if said != "first" {
        return text_reply(&format!("Answer to {said}"));
    }
    call_reply(ECHO, r#"{"text": "kept"}"#)
}

/// `oscova --json chat --session NAME` against `server`, plus `extra`.
pub(crate) async fn chat(
    config: &Path,
    server: &TestServer,
    extra: &[&str],
) -> (i32, String, String) {
    let url = server.url();
    let mut args = vec![
        "--json",
        "chat",
        "--provider",
        "openai",
        "--endpoint",
        &url,
        "--model",
        "gpt-test",
    ];
    args.extend_from_slice(extra);
    let mut command = cmd(config, &args);
    command.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    run_async(command, None).await
}

/// `oscova chat` against the OpenAI-compatible `url` with `key`, plus
/// `extra`, as a process of its own (killed when dropped) for tests that
/// stop it midway.
pub(crate) fn chat_process(
    config: &Path,
    url: &str,
    key: &str,
    extra: &[&str],
) -> tokio::process::Command {
    let mut args = vec![
        "chat",
        "--provider",
        "openai",
        "--endpoint",
        url,
        "--model",
        "gpt-test",
    ];
    args.extend_from_slice(extra);
    let mut command = tokio::process::Command::from(cmd(config, &args));
    command
        .env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", key)
        .kill_on_drop(true);
    command
}

/// (role, content) of each message of a request.
pub(crate) fn sent(request: &Request) -> Vec<(String, String)> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

pub(crate) fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(r, c)| ((*r).to_owned(), (*c).to_owned()))
        .collect()
}

/// The first run's exchange as the model sees it afterwards.
pub(crate) const FIRST: [(&str, &str); 4] = [
    ("user", "first"),
    ("assistant", ""),
    ("tool", "kept"),
    ("assistant", "Echoed: kept"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_chat_resumes_the_session_and_show_lists_every_entry() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, err) = chat(&config, &server, &["--session", "trip", "-m", "first"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["answer"], "Echoed: kept");
    assert_eq!(outcome["session"], "trip");
    let (code, out, err) = chat(&config, &server, &["--session", "trip", "-m", "second"]).await;
    assert_eq!(code, 0, "{out}\n{err}");

    // The second run's request carries the first run's messages.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let mut expected = pairs(&FIRST);
    expected.extend(pairs(&[("user", "second")]));
    assert_eq!(sent(&requests[2]), expected);

    // show --json: the shape the CLI documents, one chain to the leaf.
    let (code, shown) = json_of(&config, &["sessions", "show", "trip"]);
    assert_eq!(code, 0, "{shown}");
    assert_eq!(shown["session"], "trip");
    let entries = shown["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 7, "{shown}");
    assert_eq!(shown["leaf"], entries[6]["id"]);
    assert_eq!(entries[0]["parent_id"], Value::Null);
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["parent_id"], pair[0]["id"], "{shown}");
        assert!(pair[1].get("parentId").is_none());
    }
    // Messages, and the call's started mark before its result.
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| {
            e["message"]["role"]
                .as_str()
                .or(e["customType"].as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "oscova.call_started",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(entries[2]["type"], "custom");
    assert_eq!(entries[2]["data"]["toolCallId"], "call_1");
    assert_eq!(entries[3]["message"]["toolName"], ECHO);

    let (code, listed) = json_of(&config, &["sessions", "list"]);
    assert_eq!(code, 0);
    assert_eq!(listed["sessions"][0]["session"], "trip");
    assert_eq!(listed["sessions"][0]["entries"], 7);
    let (code, text, _) = run(&mut cmd(&config, &["sessions", "show", "trip"]));
    assert_eq!(code, 0);
    assert!(
        text.contains("user: second") && text.contains("[calls"),
        "{text}"
    );
    assert!(!format!("{out}{err}{text}").contains(KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_continues_from_an_entry_on_a_new_branch() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, err) = chat(&config, &server, &["--session", "s", "-m", "first"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let (_, shown) = json_of(&config, &["sessions", "show", "s"]);
    let first = shown["entries"][0]["id"].as_str().unwrap().to_owned();
    let old_leaf = shown["leaf"].clone();

    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "s", "--fork", &first, "-m", "other"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    assert_eq!(
        sent(requests.last().unwrap()),
        pairs(&[("user", "first"), ("user", "other")])
    );
    let (_, shown) = json_of(&config, &["sessions", "show", "s"]);
    let entries = shown["entries"].as_array().unwrap();
    // The first run's five (its call's started mark among them), then the
    // new branch's two.
    assert_eq!(entries.len(), 7);
    assert_eq!(entries[5]["parent_id"].as_str(), Some(first.as_str()));
    assert_ne!(shown["leaf"], old_leaf);

    // /tree shows both branches, the new one active.
    let (code, out, err) = chat(&config, &server, &["--session", "s", "-m", "/tree"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let tree: Value = serde_json::from_str(&out).unwrap();
    let branches = tree["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 2, "{tree}");
    let active: Vec<&Value> = branches.iter().filter(|b| b["active"] == true).collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["tip"], shown["leaf"]);
    assert_eq!(
        server.requests().len(),
        requests.len(),
        "a command calls no model"
    );

    // An entry the session does not hold is a usage error.
    let (code, out, _) = chat(
        &config,
        &server,
        &["--session", "s", "--fork", "nope", "-m", "x"],
    )
    .await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("unknown_entry"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_name_the_session_and_compact_needs_something_to_compact() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "n", "-m", "/name Road trip"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let (_, shown) = json_of(&config, &["sessions", "show", "n"]);
    assert_eq!(shown["entries"][0]["type"], "session_info");
    assert_eq!(shown["entries"][0]["name"], "Road trip");

    // A name is all the session holds: nothing to summarise.
    let (code, out, _) = chat(&config, &server, &["--session", "n", "-m", "/compact"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("nothing to compact"), "{out}");
    let (code, out, _) = chat(&config, &server, &["-m", "/help"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("/tree") && out.contains("/name"), "{out}");
    let (code, out, _) = chat(&config, &server, &["-m", "/tree"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--session"), "{out}");
    let (code, out, _) = chat(&config, &server, &["-m", "/frobnicate"]).await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("/help"), "{out}");
    assert!(server.requests().is_empty(), "no command reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_import_keeps_every_entry_and_the_leaf() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    for message in ["first", "second"] {
        let (code, out, err) = chat(&config, &server, &["--session", "a", "-m", message]).await;
        assert_eq!(code, 0, "{out}\n{err}");
    }
    let file = temp_dir("sessions-export").join("copy.jsonl");
    let file = file.to_str().unwrap();
    let (code, _) = json_of(
        &config,
        &["sessions", "export", "a", "--format", "pi", "-o", file],
    );
    assert_eq!(code, 0);
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (header["type"].as_str(), header["version"].as_u64()),
        (Some("session"), Some(3))
    );

    let (code, imported) = json_of(
        &config,
        &["sessions", "import", file, "--format", "pi", "--name", "b"],
    );
    assert_eq!(code, 0, "{imported}");
    let (_, a) = json_of(&config, &["sessions", "show", "a"]);
    let (_, b) = json_of(&config, &["sessions", "show", "b"]);
    assert_eq!(a["entries"], b["entries"]);
    assert_eq!(a["leaf"], b["leaf"]);
    assert_eq!(b["session"], "b");

    // The name defaults to the file's; taken names and non-pi files are
    // usage errors that keep nothing.
    let (code, _) = json_of(&config, &["sessions", "import", file, "--format", "pi"]);
    assert_eq!(code, 0);
    let (code, again) = json_of(&config, &["sessions", "import", file, "--format", "pi"]);
    assert_eq!(
        (code, again["error"]["kind"].as_str()),
        (2, Some("session_exists"))
    );
    let junk = temp_dir("sessions-junk").join("junk.jsonl");
    std::fs::write(&junk, "{\"type\":\"message\"}\n").unwrap();
    let (code, refused) = json_of(
        &config,
        &[
            "sessions",
            "import",
            junk.to_str().unwrap(),
            "--format",
            "pi",
        ],
    );
    assert_eq!(
        (code, refused["error"]["kind"].as_str()),
        (2, Some("invalid_session"))
    );
    let (_, listed) = json_of(&config, &["sessions", "list"]);
    let names: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{listed}");
    assert!(
        names.contains(&"copy") && !names.contains(&"junk"),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_session_is_invisible_and_delete_removes_it() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, err) = chat(
        &config,
        &server,
        &["--session", "mine", "--user", "alice", "-m", "hi"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");

    let (code, listed) = json_of(&config, &["sessions", "list", "--user", "bob"]);
    assert_eq!(code, 0);
    assert_eq!(listed["sessions"], json!([]));
    for verb in ["show", "delete"] {
        let (code, doc) = json_of(&config, &["sessions", verb, "mine", "--user", "bob"]);
        assert_eq!(
            (code, doc["error"]["kind"].as_str()),
            (2, Some("session_not_found")),
            "{doc}"
        );
        let (_, missing) = json_of(&config, &["sessions", verb, "nothing", "--user", "bob"]);
        let words = |d: &Value| {
            d["error"]["message"]
                .as_str()
                .unwrap()
                .replace("nothing", "mine")
        };
        assert_eq!(
            words(&doc),
            words(&missing),
            "the same words as for a missing one"
        );
    }
    let path = temp_dir("sessions-export").join("x.jsonl");
    let (code, _) = json_of(
        &config,
        &[
            "sessions",
            "export",
            "mine",
            "--format",
            "pi",
            "-o",
            path.to_str().unwrap(),
            "--user",
            "bob",
        ],
    );
    assert_eq!(code, 2);
    assert!(!path.exists());
    // Bob's chat under the same name is his own session, and starts empty.
    let (code, _, _) = chat(
        &config,
        &server,
        &["--session", "mine", "--user", "bob", "-m", "hello"],
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(
        sent(server.requests().last().unwrap()),
        pairs(&[("user", "hello")])
    );

    let (code, _) = json_of(&config, &["sessions", "delete", "mine", "--user", "alice"]);
    assert_eq!(code, 0);
    let (code, _) = json_of(&config, &["sessions", "show", "mine", "--user", "alice"]);
    assert_eq!(code, 2);
    let (code, _) = json_of(&config, &["sessions", "show", "mine", "--user", "bob"]);
    assert_eq!(code, 0, "bob's session is untouched");
}

#[test]
fn session_text_reaches_the_terminal_filtered() {
    let config = sqlite_config();
    let pi = "{\"type\":\"session\",\"version\":3,\"id\":\"x1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n\
              {\"type\":\"message\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi \\u001b]0;pwned\\u0007 there\",\"timestamp\":1}}\n";
    let file = temp_dir("sessions-esc").join("esc.jsonl");
    std::fs::write(&file, pi).unwrap();
    let name = "evil\u{1b}[2J";
    let (code, out, err) = run(&mut cmd(
        &config,
        &[
            "sessions",
            "import",
            file.to_str().unwrap(),
            "--format",
            "pi",
            "--name",
            name,
        ],
    ));
    assert_eq!(code, 0, "{out}\n{err}");
    for args in [&["sessions", "list"][..], &["sessions", "show", name][..]] {
        let (code, out, err) = run(&mut cmd(&config, args));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("evil") || out.contains("there"), "{out}");
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    }
}

/// The REPL keeps every line's exchange and runs commands between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_stores_each_message_and_runs_commands_between_them() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let url = server.url();
    let mut command = cmd(
        &config,
        &[
            "--json",
            "chat",
            "--provider",
            "openai",
            "--endpoint",
            &url,
            "--model",
            "m",
            "--session",
            "r",
        ],
    );
    command.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    let (code, out, err) = run_async(command, Some("hello\n/name Repl\n/compact\nagain\n")).await;
    // Two messages are far below what compaction keeps.
    assert_eq!(code, 2, "the /compact line failed: {out}\n{err}");
    assert!(out.contains("nothing to compact"), "{out}");
    assert_eq!(server.requests().len(), 2);
    let (_, shown) = json_of(&config, &["sessions", "show", "r"]);
    let types: Vec<&str> = shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["message", "message", "session_info", "message", "message"]
    );
    assert_eq!(
        sent(&server.requests()[1]),
        pairs(&[
            ("user", "hello"),
            ("assistant", "Answer to hello"),
            ("user", "again")
        ])
    );
}
