//! Calls that ask the person across round trips: protocol 2026-07-28's
//! multi round-trip requests (SEP-2322).
//!
//! Rules: from 2026-07-28 a server sends no requests to the client, so a
//! question from a tool (or approval asked of the person) cannot be
//! answered inside the `tools/call`. Every call is a future of its own
//! ([`RunningCall`]), polled by whichever request drives it; when it asks, the `tools/call` is answered with
//! an `input_required` result carrying the question as one elicitation
//! request under [`INPUT_KEY`], and a `requestState` that is an opaque
//! handle: 128 random bits naming the call parked here, never data the
//! client could forge into something else. The client retries the
//! `tools/call` with the answer in `inputResponses` and the handle
//! echoed; the parked call gets the answer and carries on, to its result
//! or to its next question. A handle is good for one retry, by the same
//! user, for the same tool: anything else is an invalid-params error that
//! says nothing of other calls. At most [`MAX_PARKED`] calls wait at once
//! and each waits at most [`PARK_TIMEOUT`]; past either the oldest is
//! dropped, which cancels it, as does any other way of losing a call.
//! The state lives in this process, so behind a load balancer a retry
//! must reach the process that parked it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_core::ToolProgress;
use oscova_core::ToolResult;
use oscova_core::interaction::{Answer, AskError};
use oscova_core::tool::ToolLog;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ask::RoundAsk;

/// The key of the one elicitation request in an `input_required` result,
/// and of its answer in the retry's `inputResponses`.
pub const INPUT_KEY: &str = "oscova.ask";

/// The most calls that wait for an answer at once, for all users of a
/// server together.
pub const MAX_PARKED: usize = 1024;

/// How long a call waits for the client to come back with an answer.
pub const PARK_TIMEOUT: Duration = Duration::from_secs(600);

/// The future of one tool call (owning what it borrows, so it can wait
/// between requests), with what it reports on. Polled in place by the
/// request that drives it, not spawned: a task per call cost a quarter of
/// the HTTP server's throughput. Dropping it cancels the call.
pub(super) struct RunningCall {
    pub(super) task: CallFuture,
    pub(super) cancel: CancellationToken,
    pub(super) progress: mpsc::UnboundedReceiver<ToolProgress>,
    pub(super) logs: mpsc::UnboundedReceiver<ToolLog>,
    pub(super) asks: mpsc::UnboundedReceiver<RoundAsk>,
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// A tool call's future.
pub(super) type CallFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = ToolResult> + Send + 'static>>;

/// A call waiting for the person's answer.
pub(super) struct Parked {
    pub(super) user: String,
    pub(super) tool: String,
    pub(super) call: RunningCall,
    pub(super) answer: oneshot::Sender<Result<Answer, AskError>>,
}

/// The calls of a server waiting for answers, by handle.
#[derive(Default)]
pub(crate) struct ParkedCalls {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The order of the next call parked: the oldest has the least.
    next: u64,
    calls: HashMap<String, Entry>,
}

struct Entry {
    since: Instant,
    order: u64,
    parked: Parked,
}

impl std::fmt::Debug for ParkedCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.inner.lock().map_or(0, |i| i.calls.len());
        f.debug_struct("ParkedCalls")
            .field("waiting", &waiting)
            .finish()
    }
}

impl ParkedCalls {
    /// Parks `parked` and returns its handle, dropping calls past their
    /// time and, when full, the oldest; a timer drops this one when its
    /// time is up.
    pub(super) fn park(self: &Arc<Self>, parked: Parked) -> Result<String, String> {
        let handle = new_handle()?;
        let timer = (Arc::downgrade(self), handle.clone());
        tokio::spawn(async move {
            tokio::time::sleep(PARK_TIMEOUT).await;
            let (calls, handle) = timer;
            if let Some(calls) = calls.upgrade() {
                // Handles are never reused: if it is still here, it is this call.
                calls.lock().calls.remove(&handle);
            }
        });
        let mut inner = self.lock();
        let now = Instant::now();
        inner
            .calls
            .retain(|_, entry| now.duration_since(entry.since) < PARK_TIMEOUT);
        if inner.calls.len() >= MAX_PARKED
            && let Some(oldest) = inner
                .calls
                .iter()
                .min_by_key(|(_, entry)| entry.order)
                .map(|(h, _)| h.clone())
        {
            inner.calls.remove(&oldest);
        }
        let order = inner.next;
        inner.next += 1;
        let entry = Entry {
            since: now,
            order,
            parked,
        };
        inner.calls.insert(handle.clone(), entry);
        Ok(handle)
    }

    /// Takes the call `handle` names, if it is `user`'s call of `tool` and
    /// still waiting.
    pub(super) fn take(&self, handle: &str, user: &str, tool: &str) -> Option<Parked> {
        let mut inner = self.lock();
        let entry = inner.calls.get(handle)?;
        if entry.parked.user != user || entry.parked.tool != tool {
            return None;
        }
        let expired = entry.since.elapsed() >= PARK_TIMEOUT;
        let entry = inner.calls.remove(handle)?;
        (!expired).then_some(entry.parked)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many calls wait.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().calls.len()
    }
}

/// 128 random bits, in hex.
fn new_handle() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a request state: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked(user: &str, tool: &str) -> (Parked, CancellationToken) {
        let cancel = CancellationToken::new();
        let (_p, progress) = mpsc::unbounded_channel();
        let (_l, logs) = mpsc::unbounded_channel();
        let (_a, asks) = mpsc::unbounded_channel();
        let (answer, _rx) = oneshot::channel();
        let call = RunningCall {
            task: Box::pin(async { ToolResult::text("done") }),
            cancel: cancel.clone(),
            progress,
            logs,
            asks,
        };
        let parked = Parked {
            user: user.into(),
            tool: tool.into(),
            call,
            answer,
        };
        (parked, cancel)
    }

    #[tokio::test]
    async fn a_handle_is_good_once_for_its_user_and_tool() {
        let calls = Arc::new(ParkedCalls::default());
        let (p, cancel) = parked("alice", "t");
        let handle = calls.park(p).unwrap();
        assert_eq!(handle.len(), 32);
        assert!(calls.take(&handle, "bob", "t").is_none(), "another user");
        assert!(calls.take(&handle, "alice", "u").is_none(), "another tool");
        assert!(calls.take("0".repeat(32).as_str(), "alice", "t").is_none());
        let taken = calls.take(&handle, "alice", "t").expect("her call");
        assert!(calls.take(&handle, "alice", "t").is_none(), "used once");
        assert!(!cancel.is_cancelled());
        drop(taken);
        assert!(cancel.is_cancelled(), "a dropped call is cancelled");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_waits_at_most_its_time() {
        let calls = Arc::new(ParkedCalls::default());
        let (p, cancel) = parked("alice", "t");
        calls.park(p).unwrap();
        tokio::time::sleep(PARK_TIMEOUT + Duration::from_secs(1)).await;
        assert_eq!(calls.len(), 0);
        assert!(cancel.is_cancelled(), "an expired call is cancelled");
    }

    #[tokio::test]
    async fn the_oldest_call_gives_way_when_full() {
        let calls = Arc::new(ParkedCalls::default());
        let (first, first_cancel) = parked("alice", "t");
        let first = calls.park(first).unwrap();
        for _ in 1..MAX_PARKED {
            calls.park(parked("alice", "t").0).unwrap();
        }
        assert_eq!(calls.len(), MAX_PARKED);
        calls.park(parked("alice", "t").0).unwrap();
        assert_eq!(calls.len(), MAX_PARKED);
        assert!(calls.take(&first, "alice", "t").is_none());
        assert!(first_cancel.is_cancelled());
    }
}
