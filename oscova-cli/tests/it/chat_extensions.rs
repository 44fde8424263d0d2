//! `oscova chat --session` with the session extensions the `oscova`
//! binary links (the seed's `HelloExtension`): `/help` lists their
//! commands, `/hello NAME` asks the model to greet NAME with the
//! extension's `hello` tool, and its guard blocks a call whose `command`
//! holds `rm -rf` when there is no one to ask. Against the same recording
//! OpenAI-compatible model on 127.0.0.1 as `sessions`.

use oscova_test_support::http::{Reply, Request, TestServer};
use serde_json::Value;

use crate::sessions::{call_reply, chat, sent, sqlite_config, text_reply};

/// Greets through the `hello` tool when asked to greet; with "guarded" in
/// the request, asks for a dangerous command through it.
fn model(request: &Request) -> Reply {
    let messages = request.json()["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return text_reply(&format!(
            "Done: {}",
            last["content"].as_str().unwrap_or_default()
        ));
    }
    let said = last["content"].as_str().unwrap_or_default();
    let arguments = if said.contains("guarded") {
        r#"{"name": "x", "command": "rm -rf /"}"#
    } else {
        r#"{"name": "world"}"#
    };
    call_reply("hello", arguments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_lists_the_extension_commands_and_hello_greets_through_its_tool() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, err) = chat(&config, &server, &["--session", "h", "-m", "/help"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let help: Value = serde_json::from_str(&out).unwrap();
    let hello = help["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == "/hello")
        .unwrap_or_else(|| panic!("{help}"));
    assert_eq!(hello["extension"], "hello");
    assert_eq!(hello["description"], "Say hello through the model");
    assert!(server.requests().is_empty(), "/help asks no model");

    let (code, out, err) = chat(&config, &server, &["--session", "h", "-m", "/hello world"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["answer"], "Done: Hello, world!");
    assert_eq!(outcome["session"], "h");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].json();
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"hello"), "{tools:?}");
    assert_eq!(
        sent(&requests[0]),
        [(
            "user".to_owned(),
            "Please greet world using the hello tool.".to_owned()
        )]
    );

    // Without a terminal there is no one to confirm `rm -rf`: blocked.
    let (code, out, err) = chat(&config, &server, &["--session", "h", "-m", "guarded"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let outcome: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        outcome["answer"],
        "Done: error: blocked: Dangerous command blocked (no UI to confirm). The call did not run."
    );
    assert_eq!(outcome["tool_calls"][0]["refused"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_command_names_help_and_asks_no_model() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, _) = chat(
        &config,
        &server,
        &["--session", "u", "-m", "/frobnicate now"],
    )
    .await;
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("unknown command /frobnicate; /help lists the commands"),
        "{out}"
    );
    assert!(server.requests().is_empty());
}
