//! [`A2aServer`]: the settings; [`A2aHandler`]: the requests' handler, to
//! serve alone ([`A2aServer::bind`]) or beside another protocol on one
//! port ([`A2aHandler::handle`]).
//!
//! Rules: the numeric settings are one [`Limits`] value, checked
//! ([`Limits::check`]) when the handler is built. Without
//! tokens or OAuth, [`A2aServer::bind`] refuses any address but a loopback
//! one. A bound server's listener holds every request to the address's
//! Origin and Host policy (`oscova_serve::OriginPolicy::new`: loopback
//! origins only; on loopback, a `Host` naming this machine) before
//! [`A2aHandler::handle`] sees it; [`A2aHandler::handle`] served beside
//! another front end relies on that front end's listener for it, as
//! `oscova serve` does (`oscova_mcp`'s `serve_until_beside`). Requests
//! are authenticated by `oscova_serve::Authenticator`, the
//! MCP server's: static tokens in constant time, then OAuth access tokens
//! ([`A2aServer::oauth`]) with every check of `oscova_serve::OAuth`; or
//! by an authenticator shared with another front end of the port
//! ([`A2aServer::authenticator`]: `oscova serve` passes its MCP
//! server's, so the issuer's keys and accepted tokens are cached once).
//! When the handler is built and [`A2aServer::fail_unfinished_at_start`]
//! is on (the default, right for one process on its own store), tasks a
//! dead process left `SUBMITTED` or `WORKING` become `FAILED` with the
//! reason; a fleet sharing one store turns it off, since another instance
//! may be running them. The handler sweeps the pushes owed to webhooks
//! (see `push.rs`) at once, then each minute, until shutdown, and so
//! it sweeps the waits that expired with nobody to end them (their tasks
//! end `FAILED`, see `tasks/answer.rs`). Shutdown
//! cancels every run; each stores its `CANCELED` state as it ends.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use oscova_agent::session::agent::AgentHost;
use oscova_core::UserInfo;
use oscova_serve::{
    Authenticator, Listener, OAuth, OAuthConfig, RequestBody, Responses, Shutdown, Tokens,
    UserDirectory, UserToken,
};
use tokio_util::sync::CancellationToken;

use crate::Limits;
use crate::binding::{FollowUpHook, State};
use crate::body::A2aBody;
use crate::card::{CardConfig, card_json, extended_card_json};
use crate::error::ServeA2aError;
use crate::store::TaskStore;
use crate::tasks::Runner;

/// The reason a task left running by a dead process fails with.
pub const RESTART_REASON: &str =
    "the server stopped while this task ran; its run was lost: send the message again";

/// The A2A server's settings. The numeric ones ([`Limits`]) are checked
/// when the handler is built; without tokens, [`A2aServer::bind`]
/// refuses any address but a loopback one.
pub struct A2aServer {
    agents: AgentHost,
    store: Arc<dyn TaskStore>,
    tokens: Vec<UserToken>,
    oauth: Option<(OAuthConfig, Option<String>)>,
    /// An authenticator shared with another front end, used instead of
    /// `tokens` and `oauth`.
    shared_auth: Option<Authenticator>,
    default_user: String,
    users: UserDirectory,
    card: CardConfig,
    model: Option<(String, Option<String>)>,
    limits: Limits,
    fail_unfinished: bool,
    input_wait: Duration,
    allow_approval_required: bool,
    shutdown_grace: Duration,
    followups: Option<FollowUpHook>,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("card", &self.card)
            .field("tokens", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// How long a tool's question waits for its answer unless
    /// [`A2aServer::input_wait`] says otherwise: a day.
    pub const DEFAULT_INPUT_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

    /// The range of [`A2aServer::input_wait`]: a millisecond to thirty
    /// days. [`A2aServer::handler`] refuses a wait outside it, naming the
    /// setting.
    pub const INPUT_WAIT_RANGE: std::ops::RangeInclusive<Duration> =
        Duration::from_millis(1)..=Duration::from_secs(30 * 24 * 60 * 60);

    /// A server whose tasks are runs of `agents`' sessions, kept in
    /// `store`.
    pub fn new(agents: AgentHost, store: Arc<dyn TaskStore>) -> Self {
        Self {
            agents,
            store,
            tokens: Vec::new(),
            oauth: None,
            shared_auth: None,
            default_user: "default".into(),
            users: Arc::new(|id: &str| UserInfo::new(id)),
            card: CardConfig::default(),
            model: None,
            limits: Limits::default(),
            fail_unfinished: true,
            input_wait: Self::DEFAULT_INPUT_WAIT,
            allow_approval_required: false,
            shutdown_grace: Duration::from_secs(10),
            followups: None,
        }
    }

    /// Serves push webhooks for the host's own A2A calls at
    /// `POST /a2a/followups/{id}` ([`FOLLOWUPS_PATH`](crate::model::FOLLOWUPS_PATH)): `hook` gets the id
    /// and the `X-A2A-Notification-Token` header and says whether they
    /// name a task the host follows (200) or not (401). The route is not
    /// behind the users' tokens (an agent elsewhere calls it): the
    /// per-task token is its credential, and the body is never read.
    /// Without a hook the route is not served.
    pub fn followups(
        mut self,
        hook: impl Fn(&str, Option<&str>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.followups = Some(Arc::new(hook));
        self
    }

    /// The users' bearer tokens (`oscova mcp --listen`'s).
    pub fn tokens(mut self, tokens: impl IntoIterator<Item = UserToken>) -> Self {
        self.tokens.extend(tokens);
        self
    }

    /// Accepts OAuth access tokens beside the static tokens, checked as
    /// the MCP server checks them (issuer, audience, expiry, scopes, an
    /// algorithm allow-list; the issuer's keys fetched through the agent
    /// host's HTTP client). The token's audience must be the config's
    /// resource, else `default_resource`, else this server's base URL:
    /// `oscova serve` passes its `/mcp` URL, so one access token serves
    /// both front ends of its port.
    pub fn oauth(mut self, config: OAuthConfig, default_resource: Option<String>) -> Self {
        self.oauth = Some((config, default_resource));
        self
    }

    /// Authenticates with `auth`, shared with another front end of the
    /// same port (`oscova serve` passes its MCP server's, so both keep one
    /// table of static tokens, one cache of the issuer's keys and of
    /// accepted access tokens), instead of [`tokens`](Self::tokens) and
    /// [`oauth`](Self::oauth).
    pub fn authenticator(mut self, auth: Authenticator) -> Self {
        self.shared_auth = Some(auth);
        self
    }

    /// The user every request is served as when no token is configured.
    pub fn default_user(mut self, user: impl Into<String>) -> Self {
        self.default_user = user.into();
        self
    }

    /// Makes the [`UserInfo`] of a user id (time zone and the like).
    pub fn users(mut self, users: UserDirectory) -> Self {
        self.users = users;
        self
    }

    /// What the agent card says.
    pub fn card(mut self, card: CardConfig) -> Self {
        self.card = card;
        self
    }

    /// The model provider (a type key of the agent host's) and model the
    /// runs use; `None` keeps the agent host's default.
    pub fn model(mut self, provider: impl Into<String>, model: Option<String>) -> Self {
        self.model = Some((provider.into(), model));
        self
    }

    /// The bounds on bodies, tasks, streams and webhooks ([`Limits`];
    /// its `Default` unless set), checked when the handler is built.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether building the handler fails the tasks a dead process left
    /// running (default true: right for one process on its own store; a
    /// fleet sharing one store turns it off, since another instance may be
    /// running them).
    pub fn fail_unfinished_at_start(mut self, on: bool) -> Self {
        self.fail_unfinished = on;
        self
    }

    /// How long a tool's question waits for the client's answer
    /// ([`A2aServer::DEFAULT_INPUT_WAIT`], a day, unless set): the task's wait is
    /// kept in the store with this expiry, answerable through any process
    /// on the store until then; after it the task ends `FAILED`, its
    /// status message saying the wait expired. In
    /// [`A2aServer::INPUT_WAIT_RANGE`], else [`A2aServer::handler`] fails
    /// with [`ServeA2aError::Setting`] naming `input_wait`.
    pub fn input_wait(mut self, wait: Duration) -> Self {
        self.input_wait = wait;
        self
    }

    /// Whether the server approves, itself, the calls of a task's run
    /// that need approval (`Required` tools, and `Default` ones when the
    /// host's policy says so), as `oscova_mcp`'s
    /// `McpServer::allow_approval_required` does. With `false` (the
    /// default) the task's client is asked: the task moves to
    /// `INPUT_REQUIRED` with the confirmation, its wait kept in the
    /// session and the store first; the client's yes runs the tool once,
    /// through any process on the store, and anything else refuses it
    /// (see [`input_wait`](Self::input_wait) for the expiry). The host's
    /// own approval handler is not asked for a task's calls either way.
    pub fn allow_approval_required(mut self, allow: bool) -> Self {
        self.allow_approval_required = allow;
        self
    }

    /// How long runs get to end at shutdown before they are cancelled.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The handler, for clients that reach the server at `base_url`
    /// (`http://host:port`, named in the card).
    pub async fn handler(self, base_url: &str) -> Result<A2aHandler, ServeA2aError> {
        self.limits.check()?;
        oscova_serve::limits::check_duration(
            "input_wait",
            self.input_wait,
            &Self::INPUT_WAIT_RANGE,
        )?;
        if self.fail_unfinished {
            let failed = self.store.fail_unfinished(RESTART_REASON).await?;
            if failed > 0 {
                tracing::warn!(failed, "tasks left running by a stopped server were failed");
            }
        }
        let base = self.card.url.clone().unwrap_or_else(|| base_url.to_owned());
        let base = base.trim_end_matches('/');
        let auth = match self.shared_auth {
            Some(auth) => auth,
            None => {
                let oauth = match self.oauth {
                    Some((config, resource)) => Some(OAuth::new(
                        config,
                        resource.as_deref().unwrap_or(base),
                        self.agents.plugins().http_client(),
                    )?),
                    None => None,
                };
                Authenticator::new(Tokens::new(self.tokens), oauth)
            }
        };
        let card = card_json(&self.card, base, !auth.is_open());
        let extended_card = extended_card_json(&self.card, base, !auth.is_open());
        let cancel = CancellationToken::new();
        let first_sweep = if self.fail_unfinished {
            // No other process shares the store: every owed push is ours.
            Duration::ZERO
        } else {
            crate::push::CLAIM_LEASE
        };
        let mut runner = Runner::new(
            self.agents,
            self.store,
            self.users,
            self.model,
            self.limits,
            self.input_wait,
            cancel.clone(),
        );
        runner.allow_approval_required = self.allow_approval_required;
        let runner = Arc::new(runner);
        runner.pushes.sweep(first_sweep, cancel.clone());
        runner.sweep_waits(cancel.clone());
        Ok(A2aHandler {
            state: Arc::new(State {
                runner,
                auth,
                default_user: self.default_user,
                card: Bytes::from(card.to_string()),
                extended_card,
                max_body_bytes: self.limits.max_body_bytes,
                followups: self.followups,
            }),
            cancel,
            grace: self.shutdown_grace,
        })
    }

    /// Binds `addr` and builds the handler for it.
    pub async fn bind(self, addr: SocketAddr) -> Result<BoundA2aServer, ServeA2aError> {
        let open = match &self.shared_auth {
            Some(auth) => auth.is_open(),
            None => self.tokens.is_empty() && self.oauth.is_none(),
        };
        if open && !addr.ip().is_loopback() {
            return Err(ServeA2aError::NoTokens {
                addr,
                user: self.default_user,
            });
        }
        let listener = Listener::bind(addr).await?;
        let bound = listener.local_addr();
        let handler = self.handler(&format!("http://{bound}")).await?;
        Ok(BoundA2aServer { listener, handler })
    }
}

/// The A2A server's request handler. Cheap to clone.
#[derive(Clone)]
pub struct A2aHandler {
    state: Arc<State>,
    cancel: CancellationToken,
    grace: Duration,
}

impl std::fmt::Debug for A2aHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aHandler").finish_non_exhaustive()
    }
}

impl A2aHandler {
    /// Whether the handler answers `path`: `/`, the card, `/message:*`,
    /// `/tasks` and below, `/extendedAgentCard`.
    pub fn serves(path: &str) -> bool {
        State::serves(path)
    }

    /// Answers one request (see [the rules](crate#rules)).
    pub async fn handle(&self, request: Request<RequestBody>) -> Response<A2aBody> {
        self.state.handle(request).await
    }

    /// Cancels every run (shutdown); each stores its `CANCELED` state.
    pub fn cancel_runs(&self) {
        self.cancel.cancel();
    }

    /// The token whose cancellation ends every run.
    pub fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// How long runs get at shutdown.
    pub fn shutdown_grace(&self) -> Duration {
        self.grace
    }
}

/// A server bound to its address, ready to serve.
#[derive(Debug)]
pub struct BoundA2aServer {
    listener: Listener,
    handler: A2aHandler,
}

impl BoundA2aServer {
    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// Serves until `until` completes, then shuts down: the listener
    /// closes, then every run is cancelled.
    pub async fn serve_until(
        self,
        until: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeA2aError> {
        let handler = self.handler;
        let shutdown = Shutdown::new(
            handler.cancellation(),
            Duration::ZERO,
            Arc::new(Responses::default()),
        );
        let handle = move |request| {
            let handler = handler.clone();
            async move { handler.handle(request).await }
        };
        Ok(self.listener.serve_until(handle, until, shutdown).await?)
    }
}
