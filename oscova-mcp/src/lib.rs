//! An MCP server for Oscova hosts: a user scope's tools, served with the
//! official Rust SDK (`rmcp`) on stdio, any byte stream, or any `rmcp`
//! transport, and (feature `http`, on by default) over streamable HTTP for
//! many users ([`http`]).
//!
//! | feature | what it adds |
//! |---|---|
//! | `http` (default) | [`http::McpHttpServer`]: `/mcp` for many users, with bearer tokens, limits and graceful shutdown from `oscova-serve` |
//! | `otel` | a W3C `traceparent` in a request's `_meta` becomes the parent of the request's span |
//! | `sqlite` | [`wait::SqliteWaitStore`]: calls waiting between 2026-07-28 rounds kept in a SQLite file (the sessions') |
//! | `postgres` | [`wait::PostgresWaitStore`]: the same in Postgres, for a fleet on one database |
//!
//! # One user on stdio
//!
//! A host's plugins, one user's scope of them, and the server on stdin and
//! stdout until the client disconnects:
//!
//! ```no_run
//! use oscova_mcp::McpServer;
//! use oscova_core::{PluginHost, UserInfo};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder().build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! McpServer::new(scope)
//!     .allow_approval_required(false) // the host's approval handler decides
//!     .serve_stdio() // until the client disconnects
//!     .await?;
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Prompts and resources
//!
//! Beside the tools, a server serves what its sources give each user:
//! declared prompts ([`prompt::PromptTemplates`], `{argument}` templates
//! checked when made), the user's files root as `file:///` resources
//! through `oscova-core`'s files boundary ([`resource::FilesResources`]),
//! or sources of your own ([`PromptSource`], [`ResourceSource`]), asked
//! per request with the user's scope; several of a kind are served as one
//! by [`prompt::PromptSources`] and [`resource::ResourceSources`]:
//!
//! ```no_run
//! use oscova_mcp::McpServer;
//! use oscova_mcp::prompt::{PromptArg, PromptRole, PromptTemplate, PromptTemplates};
//! use oscova_mcp::resource::FilesResources;
//!
//! # async fn demo(scope: oscova_core::UserScope) -> Result<(), Box<dyn std::error::Error>> {
//! let prompts = PromptTemplates::new([PromptTemplate::new("summarize", "Summarize a file")
//!     .argument(PromptArg::new("path").with_required(true))
//!     .text(PromptRole::User, "Summarize {path}.")])?;
//! McpServer::new(scope)
//!     .prompts(prompts)
//!     .resources(FilesResources::new())
//!     .serve_stdio()
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`McpServer::handler`] gives the `rmcp` handler itself, to serve on a
//! transport of your own; [`McpServer::serve_io`] serves any byte stream.
//!
//! # Rules
//!
//! `tools/list` gives the scope's wire names, descriptions, raw
//! input schemas, titles, annotations and output schemas (see
//! [`convert`]); `tools/call` runs through the scope, so hooks, argument
//! checks and redaction are the host's. Results keep their blocks in
//! order (text, images and audio as base64, embedded resources) and their
//! structured content. A call that needs approval (by the host's policy)
//! is approved by the server itself when
//! [`McpServer::allow_approval_required`] is set; otherwise the person is
//! asked through `elicitation/create` when the client declared that
//! capability (the prompt names the tool and its shortened, redacted
//! arguments), and otherwise the host's approval handler decides, which
//! fails closed when there is none. A tool's own questions go the same way
//! to the client, and get an error saying the client cannot ask when it
//! did not declare elicitation. From protocol 2026-07-28, where a server
//! sends no requests to the client, a question is an `input_required`
//! answer to the `tools/call` and its answer comes with the client's retry
//! (SEP-2322's multi round-trip requests; the call waits, parked, under
//! an opaque single-use handle, at most [`PARK_TIMEOUT`]; with a
//! [`wait::WaitStore`] the wait is kept there first, and a retry reaching
//! another process sharing the store is answered there: see [`wait`]).
//! A client that declared the tasks extension (SEP-2663) gets a
//! `tools/call` that outlasts the server's threshold
//! ([`McpServer::task_after`], [`task::DEFAULT_TASK_AFTER`] unless set),
//! or asks a question before it, as a task, followed with `tasks/get`,
//! `tasks/update` and `tasks/cancel` on any instance sharing the store;
//! a shorter call is answered with its result, as for any client (see
//! [`task`]). Tools' log messages are
//! `notifications/message`, filtered by `logging/setLevel` (from
//! [`DEFAULT_LEVEL`] until set). The capabilities advertised are the ones
//! served: tools and logging, and prompts, resources and completion only
//! when the server has a source of them ([`McpServer::prompts`],
//! [`McpServer::resources`]; see [`prompt`] and [`resource`]). Resource
//! subscriptions are bounded per session ([`MAX_SUBSCRIPTIONS`]), per user
//! across sessions and in total ([`DEFAULT_MAX_SUBSCRIPTIONS_PER_USER`],
//! [`DEFAULT_MAX_SUBSCRIPTIONS_TOTAL`]; past either, [`SERVER_BUSY`]), and
//! watched by one task per server that checks each subscribed resource
//! once however many subscribe to it, at most [`MAX_CHECKS_PER_POLL`]
//! every [`SUBSCRIPTION_POLL`]; a session's subscriptions end with it
//! ([`McpServer::subscription_stats`] counts them). Tool errors and refusals are `isError`
//! results, an unknown tool an invalid-params error. The details are in
//! [`McpHandler`]. The session ends when the client disconnects; calls
//! still running then are cancelled.
//!
//! Protocol errors always get an answer, and the server keeps serving: a
//! line that is not JSON, or longer than the line limit, is -32700 with
//! `"id": null`; JSON that is no JSON-RPC message is -32600; `params` that
//! do not fit `tools/call` are -32602; a `tools/call` past the session's
//! bound on calls in flight ([`DEFAULT_MAX_IN_FLIGHT`] unless set) is
//! [`SERVER_BUSY`] at once rather than parked. `rmcp` 3.11 keeps none of
//! these on its own. Two small layers of ours work around it:
//! [`LineTransport`] replaces its line transport (which drops unparsable
//! and oversized lines without a word, and answers Invalid Request without
//! an `id`), and [`McpHandler`] answers the requests its untagged request
//! type misreads as custom ones (-32601 before) and bounds the calls it
//! spawns (one task per request, no bound, before). [`McpServer::serve`]
//! on another `rmcp` transport keeps the handler's rules; the framing
//! rules are then that transport's.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod ask;
pub mod convert;
mod handler;
#[cfg(feature = "http")]
pub mod http;
pub mod link;
mod logging;
mod names;
mod offer;
pub mod prompt;
pub mod resource;
mod rounds;
pub mod task;
mod trace;
mod transport;
pub mod wait;

pub use handler::{
    DEFAULT_MAX_SUBSCRIPTIONS_PER_USER, DEFAULT_MAX_SUBSCRIPTIONS_TOTAL, MAX_CHECKS_PER_POLL,
    MAX_SUBSCRIBED_URI_BYTES, MAX_SUBSCRIPTIONS, McpHandler, SERVER_BUSY, SUBSCRIPTION_POLL,
    SubscriptionStats,
};
pub use logging::DEFAULT_LEVEL;
pub use names::{NameClash, ToolNames};
pub use offer::{BoxFuture, ListChangeNotifier, ListChanges, SourceError, list_changes};
pub use prompt::PromptSource;
pub use resource::ResourceSource;
/// The `rmcp` this crate serves with, for the MCP model types sources
/// return (`rmcp::model::Prompt`, `Resource`, ...).
pub use rmcp;
pub use rounds::{INPUT_KEY, MAX_PARKED, PARK_TIMEOUT};
pub use transport::{DEFAULT_MAX_LINE_BYTES, LineTransport};

use std::sync::Arc;

use names::ShortNames;
use oscova_core::UserScope;
use rmcp::model::Implementation;
use rmcp::service::{QuitReason, RunningService, ServerInitializeError};
use rmcp::transport::IntoTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

/// The default bound on `tools/call` requests one session runs at once.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// The range of [`McpServer::max_in_flight`] and
/// [`http::McpHttpServer::max_in_flight`].
pub const MAX_IN_FLIGHT_RANGE: std::ops::RangeInclusive<usize> = 1..=65_536;

/// Why serving MCP stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The session did not start: the client closed the connection or
    /// sent something other than `initialize` first.
    #[error("the MCP session did not start: {0}")]
    Start(#[source] Box<ServerInitializeError>),
    /// The session's task failed (it panicked or the runtime shut down).
    #[error("the MCP session stopped unexpectedly: {0}")]
    Session(#[source] tokio::task::JoinError),
}

/// A setting of [`McpServer`] outside its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{setting}` is {value}; it must be in {range:?}")]
#[non_exhaustive]
pub struct SettingError {
    /// The setting, as the builder names it.
    pub setting: &'static str,
    /// The value asked for.
    pub value: usize,
    /// The range it must be in.
    pub range: std::ops::RangeInclusive<usize>,
}

/// Serves one user scope's tools over MCP, one session per `serve_*` call.
///
/// ```no_run
/// use oscova_mcp::McpServer;
/// # async fn demo(scope: oscova_core::UserScope) -> Result<(), Box<dyn std::error::Error>> {
/// McpServer::new(scope)
///     .allow_approval_required(true)
///     .max_in_flight(16)?
///     .server_info("acme-agent", "1.2.0")
///     .serve_stdio()
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct McpServer {
    scope: UserScope,
    max_in_flight: usize,
    max_line_bytes: usize,
    allow_approval_required: bool,
    info: Implementation,
    names: Option<Arc<ShortNames>>,
    /// Calls waiting for an answer between rounds, shared by every
    /// handler this server makes.
    parked: Arc<rounds::ParkedCalls>,
    /// Where waiting calls are kept beside this process's memory.
    waits: Option<Arc<dyn wait::WaitStore>>,
    /// The tasks running in this process, shared by every handler this
    /// server makes.
    tasks: Arc<handler::Tasks>,
    /// Prompts and resources beside the tools.
    offer: offer::Offer,
    /// The one watcher of the resources subscribed to, shared by every
    /// handler this server makes.
    watcher: handler::Watcher,
}

impl McpServer {
    /// A server for `scope`'s tools, named `oscova`, with the default
    /// bounds ([`DEFAULT_MAX_IN_FLIGHT`] calls, [`DEFAULT_MAX_LINE_BYTES`]
    /// per message), leaving approval to the host's handler.
    pub fn new(scope: UserScope) -> Self {
        Self {
            scope,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            allow_approval_required: false,
            info: Implementation::new("oscova", env!("CARGO_PKG_VERSION")),
            names: None,
            parked: Arc::default(),
            waits: None,
            tasks: Arc::default(),
            offer: offer::Offer::default(),
            watcher: handler::Watcher::default(),
        }
    }

    /// Serves `source`'s prompts (`prompts/list`, `prompts/get`, and
    /// completion of their arguments), advertising the `prompts` and
    /// `completions` capabilities.
    pub fn prompts(mut self, source: impl PromptSource) -> Self {
        self.offer.prompts = Some(Arc::new(source));
        self
    }

    /// Serves `source`'s resources (`resources/list`, `read`,
    /// `templates/list`, subscriptions when the source takes them, and
    /// completion of template arguments), advertising the `resources` and
    /// `completions` capabilities. Every session this server makes shares
    /// one watcher of subscribed resources and one bound on them
    /// ([`DEFAULT_MAX_SUBSCRIPTIONS_PER_USER`], for its one user), beside
    /// each session's own ([`MAX_SUBSCRIPTIONS`]).
    pub fn resources(mut self, source: impl ResourceSource) -> Self {
        self.offer.resources = Some(Arc::new(source));
        self
    }

    /// Sets how tools are named to the client. [`ToolNames::Short`] serves
    /// each tool under its tool segment alone, and fails, naming both
    /// tools, when two of the scope's tools share one.
    pub fn tool_names(mut self, names: ToolNames) -> Result<Self, NameClash> {
        self.names = match names {
            ToolNames::Wire => None,
            ToolNames::Short => Some(ShortNames::build(self.scope.tools())?),
        };
        Ok(self)
    }

    /// Sets how many `tools/call` requests one session runs at once, in
    /// [`MAX_IN_FLIGHT_RANGE`]; the excess is answered with
    /// [`SERVER_BUSY`]. Outside the range, the error names the setting and
    /// the range.
    pub fn max_in_flight(mut self, max: usize) -> Result<Self, SettingError> {
        if !MAX_IN_FLIGHT_RANGE.contains(&max) {
            return Err(SettingError {
                setting: "max_in_flight",
                value: max,
                range: MAX_IN_FLIGHT_RANGE,
            });
        }
        self.max_in_flight = max;
        Ok(self)
    }

    /// Whether the server approves, itself, the calls that need approval
    /// (`Required` tools, and `Default` ones when the host's policy says
    /// so): nobody at the other end of the transport can be asked. With
    /// `false` (the default) the host's approval handler decides, and
    /// without one such calls are refused.
    pub fn allow_approval_required(mut self, allow: bool) -> Self {
        self.allow_approval_required = allow;
        self
    }

    /// Keeps the calls waiting between 2026-07-28 rounds in `store` too
    /// (see [`wait`]), so that a client's retry is answered by the next
    /// process serving it over the same store (a restarted `serve_stdio`).
    pub fn wait_store(self, store: impl wait::WaitStore) -> Self {
        self.wait_store_arc(Some(Arc::new(store)))
    }

    /// [`wait_store`](Self::wait_store) with a store the caller already
    /// holds, or `None` to keep waits in this process's memory only (the
    /// default).
    pub fn wait_store_arc(mut self, store: Option<Arc<dyn wait::WaitStore>>) -> Self {
        self.waits = store;
        self
    }

    /// Sets how long a `tools/call` of a client that declared the MCP
    /// tasks extension runs as usual before it is made a task
    /// ([`task::DEFAULT_TASK_AFTER`] unless set; zero: a task at once).
    /// A call that finishes sooner is answered with its result and makes
    /// no task; one that asks a question sooner is made a task
    /// (`input_required`) when it asks. See [`task`]. Set it before the
    /// server makes handlers: the tasks running are shared by the
    /// handlers made after it.
    pub fn task_after(mut self, after: std::time::Duration) -> Self {
        self.tasks = Arc::new(handler::Tasks::new(after));
        self
    }

    /// Sets the longest message accepted on a byte stream, in bytes
    /// ([`serve_stdio`](Self::serve_io) and [`serve_io`](Self::serve_io)).
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    /// Sets the name and version the server gives in `initialize`.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// The scope served.
    pub fn scope(&self) -> &UserScope {
        &self.scope
    }

    /// A fresh handler for one session, to serve with `rmcp` yourself (for
    /// example one per connection of an HTTP transport).
    pub fn handler(&self) -> McpHandler {
        McpHandler::new(
            handler::Served::new(self.scope.clone(), self.names.clone(), self.offer.clone()),
            self.info.clone(),
            self.max_in_flight,
            self.allow_approval_required,
            (self.parked.clone(), self.waits.clone(), self.tasks.clone()),
            self.watcher.clone(),
        )
    }

    /// Counts of the resource subscriptions this server's sessions hold
    /// (every handler it makes shares one watcher, and so do its clones).
    pub fn subscription_stats(&self) -> SubscriptionStats {
        SubscriptionStats::new(self.watcher.clone())
    }

    /// Serves on stdin and stdout until the client disconnects. stdout then
    /// carries protocol messages only.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves on a byte stream, one JSON-RPC message per line, until the
    /// client disconnects (see [`LineTransport`]).
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let transport = LineTransport::new(read, write).max_line_bytes(self.max_line_bytes);
        self.serve(transport).await
    }

    /// Serves on any `rmcp` transport until it closes. The handler's rules
    /// hold; how malformed input is framed and answered is the transport's.
    pub async fn serve<T, E, A>(self, transport: T) -> Result<(), McpError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running: RunningService<RoleServer, McpHandler> = self
            .handler()
            .serve(transport)
            .await
            .map_err(|e| McpError::Start(Box::new(e)))?;
        match running.waiting().await {
            Ok(QuitReason::JoinError(error)) | Err(error) => Err(McpError::Session(error)),
            Ok(_) => Ok(()),
        }
    }
}

// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
