//! Tool calls: valid for their schema, answered from their result, and
//! the model answers in words when no tool fits.

use std::sync::Mutex;

use oscova_agent::chat::{ChatEvent, ChatLoopOptions, run_chat};
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRequest, ChatStreamEvent, ToolSpec};
use serde_json::{Value, json};

use crate::support::{config, host, provider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_question_calls_the_time_tool_and_is_answered_from_its_result() {
    let config = config().await;
    let host = host();
    let provider = provider(&host);
    let scope = host.user_scope(UserInfo::new("alice"));
    let calls = std::sync::Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let mut messages = vec![ChatMessage::user("What time is it in Tokyo?")];
    let outcome = run_chat(&scope, &*provider, &config, &mut messages)
        .options(ChatLoopOptions::new().offline(true).on_event(move |e| {
            if let ChatEvent::ToolCallRunning(call) = e {
                seen.lock().unwrap().push(call.clone());
            }
        }))
        .await
        .expect("answered");
    let calls = calls.lock().unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].name, "oscova_time__time__now");
    assert_eq!(calls[0].arguments["zone"], "Asia/Tokyo");
    // The fixed clock says 12:15 in Tokyo; the answer says so.
    assert!(
        outcome.message.content.contains("12:15"),
        "{}",
        outcome.message.content
    );
    assert!(outcome.message.tool_calls.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_needs_no_tool_is_answered_in_words_after_at_most_one_call() {
    let config = config().await;
    let host = host();
    let provider = provider(&host);
    let scope = host.user_scope(UserInfo::new("alice"));
    let mut messages = vec![ChatMessage::user("Say hello in French.")];
    let outcome = run_chat(&scope, &*provider, &config, &mut messages)
        .options(ChatLoopOptions::new().offline(true))
        .await
        .expect("answered");
    // The 0.5B model may call a tool it does not need (the README says
    // so); once results are in it answers in words, never calling again.
    let calls: usize = messages.iter().map(|m| m.tool_calls.len()).sum();
    assert!(calls <= 1, "{messages:?}");
    assert!(outcome.message.tool_calls.is_empty());
    assert!(
        outcome.message.content.contains("Bonjour"),
        "{}",
        outcome.message.content
    );
}

/// Tools whose schemas a free-running model gets wrong: enums, integer
/// ranges, required nested objects, arrays of a type, no extra keys.
fn strict_tools() -> Vec<ToolSpec> {
    let tool = |name: &str, description: &str, parameters: Value| ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    };
    vec![
        tool(
            "set_thermostat",
            "Sets the thermostat of a room.",
            json!({"type": "object", "properties": {
                "room": {"type": "string", "enum": ["kitchen", "bedroom", "office"]},
                "celsius": {"type": "integer", "minimum": 10, "maximum": 30}},
                "required": ["room", "celsius"], "additionalProperties": false}),
        ),
        tool(
            "book_meeting",
            "Books a meeting.",
            json!({"type": "object", "properties": {
                "title": {"type": "string"},
                "attendees": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "when": {"type": "object", "properties": {
                    "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
                    "hour": {"type": "integer", "minimum": 0, "maximum": 23}},
                    "required": ["date", "hour"], "additionalProperties": false}},
                "required": ["title", "attendees", "when"], "additionalProperties": false}),
        ),
        tool(
            "convert_units",
            "Converts a quantity between units.",
            json!({"type": "object", "properties": {
                "value": {"type": "number"},
                "from": {"type": "string", "enum": ["km", "mi", "kg", "lb"]},
                "to": {"type": "string", "enum": ["km", "mi", "kg", "lb"]}},
                "required": ["value", "from", "to"], "additionalProperties": false}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_valid_for_its_tools_schema_and_streams_its_start() {
    let config = config().await;
    let provider = provider(&host());
    let tools = strict_tools();
    let prompts = [
        "Set the kitchen to 21 degrees.",
        "Make the bedroom warmer, 25 degrees.",
        "Book a meeting called Planning with Ana and Bo on 2026-05-04 at 9.",
        "How many pounds is 70 kg?",
        "Convert 10 miles to km.",
        "Set the office thermostat to 45 degrees.",
    ];
    let mut calls = 0;
    for prompt in prompts {
        let events = Mutex::new(Vec::new());
        let sink = |e: ChatStreamEvent| events.lock().unwrap().push(e);
        let messages = [ChatMessage::user(prompt)];
        let request = ChatRequest {
            config: &config,
            api_key: None,
            model: "",
            messages: &messages,
            tools: &tools,
            stream: Some(&sink),
            cancel: Default::default(),
        };
        let response = provider.chat(request).await.expect("answered");
        for call in &response.message.tool_calls {
            calls += 1;
            let tool = tools
                .iter()
                .find(|t| t.name == call.name)
                .expect("an offered tool");
            let validator = jsonschema::validator_for(&tool.parameters).unwrap();
            assert!(
                validator.is_valid(&call.arguments),
                "{prompt}: {} {}",
                call.name,
                call.arguments
            );
            let started = events.lock().unwrap().iter().any(|e| {
                matches!(e, ChatStreamEvent::ToolCallStarted { id, name } if *id == call.id && *name == call.name)
            });
            assert!(started, "{prompt}: no ToolCallStarted for {}", call.id);
        }
        if !response.message.tool_calls.is_empty() {
            assert_eq!(
                response.finish_reason.as_deref(),
                Some("tool_calls"),
                "{prompt}"
            );
        }
    }
    // The model may answer a prompt in words (a conversion it can do
    // itself); most of these are calls, and every call was valid.
    assert!(
        calls >= prompts.len() - 2,
        "{calls} calls for {} prompts",
        prompts.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_the_grammar_cannot_express_still_gets_a_named_call_with_an_object() {
    let config = config().await;
    let provider = provider(&host());
    let tools = [ToolSpec {
        name: "lookup".into(),
        description: "Looks a word up in the dictionary.".into(),
        parameters: json!({"type": "object", "properties": {"word": {"$ref": "https://example.com/word.json"}}}),
    }];
    let messages = [ChatMessage::user("Look up the word serendipity.")];
    let request = ChatRequest {
        config: &config,
        api_key: None,
        model: "",
        messages: &messages,
        tools: &tools,
        stream: None,
        cancel: Default::default(),
    };
    let response = provider.chat(request).await.expect("answered");
    let call = response.message.tool_calls.first().expect("a call");
    assert_eq!(call.name, "lookup");
    assert!(call.arguments.is_object());
}
