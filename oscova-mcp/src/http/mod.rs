//! MCP over streamable HTTP for many users: `rmcp`'s streamable HTTP server
//! at `/mcp`, users chosen by bearer token, each served from their own
//! scope.
//!
//! ```no_run
//! use oscova_mcp::http::{McpHttpServer, UserToken};
//! use oscova_core::PluginHost;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder().build()?;
//! let hash = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
//! let server = McpHttpServer::new(host.clone())
//!     .tokens([UserToken::from_sha256_hex("alice", hash)?])
//!     .bind("0.0.0.0:8080".parse()?)
//!     .await?;
//! eprintln!("serving on http://{}/mcp", server.local_addr());
//! server.serve_until(async { tokio::signal::ctrl_c().await.ok(); }).await?;
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Rules, in the order a request meets them:
//!
//! 0. At most [`McpHttpServer::max_connections`] connections are open at
//!    once (more wait to be accepted), and at most
//!    [`McpHttpServer::max_connections_per_peer`] from one IP address
//!    (more are closed as soon as they are accepted); headers must arrive
//!    within 30 seconds and a body within [`McpHttpServer::body_timeout`]
//!    of them (408 and the connection closed past it), so a client that
//!    trickles a request holds a connection that long at most. Every
//!    refusal of rules ½ to 3 (403, 404, 401, 400) closes its connection, so
//!    a client without a token keeps no connection alive past its answer.
//!
//!    ½. Every path of the port, `/mcp` and anything served beside it
//!    ([`BoundMcpServer::serve_until_beside`]), meets one Origin and Host
//!    policy ([`oscova_serve::origin::OriginPolicy`], enforced by
//!    [`oscova_serve::Listener`] before any handler): an `Origin` that is
//!    neither a loopback origin nor one of
//!    [`McpHttpServer::allowed_origins`] is 403, and so, when bound to a
//!    loopback address, is a `Host` that is not `localhost`, a loopback IP
//!    address or one of [`McpHttpServer::allowed_hosts`] (DNS
//!    rebinding). Requests without `Origin` (clients that are not
//!    browsers) pass.
//! 1. Only `/mcp` is served; any other path is 404, but for the RFC 9728
//!    metadata (`/.well-known/oauth-protected-resource/mcp` and
//!    `/.well-known/oauth-protected-resource`) when OAuth is configured.
//! 2. With any token or OAuth configured ([`McpHttpServer::tokens`],
//!    [`McpHttpServer::oauth`]), the request needs `Authorization: Bearer
//!    <token>`: a static token (see [`oscova_serve::Tokens`] for how they
//!    are compared), else an OAuth access token (see
//!    [`oscova_serve::OAuth`] for its checks). A missing or refused token
//!    is 401 with `WWW-Authenticate: Bearer` (with OAuth, carrying
//!    `resource_metadata`, `scope` and, for a refused token,
//!    `error="invalid_token"`), a valid access token without a required
//!    scope 403 `insufficient_scope`, and issuer keys that cannot be
//!    fetched 503 ([`oscova_serve::Authenticator`]). Without either,
//!    every request is the default user's, and [`McpHttpServer::bind`]
//!    refuses any address but a loopback one ([`McpHttpError::NoTokens`]).
//!    The request's `Authorization` header goes no further than this
//!    check: no tool, handler or upstream server sees it.
//! 3. A session (`Mcp-Session-Id`) belongs to the user whose request
//!    opened it, bound where `rmcp` creates it, whatever that request's
//!    headers said; the same id with another user's token is 404, as an
//!    unknown session is. A session id that is not one header of visible
//!    ASCII is 400. A user has at most
//!    [`McpHttpServer::max_sessions_per_user`] sessions open and the
//!    server [`McpHttpServer::max_sessions`]: one more closes the session
//!    idle longest (the user's, then anyone's), and is refused with 429
//!    (the user's bound) or 503 (the server's) when every candidate has a
//!    request in flight. A session is chosen and forgotten at once, so a
//!    request on it either started first (then it is not chosen) or gets
//!    404; it is closed in the background, so no user's `initialize`
//!    waits for another session's worker to take the close.
//! 4. `rmcp` then caps the body
//!    ([`McpHttpServer::max_body_bytes`], 413 past it) and serves the
//!    protocol: sessions for 2025-06-18 and 2025-11-25, each request on its
//!    own for 2026-07-28. A session's `DELETE` is answered 204 (`rmcp`
//!    says 202, which clients read as a failed termination).
//! 5. Each session's handler is the stdio server's ([`McpHandler`]) over
//!    the user's scope, taken from a bounded cache ([`McpHttpServer::scope_cache`],
//!    an [`oscova_serve::ScopeCache`] of the scope with its tools as MCP
//!    lists them) and built on the user's first request; the server's
//!    prompt and resource sources ([`McpHttpServer::prompts`],
//!    [`McpHttpServer::resources`]) are asked with that scope, so each
//!    user sees their own prompts and files. Calls in flight
//!    are bounded per session, per user (across the user's sessions and
//!    stateless requests, [`McpHttpServer::max_in_flight_per_user`]) and
//!    for the whole server, each answered with
//!    [`SERVER_BUSY`](super::SERVER_BUSY) past its bound; a call waiting
//!    between 2026-07-28 rounds counts against its user's
//!    [`McpHttpServer::max_parked_per_user`], so no user's parking drops
//!    another's call while they hold more; with
//!    [`McpHttpServer::wait_store`] it is also kept in the store before
//!    its `input_required` goes out, and the retry is answered by any
//!    server on the store ([`crate::wait`]). Resource subscriptions are
//!    bounded per session ([`MAX_SUBSCRIPTIONS`](super::MAX_SUBSCRIPTIONS)),
//!    per user across their sessions and listen requests
//!    ([`McpHttpServer::max_subscriptions_per_user`]) and for the server
//!    ([`McpHttpServer::max_subscriptions_total`]), and watched by one task
//!    for the whole server, each resource once however many subscribe
//!    ([`BoundMcpServer::subscription_stats`] counts both); a session's
//!    subscriptions end with the session. A session with
//!    no message either way for [`McpHttpServer::idle_timeout`] is closed
//!    (`rmcp` counts a call that reports no progress as idle, so the
//!    timeout must exceed the longest silent call; it counts a resource
//!    update it sends as a message, so a session subscribed to a file that
//!    changes more often than that stays open after its client left, its
//!    subscriptions counted against the bounds above until it closes).
//!
//! Every numeric setting has a range exported here (`*_RANGE`, with
//! [`MAX_IN_FLIGHT_RANGE`] and
//! [`MAX_PARKED_PER_USER_RANGE`]); [`McpHttpServer::bind`] refuses a value
//! outside it with [`McpHttpError::Setting`], naming the setting and the
//! range, so no setting makes the server panic.
//!
//! Shutdown ([`BoundMcpServer::serve_until`], through
//! [`oscova_serve::Listener::serve_until`]): the listener closes at once;
//! open connections stay up while calls in flight get
//! [`McpHttpServer::shutdown_grace`] to finish and their answers to be sent
//! in full (new calls are refused with [`SERVER_BUSY`](super::SERVER_BUSY)
//! meanwhile; a running call may still need its client's answer, which
//! comes on those connections); then everything still running is
//! cancelled, the sessions end, and connections close.
//!
//! [`McpHandler`]: super::McpHandler

mod limits;
mod per_user;
mod serve;
mod sessions;

pub use limits::*;
pub use oscova_serve::auth::{BadTokenHash, token_sha256_hex};
pub use oscova_serve::oauth::{OAUTH_USER_PREFIX, oauth_user_id};
pub use oscova_serve::{LimitError, OAuthConfig, OAuthError, UserDirectory, UserToken};
pub use serve::BoundMcpServer;

pub use super::handler::{DEFAULT_MAX_SUBSCRIPTIONS_PER_USER, DEFAULT_MAX_SUBSCRIPTIONS_TOTAL};
pub use super::rounds::{DEFAULT_MAX_PARKED_PER_USER, MAX_PARKED_PER_USER_RANGE};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use oscova_core::{PluginHost, UserInfo};
use oscova_serve::limits::{check_count, check_duration};
use oscova_serve::{Limits, ServeError, Tokens};
use rmcp::model::Implementation;

use super::names::ShortNames;
use super::{DEFAULT_MAX_IN_FLIGHT, MAX_IN_FLIGHT_RANGE, NameClash, ToolNames};

/// Why the HTTP server did not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpHttpError {
    /// No tokens and no OAuth are configured and the address is not a loopback one:
    /// anyone who can reach it would act as the default user.
    #[error(
        "refusing to serve MCP on {addr} without tokens: anyone who can reach a non-loopback \
         address would act as user `{user}`; add [[mcp.tokens]] or [[auth.tokens]] entries or an [auth.oauth] table, or listen on 127.0.0.1"
    )]
    NoTokens {
        /// The address asked for.
        addr: SocketAddr,
        /// The user it would have served.
        user: String,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Accepting connections failed for good.
    #[error("accepting MCP connections failed: {0}")]
    Accept(#[source] std::io::Error),
    /// A setting is outside its range (each range is a constant of this
    /// module: [`MAX_SESSIONS_RANGE`] and the like).
    #[error("invalid MCP server setting: {0}")]
    Setting(#[from] LimitError),
    /// The OAuth settings cannot be used.
    #[error("invalid OAuth setting: {0}")]
    OAuth(#[from] OAuthError),
    /// The store of waiting calls ([`McpHttpServer::wait_store`]) could not
    /// be opened.
    #[error("cannot open the store of waiting calls: {0}")]
    WaitStore(#[from] crate::wait::WaitStoreError),
}

impl From<ServeError> for McpHttpError {
    fn from(error: ServeError) -> Self {
        match error {
            ServeError::Bind { addr, source } => Self::Bind { addr, source },
            ServeError::Accept(source) => Self::Accept(source),
            // `ServeError` is non-exhaustive; any later variant is one of
            // accepting.
            other => Self::Accept(std::io::Error::other(other)),
        }
    }
}

/// A streamable HTTP MCP server over a host, for many users. Configure it,
/// then [`bind`](Self::bind) it.
#[derive(Clone)]
pub struct McpHttpServer {
    host: PluginHost,
    users: UserDirectory,
    default_user: String,
    tokens: Tokens,
    oauth: Option<OAuthConfig>,
    allowed_origins: Vec<String>,
    allowed_hosts: Vec<String>,
    max_body_bytes: usize,
    max_in_flight: usize,
    max_in_flight_total: usize,
    max_in_flight_per_user: usize,
    max_parked_per_user: usize,
    max_sessions_per_user: usize,
    max_sessions: usize,
    max_subscriptions_per_user: usize,
    max_subscriptions_total: usize,
    /// The listener's bounds: connections, per peer, body timeout.
    pub(super) listen: Limits,
    idle_timeout: Duration,
    shutdown_grace: Duration,
    scope_cache: usize,
    allow_approval_required: bool,
    /// Short names, when asked for (checked when set).
    names: Option<Arc<ShortNames>>,
    info: Implementation,
    /// Prompts and resources beside the tools.
    pub(super) offer: crate::offer::Offer,
    /// Where calls waiting between rounds are kept for every instance.
    pub(super) waits: Option<Arc<dyn crate::wait::WaitStore>>,
    /// How long a call of a tasks client runs before it becomes a task.
    pub(super) task_after: Duration,
}

impl std::fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("default_user", &self.default_user)
            .field("tokens", &self.tokens)
            .field("oauth", &self.oauth)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_in_flight_total", &self.max_in_flight_total)
            .field("max_in_flight_per_user", &self.max_in_flight_per_user)
            .field("max_parked_per_user", &self.max_parked_per_user)
            .field("max_sessions_per_user", &self.max_sessions_per_user)
            .field("max_sessions", &self.max_sessions)
            .field(
                "max_subscriptions_per_user",
                &self.max_subscriptions_per_user,
            )
            .field("max_subscriptions_total", &self.max_subscriptions_total)
            .field("listen", &self.listen)
            .field("idle_timeout", &self.idle_timeout)
            .field("waits", &self.waits)
            .field("task_after", &self.task_after)
            .finish_non_exhaustive()
    }
}

impl McpHttpServer {
    /// A server over `host`'s tools with the defaults: no tokens (so
    /// loopback only, as user `local`), loopback origins only, and the
    /// `DEFAULT_*` limits of this module.
    pub fn new(host: PluginHost) -> Self {
        Self {
            host,
            users: Arc::new(|id: &str| UserInfo::new(id)),
            default_user: "local".to_owned(),
            tokens: Tokens::default(),
            oauth: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_total: DEFAULT_MAX_IN_FLIGHT_TOTAL,
            max_in_flight_per_user: DEFAULT_MAX_IN_FLIGHT_PER_USER,
            max_parked_per_user: DEFAULT_MAX_PARKED_PER_USER,
            max_sessions_per_user: DEFAULT_MAX_SESSIONS_PER_USER,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_subscriptions_per_user: DEFAULT_MAX_SUBSCRIPTIONS_PER_USER,
            max_subscriptions_total: DEFAULT_MAX_SUBSCRIPTIONS_TOTAL,
            listen: Limits::default(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            scope_cache: DEFAULT_SCOPE_CACHE,
            allow_approval_required: false,
            names: None,
            info: Implementation::new("oscova", env!("CARGO_PKG_VERSION")),
            offer: crate::offer::Offer::default(),
            waits: None,
            task_after: crate::task::DEFAULT_TASK_AFTER,
        }
    }

    /// How a user id becomes the [`UserInfo`] its scope is built for (by
    /// default, the id alone).
    pub fn users(mut self, users: impl Fn(&str) -> UserInfo + Send + Sync + 'static) -> Self {
        self.users = Arc::new(users);
        self
    }

    /// The user served when no tokens are configured (`local` by default).
    pub fn default_user(mut self, user: impl Into<String>) -> Self {
        self.default_user = user.into();
        self
    }

    /// The users' tokens. With any, every request needs one.
    pub fn tokens(mut self, tokens: impl IntoIterator<Item = UserToken>) -> Self {
        self.tokens = Tokens::new(tokens);
        self
    }

    /// Accepts OAuth access tokens as [`OAuthConfig`] says, beside the
    /// static [`tokens`](Self::tokens): JWTs from its issuer, for this
    /// resource (by default `http://<bound address>/mcp`; set
    /// [`OAuthConfig::resource`] behind a proxy or a name). The RFC 9728
    /// metadata is served at `/.well-known/oauth-protected-resource/mcp`
    /// and `/.well-known/oauth-protected-resource`. The issuer's keys are
    /// fetched with the host's HTTP client
    /// ([`PluginHost::http_client`]).
    pub fn oauth(mut self, config: OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// Browser origins accepted beside loopback ones, as
    /// `scheme://host[:port]` (`:*` for any port; without a port, the
    /// scheme's default), on every path of the port.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// `Host` names accepted beside loopback ones when bound to a loopback
    /// address, as `host` (any port) or `host:port`: the public name a
    /// reverse proxy on this machine passes on (`oscova serve` adds
    /// `[serve] public_url`'s). Bound elsewhere, the `Host` is not checked.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The largest request body accepted, in bytes (413 past it), in
    /// [`MAX_BODY_BYTES_RANGE`].
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// The bound on tool calls one session runs at once, in
    /// [`MAX_IN_FLIGHT_RANGE`]. On 2026-07-28,
    /// where each request is handled on its own, it bounds nothing past
    /// one request; [`max_in_flight_per_user`](Self::max_in_flight_per_user) does.
    pub fn max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max;
        self
    }

    /// The bound on tool calls all sessions run at once, in
    /// [`MAX_IN_FLIGHT_TOTAL_RANGE`].
    pub fn max_in_flight_total(mut self, max: usize) -> Self {
        self.max_in_flight_total = max;
        self
    }

    /// The bound on tool calls one user runs at once, across all their
    /// sessions and requests, in [`MAX_IN_FLIGHT_PER_USER_RANGE`]: past
    /// it, [`SERVER_BUSY`](super::SERVER_BUSY) with
    /// `{"max_in_flight_per_user": N}`.
    pub fn max_in_flight_per_user(mut self, max: usize) -> Self {
        self.max_in_flight_per_user = max;
        self
    }

    /// The bound on one user's calls waiting for an answer between the
    /// rounds of a 2026-07-28 request, in [`MAX_PARKED_PER_USER_RANGE`]:
    /// past it, that user's oldest waiting call is dropped (and
    /// cancelled), never another user's.
    pub fn max_parked_per_user(mut self, max: usize) -> Self {
        self.max_parked_per_user = max;
        self
    }

    /// Keeps the calls waiting between the rounds of a 2026-07-28 request
    /// in `store` before their `input_required` goes out, so that the
    /// client's retry is answered by any server sharing the store: another
    /// instance behind a load balancer, or this one after a restart (see
    /// [`crate::wait`] for what is kept and what runs again). Without it
    /// (the default) a retry must reach the process that parked the call.
    /// A call that never asks touches no store.
    pub fn wait_store(self, store: impl crate::wait::WaitStore) -> Self {
        self.wait_store_arc(Some(Arc::new(store)))
    }

    /// [`wait_store`](Self::wait_store) with a store the caller already
    /// holds, or `None` for this process's memory only.
    pub fn wait_store_arc(mut self, store: Option<Arc<dyn crate::wait::WaitStore>>) -> Self {
        self.waits = store;
        self
    }

    /// The bound on one user's open sessions, in
    /// [`MAX_SESSIONS_PER_USER_RANGE`]: opening one more first closes
    /// that user's longest idle session, and is refused with 429 when
    /// each has a request in flight.
    pub fn max_sessions_per_user(mut self, max: usize) -> Self {
        self.max_sessions_per_user = max;
        self
    }

    /// The bound on open sessions, all users together, in
    /// [`MAX_SESSIONS_RANGE`]: opening one more first closes the longest
    /// idle session, and is refused with 503 when each has a request in
    /// flight.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// The bound on one user's resource subscriptions, across all their
    /// sessions and `subscriptions/listen` requests, in
    /// [`MAX_SUBSCRIPTIONS_PER_USER_RANGE`]: past it, a subscribe is
    /// [`SERVER_BUSY`](super::SERVER_BUSY) with
    /// `{"max_subscriptions_per_user": N}` (a listen request accepts only
    /// the URIs there is room for). One session holds at most
    /// [`MAX_SUBSCRIPTIONS`](super::MAX_SUBSCRIPTIONS) whatever this says.
    pub fn max_subscriptions_per_user(mut self, max: usize) -> Self {
        self.max_subscriptions_per_user = max;
        self
    }

    /// The bound on resource subscriptions, all users together, in
    /// [`MAX_SUBSCRIPTIONS_TOTAL_RANGE`]: past it, a subscribe is
    /// [`SERVER_BUSY`](super::SERVER_BUSY) with
    /// `{"max_subscriptions_total": N}`.
    pub fn max_subscriptions_total(mut self, max: usize) -> Self {
        self.max_subscriptions_total = max;
        self
    }

    /// The bound on connections open at once, in [`MAX_CONNECTIONS_RANGE`];
    /// past it, new connections wait to be accepted until one closes.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.listen.max_connections = max;
        self
    }

    /// The bound on connections open at once from one IP address, in
    /// [`MAX_CONNECTIONS_PER_PEER_RANGE`] (256 by default);
    /// past it, new connections from that address are closed as soon as
    /// they are accepted. Behind a reverse proxy, whose address every
    /// connection then has, set it to [`max_connections`](Self::max_connections).
    pub fn max_connections_per_peer(mut self, max: usize) -> Self {
        self.listen.max_connections_per_peer = max;
        self
    }

    /// How long a request's body gets to arrive in full after its
    /// headers, in [`BODY_TIMEOUT_RANGE`]; past it, the answer is 408 and
    /// the connection closes.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.listen.body_timeout = timeout;
        self
    }

    /// How long a session may be idle before it is closed, in
    /// [`IDLE_TIMEOUT_RANGE`].
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// How long calls in flight get to finish at shutdown before they are
    /// cancelled, in [`SHUTDOWN_GRACE_RANGE`].
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How long a `tools/call` of a client that declared the MCP tasks
    /// extension runs as usual before it is made a task, in
    /// [`TASK_AFTER_RANGE`] ([`DEFAULT_TASK_AFTER`](crate::task::DEFAULT_TASK_AFTER)
    /// unless set). A call that finishes sooner is answered with its
    /// result and makes no task; one that asks a question sooner is made
    /// a task (`input_required`) when it asks. Zero makes every such call
    /// a task at once. See [`crate::task`].
    pub fn task_after(mut self, after: Duration) -> Self {
        self.task_after = after;
        self
    }

    /// How many users' scopes are kept, in [`SCOPE_CACHE_RANGE`].
    pub fn scope_cache(mut self, capacity: usize) -> Self {
        self.scope_cache = capacity;
        self
    }

    /// Checks every numeric setting against its range; the first one
    /// outside is the error, naming the setting and the range.
    pub fn check(&self) -> Result<(), LimitError> {
        let counts = [
            ("max_body_bytes", self.max_body_bytes, MAX_BODY_BYTES_RANGE),
            ("max_in_flight", self.max_in_flight, MAX_IN_FLIGHT_RANGE),
            (
                "max_in_flight_total",
                self.max_in_flight_total,
                MAX_IN_FLIGHT_TOTAL_RANGE,
            ),
            (
                "max_in_flight_per_user",
                self.max_in_flight_per_user,
                MAX_IN_FLIGHT_PER_USER_RANGE,
            ),
            (
                "max_parked_per_user",
                self.max_parked_per_user,
                MAX_PARKED_PER_USER_RANGE,
            ),
            (
                "max_sessions_per_user",
                self.max_sessions_per_user,
                MAX_SESSIONS_PER_USER_RANGE,
            ),
            ("max_sessions", self.max_sessions, MAX_SESSIONS_RANGE),
            (
                "max_subscriptions_per_user",
                self.max_subscriptions_per_user,
                MAX_SUBSCRIPTIONS_PER_USER_RANGE,
            ),
            (
                "max_subscriptions_total",
                self.max_subscriptions_total,
                MAX_SUBSCRIPTIONS_TOTAL_RANGE,
            ),
            ("scope_cache", self.scope_cache, SCOPE_CACHE_RANGE),
        ];
        for (setting, value, range) in &counts {
            check_count(setting, *value, range)?;
        }
        self.listen.check()?;
        let durations = [
            ("idle_timeout", self.idle_timeout, IDLE_TIMEOUT_RANGE),
            ("shutdown_grace", self.shutdown_grace, SHUTDOWN_GRACE_RANGE),
            ("task_after", self.task_after, TASK_AFTER_RANGE),
        ];
        for (setting, value, range) in &durations {
            check_duration(setting, *value, range)?;
        }
        Ok(())
    }

    /// Whether the server approves, itself, calls that need approval (see
    /// [`McpServer::allow_approval_required`](super::McpServer::allow_approval_required)).
    pub fn allow_approval_required(mut self, allow: bool) -> Self {
        self.allow_approval_required = allow;
        self
    }

    /// Sets how tools are named to clients, as
    /// [`McpServer::tool_names`](super::McpServer::tool_names) does:
    /// [`ToolNames::Short`] is checked here against the host's whole
    /// catalog (every user's tools are among it), and fails, naming both
    /// tools, when two share a tool segment.
    pub fn tool_names(mut self, names: ToolNames) -> Result<Self, NameClash> {
        self.names = match names {
            ToolNames::Wire => None,
            ToolNames::Short => Some(ShortNames::build(self.host.tools())?),
        };
        Ok(self)
    }

    /// Serves `source`'s prompts to every user, each request asking it
    /// with the user's scope (see
    /// [`McpServer::prompts`](super::McpServer::prompts)).
    pub fn prompts(mut self, source: impl crate::PromptSource) -> Self {
        self.offer.prompts = Some(Arc::new(source));
        self
    }

    /// Serves `source`'s resources to every user, each request asking it
    /// with the user's scope (see
    /// [`McpServer::resources`](super::McpServer::resources)).
    pub fn resources(mut self, source: impl crate::ResourceSource) -> Self {
        self.offer.resources = Some(Arc::new(source));
        self
    }

    /// The name and version given in `initialize`.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Checks the settings and binds `addr` (port 0 picks a free one).
    /// Fails, before binding, on a setting outside its range
    /// ([`check`](Self::check), [`McpHttpError::Setting`]) and without
    /// tokens or OAuth on a non-loopback address; after binding, on OAuth
    /// settings that cannot be used ([`McpHttpError::OAuth`]).
    pub async fn bind(self, addr: SocketAddr) -> Result<BoundMcpServer, McpHttpError> {
        self.check()?;
        if self.oauth.is_none() && !self.tokens.may_serve(addr) {
            return Err(McpHttpError::NoTokens {
                addr,
                user: self.default_user.clone(),
            });
        }
        serve::bind(self, addr).await
    }
}
