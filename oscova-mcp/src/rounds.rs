//! Calls that ask the person across round trips: protocol 2026-07-28's
//! multi round-trip requests (SEP-2322).
//!
//! Rules: from 2026-07-28 a server sends no requests to the client, so a
//! question from a tool (or approval asked of the person) cannot be
//! answered inside the `tools/call`. Every call is a future of its own
//! ([`RunningCall`]), polled by whichever request drives it; when it asks,
//! the `tools/call` is answered with an `input_required` result carrying
//! the question as one elicitation request under [`INPUT_KEY`], and a
//! `requestState` that is an opaque handle: 128 random bits naming the call
//! parked here, never data the client could forge into something else. The
//! client retries the `tools/call` with the answer in `inputResponses` and
//! the handle echoed; the parked call gets the answer and carries on, to
//! its result or to its next question. A handle is good for one retry, by
//! the same user, for the same tool: anything else is an invalid-params
//! error that says nothing of other calls. Each call waits at most
//! [`PARK_TIMEOUT`]. At most [`MAX_PARKED`] calls wait at once, and at
//! most the server's per-user bound ([`DEFAULT_MAX_PARKED_PER_USER`]
//! unless set) of one user's: past the user's bound, that user's oldest
//! call is dropped; past the total, the oldest call of the user with the
//! most calls waiting, so one user parking calls never drops another's
//! while they hold more. Dropping a call cancels it, as does any other way
//! of losing one. The parked future lives in this process; with a wait
//! store ([`crate::wait`]) the wait is also kept there before the
//! `input_required` goes out, so a retry reaching another process, or this
//! one after a restart, is answered from the store (`handler/retry.rs`).
//! A call keeps the questions it was asked and their answers, in order
//! ([`RunningCall::answered`]), for its next kept wait; a call run again
//! from a kept wait is given the recorded answers again, each only to the
//! same question at the same place ([`RunningCall::replay`]), and asks
//! the person anything else.

use std::collections::{HashMap, VecDeque};
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use oscova_core::ToolProgress;
use oscova_core::ToolResult;
use oscova_core::interaction::{Answer, AskError};
use oscova_core::tool::ToolLog;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ask::RoundAsk;
use super::wait::Answered;

/// The key of the one elicitation request in an `input_required` result,
/// and of its answer in the retry's `inputResponses`.
pub const INPUT_KEY: &str = "oscova.ask";

/// The most calls that wait for an answer at once, for all users of a
/// server together.
pub const MAX_PARKED: usize = 1024;

/// The default bound on one user's calls waiting for an answer.
pub const DEFAULT_MAX_PARKED_PER_USER: usize = 64;

/// The range of the bound on one user's calls waiting for an answer.
pub const MAX_PARKED_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_PARKED;

/// How long a call waits for the client to come back with an answer.
pub const PARK_TIMEOUT: Duration = Duration::from_secs(600);

/// The future of one tool call (owning what it borrows, so it can wait
/// between requests), with what it reports on. Polled in place by the
/// request that drives it, not spawned: a task per call cost a quarter of
/// the HTTP server's throughput. Dropping it cancels the call.
pub(super) struct RunningCall {
    pub(super) task: CallFuture,
    pub(super) cancel: CancellationToken,
    pub(super) events: Arc<CallEvents>,
    /// The questions answered so far, in order (kept with the call's next
    /// wait).
    pub(super) answered: Vec<Answered>,
    /// The answers of an earlier run of this call still to give again,
    /// each to the same question only.
    pub(super) replay: VecDeque<Answered>,
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.events.close();
    }
}

/// What a running call reports to the request that drives it.
pub(super) enum CallEvent {
    Progress(ToolProgress),
    Log(ToolLog),
    /// A question for the person, to go out as this round's answer.
    Ask(RoundAsk),
}

/// A running call's reports, in the order it made them, for whichever
/// request drives it: one queue per call behind a lock, which allocates on
/// the first report only. (A channel per kind of report cost six
/// allocations a call, three of them blocks of 32 slots, for calls that
/// mostly report nothing.) One driver at a time waits on it.
#[derive(Default)]
pub(super) struct CallEvents {
    inner: Mutex<Events>,
}

#[derive(Default)]
struct Events {
    queue: VecDeque<CallEvent>,
    /// The driver waiting for the next report.
    waker: Option<Waker>,
    /// The call is gone: reports are dropped.
    closed: bool,
}

impl CallEvents {
    /// Queues `event` for the driver; gives it back once the call is gone.
    pub(super) fn push(&self, event: CallEvent) -> Result<(), CallEvent> {
        let waker = {
            let mut inner = self.lock();
            if inner.closed {
                return Err(event);
            }
            inner.queue.push_back(event);
            inner.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// The next report, when there is one.
    pub(super) async fn next(&self) -> CallEvent {
        std::future::poll_fn(|cx| {
            let mut inner = self.lock();
            if let Some(event) = inner.queue.pop_front() {
                return Poll::Ready(event);
            }
            if !inner
                .waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                inner.waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// The next progress or log report already queued; a question stays
    /// queued for the round that will carry it.
    pub(super) fn next_report(&self) -> Option<CallEvent> {
        let mut inner = self.lock();
        match inner.queue.front() {
            Some(CallEvent::Progress(_) | CallEvent::Log(_)) => inner.queue.pop_front(),
            _ => None,
        }
    }

    /// Drops what is queued and every later report.
    fn close(&self) {
        let dropped = {
            let mut inner = self.lock();
            inner.closed = true;
            inner.waker = None;
            std::mem::take(&mut inner.queue)
        };
        // Dropped outside the lock: a question's answer channel wakes its
        // asker as it goes.
        drop(dropped);
    }

    fn lock(&self) -> MutexGuard<'_, Events> {
        // Every change under the lock is one push, pop or take.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
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
    /// The question waiting, as sent (redacted), to record with its answer.
    pub(super) asked: Value,
}

/// The calls of a server waiting for answers, by handle.
pub(crate) struct ParkedCalls {
    inner: Mutex<Inner>,
    /// The bound on one user's calls.
    per_user: usize,
}

impl Default for ParkedCalls {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PARKED_PER_USER)
    }
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
    /// A table where at most `per_user` calls of one user wait (clamped
    /// to [`MAX_PARKED_PER_USER_RANGE`]).
    pub(crate) fn new(per_user: usize) -> Self {
        let range = MAX_PARKED_PER_USER_RANGE;
        Self {
            inner: Mutex::default(),
            per_user: per_user.clamp(*range.start(), *range.end()),
        }
    }

    /// The bound on one user's calls.
    pub(super) fn per_user(&self) -> usize {
        self.per_user
    }

    /// Parks `parked` under `handle` (from [`new_handle`]), dropping calls
    /// past their time and, when its user's bound or the table is full,
    /// the call that gives way (see the module docs); a timer drops this
    /// one when its time is up.
    pub(super) fn park(self: &Arc<Self>, handle: String, parked: Parked) {
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
        if let Some(gone) = inner.gives_way(&parked.user, self.per_user) {
            inner.calls.remove(&gone);
        }
        let order = inner.next;
        inner.next += 1;
        let entry = Entry {
            since: now,
            order,
            parked,
        };
        inner.calls.insert(handle, entry);
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

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many calls wait.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().calls.len()
    }
}

impl Inner {
    /// The call to drop before `user` parks one more: their own oldest
    /// past their bound, else, when the table is full, the oldest call of
    /// the user with the most waiting.
    fn gives_way(&self, user: &str, per_user: usize) -> Option<String> {
        // Per user: how many calls wait, and the oldest one's order and handle.
        let mut users: HashMap<&str, (usize, u64, &str)> = HashMap::new();
        for (handle, entry) in &self.calls {
            let seen = users
                .entry(entry.parked.user.as_str())
                .or_insert((0, u64::MAX, ""));
            seen.0 += 1;
            if entry.order < seen.1 {
                (seen.1, seen.2) = (entry.order, handle.as_str());
            }
        }
        if let Some(&(count, _, oldest)) = users.get(user)
            && count >= per_user
        {
            return Some(oldest.to_owned());
        }
        if self.calls.len() < MAX_PARKED {
            return None;
        }
        users
            .values()
            .max_by_key(|(count, order, _)| (*count, std::cmp::Reverse(*order)))
            .map(|(_, _, oldest)| (*oldest).to_owned())
    }
}

/// A new handle: 128 random bits, in hex.
pub(super) fn new_handle() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a request state: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask::RoundReply;

    fn parked(user: &str, tool: &str) -> (Parked, CancellationToken) {
        let cancel = CancellationToken::new();
        let (answer, _rx) = oneshot::channel();
        let call = RunningCall {
            task: Box::pin(async { ToolResult::text("done") }),
            cancel: cancel.clone(),
            events: Arc::default(),
            answered: Vec::new(),
            replay: VecDeque::new(),
        };
        let parked = Parked {
            user: user.into(),
            tool: tool.into(),
            call,
            answer,
            asked: Value::Null,
        };
        (parked, cancel)
    }

    fn park(calls: &Arc<ParkedCalls>, parked: Parked) -> String {
        let handle = new_handle().unwrap();
        calls.park(handle.clone(), parked);
        handle
    }

    #[tokio::test]
    async fn a_handle_is_good_once_for_its_user_and_tool() {
        let calls = Arc::new(ParkedCalls::default());
        let (p, cancel) = parked("alice", "t");
        let handle = park(&calls, p);
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

    fn log(message: &str) -> CallEvent {
        CallEvent::Log(ToolLog {
            level: oscova_core::tool::LogLevel::Info,
            message: message.to_owned(),
        })
    }

    fn ask(question: oscova_core::interaction::Question, reply: RoundReply) -> CallEvent {
        CallEvent::Ask(RoundAsk {
            question,
            reply,
            before_body: false,
        })
    }

    fn message(event: Option<CallEvent>) -> Option<String> {
        match event? {
            CallEvent::Log(l) => Some(l.message),
            CallEvent::Progress(p) => Some(p.message),
            CallEvent::Ask(ask) => Some(format!("ask: {}", ask.question.message())),
        }
    }

    #[tokio::test]
    async fn reports_come_in_order_and_a_question_waits_for_its_round() {
        let events = CallEvents::default();
        events.push(log("one")).ok().unwrap();
        let (tx, _rx) = oneshot::channel();
        let question = oscova_core::interaction::Question::Confirm {
            message: "go on?".into(),
        };
        events.push(ask(question, tx)).ok().unwrap();
        events.push(log("two")).ok().unwrap();
        // What a finished round flushes: reports up to the question.
        assert_eq!(message(events.next_report()).as_deref(), Some("one"));
        assert!(events.next_report().is_none(), "the question stays");
        assert_eq!(
            message(Some(events.next().await)).as_deref(),
            Some("ask: go on?")
        );
        assert_eq!(message(Some(events.next().await)).as_deref(), Some("two"));
    }

    #[tokio::test]
    async fn a_waiting_driver_wakes_on_a_report_and_a_gone_call_takes_none() {
        let events = Arc::new(CallEvents::default());
        let waiting = tokio::spawn({
            let events = events.clone();
            async move { message(Some(events.next().await)) }
        });
        tokio::task::yield_now().await;
        events.push(log("late")).ok().unwrap();
        assert_eq!(waiting.await.unwrap().as_deref(), Some("late"));

        let (tx, rx) = oneshot::channel();
        let question = oscova_core::interaction::Question::Confirm {
            message: "go on?".into(),
        };
        events.push(ask(question, tx)).ok().unwrap();
        events.close();
        assert!(rx.await.is_err(), "a queued question's asker hears the end");
        assert!(events.push(log("after")).is_err());
        assert!(events.next_report().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_waits_at_most_its_time() {
        let calls = Arc::new(ParkedCalls::default());
        let (p, cancel) = parked("alice", "t");
        park(&calls, p);
        tokio::time::sleep(PARK_TIMEOUT + Duration::from_secs(1)).await;
        assert_eq!(calls.len(), 0);
        assert!(cancel.is_cancelled(), "an expired call is cancelled");
    }

    #[tokio::test]
    async fn the_oldest_call_gives_way_when_full() {
        let calls = Arc::new(ParkedCalls::new(MAX_PARKED));
        let (first, first_cancel) = parked("alice", "t");
        let first = park(&calls, first);
        for _ in 1..MAX_PARKED {
            park(&calls, parked("alice", "t").0);
        }
        assert_eq!(calls.len(), MAX_PARKED);
        park(&calls, parked("alice", "t").0);
        assert_eq!(calls.len(), MAX_PARKED);
        assert!(calls.take(&first, "alice", "t").is_none());
        assert!(first_cancel.is_cancelled());
    }

    #[tokio::test]
    async fn when_full_the_user_with_the_most_calls_gives_way() {
        let calls = Arc::new(ParkedCalls::new(MAX_PARKED));
        let (bobs, bob_cancel) = parked("bob", "t");
        let bobs = park(&calls, bobs);
        let (first, first_cancel) = parked("alice", "t");
        let first = park(&calls, first);
        for _ in 2..MAX_PARKED {
            park(&calls, parked("alice", "t").0);
        }
        park(&calls, parked("alice", "t").0);
        assert_eq!(calls.len(), MAX_PARKED);
        assert!(first_cancel.is_cancelled(), "alice's oldest gave way");
        assert!(calls.take(&first, "alice", "t").is_none());
        assert!(!bob_cancel.is_cancelled(), "bob's older call was kept");
        assert!(calls.take(&bobs, "bob", "t").is_some());
    }
}
