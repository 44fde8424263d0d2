//! Dispatching an event to the session's handlers.
//!
//! Rules (the peer runtime's): handlers run one after another, in the
//! extensions' load order, then in the order each registered them. Each
//! gets the event as the one before left it. A handler that fails (an
//! error or a panic) is reported as an `extension_error`
//! ([`AgentEvent::ExtensionError`](super::AgentEvent::ExtensionError), and
//! [`AgentSession::extension_errors`](super::AgentSession::extension_errors)),
//! its changes are dropped, and the next handler runs, unless the event
//! decides otherwise ([`Event::handler_failed`]: a failed tool-call
//! handler blocks the call, a failed process-spawn handler fails the
//! spawn). A handler that blocks, cancels or marks the event handled stops
//! the chain ([`Event::stopped`]).

use std::any::{Any, TypeId};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use oscova_core::provider::BoxFuture;

use super::context::ExtensionContext;
use super::error::AgentError;
use super::events::{Event, OnError};
use super::state::Shared;

/// A handler of events of type `E`, as stored.
pub(crate) type Handler<E> =
    Arc<dyn Fn(E, ExtensionContext) -> BoxFuture<'static, Result<E, AgentError>> + Send + Sync>;

/// What [`SessionApi::on`](super::SessionApi::on) returns: pass it to
/// [`SessionApi::off`](super::SessionApi::off) to unsubscribe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subscription(pub(crate) u64);

struct Entry {
    id: u64,
    extension: usize,
    event: TypeId,
    handler: Arc<dyn Any + Send + Sync>,
}

/// Every handler of a session, of every event type.
#[derive(Default)]
pub(crate) struct Handlers {
    next: u64,
    entries: Vec<Entry>,
}

impl Handlers {
    pub(crate) fn add<E: Event>(&mut self, extension: usize, handler: Handler<E>) -> Subscription {
        self.next += 1;
        self.entries.push(Entry {
            id: self.next,
            extension,
            event: TypeId::of::<E>(),
            handler: Arc::new(handler),
        });
        Subscription(self.next)
    }

    pub(crate) fn remove(&mut self, subscription: Subscription) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.id != subscription.0);
        before != self.entries.len()
    }

    pub(crate) fn remove_extension(&mut self, extension: usize) {
        self.entries.retain(|e| e.extension != extension);
    }

    /// The handlers of `E`, in dispatch order.
    fn of<E: Event>(&self) -> Vec<(usize, Handler<E>)> {
        let mut found: Vec<(usize, u64, Handler<E>)> = self
            .entries
            .iter()
            .filter(|e| e.event == TypeId::of::<E>())
            .filter_map(|e| {
                e.handler
                    .downcast_ref::<Handler<E>>()
                    .map(|h| (e.extension, e.id, h.clone()))
            })
            .collect();
        found.sort_by_key(|(extension, id, _)| (*extension, *id));
        found.into_iter().map(|(x, _, h)| (x, h)).collect()
    }
}

/// Runs `event` through the handlers (see the module rules). `Err` only
/// when a handler failed an event whose failure fails its cause.
pub(crate) async fn dispatch<E: Event>(
    shared: &Arc<Shared>,
    mut event: E,
) -> Result<E, AgentError> {
    let handlers = match shared.handlers.lock() {
        Ok(handlers) => handlers.of::<E>(),
        Err(poisoned) => poisoned.into_inner().of::<E>(),
    };
    for (extension, handler) in handlers {
        let before = event.clone();
        let context = ExtensionContext::new(shared.clone(), extension);
        let outcome = match catch_unwind(AssertUnwindSafe(|| handler(event, context))) {
            Ok(future) => CatchUnwind(future).await,
            Err(payload) => Err(panic_text(&*payload)),
        };
        event = match outcome {
            Ok(Ok(changed)) => changed,
            Ok(Err(error)) => failed(shared, extension, before, &error.to_string())?,
            Err(panic) => failed(
                shared,
                extension,
                before,
                &format!("the handler panicked: {panic}"),
            )?,
        };
        if event.stopped() {
            break;
        }
    }
    Ok(event)
}

/// Reports a failed handler; the event as it was before it, or the
/// failure when the event fails with its handler.
fn failed<E: Event>(
    shared: &Shared,
    extension: usize,
    mut before: E,
    message: &str,
) -> Result<E, AgentError> {
    shared.report_error(extension, E::NAME, message);
    match before.handler_failed(message) {
        OnError::Fail => Err(AgentError::Handler(message.to_owned())),
        OnError::Continue => Ok(before),
    }
}

/// A boxed future whose panics become an `Err` with the panic's message.
pub(crate) struct CatchUnwind<'a, T>(pub(crate) BoxFuture<'a, T>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_text(&*payload))),
        }
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with no message".to_owned()
    }
}
