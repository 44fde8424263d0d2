//! Bounds on what a server runs at once, and the numeric settings that
//! set them.
//!
//! Rules: a listener's bounds are one value, [`Limits`], whose
//! [`Default`] is what a server gets unless it says otherwise and whose
//! [`check`](Limits::check) holds every field to its range before
//! anything is built from it; past the range the caller gets a
//! [`LimitError`] naming the setting and the range, never a panic deep
//! inside a semaphore. A front end with settings of its own checks them
//! the same way ([`check_count`], [`check_duration`]), with counts bounded
//! by [`MAX_COUNT`]. A [`CallBound`] is one semaphore for the whole
//! server; a front end takes a permit per call and refuses a call at once
//! when none is left (it never queues). At shutdown the server keeps
//! every permit that comes back ([`CallBound::hoard`]), so new calls are
//! refused while the running ones finish.

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// The largest bound on calls, connections or sessions any setting may
/// name: 2^20, far past what a machine serves at once and far below what
/// a semaphore holds on any platform.
pub const MAX_COUNT: usize = 1 << 20;

/// The bounds of a [`Listener`](crate::Listener): connections open at
/// once, in all and from one address, and the time a request's body gets
/// to arrive.
///
/// [`Default`] is what a listener has unless told otherwise;
/// [`check`](Self::check) holds every field to its range (the `*_RANGE`
/// constants here), naming the first one outside it.
///
/// ```
/// use std::time::Duration;
/// use oscova_serve::Limits;
///
/// let mut limits = Limits::default();
/// assert_eq!(limits.max_connections, 1024);
/// assert_eq!(limits.max_connections_per_peer, 256);
/// assert_eq!(limits.body_timeout, Duration::from_secs(30));
///
/// limits.max_connections_per_peer = 0;
/// let refused = limits.check().unwrap_err();
/// assert_eq!(refused.setting(), "max_connections_per_peer");
/// assert_eq!(refused.range(), "1..=1048576");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// How many connections may be open at once (1024 by default); past
    /// it, new ones wait in the kernel's listen queue, not accepted, until
    /// one closes.
    pub max_connections: usize,
    /// How many connections may be open at once from one IP address (256
    /// by default, a quarter of `max_connections`: at 64, the project's own
    /// load run, 50 sessions from one client with a POST and an SSE stream
    /// each, had its connections closed at accept); past it, new ones from
    /// that address are closed as soon as they are accepted. Behind a
    /// reverse proxy every connection comes from the proxy's address: set
    /// it to `max_connections` there.
    pub max_connections_per_peer: usize,
    /// How long a request's body gets to arrive in full after its headers
    /// (30 seconds by default); past it, the answer is 408 and the
    /// connection closes.
    pub body_timeout: Duration,
}

impl Limits {
    /// The range of [`max_connections`](Self::max_connections).
    pub const MAX_CONNECTIONS_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
    /// The range of [`max_connections_per_peer`](Self::max_connections_per_peer).
    pub const MAX_CONNECTIONS_PER_PEER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
    /// The range of [`body_timeout`](Self::body_timeout): a millisecond to
    /// an hour.
    pub const BODY_TIMEOUT_RANGE: RangeInclusive<Duration> =
        Duration::from_millis(1)..=Duration::from_secs(3600);

    /// Every field in its range, or the first one outside it, named as the
    /// field is.
    pub fn check(&self) -> Result<(), LimitError> {
        check_count(
            "max_connections",
            self.max_connections,
            &Self::MAX_CONNECTIONS_RANGE,
        )?;
        check_count(
            "max_connections_per_peer",
            self.max_connections_per_peer,
            &Self::MAX_CONNECTIONS_PER_PEER_RANGE,
        )?;
        check_duration("body_timeout", self.body_timeout, &Self::BODY_TIMEOUT_RANGE)?;
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_connections_per_peer: 256,
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// A numeric setting outside the range a server accepts.
///
/// ```
/// let error = oscova_serve::limits::check_count("max_in_flight_total", 0, &(1..=8)).unwrap_err();
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
    /// A bound of `max` calls, from 1 to [`MAX_COUNT`].
    pub fn new(max: usize) -> Result<Self, LimitError> {
        let max = check_count("calls in flight", max, &(1..=MAX_COUNT))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_is_checked_against_its_range() {
        assert_eq!(Limits::default().check(), Ok(()));
        type Change = fn(&mut Limits);
        let past: [(&str, Change); 5] = [
            ("max_connections", |l| l.max_connections = 0),
            ("max_connections", |l| l.max_connections = usize::MAX),
            ("max_connections_per_peer", |l| {
                l.max_connections_per_peer = MAX_COUNT + 1
            }),
            ("body_timeout", |l| l.body_timeout = Duration::ZERO),
            ("body_timeout", |l| l.body_timeout = Duration::MAX),
        ];
        for (setting, change) in past {
            let mut limits = Limits::default();
            change(&mut limits);
            let refused = limits.check().unwrap_err();
            assert_eq!(refused.setting(), setting, "{limits:?}");
        }
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
