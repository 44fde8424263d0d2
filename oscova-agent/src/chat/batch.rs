//! One batch: the tool calls of one model answer.
//!
//! Rules: a batch runs concurrently, every call started together, unless
//! any of its tools is sequential ([`ToolInfo::sequential`]); then the
//! whole batch runs one call at a time, in the model's order. Either way
//! the results come back in the model's order, whatever order the calls
//! finished in. Concurrent calls are polled together on the caller's task
//! (no task is spawned, so the scope is borrowed, not shared; a
//! synchronous tool body runs inside its poll and holds the others up for
//! as long as it runs, as the host's blocking rules for bodies say).
//!
//! Every call goes through [`UserScope::invoke`] with the run's
//! cancellation token, so approval, hooks, argument checks and redaction
//! apply; a refusal becomes an error result saying the call did not run.
//! A call that was cancelled, or never started because the run was
//! cancelled first, is `None`: the caller answers it, so every call stays
//! answered. Events: [`ChatEvent::ToolCallRunning`] as a call starts,
//! [`ChatEvent::ToolProgress`] as it reports, and
//! [`ChatEvent::ToolCallFinished`] as it finishes (in a concurrent batch,
//! the order they finish in).
//!
//! [`ToolInfo::sequential`]: oscova_core::tool::ToolInfo::sequential

use std::collections::HashSet;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use oscova_core::provider::model::ToolCallRequest;
use oscova_core::tool::ProgressSink;
use oscova_core::{InvokeError, ToolProgress, ToolResult, UserScope};
use serde_json::{Map, Value, json};

use super::{ChatEvent, ChatLoopOptions};
use crate::profile::SchemaProfile;

/// A call of a batch that ran (or was refused): its result, and whether
/// the host refused it (then it did not run).
#[derive(Debug, Clone)]
pub(crate) struct CallResult {
    /// What the model is answered with.
    pub(crate) result: ToolResult,
    /// Whether the host refused the call (approval, hooks, arguments).
    pub(crate) refused: bool,
}

/// Whether `calls` must run one at a time: any of them names a tool of
/// `scope` that is sequential. An unknown tool name is not sequential (its
/// call is refused at once).
pub(crate) fn is_sequential(scope: &UserScope, calls: &[ToolCallRequest]) -> bool {
    calls
        .iter()
        .any(|call| scope.tool(&call.name).is_some_and(|tool| tool.sequential()))
}

/// Whether every call of a batch ran and asked to end the run
/// ([`ToolResult::terminate`]). A refused call did not run, so it never
/// ends the run; an empty batch does not either.
pub(crate) fn all_terminate(results: &[Option<CallResult>]) -> bool {
    !results.is_empty()
        && results
            .iter()
            .all(|r| r.as_ref().is_some_and(|r| !r.refused && r.result.terminate))
}

/// Runs the batch `calls` through `scope`: concurrently, or one at a time
/// when [`is_sequential`]. Returns one entry per call, in the order of
/// `calls`: `None` for a call cancelled or not started (see the module
/// rules).
pub(crate) async fn run_batch(
    scope: &UserScope,
    calls: &[ToolCallRequest],
    options: &ChatLoopOptions,
    emit: &(dyn Fn(ChatEvent) + Send + Sync),
) -> Vec<Option<CallResult>> {
    if is_sequential(scope, calls) {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            // Once one call is cancelled, the rest are not started.
            let stopped = results.last().is_some_and(Option::is_none);
            let result = if stopped {
                None
            } else {
                run_call(scope, call, options, emit).await
            };
            results.push(result);
        }
        return results;
    }
    let started = calls
        .iter()
        .map(|call| Box::pin(run_call(scope, call, options, emit)))
        .collect();
    join_in_order(started).await
}

/// Polls every future until all are ready; their outputs in the order
/// given. Each wake polls the futures not yet ready: fine for the handful
/// of calls one model answer holds.
pub(crate) async fn join_in_order<F: Future>(mut futures: Vec<Pin<Box<F>>>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_some() {
                continue;
            }
            match future.as_mut().poll(cx) {
                Poll::Ready(value) => *output = Some(value),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    // Every output is set: the poll above returned ready only then.
    outputs.into_iter().flatten().collect()
}

/// Runs one call; `None` when it was cancelled, or the run was cancelled
/// before it started.
async fn run_call(
    scope: &UserScope,
    call: &ToolCallRequest,
    options: &ChatLoopOptions,
    emit: &(dyn Fn(ChatEvent) + Send + Sync),
) -> Option<CallResult> {
    if options.cancellation.is_cancelled() {
        return None;
    }
    emit(ChatEvent::ToolCallRunning(call.clone()));
    let args = prepare_arguments(scope, call, options.profile);
    let progress = options.on_event.clone().map(|sink| {
        let id = call.id.clone();
        Arc::new(move |progress: ToolProgress| {
            sink(&ChatEvent::ToolProgress {
                id: id.clone(),
                progress,
            });
        }) as ProgressSink
    });
    let invoke = scope
        .invoke(&call.name, args)
        .cancellation(options.cancellation.clone());
    let invoke = match progress {
        Some(sink) => invoke.progress_arc(sink),
        None => invoke,
    };
    let (result, refused) = match invoke.checked().await {
        Ok(result) => (result, false),
        Err(InvokeError::Cancelled(_)) => return None,
        Err(error) => {
            let refused = error.is_refusal();
            let kind = error.kind();
            let text = if refused {
                format!("{error}. The call did not run; do not retry it unless the user asks.")
            } else {
                error.to_string()
            };
            let text = scope.redact(&text).into_owned();
            let result = ToolResult::error(text).with_details(json!({ "error": kind }));
            (result, refused)
        }
    };
    emit(ChatEvent::ToolCallFinished {
        id: call.id.clone(),
        name: call.name.clone(),
        result: result.clone(),
        refused,
    });
    Some(CallResult { result, refused })
}

/// The arguments as the tool expects them: a JSON object. Some servers send
/// the arguments as a JSON string, or nothing; and under the `openai`
/// profile every optional parameter is nullable, so a `null` for a
/// parameter the tool does not require is removed (the profile's advice),
/// leaving the parameter's default to apply.
pub(crate) fn prepare_arguments(
    scope: &UserScope,
    call: &ToolCallRequest,
    profile: SchemaProfile,
) -> Value {
    let mut args = match &call.arguments {
        Value::Null => Value::Object(Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => call.arguments.clone(),
        },
        other => other.clone(),
    };
    if profile != SchemaProfile::OpenAi {
        return args;
    }
    let Some(tool) = scope.tool(&call.name) else {
        return args;
    };
    let required: HashSet<&str> = tool
        .input_schema()
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Value::Object(members) = &mut args {
        members.retain(|name, value| !value.is_null() || required.contains(name.as_str()));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Waker};

    #[test]
    fn outputs_come_back_in_the_order_given_not_the_order_ready() {
        // The first future is ready only on its second poll, the second at
        // once: both are polled on the first wake, and the order holds.
        let mut polls = 0;
        let slow = poll_fn(move |cx: &mut Context<'_>| {
            polls += 1;
            if polls < 2 {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready("slow")
            }
        });
        let fast = poll_fn(|_: &mut Context<'_>| Poll::Ready("fast"));
        type Boxed = Pin<Box<dyn Future<Output = &'static str>>>;
        let futures: Vec<Boxed> = vec![Box::pin(slow), Box::pin(fast)];
        let mut joined = Box::pin(join_in_order(futures.into_iter().map(Box::pin).collect()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(joined.as_mut().poll(&mut cx).is_pending());
        assert_eq!(
            joined.as_mut().poll(&mut cx),
            Poll::Ready(vec!["slow", "fast"])
        );
    }

    #[test]
    fn only_a_batch_of_terminating_results_terminates() {
        let ran = |terminate: bool| {
            let result = ToolResult::text("x");
            Some(CallResult {
                result: if terminate {
                    result.terminating()
                } else {
                    result
                },
                refused: false,
            })
        };
        assert!(all_terminate(&[ran(true), ran(true)]));
        assert!(!all_terminate(&[ran(true), ran(false)]));
        assert!(!all_terminate(&[ran(true), None]), "a cancelled call");
        let refused = Some(CallResult {
            result: ToolResult::error("not approved").terminating(),
            refused: true,
        });
        assert!(!all_terminate(&[refused]), "a refused call did not run");
        assert!(!all_terminate(&[]));
    }
}
