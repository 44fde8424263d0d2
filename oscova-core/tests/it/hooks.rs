//! Host hooks around tool calls, through a real `PluginHost` and
//! `UserScope`: before-hooks see the wire name and arguments, patch them or
//! block the call (the method never runs), in registration order; a
//! panicking hook blocks the call and is reported in the result; after-hooks
//! edit content, details and `is_error`, and a panicking one turns the result
//! into an error while the host carries on.

#![allow(missing_docs)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use oscova_core::prelude::*;
use oscova_core::{
    InvokeError, PluginHostBuilder, UserScope, host::AfterToolCall, host::BeforeToolCall,
    redact::REDACTED,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- fixtures

pub struct GreetToolset {
    calls: Arc<AtomicUsize>,
}

#[toolset]
impl GreetToolset {
    /// Greets someone.
    pub fn greet(&self, name: String, times: Option<u32>) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        format!("hello {name}").repeat(times.unwrap_or(1) as usize)
    }

    /// Fails.
    pub fn fail(&self) -> Result<String, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err("it failed".to_owned())
    }
}

#[plugin(id = "test.hooks")]
pub struct GreetPlugin;

impl AgentPlugin for GreetPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| GreetToolset {
            calls: counter_for(ctx.user_id()),
        });
    }
}

/// One counter per user id; every test uses its own user.
fn counter_for(user: &str) -> Arc<AtomicUsize> {
    static COUNTERS: OnceLock<Mutex<HashMap<String, Arc<AtomicUsize>>>> = OnceLock::new();
    let mut map = COUNTERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    map.entry(user.to_owned()).or_default().clone()
}

fn builder() -> PluginHostBuilder {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![GreetPlugin])
        .strict(true)
}

fn scope(host: &PluginHost, user: &str) -> (UserScope, Arc<AtomicUsize>) {
    let scope = host.user_scope(UserInfo::new(user));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    (scope, counter_for(user))
}

const GREET: &str = "test_hooks__greet__greet";
const FAIL: &str = "test_hooks__greet__fail";

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

// ------------------------------------------------------------ before-hooks

#[tokio::test]
async fn before_hooks_see_the_wire_name_user_and_arguments() {
    let log = Log::default();
    let seen = log.clone();
    let host = builder()
        .before_tool_call(move |e: &mut BeforeToolCall<'_>| {
            push(
                &seen,
                format!("{} {} {}", e.wire_name, e.user.id(), e.arguments),
            );
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "see");
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello ann");
    assert_eq!(
        entries(&log),
        [r#"test_hooks__greet__greet see {"name":"ann"}"#]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_before_hook_patches_the_arguments_the_tool_sees() {
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            e.arguments["name"] = json!("patched");
            e.arguments["times"] = json!(2);
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "patch");
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello patchedhello patched");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_patch_that_breaks_the_arguments_is_an_argument_error() {
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            e.arguments["times"] = json!("many");
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "badpatch");
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert!(result.is_error);
    assert!(result.content.contains("/times"), "{}", result.content);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_block_reaches_the_model_and_the_method_never_runs() {
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            if e.arguments["name"] == "mallory" {
                e.block("greeting mallory is not allowed");
            }
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "block");
    let result = scope.invoke(GREET, json!({"name": "mallory"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "tool `test_hooks__greet__greet` was blocked: greeting mallory is not allowed"
    );
    assert_eq!(result.details, json!({"error": "blocked"}));
    let err = scope
        .invoke(GREET, json!({"name": "mallory"}))
        .checked()
        .await
        .unwrap_err();
    assert!(err.is_refusal());
    assert!(
        matches!(&err, InvokeError::Blocked { reason, .. } if reason == "greeting mallory is not allowed"),
        "{err:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // Other calls still run.
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello ann");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn before_hooks_run_in_order_and_a_block_stops_the_rest() {
    let log = Log::default();
    let (one, two, three) = (log.clone(), log.clone(), log.clone());
    let host = builder()
        .before_tool_call(move |e: &mut BeforeToolCall<'_>| {
            push(&one, "one");
            e.arguments["name"] = json!("1");
        })
        .before_tool_call(move |e: &mut BeforeToolCall<'_>| {
            // Sees the first hook's patch.
            push(&two, format!("two saw {}", e.arguments["name"]));
            if e.arguments["times"] == 0 {
                e.block("zero times");
            }
        })
        .before_tool_call(move |e: &mut BeforeToolCall<'_>| {
            push(&three, format!("three blocked={}", e.is_blocked()));
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "order");
    let result = scope.invoke(GREET, json!({"name": "x"})).await;
    assert_eq!(result.content, "hello 1");
    assert_eq!(
        entries(&log),
        ["one", r#"two saw "1""#, "three blocked=false"]
    );

    log.lock().unwrap().clear();
    let result = scope.invoke(GREET, json!({"name": "x", "times": 0})).await;
    assert!(
        result.content.ends_with("was blocked: zero times"),
        "{result:?}"
    );
    assert_eq!(entries(&log), ["one", r#"two saw "1""#]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_before_hook_blocks_the_call_and_is_reported() {
    let later = Arc::new(AtomicUsize::new(0));
    let later_count = later.clone();
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            if e.arguments["name"] == "boom" {
                panic!("policy table missing");
            }
        })
        .before_tool_call(move |_: &mut BeforeToolCall<'_>| {
            later_count.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "panic-before");
    let result = scope.invoke(GREET, json!({"name": "boom"})).await;
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("a host hook failed: policy table missing"),
        "{}",
        result.content
    );
    assert_eq!(result.details, json!({"error": "blocked"}));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(later.load(Ordering::SeqCst), 0, "later hooks do not run");
    // The host carries on.
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello ann");
    assert_eq!(later.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_block_reason_is_redacted() {
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            e.block("the vault key host-secret-9876 is wrong");
        })
        .build()
        .unwrap();
    host.redactor().add("host-secret-9876");
    let (scope, _) = scope(&host, "redact-block");
    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert!(
        result
            .content
            .ends_with(&format!("the vault key {REDACTED} is wrong")),
        "{}",
        result.content
    );
}

// ------------------------------------------------------------- after-hooks

#[tokio::test]
async fn after_hooks_edit_content_details_and_is_error_in_order() {
    let log = Log::default();
    let (first, second) = (log.clone(), log.clone());
    let host = builder()
        .after_tool_call(move |e: &mut AfterToolCall<'_>| {
            push(&first, format!("first {}", e.wire_name));
            e.result.content.push_str(" (checked)");
            e.result.details = json!({"checked": true});
        })
        .after_tool_call(move |e: &mut AfterToolCall<'_>| {
            push(&second, format!("second {}", e.result.content));
            if e.result.is_error {
                e.result.is_error = false;
                e.result.content = format!("recovered: {}", e.result.content);
            } else if e.result.content.contains("mallory") {
                e.result.is_error = true;
            }
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "after");

    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello ann (checked)");
    assert_eq!(result.details, json!({"checked": true}));
    assert!(!result.is_error);
    assert_eq!(
        entries(&log),
        [
            "first test_hooks__greet__greet",
            "second hello ann (checked)"
        ]
    );

    let result = scope.invoke(GREET, json!({"name": "mallory"})).await;
    assert!(result.is_error, "{result:?}");

    let result = scope.invoke(FAIL, Value::Null).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "recovered: it failed (checked)");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn after_hooks_see_the_result_already_redacted() {
    let seen = Log::default();
    let log = seen.clone();
    let host = builder()
        .after_tool_call(move |e: &mut AfterToolCall<'_>| push(&log, e.result.content.clone()))
        .build()
        .unwrap();
    host.redactor().add("ann-the-secret");
    let (scope, _) = scope(&host, "after-redacted");
    let result = scope.invoke(GREET, json!({"name": "ann-the-secret"})).await;
    assert_eq!(result.content, format!("hello {REDACTED}"));
    assert_eq!(entries(&seen), [format!("hello {REDACTED}")]);
}

#[tokio::test]
async fn a_panicking_after_hook_turns_the_result_into_an_error_and_the_host_carries_on() {
    let later = Arc::new(AtomicUsize::new(0));
    let later_count = later.clone();
    let host = builder()
        .after_tool_call(|e: &mut AfterToolCall<'_>| {
            if e.result.content.contains("boom") {
                panic!("audit log is full");
            }
        })
        .after_tool_call(move |_: &mut AfterToolCall<'_>| {
            later_count.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let (scope, calls) = scope(&host, "panic-after");
    let result = scope.invoke(GREET, json!({"name": "boom"})).await;
    assert!(result.is_error);
    assert!(
        result
            .content
            .contains("a host hook failed: audit log is full"),
        "{}",
        result.content
    );
    // The tool did run: the message must not tell the model otherwise, or it
    // may retry a call whose side effects already happened.
    assert!(!result.content.contains("blocked"), "{}", result.content);
    assert!(result.content.contains("ran"), "{}", result.content);
    assert_eq!(result.details, json!({"error": "hook_failed"}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(later.load(Ordering::SeqCst), 0);

    let result = scope.invoke(GREET, json!({"name": "ann"})).await;
    assert_eq!(result.content, "hello ann");
    assert!(!result.is_error);
    assert_eq!(later.load(Ordering::SeqCst), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn refusals_do_not_reach_after_hooks() {
    let after = Arc::new(AtomicUsize::new(0));
    let count = after.clone();
    let host = builder()
        .before_tool_call(|e: &mut BeforeToolCall<'_>| {
            if e.arguments["name"] == "mallory" {
                e.block("no");
            }
        })
        .after_tool_call(move |_: &mut AfterToolCall<'_>| {
            count.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let (scope, _) = scope(&host, "refused-after");
    let _ = scope.invoke(GREET, json!({"name": "mallory"})).await;
    let _ = scope.invoke(GREET, json!({"name": 7})).await;
    let _ = scope.invoke("test_hooks__greet__nope", json!({})).await;
    assert_eq!(after.load(Ordering::SeqCst), 0);
    let _ = scope.invoke(FAIL, Value::Null).await;
    assert_eq!(after.load(Ordering::SeqCst), 1, "an error result did run");
}
