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
//! for the count to reach zero. A numeric setting is checked against its
//! range before anything is built from it ([`check_count`],
//! [`check_duration`]): past the range the caller gets a [`LimitError`]
//! naming the setting and the range, never a panic deep inside a
//! semaphore.

use std::ops::RangeInclusive;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

/// The largest bound on calls, connections or sessions any setting may
/// name: 2^20, far past what a machine serves at once and far below what
/// a semaphore holds on any platform.
pub const MAX_COUNT: usize = 1 << 20;

/// The range of a [`CallBound`].
pub const CALL_BOUND_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;

/// A numeric setting outside the range a server accepts.
///
/// ```
/// let error = oscova_serve::check_count("max_in_flight_total", 0, &(1..=8)).unwrap_err();
/// assert_eq!(error.setting(), "max_in_flight_total");
/// assert_eq!(error.to_string(), "`max_in_flight_total` is 0; it must be in 1..=8");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{setting}` is {value}; it must be in {range}")]
pub struct LimitError {
    setting: &'static str,
    value: String,
    range: String,
}

impl LimitError {
    /// The setting, as the server's builder names it.
    pub fn setting(&self) -> &'static str {
        self.setting
    }

    /// The range it must be in, as `min..=max`.
    pub fn range(&self) -> &str {
        &self.range
    }
}

/// `value` when `range` holds it; otherwise an error naming `setting`.
pub fn check_count(
    setting: &'static str,
    value: usize,
    range: &RangeInclusive<usize>,
) -> Result<usize, LimitError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(LimitError {
        setting,
        value: value.to_string(),
        range: format!("{}..={}", range.start(), range.end()),
    })
}

/// `value` when `range` holds it; otherwise an error naming `setting`.
pub fn check_duration(
    setting: &'static str,
    value: Duration,
    range: &RangeInclusive<Duration>,
) -> Result<Duration, LimitError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(LimitError {
        setting,
        value: format!("{value:?}"),
        range: format!("{:?}..={:?}", range.start(), range.end()),
    })
}

/// The server-wide bound on calls in flight.
///
/// ```
/// let bound = oscova_serve::CallBound::new(2)?;
/// let permit = bound.semaphore().try_acquire();
/// assert!(permit.is_ok());
/// assert_eq!(bound.max(), 2);
/// assert!(oscova_serve::CallBound::new(usize::MAX).is_err());
/// # Ok::<(), oscova_serve::LimitError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CallBound {
    permits: Arc<Semaphore>,
    max: usize,
}

impl CallBound {
    /// A bound of `max` calls, in [`CALL_BOUND_RANGE`].
    pub fn new(max: usize) -> Result<Self, LimitError> {
        let max = check_count("calls in flight", max, &CALL_BOUND_RANGE)?;
        Ok(Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
        })
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
        let bound = CallBound::new(2).unwrap();
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
