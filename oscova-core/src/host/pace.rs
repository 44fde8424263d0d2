//! How long a synchronous tool's bodies take, and so where the next one
//! runs (see [`PluginHostBuilder::blocking_sync_tools`](crate::PluginHostBuilder::blocking_sync_tools)).
//!
//! Rules: on a host that runs slow synchronous bodies off the runtime's
//! workers, every synchronous body is timed (wall time, from the call into
//! the method to its return) and folds into a per-tool estimate, a moving
//! average that gives the newest body a quarter of the weight. While the
//! estimate is under [`SLOW_BODY`] the next body runs in place, on the
//! worker that polls the call, as an async body's synchronous part does;
//! at or over it, the next body runs off the workers (`block_in_place`,
//! bounded by the host's limit), and is timed there too, so a tool whose
//! bodies turn quick again comes back in place. A tool's first body counts
//! as slow until it has been timed once, so a body that blocks from the
//! start never stalls a worker; the price is the one worker stalled by a
//! tool whose bodies were quick and then one of them blocks. Handing a
//! worker's tasks to another thread costs a thread wake-up per call, which
//! for a body of microseconds is most of the call's cost: in the MCP load
//! benchmark it was a quarter of the server's CPU time per call.
//!
//! The estimate is one atomic per published tool, read and written with
//! relaxed ordering: two bodies finishing at once may lose one of their
//! samples, which an estimate can afford.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A synchronous body estimated to take at least this long runs off the
/// runtime's workers. Tokio's guidance for the time between two yields of
/// a task is 10 to 100 µs; a millisecond leaves room for the occasional
/// page fault or preemption of a quick body without calling it slow.
pub(crate) const SLOW_BODY: Duration = Duration::from_millis(1);

/// The estimate before any body was timed: slow, so the first body runs
/// off the workers.
const UNTIMED: u32 = u32::MAX;

/// Estimates at or above this many microseconds are slow.
const SLOW_MICROS: u32 = SLOW_BODY.as_micros() as u32;

/// One tool's estimate of its synchronous body's time, in microseconds.
#[derive(Debug)]
pub(crate) struct BodyPace {
    micros: AtomicU32,
}

impl Default for BodyPace {
    fn default() -> Self {
        Self {
            micros: AtomicU32::new(UNTIMED),
        }
    }
}

impl BodyPace {
    /// Whether the next body should run off the workers.
    #[inline]
    pub(crate) fn is_slow(&self) -> bool {
        self.micros.load(Ordering::Relaxed) >= SLOW_MICROS
    }

    /// Folds one body's time into the estimate.
    #[inline]
    pub(crate) fn record(&self, took: Duration) {
        // Capped well above the threshold, so one body that blocked for
        // minutes does not keep the tool off the workers for ever.
        let sample = u32::try_from(took.as_micros())
            .unwrap_or(u32::MAX)
            .min(SLOW_MICROS * 64);
        let old = self.micros.load(Ordering::Relaxed);
        let new = if old == UNTIMED {
            sample
        } else {
            // old * 3/4 + sample / 4, in u64 so nothing overflows.
            ((u64::from(old) * 3 + u64::from(sample)) / 4) as u32
        };
        self.micros.store(new, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untimed_tool_counts_as_slow_until_its_first_body_says_otherwise() {
        let pace = BodyPace::default();
        assert!(pace.is_slow());
        pace.record(Duration::from_micros(3));
        assert!(!pace.is_slow());
    }

    #[test]
    fn one_blip_in_quick_bodies_is_absorbed_and_steady_slowness_is_not() {
        let pace = BodyPace::default();
        pace.record(Duration::from_micros(5));
        // A 2 ms preemption in the middle of a quick body: a quarter of it
        // is 0.5 ms, still quick.
        pace.record(Duration::from_millis(2));
        assert!(!pace.is_slow());
        // A body that blocks for 50 ms is slow at once, and stays so while
        // its bodies stay slow.
        pace.record(Duration::from_millis(50));
        assert!(pace.is_slow());
        pace.record(Duration::from_millis(50));
        assert!(pace.is_slow());
    }

    #[test]
    fn a_tool_comes_back_in_place_when_its_bodies_are_quick_again() {
        let pace = BodyPace::default();
        pace.record(Duration::from_secs(600));
        assert!(pace.is_slow());
        let mut quick_bodies = 0;
        while pace.is_slow() {
            pace.record(Duration::from_micros(10));
            quick_bodies += 1;
            assert!(quick_bodies < 40, "the cap bounds how long it stays slow");
        }
        assert!(quick_bodies > 3, "one quick body does not undo a slow one");
    }
}
