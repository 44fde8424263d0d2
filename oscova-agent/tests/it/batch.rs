//! Batches of tool calls in the chat loop: concurrent unless a tool is
//! sequential, results in the model's order, a batch of terminating
//! results ending the run without another model call; and the system
//! prompt's tools section the tools' snippets and guidelines make.
//!
//! No timing is asserted: concurrency is shown by two calls that can only
//! finish when each sees the other started (a guard timeout turns a
//! deadlock into a failed result), and order by a log of starts and ends.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use oscova_agent::chat::{
    ChatError, ChatEvent, ChatLoopOptions, run_chat, tool_specs, tools_prompt_section,
};
use oscova_agent::profile::SchemaProfile;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;
use tokio::sync::Barrier;

use crate::chat::{Scripted, call, config};

/// How long a call waits for its partner before saying it was alone: a
/// guard against a hang, never a measurement.
const GUARD: Duration = Duration::from_secs(20);

/// The two `meet` calls' meeting point (only the concurrency test calls
/// them).
fn meeting() -> Arc<Barrier> {
    static MEETING: OnceLock<Arc<Barrier>> = OnceLock::new();
    MEETING.get_or_init(|| Arc::new(Barrier::new(2))).clone()
}

/// The starts and ends of `step` and `note` calls (only the sequential
/// test calls them).
fn steps() -> Arc<Mutex<Vec<String>>> {
    static STEPS: OnceLock<Arc<Mutex<Vec<String>>>> = OnceLock::new();
    STEPS.get_or_init(Default::default).clone()
}

async fn logged(label: String) -> String {
    steps().lock().unwrap().push(format!("start {label}"));
    // Gives the loop a chance to start another call now, if it would.
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
    steps().lock().unwrap().push(format!("end {label}"));
    label
}

/// Tools for batches.
pub struct BatchToolset;

#[toolset]
impl BatchToolset {
    /// Waits until another `meet` call has started too.
    #[tool(
        prompt_snippet = "Meets another call.",
        prompt_guidelines = ["Call tools together when they do not depend on each other."]
    )]
    pub async fn meet(
        /// Who meets.
        who: String,
    ) -> Result<String, String> {
        match tokio::time::timeout(GUARD, meeting().wait()).await {
            Ok(_) => Ok(format!("{who} met")),
            Err(_) => Err(format!("{who} was alone: the calls did not run together")),
        }
    }

    /// One step that must not overlap any other call.
    #[tool(
        sequential,
        prompt_snippet = "Takes one step at a time.",
        prompt_guidelines = [
            "Take steps in order.",
            "Call tools together when they do not depend on each other."
        ]
    )]
    pub async fn step(
        /// The step's label.
        label: String,
    ) -> String {
        logged(label).await
    }

    /// Notes something; runs alongside others unless a sequential tool is
    /// in the batch.
    pub async fn note(
        /// The note's label.
        label: String,
    ) -> String {
        logged(label).await
    }

    /// Saves and says nothing more is to be done.
    #[tool(prompt_guidelines = ["Say `done` once the work is saved."])]
    pub fn done() -> ToolResult {
        ToolResult::text("saved").terminating()
    }

    /// Takes far longer than any test waits, unless cancelled.
    pub async fn linger() -> String {
        tokio::time::sleep(GUARD * 3).await;
        "lingered".to_owned()
    }

    /// Says something; the run goes on after it.
    pub fn say(
        /// The text.
        text: String,
    ) -> String {
        text
    }
}

/// The test plugin.
#[plugin(id = "test.batch")]
pub struct BatchPlugin;

impl AgentPlugin for BatchPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| BatchToolset);
    }
}

const MEET: &str = "test_batch__batch__meet";
const STEP: &str = "test_batch__batch__step";
const NOTE: &str = "test_batch__batch__note";
const DONE: &str = "test_batch__batch__done";
const SAY: &str = "test_batch__batch__say";
const LINGER: &str = "test_batch__batch__linger";

fn host() -> PluginHost {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![BatchPlugin])
        .build()
        .unwrap()
}

fn tool_texts(messages: &[ChatMessage]) -> Vec<(&str, &str)> {
    messages
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| (m.tool_call_id.as_deref().unwrap_or(""), m.content.as_str()))
        .collect()
}

#[tokio::test]
async fn a_batch_runs_concurrently_and_is_answered_in_the_models_order() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "",
            vec![
                call("first", MEET, json!({"who": "ann"})),
                call("second", MEET, json!({"who": "bob"})),
            ],
        ),
        ChatMessage::assistant("They met.", vec![]),
    ]);
    let finished = Arc::new(Mutex::new(Vec::new()));
    let sink = finished.clone();
    let options = ChatLoopOptions::new().on_event(move |e| {
        if let ChatEvent::ToolCallFinished { id, .. } = e {
            sink.lock().unwrap().push(id.clone());
        }
    });
    let mut messages = vec![ChatMessage::user("meet")];
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .options(options)
        .await
        .unwrap();
    // Each call finished only because the other had started: together.
    assert_eq!(
        tool_texts(&messages),
        [("first", "ann met"), ("second", "bob met")]
    );
    assert_eq!(outcome.tool_calls, 2);
    assert!(!outcome.terminated);
    assert_eq!(finished.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_batch_with_a_sequential_tool_runs_one_call_at_a_time_in_order() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "",
            vec![
                call("n1", NOTE, json!({"label": "n1"})),
                call("s1", STEP, json!({"label": "s1"})),
                call("n2", NOTE, json!({"label": "n2"})),
            ],
        ),
        ChatMessage::assistant("Done in order.", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("steps")];
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .await
        .unwrap();
    assert_eq!(outcome.tool_calls, 3);
    // The sequential `step` makes the whole batch, `note`s too, run one
    // call after another: no start before the previous end.
    assert_eq!(
        *steps().lock().unwrap(),
        [
            "start n1", "end n1", "start s1", "end s1", "start n2", "end n2"
        ]
    );
    assert_eq!(
        tool_texts(&messages),
        [("n1", "n1"), ("s1", "s1"), ("n2", "n2")]
    );
}

#[tokio::test]
async fn a_batch_of_terminating_results_ends_the_run_without_another_model_call() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let asked = ChatMessage::assistant(
        "Saving.",
        vec![call("d1", DONE, json!({})), call("d2", DONE, json!({}))],
    );
    let provider = Scripted::new([
        asked.clone(),
        ChatMessage::assistant("never asked for", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("save")];
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .await
        .unwrap();
    assert!(outcome.terminated);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1, "one model call");
    assert_eq!(outcome.rounds, 1);
    assert_eq!(outcome.tool_calls, 2);
    // The outcome's message is the last assistant message; every call is
    // answered, and nothing follows the answers.
    assert_eq!(outcome.message.content, "Saving.");
    assert_eq!(outcome.message.tool_calls, asked.tool_calls);
    let roles: Vec<_> = messages.iter().map(|m| m.role).collect();
    use ChatRole::*;
    assert_eq!(roles, [User, Assistant, Tool, Tool]);
    assert_eq!(tool_texts(&messages), [("d1", "saved"), ("d2", "saved")]);
}

#[tokio::test]
async fn one_result_that_does_not_terminate_keeps_the_run_going() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([
        ChatMessage::assistant(
            "",
            vec![
                call("d", DONE, json!({})),
                call("s", SAY, json!({"text": "more"})),
            ],
        ),
        ChatMessage::assistant("All saved.", vec![]),
    ]);
    let mut messages = vec![ChatMessage::user("save")];
    let outcome = run_chat(&scope, &provider, &config(), &mut messages)
        .await
        .unwrap();
    assert!(!outcome.terminated);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 2);
    assert_eq!(outcome.message.content, "All saved.");
    assert_eq!(messages.len(), 5, "user, assistant, two tools, assistant");
}

#[tokio::test]
async fn a_cancelled_batch_keeps_what_finished_and_answers_the_rest_in_order() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let provider = Scripted::new([ChatMessage::assistant(
        "",
        vec![
            call("l", LINGER, json!({})),
            call("s", SAY, json!({"text": "said"})),
        ],
    )]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // `say` finishes while `linger` runs beside it; then the run is
    // cancelled.
    let options = ChatLoopOptions::new()
        .cancellation(cancel)
        .on_event(move |e| {
            if matches!(e, ChatEvent::ToolCallFinished { name, .. } if name == SAY) {
                trigger.cancel();
            }
        });
    let mut messages = vec![ChatMessage::user("go")];
    let err = tokio::time::timeout(
        GUARD,
        run_chat(&scope, &provider, &config(), &mut messages).options(options),
    )
    .await
    .expect("cancellation ends the lingering call")
    .unwrap_err();
    assert!(matches!(err, ChatError::Cancelled), "{err:?}");
    assert_eq!(
        tool_texts(&messages),
        [("l", "not run: the chat was cancelled"), ("s", "said")]
    );
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn the_tools_section_lists_snippets_then_guidelines_each_once() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let tools = tool_specs(&scope, SchemaProfile::OpenAi);
    assert_eq!(
        tools_prompt_section(&scope, &tools),
        "Available tools:\n\
         - test_batch__batch__meet: Meets another call.\n\
         - test_batch__batch__step: Takes one step at a time.\n\
         \n\
         Guidelines:\n\
         - Call tools together when they do not depend on each other.\n\
         - Take steps in order.\n\
         - Say `done` once the work is saved."
    );
    // Only the tools the model is sent: without them, nothing.
    let fewer: Vec<_> = tools.into_iter().filter(|t| t.name == SAY).collect();
    assert_eq!(tools_prompt_section(&scope, &fewer), "");
}
