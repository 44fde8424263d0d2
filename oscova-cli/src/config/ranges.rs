//! The range of every number the file may hold, in one table.
//!
//! Rules: each numeric key of the configuration has a range here
//! ([`RANGES`]); a value outside it is a configuration error (exit status
//! 2) that names the key and the range, given when the file is loaded and
//! before anything starts, never a panic later. The `[mcp]` limits take
//! the ranges the server library exports (`oscova_mcp::http::*_RANGE`),
//! so the file and the server cannot disagree; the other bounds are far
//! past any real need and far below what would overflow a clock or an
//! allocation. The CLI README lists the same table.

use std::fmt;

use std::ops::RangeInclusive;
use std::time::Duration;

use oscova_mcp::http;

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
#[cfg_attr(
    not(feature = "mcp-servers"),
    allow(
        dead_code,
        reason = "only `[mcp.servers]` (feature `mcp-servers`) reads it"
    )
)]
const DAY: u64 = 86_400;

/// A count the server library bounds (`oscova_mcp::http`'s `*_RANGE`).
const fn count(key: &'static str, range: RangeInclusive<usize>) -> Range {
    whole(key, *range.start() as u64, *range.end() as u64)
}

/// A duration the server library bounds, as whole seconds in the file.
const fn secs(key: &'static str, range: RangeInclusive<Duration>) -> Range {
    let start = range.start();
    let rounded_up = start.as_secs() + (start.subsec_nanos() > 0) as u64;
    whole(key, rounded_up, range.end().as_secs())
}

/// A duration the server library bounds, as whole milliseconds in the
/// file.
const fn millis(key: &'static str, range: RangeInclusive<Duration>) -> Range {
    let start = range.start();
    let rounded_up =
        start.as_millis() as u64 + !start.subsec_nanos().is_multiple_of(1_000_000) as u64;
    whole(key, rounded_up, range.end().as_millis() as u64)
}

// The `[mcp]` limits are the server library's own ranges, so the file and
// `McpHttpServer::bind` can never disagree about what is allowed.

/// `[mcp] max_body_bytes`.
pub(super) const MCP_MAX_BODY_BYTES: Range =
    count("mcp.max_body_bytes", http::MAX_BODY_BYTES_RANGE);
/// `[mcp] max_in_flight`: calls at once per session.
pub(super) const MCP_MAX_IN_FLIGHT: Range =
    count("mcp.max_in_flight", oscova_mcp::MAX_IN_FLIGHT_RANGE);
/// `[mcp] max_in_flight_total`: the server's call bound.
pub(super) const MCP_MAX_IN_FLIGHT_TOTAL: Range =
    count("mcp.max_in_flight_total", http::MAX_IN_FLIGHT_TOTAL_RANGE);
/// `[mcp] max_in_flight_per_user`.
pub(super) const MCP_MAX_IN_FLIGHT_PER_USER: Range = count(
    "mcp.max_in_flight_per_user",
    http::MAX_IN_FLIGHT_PER_USER_RANGE,
);
/// `[mcp] max_parked_per_user`.
pub(super) const MCP_MAX_PARKED_PER_USER: Range =
    count("mcp.max_parked_per_user", http::MAX_PARKED_PER_USER_RANGE);
/// `[mcp] max_sessions_per_user`.
pub(super) const MCP_MAX_SESSIONS_PER_USER: Range = count(
    "mcp.max_sessions_per_user",
    http::MAX_SESSIONS_PER_USER_RANGE,
);
/// `[mcp] max_sessions`.
pub(super) const MCP_MAX_SESSIONS: Range = count("mcp.max_sessions", http::MAX_SESSIONS_RANGE);
/// `[mcp] max_connections`.
pub(super) const MCP_MAX_CONNECTIONS: Range =
    count("mcp.max_connections", http::MAX_CONNECTIONS_RANGE);
/// `[mcp] max_connections_per_peer`.
pub(super) const MCP_MAX_CONNECTIONS_PER_PEER: Range = count(
    "mcp.max_connections_per_peer",
    http::MAX_CONNECTIONS_PER_PEER_RANGE,
);
/// `[mcp] body_timeout_secs`.
pub(super) const MCP_BODY_TIMEOUT_SECS: Range =
    secs("mcp.body_timeout_secs", http::BODY_TIMEOUT_RANGE);
/// `[mcp] idle_timeout_secs`.
pub(super) const MCP_IDLE_TIMEOUT_SECS: Range =
    secs("mcp.idle_timeout_secs", http::IDLE_TIMEOUT_RANGE);
/// `[mcp] shutdown_grace_secs`.
pub(super) const MCP_SHUTDOWN_GRACE_SECS: Range =
    secs("mcp.shutdown_grace_secs", http::SHUTDOWN_GRACE_RANGE);
/// `[mcp] task_after_ms`: how long a call of a tasks client runs before
/// it becomes a task.
pub(super) const MCP_TASK_AFTER_MS: Range = millis("mcp.task_after_ms", http::TASK_AFTER_RANGE);
/// `[mcp] scope_cache`.
pub(super) const MCP_SCOPE_CACHE: Range = count("mcp.scope_cache", http::SCOPE_CACHE_RANGE);
/// `[mcp.servers.NAME] timeout_secs`: above 0.
#[cfg_attr(
    not(feature = "mcp-servers"),
    allow(
        dead_code,
        reason = "only `[mcp.servers]` (feature `mcp-servers`) reads it"
    )
)]
pub(super) const MCP_SERVER_TIMEOUT_SECS: Range = Range {
    key: "mcp.servers.NAME.timeout_secs",
    min: 0.0,
    min_included: false,
    max: DAY,
};
/// `[speech.hear] threads`.
pub(super) const SPEECH_HEAR_THREADS: Range = whole("speech.hear.threads", 1, 1_024);

/// `[sessions] context_window`, in tokens.
pub(super) const SESSIONS_CONTEXT_WINDOW: Range = whole("sessions.context_window", 1, 100_000_000);
/// `[sessions] reserve_tokens`.
pub(super) const SESSIONS_RESERVE_TOKENS: Range = whole("sessions.reserve_tokens", 0, 100_000_000);
/// `[sessions] keep_recent_tokens`.
pub(super) const SESSIONS_KEEP_RECENT_TOKENS: Range =
    whole("sessions.keep_recent_tokens", 0, 100_000_000);

/// Every numeric key of the file and its range (for the test that each
/// key has one).
#[cfg(test)]
const RANGES: &[Range] = &[
    MCP_MAX_BODY_BYTES,
    MCP_MAX_IN_FLIGHT,
    MCP_MAX_IN_FLIGHT_TOTAL,
    MCP_MAX_IN_FLIGHT_PER_USER,
    MCP_MAX_PARKED_PER_USER,
    MCP_MAX_SESSIONS_PER_USER,
    MCP_MAX_SESSIONS,
    MCP_MAX_CONNECTIONS,
    MCP_MAX_CONNECTIONS_PER_PEER,
    MCP_BODY_TIMEOUT_SECS,
    MCP_IDLE_TIMEOUT_SECS,
    MCP_SHUTDOWN_GRACE_SECS,
    MCP_TASK_AFTER_MS,
    MCP_SCOPE_CACHE,
    MCP_SERVER_TIMEOUT_SECS,
    SPEECH_HEAR_THREADS,
    SESSIONS_CONTEXT_WINDOW,
    SESSIONS_RESERVE_TOKENS,
    SESSIONS_KEEP_RECENT_TOKENS,
];

impl Range {
    /// Checks `value`, when set; `shown` is the key as the message names
    /// it (with the server's name for `mcp.servers.NAME.…`).
    #[cfg_attr(
        not(feature = "mcp-servers"),
        allow(
            dead_code,
            reason = "only `[mcp.servers]` (feature `mcp-servers`) reads it"
        )
    )]
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
        let total_max = *http::MAX_IN_FLIGHT_TOTAL_RANGE.end();
        assert_eq!(
            MCP_MAX_IN_FLIGHT_TOTAL.check(Some(u64::MAX)).unwrap_err(),
            format!(
                "mcp.max_in_flight_total is {}; it must be 1 to {total_max}",
                u64::MAX,
            )
        );
        let per_session_max = *oscova_mcp::MAX_IN_FLIGHT_RANGE.end();
        assert!(MCP_MAX_IN_FLIGHT.check(Some(per_session_max)).is_ok());
        assert!(MCP_MAX_IN_FLIGHT.check(Some(per_session_max + 1)).is_err());
        // A whole-second bound never admits less than the library's
        // least duration, nor more than its greatest.
        assert_eq!(MCP_IDLE_TIMEOUT_SECS.min, 1.0);
        assert_eq!(
            MCP_BODY_TIMEOUT_SECS.max,
            http::BODY_TIMEOUT_RANGE.end().as_secs()
        );
        assert!(MCP_SHUTDOWN_GRACE_SECS.check(Some(0u64)).is_ok());
        assert!(MCP_IDLE_TIMEOUT_SECS.check(Some(0u64)).is_err());
        // Zero makes every call of a tasks client a task at once; the
        // most is the library's (an hour, a task's time to live).
        assert!(MCP_TASK_AFTER_MS.check(Some(0u64)).is_ok());
        let most = u64::try_from(http::TASK_AFTER_RANGE.end().as_millis()).unwrap();
        assert!(MCP_TASK_AFTER_MS.check(Some(most)).is_ok());
        assert_eq!(
            MCP_TASK_AFTER_MS.check(Some(most + 1)).unwrap_err(),
            format!("mcp.task_after_ms is {}; it must be 0 to {most}", most + 1)
        );
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
