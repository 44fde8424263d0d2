//! Layers around tool calls (`host/layer.rs`), through a real `PluginHost`
//! and `UserScope`: a layer refuses a call (the method never runs, and
//! nobody is asked to approve it), rewrites arguments (the tool and the
//! approval request see the rewrite), observes and replaces outcomes
//! (refusals included); layers run in registration order inside the
//! hooks and inside a call's own layer; a panicking layer stops the call
//! and says whether the tool ran; a tool the host does not publish runs
//! under the same layers through `UserScope::layered`; what a layer puts
//! back is redacted; a host without layers still runs a synchronous tool
//! inside the first poll.

#![allow(missing_docs)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use oscova_core::host::invoke::Arguments;
use oscova_core::host::layer::{CallOutcome, Next, ToolCall, ToolLayer, layer_fn};
use oscova_core::prelude::*;
use oscova_core::provider::BoxFuture;
use oscova_core::redact::REDACTED;
use oscova_core::{ApprovalDecision, ApprovalRequest, InvokeError, PluginHostBuilder};
use serde_json::{Value, json};

// ---------------------------------------------------------------- fixtures

static SHELL_RUNS: AtomicUsize = AtomicUsize::new(0);

pub struct ShellToolset;

#[toolset]
impl ShellToolset {
    /// Runs a command (here: counts the run and echoes the command).
    pub fn run(command: String) -> String {
        SHELL_RUNS.fetch_add(1, Ordering::SeqCst);
        format!("ran {command}")
    }

    /// The same, asynchronously.
    pub async fn run_async(command: String) -> String {
        tokio::task::yield_now().await;
        SHELL_RUNS.fetch_add(1, Ordering::SeqCst);
        format!("ran {command}")
    }

    /// The same, asked first.
    #[tool(approval = Required)]
    pub fn run_asked(command: String) -> String {
        SHELL_RUNS.fetch_add(1, Ordering::SeqCst);
        format!("ran {command}")
    }

    /// Fails.
    pub fn fail() -> Result<String, String> {
        Err("it failed".to_owned())
    }
}

#[plugin(id = "test.layers")]
pub struct ShellPlugin;

impl AgentPlugin for ShellPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| ShellToolset);
    }
}

const RUN: &str = "test_layers__shell__run";
const RUN_ASYNC: &str = "test_layers__shell__run_async";
const RUN_ASKED: &str = "test_layers__shell__run_asked";
const FAIL: &str = "test_layers__shell__fail";

/// Tests share the run counter, so each counts under its own lock.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn runs() -> usize {
    SHELL_RUNS.load(Ordering::SeqCst)
}

fn builder() -> PluginHostBuilder {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![ShellPlugin])
        .strict(true)
}

/// The guard of the issue: refuses `rm -rf` anywhere in the arguments.
struct NoRmRf;

impl ToolLayer for NoRmRf {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            // A guard may wait (a policy service); this one yields once.
            tokio::task::yield_now().await;
            if call.arguments.to_string().contains("rm -rf") {
                return Err(call.refuse("destructive shell commands are not allowed"));
            }
            next.run(call).await
        })
    }
}

type Log = Arc<Mutex<Vec<String>>>;

/// A layer that logs its name going in and coming out.
fn logging(log: &Log, name: &'static str) -> impl ToolLayer {
    let log = log.clone();
    layer_fn(move |call, next| {
        let log = log.clone();
        Box::pin(async move {
            log.lock().unwrap().push(format!("{name} in"));
            let outcome = next.run(call).await;
            log.lock().unwrap().push(format!("{name} out"));
            outcome
        })
    })
}

// ------------------------------------------------------------------ refuse

#[tokio::test]
async fn a_layer_refuses_a_call_and_no_tool_body_runs_sync_or_async() {
    let _serial = SERIAL.lock().await;
    let host = builder().layer(NoRmRf).build().unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    for tool in [RUN, RUN_ASYNC] {
        let refused = scope
            .invoke(tool, json!({"command": "rm -rf /"}))
            .checked()
            .await;
        match refused {
            Err(InvokeError::Blocked { tool: name, reason }) => {
                assert_eq!(name, tool);
                assert_eq!(reason, "destructive shell commands are not allowed");
            }
            other => panic!("{tool}: {other:?}"),
        }
        // As the model reads it.
        let result = scope
            .invoke(tool, Arguments::json(r#"{"command": "sudo rm -rf ~"}"#))
            .await;
        assert!(result.is_error);
        assert_eq!(result.details, json!({"error": "blocked"}));
    }
    assert_eq!(runs(), before, "no body ran");
    let ran = scope.invoke(RUN, json!({"command": "ls"})).await;
    assert_eq!(ran.content, "ran ls");
    let ran = scope.invoke(RUN_ASYNC, json!({"command": "ls"})).await;
    assert_eq!(ran.content, "ran ls");
    assert_eq!(runs(), before + 2);
}

#[tokio::test]
async fn a_refused_call_asks_nobody_and_a_rewrite_is_what_approval_and_the_tool_see() {
    let _serial = SERIAL.lock().await;
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = asked.clone();
    let rewrite = layer_fn(|mut call, next| {
        Box::pin(async move {
            if call.arguments["command"] == "list" {
                call.arguments["command"] = json!("ls -la");
            }
            next.run(call).await
        })
    });
    let host = builder()
        .layer(rewrite)
        .layer(NoRmRf)
        .approval_handler(move |request: &ApprovalRequest<'_>| {
            seen.lock().unwrap().push(request.arguments.clone());
            ApprovalDecision::Approve
        })
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    let refused = scope
        .invoke(RUN_ASKED, json!({"command": "rm -rf /"}))
        .checked()
        .await;
    assert_eq!(refused.unwrap_err().kind(), "blocked");
    assert!(
        asked.lock().unwrap().is_empty(),
        "a refused call asks nobody"
    );
    assert_eq!(runs(), before);

    let ran = scope.invoke(RUN_ASKED, json!({"command": "list"})).await;
    assert_eq!(ran.content, "ran ls -la");
    assert_eq!(*asked.lock().unwrap(), [json!({"command": "ls -la"})]);
}

#[tokio::test]
async fn a_rewrite_that_breaks_the_arguments_is_an_argument_error() {
    let _serial = SERIAL.lock().await;
    let host = builder()
        .layer(layer_fn(|mut call, next| {
            Box::pin(async move {
                call.arguments = json!({"command": 42});
                next.run(call).await
            })
        }))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    let outcome = scope.invoke(RUN, json!({"command": "ls"})).checked().await;
    assert_eq!(outcome.unwrap_err().kind(), "invalid_arguments");
    assert_eq!(runs(), before);
}

// --------------------------------------------------------- observe, replace

#[tokio::test]
async fn a_layer_sees_results_error_results_and_refusals_and_may_replace_them() {
    let _serial = SERIAL.lock().await;
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let host = builder()
        .layer(layer_fn(move |call, next| {
            let log = log.clone();
            Box::pin(async move {
                let tool = call.tool().name().to_owned();
                let outcome = next.run(call).await;
                let line = match &outcome {
                    Ok(result) => format!("{tool}: {} error={}", result.content, result.is_error),
                    Err(error) => format!("{tool}: {}", error.kind()),
                };
                log.lock().unwrap().push(line);
                match outcome {
                    // Hide what a denied call would have been.
                    Err(InvokeError::Denied { .. }) => Ok(ToolResult::error("not now")),
                    other => other,
                }
            })
        }))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    assert_eq!(
        scope.invoke(RUN, json!({"command": "ls"})).await.content,
        "ran ls"
    );
    assert!(scope.invoke(FAIL, Value::Null).await.is_error);
    // No approval handler: the call is denied, and the layer replaces it.
    let replaced = scope
        .invoke(RUN_ASKED, json!({"command": "ls"}))
        .checked()
        .await
        .unwrap();
    assert_eq!(replaced.content, "not now");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "run: ran ls error=false",
            "fail: it failed error=true",
            "run_asked: denied",
        ]
    );
}

#[tokio::test]
async fn a_layer_may_answer_without_running_the_tool() {
    let _serial = SERIAL.lock().await;
    let host = builder()
        .layer(layer_fn(|call, _next| {
            Box::pin(
                async move { Ok(ToolResult::text(format!("dry run of {}", call.wire_name()))) },
            )
        }))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    let result = scope.invoke(RUN, json!({"command": "ls"})).await;
    assert_eq!(result.content, format!("dry run of {RUN}"));
    assert_eq!(runs(), before);
}

// ------------------------------------------------------------------- order

#[tokio::test]
async fn hooks_then_layers_in_order_inside_the_calls_own_layer() {
    let _serial = SERIAL.lock().await;
    let log = Log::default();
    let (before, after) = (log.clone(), log.clone());
    let host = builder()
        .layer(logging(&log, "first"))
        .before_tool_call(move |e| {
            before
                .lock()
                .unwrap()
                .push(format!("before {}", e.arguments["command"]))
        })
        .layer(logging(&log, "second"))
        .after_tool_call(move |e| {
            after
                .lock()
                .unwrap()
                .push(format!("after {}", e.result.content))
        })
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope
        .invoke(RUN, json!({"command": "ls"}))
        .layer(logging(&log, "own"))
        .await;
    assert_eq!(result.content, "ran ls");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "own in",
            r#"before "ls""#,
            "first in",
            "second in",
            "second out",
            "first out",
            "after ran ls",
            "own out",
        ]
    );
}

#[tokio::test]
async fn a_before_hooks_patch_is_what_the_guard_layer_sees() {
    let _serial = SERIAL.lock().await;
    // A hook that turns a harmless call into a dangerous one must not get
    // it past the guard: hooks run outside the layers.
    let host = builder()
        .layer(NoRmRf)
        .before_tool_call(|e| e.arguments["command"] = json!("rm -rf /"))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    let outcome = scope.invoke(RUN, json!({"command": "ls"})).checked().await;
    assert_eq!(outcome.unwrap_err().kind(), "blocked");
    assert_eq!(runs(), before);
}

// ------------------------------------------------------------------ panics

#[tokio::test]
async fn a_panicking_layer_blocks_before_the_tool_and_withholds_after_it() {
    let _serial = SERIAL.lock().await;
    let host = builder()
        .layer(layer_fn(|call, next| {
            Box::pin(async move {
                if call.arguments["command"] == "early" {
                    panic!("policy table missing");
                }
                let outcome = next.run(call).await;
                if outcome.as_ref().is_ok_and(|r| r.content == "ran late") {
                    panic!("audit log is full");
                }
                outcome
            })
        }))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let before = runs();
    let early = scope
        .invoke(RUN, json!({"command": "early"}))
        .checked()
        .await;
    match early {
        Err(InvokeError::Blocked { reason, .. }) => {
            assert_eq!(reason, "a host hook failed: policy table missing");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(runs(), before, "nothing ran");

    let late = scope
        .invoke(RUN, json!({"command": "late"}))
        .checked()
        .await
        .unwrap();
    assert!(late.is_error);
    assert!(
        late.content
            .contains("ran, but its result was withheld: a host hook failed: audit log is full"),
        "{}",
        late.content
    );
    assert_eq!(late.details, json!({"error": "hook_failed"}));
    assert_eq!(runs(), before + 1);
    // The host carries on.
    assert_eq!(
        scope.invoke(RUN, json!({"command": "ls"})).await.content,
        "ran ls"
    );
}

// -------------------------------------------------------------- redaction

#[tokio::test]
async fn what_a_layer_puts_back_is_redacted() {
    let _serial = SERIAL.lock().await;
    let host = builder()
        .layer(layer_fn(|call, next| {
            Box::pin(async move {
                if call.arguments["command"] == "refuse" {
                    return Err(call.refuse("key host-secret-5555 is wrong"));
                }
                let mut result = next.run(call).await?;
                result.content.push_str(" with host-secret-5555");
                Ok(result)
            })
        }))
        .build()
        .unwrap();
    host.redactor().add("host-secret-5555");
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope.invoke(RUN, json!({"command": "ls"})).await;
    assert_eq!(result.content, format!("ran ls with {REDACTED}"));
    let refused = scope.invoke(RUN, json!({"command": "refuse"})).await;
    assert!(
        refused
            .content
            .ends_with(&format!("key {REDACTED} is wrong")),
        "{}",
        refused.content
    );
}

// ------------------------------------------------ a tool the host does not publish

pub struct LocalToolset;

#[toolset]
impl LocalToolset {
    /// A session's own tool.
    pub fn wipe(path: String) -> String {
        path
    }
}

/// Runs `wipe`, a tool no plugin published, under the host's layers and
/// a layer of the caller's own.
async fn run_local(
    scope: &oscova_core::UserScope,
    info: &oscova_core::tool::ToolInfo,
    log: &Log,
    ran: Arc<AtomicUsize>,
    args: Value,
) -> CallOutcome {
    let call = ToolCall::new("wipe", info, scope.user(), args);
    let own = logging(log, "own");
    scope
        .layered(Some(&own), call, |call| async move {
            ran.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text(format!(
                "wiped {} host-secret-7777",
                call.arguments["path"]
            )))
        })
        .await
}

#[tokio::test]
async fn an_unpublished_tool_runs_under_the_same_layers() {
    let _serial = SERIAL.lock().await;
    let log = Log::default();
    let host = builder()
        .layer(logging(&log, "host"))
        .layer(NoRmRf)
        .build()
        .unwrap();
    host.redactor().add("host-secret-7777");
    let scope = host.user_scope(UserInfo::new("alice"));
    let info = &LocalToolset::toolset_info().tools()[0];
    let ran = Arc::new(AtomicUsize::new(0));

    let run = |args: Value| run_local(&scope, info, &log, ran.clone(), args);
    let refused = run(json!({"path": "x; rm -rf /"})).await;
    assert_eq!(refused.unwrap_err().kind(), "blocked");
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the tool did not run");
    let done = run(json!({"path": "tmp"})).await.unwrap();
    assert_eq!(done.content, format!(r#"wiped "tmp" {REDACTED}"#));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "own in", "host in", "host out", "own out", "own in", "host in", "host out", "own out"
        ]
    );
}

// --------------------------------------------------------------- fast path

fn poll_once<F: Future>(future: F) -> Poll<F::Output> {
    let mut future = pin!(future);
    future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn without_layers_a_sync_tool_still_runs_in_the_first_poll() {
    let host = builder().build().unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    match poll_once(scope.invoke(RUN, json!({"command": "ls"}))) {
        Poll::Ready(result) => assert_eq!(result.content, "ran ls"),
        Poll::Pending => panic!("a call with no layer took the slow path"),
    }
}
