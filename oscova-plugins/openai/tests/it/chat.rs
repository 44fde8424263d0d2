//! A two-round tool-calling chat through a real host, user scope and HTTP
//! server speaking the chat completions format, streamed and whole.

use std::sync::{Arc, Mutex};

use oscova_agent::chat::{ChatEvent, ChatLoopOptions, model_provider, run_chat};
use oscova_core::SecretString;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRole, ModelProviderConfig};
use oscova_plugin_openai::OpenAiPlugin;
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
const KEY: &str = "sk-test-key-0123456789";

fn event(delta: Value, finish: Option<&str>, crlf: bool) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    if crlf {
        format!("data: {chunk}\r\n\r\n")
    } else {
        format!("data: {chunk}\n\n")
    }
}

/// Round one: a little text, then a tool call whose arguments arrive in
/// three-character fragments.
fn round_one() -> Vec<u8> {
    let mut sse = String::from(": OPENROUTER PROCESSING\n\n");
    sse += &event(json!({"role": "assistant", "content": ""}), None, false);
    sse += &event(json!({"content": "Checking the forecast… ☀"}), None, false);
    sse += &event(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": FORECAST, "arguments": ""}}]}),
        None,
        false,
    );
    let arguments: Vec<char> = r#"{"city": "Zürich", "days": 2}"#.chars().collect();
    for fragment in arguments.chunks(3) {
        let fragment: String = fragment.iter().collect();
        sse += &event(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}),
            None,
            false,
        );
    }
    sse += &event(json!({}), Some("tool_calls"), false);
    sse += "data: [DONE]\n\n";
    sse.into_bytes()
}

/// Round two: the answer, with CRLF line ends.
fn round_two() -> Vec<u8> {
    let mut sse = String::new();
    for piece in ["It is ", "sunny in Zürich ", "🌞", "."] {
        sse += &event(json!({"content": piece}), None, true);
    }
    sse += &event(json!({}), Some("stop"), true);
    sse += "data: [DONE]\r\n\r\n";
    sse.into_bytes()
}

fn answered_by_tool(request: &Request) -> bool {
    let body = request.json();
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool")
}

fn whole(message: Value, finish: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }),
    )
}

async fn chat_against(server: &TestServer, stream: bool) -> (Vec<ChatMessage>, Vec<ChatEvent>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![ToolsPlugin, OpenAiPlugin])
        .build()
        .unwrap();
    let provider = model_provider(&host, "openai").unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let mut config = ModelProviderConfig::new("openai");
    config.endpoint = Some(server.url());
    config.model = Some("gpt-test".into());
    config.options.insert("temperature".into(), json!(0));
    let key = SecretString::from(KEY);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let options = ChatLoopOptions::new()
        .stream(stream)
        .offline(true) // 127.0.0.1 is local, so this is allowed
        .on_event(move |e| sink.lock().unwrap().push(e.clone()));
    let mut messages = vec![ChatMessage::user("Weather in Zürich?")];
    let outcome = run_chat(&scope, &*provider, &config, &mut messages)
        .api_key(&key)
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
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), Some(&*format!("Bearer {KEY}")));
    }
    let first = requests[0].json();
    assert_eq!(first["model"], "gpt-test");
    assert_eq!(first["stream"], stream);
    assert_eq!(first["temperature"], 0);
    let tool = &first["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], FORECAST);
    assert_eq!(tool["function"]["description"], "The forecast for a city.");
    assert_eq!(tool["function"]["strict"], true);
    let parameters = &tool["function"]["parameters"];
    assert_eq!(parameters["additionalProperties"], false);
    assert_eq!(parameters["required"], json!(["city", "days"]));

    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["role"], "assistant");
    let call = &messages[1]["tool_calls"][0];
    assert_eq!(call["id"], "call_1");
    assert_eq!(call["function"]["name"], FORECAST);
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"city": "Zürich", "days": 2}));
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Sunny in Zürich for 2 days"})
    );
}

#[tokio::test]
async fn streamed_two_round_chat_with_a_tool_call() {
    let server = TestServer::start(|request| {
        if answered_by_tool(request) {
            Reply::stream("text/event-stream", Framing::Close, awkward(&round_two()))
        } else {
            Reply::stream(
                "text/event-stream; charset=utf-8",
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
    assert_eq!(messages[1].content, "Checking the forecast… ☀");
    assert_eq!(messages[3].content, "It is sunny in Zürich 🌞.");

    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Checking the forecast… ☀It is sunny in Zürich 🌞.");
    assert!(events.iter().any(|e| matches!(
        e,
        ChatEvent::ToolCallStarted { id, name } if id == "call_1" && name == FORECAST
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        ChatEvent::ToolCallFinished { result, refused: false, .. }
            if result.content == "Sunny in Zürich for 2 days"
    )));
}

#[tokio::test]
async fn whole_two_round_chat_with_a_tool_call() {
    let server = TestServer::start(|request| {
        if answered_by_tool(request) {
            whole(
                json!({"role": "assistant", "content": "It is sunny in Zürich 🌞."}),
                "stop",
            )
        } else {
            whole(
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": FORECAST, "arguments": "{\"city\":\"Zürich\",\"days\":2}"},
                }]}),
                "tool_calls",
            )
        }
    })
    .await;
    let (messages, events) = chat_against(&server, false).await;
    check_requests(&server, false);
    assert_eq!(messages[3].content, "It is sunny in Zürich 🌞.");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ChatEvent::Text(t) if t == "It is sunny in Zürich 🌞."))
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_works() {
    let server = TestServer::start(|request| {
        if answered_by_tool(request) {
            whole(
                json!({"role": "assistant", "content": "It is sunny in Zürich 🌞."}),
                "stop",
            )
        } else {
            whole(
                json!({"role": "assistant", "content": "", "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": FORECAST, "arguments": "{\"city\":\"Zürich\",\"days\":2}"},
                }]}),
                "tool_calls",
            )
        }
    })
    .await;
    let (messages, events) = chat_against(&server, true).await;
    assert_eq!(messages[3].content, "It is sunny in Zürich 🌞.");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ChatEvent::ToolCallStarted { name, .. } if name == FORECAST))
    );
}
