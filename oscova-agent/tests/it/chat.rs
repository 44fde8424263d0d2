//! The chat loop over a real host and user scope, with a scripted model
//! provider (the HTTP back ends are tested in their own crates).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_agent::chat::{ChatError, ChatEvent, ChatLoopOptions, run_chat, tool_specs};
use oscova_agent::profile::SchemaProfile;
use oscova_core::SecretString;
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ChatStreamEvent, EndpointScope, ModelError,
    ModelProvider, ModelProviderConfig, TokenUsage, ToolCallRequest, ToolSpec,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use serde_json::{Value, json};

/// Weather tools for the tests.
pub struct WeatherToolset;

#[toolset]
impl WeatherToolset {
    /// Today's forecast for a city.
    pub fn forecast(
        /// The city.
        city: String,
        /// `C` or `F`.
        unit: Option<String>,
    ) -> String {
        format!("sunny in {city} ({})", unit.as_deref().unwrap_or("C"))
    }

    /// Deletes every forecast.
    #[tool(approval = Required)]
    pub fn wipe() -> String {
        "wiped".to_owned()
    }

    /// Returns the text.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Sums counts (a map: the openai profile cannot express it).
    pub fn tally(
        /// The counts.
        counts: HashMap<String, u32>,
    ) -> u32 {
        counts.values().sum()
    }

    /// Takes a long time.
    pub async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "late".to_owned()
    }
}

/// The test plugin.
#[plugin(id = "test.weather")]
pub struct WeatherPlugin;

impl AgentPlugin for WeatherPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| WeatherToolset);
    }
}

const FORECAST: &str = "test_weather__weather__forecast";
const WIPE: &str = "test_weather__weather__wipe";
const ECHO: &str = "test_weather__weather__echo";
const SLOW: &str = "test_weather__weather__slow";

/// Answers from a script and records what it was sent (`batch` uses it
/// too).
#[derive(Default)]
pub(crate) struct Scripted {
    replies: Mutex<VecDeque<ChatMessage>>,
    /// When the script is empty, ask for this call forever.
    forever: Option<ToolCallRequest>,
    pub(crate) seen: Mutex<Vec<(Vec<ChatMessage>, Vec<ToolSpec>)>>,
    pub(crate) calls: AtomicUsize,
}

impl Scripted {
    pub(crate) fn new(replies: impl IntoIterator<Item = ChatMessage>) -> Self {
        Self {
            replies: Mutex::new(replies.into_iter().collect()),
            ..Self::default()
        }
    }
}

impl ModelProvider for Scripted {
    fn type_key(&self) -> ProviderTypeKey {
        "scripted".into()
    }

    fn display_name(&self) -> &str {
        "Scripted"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.seen
                .lock()
                .unwrap()
                .push((request.messages.to_vec(), request.tools.to_vec()));
            let reply = self.replies.lock().unwrap().pop_front();
            let message = match (reply, &self.forever) {
                (Some(m), _) => m,
                (None, Some(call)) => ChatMessage::assistant("", vec![call.clone()]),
                (None, None) => return Err(ModelError::Other("script ended".into())),
            };
            if let Some(sink) = request.stream {
                for piece in message.content.split_inclusive(' ') {
                    sink(ChatStreamEvent::Text(piece.to_owned()));
                }
                for call in &message.tool_calls {
                    sink(ChatStreamEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
            }
            Ok(ChatResponse {
                message,
                finish_reason: Some("stop".into()),
                usage: Some(TokenUsage {
                    input_tokens: Some(12),
                    output_tokens: Some(3),
                    cached_input_tokens: None,
                }),
            })
        })
    }
}

pub(crate) fn call(id: &str, name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn host(approve: bool) -> PluginHost {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![WeatherPlugin])
        .approval_handler(move |_: &oscova_core::ApprovalRequest<'_>| approve)
        .build()
        .unwrap()
}

pub(crate) fn config() -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("scripted");
    config.model = Some("m1".into());
    config
}

fn recorder() -> (Arc<Mutex<Vec<ChatEvent>>>, ChatLoopOptions) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let options = ChatLoopOptions::new().on_event(move |e| sink.lock().unwrap().push(e.clone()));
    (events, options)
}

#[tokio::test]
async fn two_rounds_run_the_tool_and_send_its_result_back() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "Let me look.",
            vec![call("c1", FORECAST, json!({"city": "Paris", "unit": null}))],
        ),
        ChatMessage::assistant("It is sunny in Paris.", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("Weather in Paris?")];
    let (events, options) = recorder();
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .options(options)
        .await
        .unwrap();

    assert_eq!(outcome.rounds, 2);
    assert_eq!(outcome.tool_calls, 1);
    assert_eq!(outcome.message.content, "It is sunny in Paris.");
    let roles: Vec<_> = messages.iter().map(|m| m.role).collect();
    use ChatRole::*;
    assert_eq!(roles, [User, Assistant, Tool, Assistant]);
    // The `null` for the optional unit was removed, so its default applied.
    assert_eq!(messages[2].content, "sunny in Paris (C)");
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("c1"));

    let seen = provider.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].0.len(), 3, "round two carries the tool result");
    let names: Vec<_> = seen[0].1.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&FORECAST) && names.contains(&WIPE),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.ends_with("tally")),
        "a map cannot be exported in the openai profile: {names:?}"
    );
    let forecast = seen[0].1.iter().find(|t| t.name == FORECAST).unwrap();
    assert_eq!(forecast.description, "Today's forecast for a city.");
    assert_eq!(forecast.parameters["additionalProperties"], json!(false));
    assert_eq!(forecast.parameters["required"], json!(["city", "unit"]));

    let events = events.lock().unwrap();
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me look.It is sunny in Paris.");
    let running = events
        .iter()
        .position(|e| matches!(e, ChatEvent::ToolCallRunning(c) if c.id == "c1"))
        .unwrap();
    let finished = events
        .iter()
        .position(
            |e| matches!(e, ChatEvent::ToolCallFinished { id, refused: false, .. } if id == "c1"),
        )
        .unwrap();
    assert!(running < finished);
}

#[tokio::test]
async fn a_refused_call_is_reported_to_the_model_and_the_chat_goes_on() {
    let host = host(false);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant("", vec![call("w", WIPE, json!({}))]),
        ChatMessage::assistant("I was not allowed to.", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("Wipe it all.")];
    let (events, options) = recorder();
    run_chat(&scope, &provider, &config(), &mut messages)
        .options(options)
        .await
        .unwrap();
    let tool = &messages[2];
    assert_eq!(tool.role, ChatRole::Tool);
    assert!(
        tool.content.contains("was not approved"),
        "{}",
        tool.content
    );
    assert!(tool.content.contains("did not run"), "{}", tool.content);
    assert!(events.lock().unwrap().iter().any(|e| matches!(
        e,
        ChatEvent::ToolCallFinished { refused: true, result, .. } if result.is_error
    )));
}

#[tokio::test]
async fn unknown_tools_and_string_arguments_are_handled() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "",
            vec![
                call("a", "no_such_tool", json!({})),
                call("", ECHO, json!("{\"text\":\"as a string\"}")),
            ],
        ),
        ChatMessage::assistant("done", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("go")];
    let options = ChatLoopOptions::new().stream(false);
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .options(options)
        .await
        .unwrap();
    assert_eq!(outcome.tool_calls, 2);
    assert!(
        messages[2]
            .content
            .starts_with("error: unknown tool `no_such_tool`")
    );
    assert_eq!(messages[3].content, "as a string");
    assert_eq!(messages[3].tool_call_id.as_deref(), Some("call_1_1"));
    assert_eq!(messages[1].tool_calls[1].id, "call_1_1");
}

#[tokio::test]
async fn the_round_bound_is_an_error_naming_it_and_the_history_stays_valid() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted {
        forever: Some(call("again", ECHO, json!({"text": "x"}))),
        ..Scripted::default()
    };
    let mut messages = vec![ChatMessage::user("loop")];
    let options = ChatLoopOptions::new().max_rounds(3);
    let err = run_chat(&scope, &provider, &config(), &mut messages)
        .options(options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ChatError::RoundLimit { max_rounds: 3, pending } if pending == &[ECHO]),
        "{err:?}"
    );
    assert!(err.to_string().contains("3 round(s)"), "{err}");
    assert!(err.to_string().contains("max_rounds"), "{err}");
    assert_eq!(provider.calls.load(Ordering::SeqCst), 3);
    // user, then three times (assistant, tool); the last tool message says
    // why it did not run.
    assert_eq!(messages.len(), 7);
    let last = messages.last().unwrap();
    assert_eq!(last.role, ChatRole::Tool);
    assert!(last.content.contains("bound of 3"), "{}", last.content);
}

#[tokio::test]
async fn offline_refusal_makes_no_model_call() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([ChatMessage::assistant("hi", vec![])]);
    let mut config = config();
    config.endpoint = Some("http://127.0.0.1:1".into());
    config.endpoint_scope = Some(EndpointScope::Remote);
    let mut messages = vec![ChatMessage::user("hi")];
    let options = ChatLoopOptions::new().offline(true);
    let err = run_chat(&scope, &provider, &config, &mut messages)
        .options(options)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ChatError::Model(ModelError::NotLocal { .. })),
        "{err:?}"
    );
    assert_eq!(provider.calls.load(Ordering::SeqCst), 0);
    assert_eq!(messages.len(), 1);
}

#[tokio::test]
async fn cancelling_a_running_tool_cancels_the_chat() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([ChatMessage::assistant(
        "",
        vec![
            call("s", SLOW, json!({})),
            call("e", ECHO, json!({"text": "x"})),
        ],
    )]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let options = ChatLoopOptions::new()
        .cancellation(cancel)
        .on_event(move |e| {
            if matches!(e, ChatEvent::ToolCallRunning(c) if c.name == SLOW) {
                trigger.cancel();
            }
        });
    let mut messages = vec![ChatMessage::user("slow")];
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        run_chat(&scope, &provider, &config(), &mut messages).options(options),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(matches!(err, ChatError::Cancelled), "{err:?}");
    let answered: Vec<_> = messages
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(answered, ["s", "e"], "every call is answered");
}

#[tokio::test]
async fn the_api_key_is_redacted_from_tool_results() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "",
            vec![call("k", ECHO, json!({"text": "key sk-secret-123"}))],
        ),
        ChatMessage::assistant("ok", vec![]),
    ]);
    let key = SecretString::from("sk-secret-123");
    let mut messages = vec![ChatMessage::user("echo")];
    run_chat(&scope, &provider, &config(), &mut messages)
        .api_key(&key)
        .await
        .unwrap();
    assert_eq!(messages[2].content, "key [REDACTED]");
}

#[tokio::test]
async fn configuration_mistakes_are_reported_before_any_call() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::default();
    let mut messages = vec![ChatMessage::user("hi")];
    let mut config = config();
    config.model = None;
    let err = run_chat(&scope, &provider, &config, &mut messages)
        .await
        .unwrap_err();
    assert!(matches!(err, ChatError::NoModel { .. }), "{err:?}");
    let other = ModelProviderConfig::new("openai");
    let err = run_chat(&scope, &provider, &other, &mut messages)
        .await
        .unwrap_err();
    assert!(matches!(err, ChatError::ProviderMismatch { .. }), "{err:?}");
    assert_eq!(provider.calls.load(Ordering::SeqCst), 0);
}

#[test]
fn tool_specs_follow_the_profile() {
    let host = host(true);
    let scope = host.user_scope(UserInfo::new("alice"));
    let raw = tool_specs(&scope, SchemaProfile::Raw);
    let openai = tool_specs(&scope, SchemaProfile::OpenAi);
    assert_eq!(raw.len(), openai.len() + 1, "only the map tool is left out");
}

#[test]
fn each_model_call_has_a_chat_span_with_the_model_and_token_usage() {
    let spans = oscova_test_support::trace::Recorder::default();
    spans.record(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let host = host(true);
                let scope = host.user_scope(UserInfo::new("u"));
                let provider = Scripted::new([
                    ChatMessage::assistant("", vec![call("c1", FORECAST, json!({"city": "Oslo"}))]),
                    ChatMessage::assistant("done", vec![]),
                ]);
                let mut messages = vec![ChatMessage::user("go")];
                let (_, options) = recorder();
                run_chat(&scope, &provider, &config(), &mut messages)
                    .options(options)
                    .await
                    .unwrap();
            });
    });
    let chats = spans.spans_named("chat");
    assert_eq!(chats.len(), 2, "{chats:#?}");
    for span in &chats {
        let f = &span.fields;
        assert_eq!(f["otel.name"], "chat m1", "{f:?}");
        assert_eq!(f["otel.kind"], "client");
        assert_eq!(f["gen_ai.operation.name"], "chat");
        assert_eq!(f["gen_ai.provider.name"], "scripted");
        assert_eq!(f["gen_ai.request.model"], "m1");
        assert_eq!(f["gen_ai.response.finish_reasons"], "stop");
        assert_eq!(f["gen_ai.usage.input_tokens"], "12");
        assert_eq!(f["gen_ai.usage.output_tokens"], "3");
        assert!(span.closed);
    }
    // The tool the model asked for ran in its own span, not inside a model call's.
    let tools = spans.spans_named("execute_tool");
    let [tool] = &tools[..] else {
        panic!("{tools:#?}")
    };
    assert_eq!(tool.fields["gen_ai.tool.name"], FORECAST);
    assert_ne!(tool.parent.as_deref(), Some("chat"));
}
