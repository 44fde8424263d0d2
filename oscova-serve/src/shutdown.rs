//! Graceful shutdown: what it waits for and what it cancels.
//!
//! Rules: a response counts as being sent from the moment the front end
//! [starts](Responses::start) it until its body is dropped, sent in full
//! or abandoned ([`CountedBody`]); [`Responses::none`] waits for the count
//! to reach zero. Once the future given to
//! [`Listener::serve_until`](crate::Listener::serve_until) completes, the
//! responses being sent get [`Shutdown::grace`] to finish (calls past the
//! [`CallBound`], when given, are refused meanwhile); then the
//! cancellation token is cancelled, which ends everything the front end
//! still runs.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::limits::CallBound;

/// What graceful shutdown waits for and what it cancels.
#[derive(Debug, Clone)]
pub struct Shutdown {
    pub(crate) cancel: CancellationToken,
    pub(crate) grace: Duration,
    pub(crate) responses: Arc<Responses>,
    pub(crate) calls: Option<CallBound>,
}

impl Shutdown {
    /// Shutdown that waits `grace` for `responses`, then cancels `cancel`.
    pub fn new(cancel: CancellationToken, grace: Duration, responses: Arc<Responses>) -> Self {
        Self {
            cancel,
            grace,
            responses,
            calls: None,
        }
    }

    /// Refuses new calls under `calls` while the grace runs.
    pub fn calls(mut self, calls: CallBound) -> Self {
        self.calls = Some(calls);
        self
    }

    /// How long responses being sent get to finish.
    pub fn grace(&self) -> Duration {
        self.grace
    }
}

/// A count of responses being sent, and a way to wait for none.
#[derive(Debug, Default)]
pub struct Responses {
    count: AtomicUsize,
    idle: Notify,
}

/// One response being sent; the count goes down when this is dropped.
#[derive(Debug)]
pub struct Sending(Arc<Responses>);

impl Responses {
    /// Counts one more response until the returned guard is dropped.
    pub fn start(self: &Arc<Self>) -> Sending {
        self.count.fetch_add(1, Ordering::SeqCst);
        Sending(self.clone())
    }

    /// How many responses are being sent.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits until no response is being sent.
    pub async fn none(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// A response body that counts as being sent (when it holds a
/// [`Sending`]) until hyper drops it. Wrapping the protocol server's body
/// in place of boxing it once more saves an allocation and a dynamic call
/// a frame.
#[derive(Debug)]
pub struct CountedBody<B> {
    inner: B,
    _sending: Option<Sending>,
}

impl<B> CountedBody<B> {
    /// `inner`, counted by `sending` when there is one.
    pub fn new(inner: B, sending: Option<Sending>) -> Self {
        Self {
            inner,
            _sending: sending,
        }
    }
}

impl<B: Body + Unpin> Body for CountedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn none_waits_for_the_last_response() {
        let responses = Arc::new(Responses::default());
        let sending = responses.start();
        assert_eq!(responses.count(), 1);
        let waiter = tokio::spawn({
            let responses = responses.clone();
            async move { responses.none().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(sending);
        waiter.await.unwrap();
        assert_eq!(responses.count(), 0);
    }
}
