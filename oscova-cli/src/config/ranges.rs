//! The range of every number the file may hold, in one table.
//!
//! Rules: each numeric key of the configuration has a range here
//! ([`RANGES`]); a value outside it is a configuration error (exit status
//! 2) that names the key and the range, given when the file is loaded and
//! before anything starts, never a panic later. A value that becomes a
//! semaphore's permits is bounded by tokio's `Semaphore::MAX_PERMITS`; the
//! other bounds are far past any real need and far below what would
//! overflow a clock or an allocation. The CLI README lists the same
//! table.

use std::fmt;

use tokio::sync::Semaphore;

/// A closed range of a numeric key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Range {
    /// The key as written in the file (`mcp.max_in_flight`).
    pub(super) key: &'static str,
    /// The smallest value allowed.
    pub(super) min: f64,
    /// Whether `min` itself is allowed (`timeout_secs` must be above 0).
    pub(super) min_included: bool,
    /// The largest value allowed.
    pub(super) max: u64,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min_included {
            write!(f, "{} to {}", self.min, self.max)
        } else {
            write!(f, "more than {} and at most {}", self.min, self.max)
        }
    }
}

const fn whole(key: &'static str, min: u64, max: u64) -> Range {
    Range {
        key,
        min: min as f64,
        min_included: true,
        max,
    }
}

/// One day, in seconds.
const DAY: u64 = 86_400;

/// `[mcp] max_body_bytes`.
pub(super) const MCP_MAX_BODY_BYTES: Range = whole("mcp.max_body_bytes", 1, 1 << 30);
/// `[mcp] max_in_flight`: a semaphore per session.
pub(super) const MCP_MAX_IN_FLIGHT: Range =
    whole("mcp.max_in_flight", 1, Semaphore::MAX_PERMITS as u64);
/// `[mcp] max_in_flight_total`: the server's semaphore.
pub(super) const MCP_MAX_IN_FLIGHT_TOTAL: Range =
    whole("mcp.max_in_flight_total", 1, Semaphore::MAX_PERMITS as u64);
/// `[mcp] idle_timeout_secs`.
pub(super) const MCP_IDLE_TIMEOUT_SECS: Range = whole("mcp.idle_timeout_secs", 1, DAY);
/// `[mcp] shutdown_grace_secs`.
pub(super) const MCP_SHUTDOWN_GRACE_SECS: Range = whole("mcp.shutdown_grace_secs", 0, 3_600);
/// `[mcp] scope_cache`.
pub(super) const MCP_SCOPE_CACHE: Range = whole("mcp.scope_cache", 1, 1_000_000);
/// `[mcp.servers.NAME] timeout_secs`: above 0.
pub(super) const MCP_SERVER_TIMEOUT_SECS: Range = Range {
    key: "mcp.servers.NAME.timeout_secs",
    min: 0.0,
    min_included: false,
    max: DAY,
};
/// `[speech.hear] threads`.
pub(super) const SPEECH_HEAR_THREADS: Range = whole("speech.hear.threads", 1, 1_024);

/// Every numeric key of the file and its range (for the test that each
/// key has one).
#[cfg(test)]
const RANGES: &[Range] = &[
    MCP_MAX_BODY_BYTES,
    MCP_MAX_IN_FLIGHT,
    MCP_MAX_IN_FLIGHT_TOTAL,
    MCP_IDLE_TIMEOUT_SECS,
    MCP_SHUTDOWN_GRACE_SECS,
    MCP_SCOPE_CACHE,
    MCP_SERVER_TIMEOUT_SECS,
    SPEECH_HEAR_THREADS,
];

impl Range {
    /// Checks `value`, when set; `shown` is the key as the message names
    /// it (with the server's name for `mcp.servers.NAME.…`).
    pub(super) fn check_float(&self, shown: &str, value: Option<f64>) -> Result<(), String> {
        let Some(value) = value else {
            return Ok(());
        };
        let low = if self.min_included {
            value >= self.min
        } else {
            value > self.min
        };
        // The bounds this is used for are far below 2^53, where a float
        // holds every whole number.
        if low && value <= self.max as f64 {
            return Ok(());
        }
        Err(format!("{shown} is {value}; it must be {self}"))
    }

    /// Checks the integer `value` of this key, when set.
    pub(super) fn check<T: Copy + TryInto<u64> + fmt::Display>(
        &self,
        value: Option<T>,
    ) -> Result<(), String> {
        let Some(value) = value else {
            return Ok(());
        };
        match value.try_into() {
            Ok(v) if v as f64 >= self.min && v <= self.max => Ok(()),
            _ => Err(format!("{} is {value}; it must be {self}", self.key)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_one_range_and_messages_name_it() {
        for (i, r) in RANGES.iter().enumerate() {
            assert!(RANGES[i + 1..].iter().all(|o| o.key != r.key), "{}", r.key);
        }
        assert_eq!(
            MCP_MAX_IN_FLIGHT_TOTAL.check(Some(u64::MAX)).unwrap_err(),
            format!(
                "mcp.max_in_flight_total is {}; it must be 1 to {}",
                u64::MAX,
                Semaphore::MAX_PERMITS
            )
        );
        assert!(
            MCP_MAX_IN_FLIGHT
                .check(Some(Semaphore::MAX_PERMITS))
                .is_ok()
        );
        assert!(
            MCP_MAX_IN_FLIGHT
                .check(Some(Semaphore::MAX_PERMITS + 1))
                .is_err()
        );
        assert!(MCP_SHUTDOWN_GRACE_SECS.check(Some(0u64)).is_ok());
        assert!(MCP_IDLE_TIMEOUT_SECS.check(Some(0u64)).is_err());
        let t = MCP_SERVER_TIMEOUT_SECS;
        assert!(
            t.check_float("mcp.servers.notes.timeout_secs", Some(0.5))
                .is_ok()
        );
        assert_eq!(
            t.check_float("mcp.servers.notes.timeout_secs", Some(0.0))
                .unwrap_err(),
            "mcp.servers.notes.timeout_secs is 0; it must be more than 0 and at most 86400"
        );
        assert!(t.check_float("x", Some(f64::INFINITY)).is_err());
        assert!(t.check_float("x", Some(f64::NAN)).is_err());
        assert!(t.check_float("x", Some(-1.0)).is_err());
    }
}
