//! Bounds on what a server runs at once, and the count of responses still
//! being sent that graceful shutdown waits for.
//!
//! Rules: a [`CallBound`] is one semaphore for the whole server; a front
//! end takes a permit per call and refuses a call at once when none is
//! left (it never queues). At shutdown the server keeps every permit that
//! comes back ([`CallBound::hoard`]), so new calls are refused while the
//! running ones finish. A response counts as being sent from the moment
//! the front end [starts](Responses::start) it until its body is dropped,
//! sent in full or abandoned ([`CountedBody`]); [`Responses::none`] waits
//! for the count to reach zero.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

/// The server-wide bound on calls in flight.
///
/// ```
/// let bound = oscova_serve::CallBound::new(2);
/// let permit = bound.semaphore().try_acquire();
/// assert!(permit.is_ok());
/// assert_eq!(bound.max(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct CallBound {
    permits: Arc<Semaphore>,
    max: usize,
}

impl CallBound {
    /// A bound of `max` calls (at least 1).
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// The permits, one per call in flight.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.permits
    }

    /// The bound.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Keeps every permit that comes back from now on, until the task is
    /// aborted: new calls are refused while running ones finish.
    pub fn hoard(&self) -> JoinHandle<()> {
        let max = u32::try_from(self.max).unwrap_or(u32::MAX);
        let permits = self.permits.clone();
        tokio::spawn(async move {
            // Held until the task is aborted.
            let _all = permits.acquire_many_owned(max).await.ok();
            std::future::pending::<()>().await;
        })
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

    #[tokio::test]
    async fn a_hoard_keeps_the_permits_that_come_back() {
        let bound = CallBound::new(2);
        let running = bound.semaphore().clone().try_acquire_owned().unwrap();
        let hoard = bound.hoard();
        tokio::task::yield_now().await;
        assert!(
            bound.semaphore().try_acquire().is_err(),
            "the free permit is kept"
        );
        drop(running);
        tokio::task::yield_now().await;
        assert!(
            bound.semaphore().try_acquire().is_err(),
            "so is the one returned"
        );
        hoard.abort();
        let _ = hoard.await;
        assert!(bound.semaphore().try_acquire().is_ok());
    }
}
