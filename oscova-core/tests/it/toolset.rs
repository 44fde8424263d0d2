//! Runtime behaviour of `#[toolset]` toolsets, through a `PluginHost` and
//! `UserScope` and through `Toolset::dispatch` directly: argument errors
//! with JSON paths (the method is never called), panics, cancellation,
//! injected parameters, progress, and concurrent calls. Metadata is in
//! `metadata.rs`; the fixture both use is in `support/`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_core::{InvokeError, UserScope};
use serde_json::{Value, json};

use crate::support;

use support::{SearchToolset, call_direct, info, invocation, scope, wire};

// ---------------------------------------------------------------- arguments

/// Each bad input: the tool, the arguments, the one problem expected.
fn bad_inputs() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "search_records",
            json!({"query": "q", "colour": "red"}),
            "/colour: unknown property",
        ),
        (
            "search_records",
            json!({}),
            "/query: missing required property",
        ),
        (
            "search_records",
            json!({"limit": 3}),
            "/query: missing required property",
        ),
        (
            "count",
            json!({"limit": "ten"}),
            r#"/limit: expected u32, found string "ten""#,
        ),
        (
            "count",
            json!({"limit": -1}),
            "/limit: expected u32, found integer `-1`",
        ),
        (
            "search_records",
            json!({"query": "q", "filters": [{"field": "a", "min": 1}, {"field": "b", "min": "x"}]}),
            r#"/filters/1/min: expected u32, found string "x""#,
        ),
        (
            "search_records",
            json!({"query": "q", "filters": [{"field": "a"}]}),
            "/filters/0/min: missing field `min`",
        ),
        (
            "search_records",
            json!(["q", 3]),
            "/: arguments must be a JSON object, found an array",
        ),
        (
            "search_records",
            json!("q"),
            "/: arguments must be a JSON object, found a string",
        ),
        (
            "count",
            json!(10),
            "/: arguments must be a JSON object, found a number",
        ),
        (
            "search_records",
            json!({"query": null}),
            "/query: expected a string, found null",
        ),
        ("count", Value::Null, "/limit: missing required property"),
    ]
}

#[tokio::test]
async fn bad_arguments_never_call_the_method_directly() {
    let calls = Arc::new(AtomicUsize::new(0));
    let toolset = SearchToolset {
        calls: calls.clone(),
    };
    for (tool, args, expected) in bad_inputs() {
        let err = call_direct(&toolset, tool, args.clone(), &invocation())
            .await
            .expect_err(&format!("{tool} accepted {args}"));
        assert_eq!(err.to_string(), expected, "{tool} with {args}");
        assert_eq!(err.problems().len(), 1, "{err}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bad_arguments_never_call_the_method_through_a_scope() {
    let (_host, scope, calls) = scope("args-scope");
    for (tool, args, expected) in bad_inputs() {
        let name = wire(tool);
        match scope.invoke(&name, args.clone()).checked().await {
            Err(InvokeError::InvalidArguments { tool: t, error }) => {
                assert_eq!(t, name);
                assert_eq!(error.to_string(), expected, "{tool} with {args}");
            }
            other => panic!("{tool} with {args}: {other:?}"),
        }
        // The model sees one error result naming the tool and the path.
        let result = scope.invoke(&name, args).await;
        assert!(result.is_error);
        assert_eq!(
            result.content,
            format!("invalid arguments for tool `{name}`: {expected}")
        );
        assert_eq!(result.details, json!({"error": "invalid_arguments"}));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let err = call_direct(
        &toolset,
        "search_records",
        json!({"limit": "ten", "extra": true}),
        &invocation(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"/query: missing required property; /limit: expected u32, found string "ten"; /extra: unknown property"#
    );
}

#[tokio::test]
async fn good_arguments_reach_the_method() {
    let (_host, scope, calls) = scope("good-args");
    let r = scope
        .invoke(
            &wire("search_records"),
            json!({"query": "q", "limit": null, "filters": [{"field": "a", "min": 1}]}),
        )
        .await;
    assert_eq!(r, ToolResult::text("q:10:1"));
    let r = scope.invoke(&wire("count"), json!({"limit": 7})).await;
    assert_eq!(r.content, "7");
    assert_eq!(r.details, json!(7));
    let r = scope.invoke(&wire("described"), Value::Null).await;
    assert_eq!(r.content, "null");
    assert!(!r.is_error);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "`described` has no `self`");
}

// ------------------------------------------------------- panics and cancels

#[tokio::test]
async fn panics_become_error_results_and_the_scope_carries_on() {
    let (_host, scope, calls) = scope("panics");
    for (tool, message) in [("explode", "sync boom"), ("explode_later", "async boom")] {
        let name = wire(tool);
        let r = scope.invoke(&name, json!({})).await;
        assert!(r.is_error, "{r:?}");
        assert_eq!(
            r.content,
            format!("tool `{name}` failed unexpectedly: {message}")
        );
        assert_eq!(r.details, json!({"error": "panicked"}));
        // Later calls, to this tool and others, still work.
        let r = scope.invoke(&wire("count"), json!({"limit": 1})).await;
        assert_eq!(r.content, "1");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn cancellation_returns_promptly_even_if_the_body_ignores_it() {
    let (_host, scope, calls) = scope("cancel");
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let cancel = token;
    let outcome = scope
        .invoke(&wire("sleepy"), json!({}))
        .cancellation(cancel)
        .checked()
        .await;
    let elapsed = started.elapsed();
    assert_eq!(outcome, Err(InvokeError::Cancelled(wire("sleepy"))));
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the body did start");

    // An already cancelled token stops the call before the method runs.
    let token = CancellationToken::new();
    token.cancel();
    let cancel = token;
    let r = scope
        .invoke(&wire("sleepy"), json!({}))
        .cancellation(cancel)
        .await;
    assert!(r.is_error);
    assert_eq!(r.details, json!({"error": "cancelled"}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_body_that_ignores_cancellation_runs_no_longer_than_its_grace() {
    let (_host, scope, calls) = scope("grace");
    let token = CancellationToken::new();
    let canceller = token.clone();
    let name = wire("sleepy");
    let call = scope
        .invoke(&name, json!({}))
        .cancellation(token)
        .cancellation_grace(Duration::from_millis(50))
        .checked();
    let (outcome, ()) = tokio::join!(call, async {
        tokio::task::yield_now().await;
        canceller.cancel();
    });
    // The body sleeps for 30 s: the call ends when the grace is over.
    assert_eq!(outcome, Err(InvokeError::Cancelled(wire("sleepy"))));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the body did start");
}

#[test]
fn a_synchronous_tool_finishes_in_the_first_poll() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let (_host, scope, calls) = scope("first-poll");
    let mut cx = Context::from_waker(Waker::noop());
    // No runtime at all: nothing in a synchronous tool's call waits.
    let name = wire("count");
    let call = std::pin::pin!(scope.invoke(&name, json!({"limit": 4})));
    match call.poll(&mut cx) {
        Poll::Ready(r) => assert_eq!(r.content, "4"),
        Poll::Pending => panic!("a synchronous tool's call must not wait"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Nor does a refusal.
    let call = std::pin::pin!(scope.invoke("no_such_tool", json!({})));
    match call.poll(&mut cx) {
        Poll::Ready(r) => assert_eq!(r.details, json!({"error": "unknown_tool"})),
        Poll::Pending => panic!("an unknown tool is refused at once"),
    }
}

#[tokio::test]
async fn a_cancelled_token_stops_a_synchronous_tool_before_it_runs() {
    let (_host, scope, calls) = scope("cancel-sync");
    let token = CancellationToken::new();
    token.cancel();
    let cancel = token;
    let outcome = scope
        .invoke(&wire("count"), json!({"limit": 1}))
        .cancellation(cancel)
        .checked()
        .await;
    assert_eq!(outcome, Err(InvokeError::Cancelled(wire("count"))));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_injected_token_and_invocation_are_the_callers() {
    let (_host, scope, _) = scope("token-owner");
    let token = CancellationToken::new();
    let cancel = token.clone();
    let r = scope
        .invoke(&wire("cancel_own"), json!({}))
        .cancellation(cancel)
        .await;
    assert_eq!(r, ToolResult::text("token-owner"));
    assert!(
        token.is_cancelled(),
        "the tool cancelled the caller's token"
    );

    // Directly, with a token on the invocation.
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let token = CancellationToken::new();
    let inv = invocation().with_cancellation(token.clone());
    let r = call_direct(&toolset, "cancel_own", json!({}), &inv)
        .await
        .unwrap();
    assert_eq!(r.content, "direct");
    assert!(token.is_cancelled());
    assert!(inv.is_cancelled());
}

#[tokio::test]
async fn progress_reports_arrive_at_the_sink() {
    let (_host, scope, _) = scope("progress");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let on_progress = move |p: ToolProgress| {
        sink.lock().unwrap().push(p);
    };
    let r = scope
        .invoke(&wire("progress"), json!({"steps": 3}))
        .progress(on_progress)
        .await;
    assert_eq!(r.content, "3");
    let seen = seen.lock().unwrap();
    let messages: Vec<_> = seen.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(messages, ["step 1", "step 2", "step 3"]);
    assert_eq!(seen[2].progress, Some(3.0));
    assert_eq!(seen[2].total, Some(3.0));
}

// ------------------------------------------------------------- concurrency

#[test]
fn toolsets_scopes_and_calls_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<SearchToolset>();
    send_sync::<PluginHost>();
    send_sync::<UserScope>();
    send_sync::<ToolInvocation<'static>>();
    send_sync::<Box<dyn oscova_core::Toolset>>();
    let (_host, scope, _) = scope("send");
    let call = scope.invoke("anything", json!({}));
    send(&call);
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let inv = invocation();
    let direct = toolset.dispatch(info("echo").0, json!({"text": "x"}), &inv);
    send(&direct);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_calls_on_one_scope() {
    let (_host, scope, calls) = scope("concurrent");
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let scope = scope.clone();
            tokio::spawn(async move {
                let (tool, args, expected) = if i % 2 == 0 {
                    (
                        "echo",
                        json!({"text": format!("call {i}")}),
                        format!("call {i}"),
                    )
                } else {
                    ("count", json!({"limit": i}), i.to_string())
                };
                let r = scope.invoke(&wire(tool), args).await;
                assert!(!r.is_error, "{r:?}");
                assert_eq!(r.content, expected);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 100);
}
