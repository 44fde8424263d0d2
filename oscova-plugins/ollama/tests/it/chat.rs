//! A two-round tool-calling chat through a real host, user scope and HTTP
//! server speaking Ollama's `/api/chat` (NDJSON), streamed and whole.

use std::sync::{Arc, Mutex};

use oscova_agent::chat::{ChatEvent, ChatLoopOptions, model_provider, run_chat};
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRole, ModelProviderConfig};
use oscova_plugin_ollama::OllamaPlugin;
use oscova_test_kit::http::{Framing, Reply, Request, TestServer, awkward};
use serde_json::{Value, json};

/// Weather tools.
pub struct WeatherToolset;

#[toolset]
impl WeatherToolset {
    /// The forecast for a city.
    pub fn forecast(
        /// The city.
        city: String,
        /// How many days ahead.
        days: u32,
    ) -> String {
        format!("Sunny in {city} for {days} days")
    }
}

/// The test's tool plugin.
#[plugin(id = "test.tools")]
pub struct ToolsPlugin;

impl AgentPlugin for ToolsPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| WeatherToolset);
    }
}

const FORECAST: &str = "test_tools__weather__forecast";

fn line(message: Value, done: bool) -> String {
    let mut line = json!({
        "model": "llama3.2",
        "created_at": "2024-07-22T20:33:28.123648Z",
        "message": message,
        "done": done,
    });
    if done {
        line["done_reason"] = json!("stop");
        line["total_duration"] = json!(885095291u64);
        line["eval_count"] = json!(33);
    }
    format!("{line}\n")
}

fn round_one() -> Vec<u8> {
    let mut body = line(
        json!({"role": "assistant", "content": "Let me check… "}),
        false,
    );
    body += &line(json!({"role": "assistant", "content": "☀"}), false);
    body += &line(
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": FORECAST, "arguments": {"city": "Zürich", "days": 2}}}
        ]}),
        false,
    );
    body += &line(json!({"role": "assistant", "content": ""}), true);
    body.into_bytes()
}

fn round_two() -> Vec<u8> {
    let mut body = String::new();
    for piece in ["It is ", "sunny in Zürich ", "🌞", "."] {
        body += &line(json!({"role": "assistant", "content": piece}), false);
    }
    body += &line(json!({"role": "assistant", "content": ""}), true);
    body.into_bytes()
}

fn answered_by_tool(request: &Request) -> bool {
    request.json()["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool")
}

async fn chat_against(server: &TestServer, stream: bool) -> (Vec<ChatMessage>, Vec<ChatEvent>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![ToolsPlugin, OllamaPlugin])
        .build()
        .unwrap();
    let provider = model_provider(&host, "ollama").unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let mut config = ModelProviderConfig::new("ollama");
    config.endpoint = Some(server.url());
    config.model = Some("llama3.2".into());
    config.options.insert("keep_alive".into(), json!("5m"));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let options = ChatLoopOptions::new()
        .stream(stream)
        .offline(true)
        .on_event(move |e| sink.lock().unwrap().push(e.clone()));
    let mut messages = vec![ChatMessage::user("Weather in Zürich?")];
    let outcome = run_chat(&scope, &*provider, &config, &mut messages)
        .options(options)
        .await
        .unwrap();
    assert_eq!(outcome.rounds, 2);
    assert_eq!(outcome.tool_calls, 1);
    let events = events.lock().unwrap().clone();
    (messages, events)
}

fn check_requests(server: &TestServer, stream: bool) {
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/api/chat"));
        assert_eq!(r.header("authorization"), None, "no key, no header");
    }
    let first = requests[0].json();
    assert_eq!(first["model"], "llama3.2");
    assert_eq!(first["stream"], stream);
    assert_eq!(first["keep_alive"], "5m");
    let tool = &first["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], FORECAST);
    assert_eq!(tool["function"]["description"], "The forecast for a city.");
    assert_eq!(tool["function"]["parameters"]["type"], "object");
    assert_eq!(
        tool["function"]["parameters"]["required"],
        json!(["city", "days"])
    );

    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    let call = &messages[1]["tool_calls"][0];
    assert_eq!(call["function"]["name"], FORECAST);
    assert_eq!(
        call["function"]["arguments"],
        json!({"city": "Zürich", "days": 2}),
        "arguments travel as an object"
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_name"], FORECAST);
    assert_eq!(messages[2]["content"], "Sunny in Zürich for 2 days");
    assert_eq!(messages[2]["tool_call_id"], call["id"]);
}

#[tokio::test]
async fn streamed_two_round_chat_with_a_tool_call() {
    let server = TestServer::start(|request| {
        if answered_by_tool(request) {
            Reply::stream(
                "application/x-ndjson",
                Framing::Close,
                awkward(&round_two()),
            )
        } else {
            Reply::stream(
                "application/x-ndjson",
                Framing::Chunked,
                awkward(&round_one()),
            )
        }
    })
    .await;
    let (messages, events) = chat_against(&server, true).await;
    check_requests(&server, true);

    let roles: Vec<ChatRole> = messages.iter().map(|m| m.role).collect();
    use ChatRole::*;
    assert_eq!(roles, [User, Assistant, Tool, Assistant]);
    assert_eq!(messages[1].content, "Let me check… ☀");
    assert_eq!(messages[2].content, "Sunny in Zürich for 2 days");
    assert_eq!(messages[3].content, "It is sunny in Zürich 🌞.");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me check… ☀It is sunny in Zürich 🌞.");
    assert!(events.iter().any(|e| matches!(
        e,
        ChatEvent::ToolCallStarted { name, .. } if name == FORECAST
    )));
}

#[tokio::test]
async fn whole_two_round_chat_with_a_tool_call() {
    let server = TestServer::start(|request| {
        let body = if answered_by_tool(request) {
            line(
                json!({"role": "assistant", "content": "It is sunny in Zürich 🌞."}),
                true,
            )
        } else {
            line(
                json!({"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_x1", "function": {"index": 0, "name": FORECAST,
                        "arguments": {"city": "Zürich", "days": 2}}}
                ]}),
                true,
            )
        };
        Reply::json(200, serde_json::from_str(&body).unwrap())
    })
    .await;
    let (messages, _) = chat_against(&server, false).await;
    check_requests(&server, false);
    assert_eq!(messages[1].tool_calls[0].id, "call_x1");
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("call_x1"));
    assert_eq!(messages[3].content, "It is sunny in Zürich 🌞.");
}
