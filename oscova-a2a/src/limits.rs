//! [`Limits`]: the A2A server's numeric bounds as one value.
//!
//! Rules: [`Default`] is what a server has unless told otherwise;
//! [`Limits::check`] holds every field to its range (the `*_RANGE`
//! constants) when the handler is built, naming the first one outside it,
//! so no bound reaches a semaphore or a timer unchecked. A stream counts
//! against its user's bound from the moment its slot is taken until the
//! slot is dropped (`StreamSlot`), however the stream ends.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_serve::LimitError;
use oscova_serve::limits::{MAX_COUNT, check_count, check_duration};

use crate::store::PushLimits;

/// What one server lets a request and a user hold.
///
/// ```
/// use std::time::Duration;
/// use oscova_a2a::Limits;
///
/// let mut limits = Limits::default();
/// assert_eq!(limits.max_body_bytes, 4 * 1024 * 1024);
/// assert_eq!(limits.stream_idle_timeout, Duration::from_secs(300));
///
/// limits.max_tasks_per_user = 0;
/// let refused = limits.check().unwrap_err();
/// assert_eq!(refused.setting(), "max_tasks_per_user");
/// assert_eq!(refused.range(), "1..=1048576");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The cap on a request body (4 MiB by default, as the MCP server's);
    /// past it the answer is 413.
    pub max_body_bytes: usize,
    /// How many of one user's tasks may run at once (16 by default); one
    /// more is `UnsupportedOperationError`.
    pub max_tasks_per_user: usize,
    /// How many of one user's streams may be open at once (32 by default);
    /// one more is `UnsupportedOperationError`.
    pub max_streams_per_user: usize,
    /// How many webhooks one task may have (8 by default); one more is
    /// `UnsupportedOperationError`.
    pub max_push_configs_per_task: usize,
    /// How many webhooks one user may have on tasks that have not ended
    /// (128 by default); one more is `UnsupportedOperationError`.
    pub max_push_configs_per_user: usize,
    /// How long a stream may go without an event before it is closed
    /// (keep-alive comments do not count; 300 seconds by default, as MCP's
    /// idle timeout).
    pub stream_idle_timeout: Duration,
}

impl Limits {
    /// The range of [`max_body_bytes`](Self::max_body_bytes).
    pub const MAX_BODY_BYTES_RANGE: RangeInclusive<usize> = 1..=1 << 30;
    /// The range of [`max_tasks_per_user`](Self::max_tasks_per_user).
    pub const MAX_TASKS_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
    /// The range of [`max_streams_per_user`](Self::max_streams_per_user).
    pub const MAX_STREAMS_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
    /// The range of [`max_push_configs_per_task`](Self::max_push_configs_per_task)
    /// and [`max_push_configs_per_user`](Self::max_push_configs_per_user).
    pub const MAX_PUSH_CONFIGS_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
    /// The range of [`stream_idle_timeout`](Self::stream_idle_timeout): a
    /// millisecond to a week.
    pub const STREAM_IDLE_TIMEOUT_RANGE: RangeInclusive<Duration> =
        Duration::from_millis(1)..=Duration::from_secs(7 * 24 * 3600);

    /// Every field in its range, or the first one outside it, named as the
    /// field is.
    pub fn check(&self) -> Result<(), LimitError> {
        check_count(
            "max_body_bytes",
            self.max_body_bytes,
            &Self::MAX_BODY_BYTES_RANGE,
        )?;
        check_count(
            "max_tasks_per_user",
            self.max_tasks_per_user,
            &Self::MAX_TASKS_PER_USER_RANGE,
        )?;
        check_count(
            "max_streams_per_user",
            self.max_streams_per_user,
            &Self::MAX_STREAMS_PER_USER_RANGE,
        )?;
        check_count(
            "max_push_configs_per_task",
            self.max_push_configs_per_task,
            &Self::MAX_PUSH_CONFIGS_RANGE,
        )?;
        check_count(
            "max_push_configs_per_user",
            self.max_push_configs_per_user,
            &Self::MAX_PUSH_CONFIGS_RANGE,
        )?;
        check_duration(
            "stream_idle_timeout",
            self.stream_idle_timeout,
            &Self::STREAM_IDLE_TIMEOUT_RANGE,
        )?;
        Ok(())
    }

    /// The webhook bounds a store checks when it adds one.
    pub(crate) fn pushes(&self) -> PushLimits {
        PushLimits::new(
            self.max_push_configs_per_task,
            self.max_push_configs_per_user,
        )
    }
}

impl Default for Limits {
    fn default() -> Self {
        let pushes = PushLimits::default();
        Self {
            max_body_bytes: 4 * 1024 * 1024,
            max_tasks_per_user: 16,
            max_streams_per_user: 32,
            max_push_configs_per_task: pushes.per_task,
            max_push_configs_per_user: pushes.per_user,
            stream_idle_timeout: Duration::from_secs(300),
        }
    }
}

/// One open stream of a user, given back when dropped.
pub(crate) struct StreamSlot {
    streams: Arc<Mutex<HashMap<String, usize>>>,
    user: String,
}

impl StreamSlot {
    /// Counts one more open stream of `user` in `streams` (the caller
    /// checked the bound).
    pub(crate) fn new(streams: Arc<Mutex<HashMap<String, usize>>>, user: &str) -> Self {
        Self {
            streams,
            user: user.to_owned(),
        }
    }

    /// The user.
    pub(crate) fn user(&self) -> &str {
        &self.user
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut streams = self
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(open) = streams.get_mut(&self.user) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                streams.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_pass_and_each_field_outside_its_range_is_named() {
        assert_eq!(Limits::default().check(), Ok(()));
        type Break = fn(&mut Limits);
        let cases: [(&str, Break); 6] = [
            ("max_body_bytes", |l| l.max_body_bytes = (1 << 30) + 1),
            ("max_tasks_per_user", |l| l.max_tasks_per_user = 0),
            ("max_streams_per_user", |l| {
                l.max_streams_per_user = MAX_COUNT + 1
            }),
            ("max_push_configs_per_task", |l| {
                l.max_push_configs_per_task = 0
            }),
            ("max_push_configs_per_user", |l| {
                l.max_push_configs_per_user = 0
            }),
            ("stream_idle_timeout", |l| {
                l.stream_idle_timeout = Duration::ZERO
            }),
        ];
        for (name, break_it) in cases {
            let mut limits = Limits::default();
            break_it(&mut limits);
            assert_eq!(limits.check().map_err(|e| e.setting()), Err(name));
        }
    }
}
