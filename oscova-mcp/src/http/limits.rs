//! The server's defaults and the ranges its settings are checked against
//! when it binds.

use std::ops::RangeInclusive;
use std::time::Duration;

use oscova_serve::Limits;
use oscova_serve::limits::MAX_COUNT;

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";
/// The default cap on a request body: 4 MiB, as `rmcp`'s.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The default bound on tool calls in flight for the whole server.
pub const DEFAULT_MAX_IN_FLIGHT_TOTAL: usize = 1024;
/// The default time a session may stay idle before it is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// The default time calls in flight get to finish at shutdown.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The default number of users' scopes kept.
pub const DEFAULT_SCOPE_CACHE: usize = 1024;
/// The default bound on one user's tool calls in flight, across all their
/// sessions and requests.
pub const DEFAULT_MAX_IN_FLIGHT_PER_USER: usize = 256;
/// The default bound on one user's open sessions.
pub const DEFAULT_MAX_SESSIONS_PER_USER: usize = 128;
/// The default bound on open sessions, all users together.
pub const DEFAULT_MAX_SESSIONS: usize = 2048;

/// The range of [`McpHttpServer::max_body_bytes`](super::McpHttpServer::max_body_bytes): a byte to 1 GiB.
pub const MAX_BODY_BYTES_RANGE: RangeInclusive<usize> = 1..=1 << 30;
/// The range of [`McpHttpServer::max_in_flight_total`](super::McpHttpServer::max_in_flight_total).
pub const MAX_IN_FLIGHT_TOTAL_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_in_flight_per_user`](super::McpHttpServer::max_in_flight_per_user).
pub const MAX_IN_FLIGHT_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_sessions_per_user`](super::McpHttpServer::max_sessions_per_user).
pub const MAX_SESSIONS_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_sessions`](super::McpHttpServer::max_sessions).
pub const MAX_SESSIONS_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_subscriptions_per_user`](super::McpHttpServer::max_subscriptions_per_user).
pub const MAX_SUBSCRIPTIONS_PER_USER_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_subscriptions_total`](super::McpHttpServer::max_subscriptions_total).
pub const MAX_SUBSCRIPTIONS_TOTAL_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::scope_cache`](super::McpHttpServer::scope_cache).
pub const SCOPE_CACHE_RANGE: RangeInclusive<usize> = 1..=MAX_COUNT;
/// The range of [`McpHttpServer::max_connections`](super::McpHttpServer::max_connections).
pub const MAX_CONNECTIONS_RANGE: RangeInclusive<usize> = Limits::MAX_CONNECTIONS_RANGE;
/// The range of [`McpHttpServer::max_connections_per_peer`](super::McpHttpServer::max_connections_per_peer).
pub const MAX_CONNECTIONS_PER_PEER_RANGE: RangeInclusive<usize> =
    Limits::MAX_CONNECTIONS_PER_PEER_RANGE;
/// The range of [`McpHttpServer::body_timeout`](super::McpHttpServer::body_timeout): a millisecond to an hour.
pub const BODY_TIMEOUT_RANGE: RangeInclusive<Duration> = Limits::BODY_TIMEOUT_RANGE;
/// The range of [`McpHttpServer::idle_timeout`](super::McpHttpServer::idle_timeout): a millisecond to a week.
pub const IDLE_TIMEOUT_RANGE: RangeInclusive<Duration> =
    Duration::from_millis(1)..=Duration::from_secs(7 * 24 * 3600);
/// The range of [`McpHttpServer::task_after`](super::McpHttpServer::task_after): none (every call of a
/// client that declared the tasks extension is a task at once) to an hour
/// (a task's time to live, [`TASK_TTL`](crate::task::TASK_TTL)).
pub const TASK_AFTER_RANGE: RangeInclusive<Duration> = Duration::ZERO..=Duration::from_secs(3600);
/// The range of [`McpHttpServer::shutdown_grace`](super::McpHttpServer::shutdown_grace): none to an hour.
pub const SHUTDOWN_GRACE_RANGE: RangeInclusive<Duration> =
    Duration::ZERO..=Duration::from_secs(3600);
