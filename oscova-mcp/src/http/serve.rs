//! The checks in front of `rmcp`, and the server's state; binding,
//! connections and shutdown are `oscova_serve::Listener`'s.
//!
//! Rules: every request meets the port's Origin and Host policy first
//! (`oscova_serve::origin::OriginPolicy`, enforced by `oscova_serve::Listener`
//! in front of every path, so a front end served beside MCP on the port is
//! behind it too; `rmcp`'s own checks are off, the listener's being the
//! one check), then goes through [`State::handle`] (path, the RFC 9728
//! metadata, the user by `oscova_serve::Authenticator`, a
//! well-formed `Mcp-Session-Id`, the session's owner) and then to `rmcp`'s
//! `StreamableHttpService`, which does the protocol and the body cap. A
//! session id that is not one run of visible ASCII (0x21 to 0x7E, as the
//! protocol defines it), or sent twice, is 400 before anything reads it:
//! `rmcp` would read such a header as no session and open a new one. The
//! user (their scope with its tools as listed, converted once per cached
//! scope) reaches the session factory and the session manager
//! (`sessions.rs`) `rmcp` calls through a task-local value set around
//! `rmcp`'s handling of the request: `rmcp` builds a session's handler (or
//! a stateless request's) and creates sessions inside the request's own
//! task, so no handler or session can get another request's user, and
//! every session is bound to its user where it is created. Every answer
//! made here before `rmcp` (404 for another path or another user's
//! session, 401, 403 and 503 from the authenticator, 400) carries `Connection: close`: only requests that
//! reach `rmcp` keep their connection alive, so clients without a token
//! cannot hold the server's connection slots with cheap refused
//! requests on kept-alive connections. A session the
//! manager refused is answered 429 (the user's bound) or 503 (the
//! server's), with the reason. A POST's response
//! counts as being sent until hyper drops its body, sent in full or
//! abandoned (shutdown waits for these); a GET stream, which may last the
//! session, does not.

use std::cell::Cell;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use oscova_serve::shutdown::CountedBody;
use oscova_serve::{
    AuthRefusal, Authenticator, CallBound, Listener, OAuth, RequestBody, Responses, ScopeCache,
    Shutdown,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::per_user::UserBounds;
use super::sessions::{Owner, Refusal, Sessions};
use super::{MCP_PATH, McpHttpError, McpHttpServer};
use crate::McpHandler;
use crate::handler::{Served, SubscriptionLimits, Watcher};
use crate::rounds::ParkedCalls;

type SentBody = CountedBody<BoxBody<Bytes, Infallible>>;

/// The request `rmcp` is handling in this task.
struct Current {
    /// Its user (scope and tools).
    served: Served,
    /// Why the session it would open was refused, if it was.
    refused: Cell<Option<Refusal>>,
}

tokio::task_local! {
    static CURRENT: Current;
}

/// The user of the request being handled in this task.
pub(super) fn current_user() -> Option<Arc<str>> {
    CURRENT
        .try_with(|current| Arc::from(current.served.scope.user().id()))
        .ok()
}

/// Notes why the session the request being handled would open was refused.
pub(super) fn note_refusal(refusal: Refusal) {
    let _ = CURRENT.try_with(|current| current.refused.set(Some(refusal)));
}

const SESSION_HEADER: &str = "mcp-session-id";

/// A server bound to its address, ready to serve.
pub struct BoundMcpServer {
    listener: Listener,
    state: Arc<State>,
    cancel: CancellationToken,
    grace: Duration,
}

impl std::fmt::Debug for BoundMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundMcpServer")
            .field("addr", &self.listener.local_addr())
            .finish_non_exhaustive()
    }
}

/// What every request of the server reads.
struct State {
    rmcp: StreamableHttpService<McpHandler, Sessions>,
    /// The sessions, with their owners.
    sessions: Arc<Sessions>,
    auth: Authenticator,
    default_user: String,
    scopes: ScopeCache<Served>,
    /// The server-wide bound on calls in flight.
    calls: CallBound,
    /// POST responses not yet sent in full.
    posts: Arc<Responses>,
    /// The one watcher of subscribed resources, every session's.
    watcher: Watcher,
}

pub(super) async fn bind(
    server: McpHttpServer,
    addr: SocketAddr,
) -> Result<BoundMcpServer, McpHttpError> {
    let names = server.names.clone();
    let offer = server.offer.clone();
    let listener = Listener::bind(addr)
        .await?
        .allow_origins(server.allowed_origins.iter().cloned())
        .allow_hosts(server.allowed_hosts.iter().cloned())
        .limits(server.listen)?;
    let addr = listener.local_addr();
    let oauth = match server.oauth {
        Some(config) => Some(OAuth::new(
            config,
            &format!("http://{addr}{MCP_PATH}"),
            server.host.http_client(),
        )?),
        None => None,
    };
    let auth = Authenticator::new(server.tokens, oauth);
    let cancel = CancellationToken::new();
    // The listener checks Origin and Host on every path of the port
    // before anything here runs (one policy for MCP and whatever is served
    // beside it); rmcp's checks of the same would only repeat it.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.clone())
        .with_max_request_body_bytes(server.max_body_bytes)
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(server.idle_timeout);
    let sessions = Arc::new(Sessions::new(
        manager,
        server.max_sessions_per_user,
        server.max_sessions,
    ));
    let calls = CallBound::new(server.max_in_flight_total)?;
    let parked = Arc::new(ParkedCalls::new(server.max_parked_per_user));
    let waits = server.waits.clone();
    let tasks = Arc::new(crate::handler::Tasks::new(server.task_after));
    let watcher = Watcher::new(SubscriptionLimits {
        per_user: server.max_subscriptions_per_user,
        total: server.max_subscriptions_total,
    });
    let factory = {
        let calls = calls.clone();
        let watcher = watcher.clone();
        let (info, per_session, approve) = (
            server.info.clone(),
            server.max_in_flight,
            server.allow_approval_required,
        );
        move || {
            let served = CURRENT
                .try_with(|current| current.served.clone())
                .map_err(|_| std::io::Error::other("no user for this request"))?;
            let handler = McpHandler::new(
                served,
                info.clone(),
                per_session,
                approve,
                (parked.clone(), waits.clone(), tasks.clone()),
                watcher.clone(),
            );
            Ok(handler.with_global_bound(calls.semaphore().clone(), calls.max()))
        }
    };
    let rmcp = StreamableHttpService::new(factory, sessions.clone(), config);
    let bounds = UserBounds::new(server.max_in_flight_per_user);
    let scopes = ScopeCache::new(
        server.host,
        server.users,
        server.scope_cache,
        move |scope| {
            let bound = bounds.of(scope.user().id());
            Served::new(scope, names.clone(), offer.clone()).with_user_bound(bound, bounds.max())
        },
    );
    let state = Arc::new(State {
        rmcp,
        sessions,
        auth,
        default_user: server.default_user,
        scopes,
        calls,
        posts: Arc::default(),
        watcher,
    });
    Ok(BoundMcpServer {
        listener,
        state,
        cancel,
        grace: server.shutdown_grace,
    })
}

/// A refusal made before the request reached `rmcp`: it closes the
/// connection, so that a client without a token (or with a bad path or
/// session header) holds no connection slot past its answer.
fn text_response(status: StatusCode, text: &'static str) -> Response<SentBody> {
    let body = Full::new(Bytes::from_static(text.as_bytes())).boxed();
    let mut response = Response::new(CountedBody::new(body, None));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// Whether a request's `Mcp-Session-Id` headers name one session as the
/// protocol spells an id: one header, visible ASCII only.
fn well_formed_session(request: &Request<RequestBody>) -> bool {
    let mut ids = request.headers().get_all(SESSION_HEADER).iter();
    match (ids.next(), ids.next()) {
        (None, _) => true,
        (Some(id), None) => {
            !id.is_empty() && id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
        }
        (Some(_), Some(_)) => false,
    }
}

/// The answer to a session the manager refused.
fn refused(refusal: &Refusal) -> Response<SentBody> {
    let status = match refusal {
        Refusal::PerUser { .. } => StatusCode::TOO_MANY_REQUESTS,
        Refusal::Total { .. } => StatusCode::SERVICE_UNAVAILABLE,
        Refusal::NoUser => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let text = format!(
        "{}: {refusal}",
        status.canonical_reason().unwrap_or("Refused")
    );
    let mut response = Response::new(CountedBody::new(Full::new(Bytes::from(text)).boxed(), None));
    *response.status_mut() = status;
    response
}

impl State {
    async fn handle(&self, request: Request<RequestBody>) -> Response<SentBody> {
        if request.uri().path() != MCP_PATH {
            if let Some(oauth) = self.auth.oauth()
                && is_metadata_path(request.uri().path(), oauth)
            {
                return metadata_response(oauth);
            }
            return text_response(StatusCode::NOT_FOUND, "Not Found: MCP is served at /mcp");
        }
        let user = match self.auth.authenticate(request.headers()).await {
            Ok(Some(user)) => user,
            Ok(None) => self.default_user.clone(),
            Err(refusal) => return self.refusal_response(refusal),
        };
        let user = user.as_str();
        if !well_formed_session(&request) {
            return text_response(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id must be one header of visible ASCII characters",
            );
        }
        if let Some(session) = request.headers().get(SESSION_HEADER)
            && let Ok(session) = session.to_str()
            && self.sessions.owner(session, user) == Owner::Other
        {
            // Said as for an unknown session: another user's session
            // ids are not even confirmed to exist.
            return text_response(StatusCode::NOT_FOUND, "Not Found: Session not found");
        }
        // A POST's response ends with the answer to what it carried (a GET
        // stream may last the session): shutdown waits for these.
        let sending = (request.method() == http::Method::POST).then(|| self.posts.start());
        let deleting = request.method() == http::Method::DELETE;
        let current = Current {
            served: self.scopes.get(user),
            refused: Cell::new(None),
        };
        let (response, refusal) = CURRENT
            .scope(current, async {
                let response = self.rmcp.handle(request).await;
                (response, CURRENT.with(|current| current.refused.take()))
            })
            .await;
        if let Some(refusal) = refusal {
            return refused(&refusal);
        }
        let mut response = response.map(|inner| CountedBody::new(inner, sending));
        // rmcp answers a session's DELETE with 202; the session is closed
        // by then, and clients (the Python SDK among them) read anything
        // but 200 or 204 as a failed termination.
        if deleting && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        response
    }

    /// The answer to a request refused by [`Authenticator`]: its status,
    /// its challenge, the connection closed.
    fn refusal_response(&self, refusal: AuthRefusal) -> Response<SentBody> {
        let text = match refusal {
            // Without OAuth, a missing and an unknown token read alike.
            _ if self.auth.oauth().is_none() => "Unauthorized: send Authorization: Bearer <token>",
            AuthRefusal::Missing => "Unauthorized: send Authorization: Bearer <token>",
            AuthRefusal::InsufficientScope => "Forbidden: the token lacks a required scope",
            AuthRefusal::Unavailable => {
                "Service Unavailable: the authorization server's keys cannot be fetched"
            }
            _ => "Unauthorized: the token is not accepted",
        };
        let mut response = text_response(refusal.status(), text);
        if let Ok(value) = http::HeaderValue::from_str(&self.auth.challenge(refusal)) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// Whether `path` is where the RFC 9728 metadata of `oauth`'s resource is
/// looked for: the well-known segment before the resource's path, before
/// `/mcp`, or alone.
fn is_metadata_path(path: &str, oauth: &OAuth) -> bool {
    const PREFIX: &str = "/.well-known/oauth-protected-resource";
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return false;
    };
    let url = oauth.metadata_url();
    let own = url.find(PREFIX).map(|at| &url[at + PREFIX.len()..]);
    rest.is_empty() || rest == MCP_PATH || Some(rest) == own
}

/// The RFC 9728 metadata document, readable from any origin (it is
/// public, and browser clients read it before they have a token).
fn metadata_response(oauth: &OAuth) -> Response<SentBody> {
    let body = Full::new(Bytes::from(oauth.metadata().to_string())).boxed();
    let mut response = Response::new(CountedBody::new(body, None));
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
        http::HeaderValue::from_static("*"),
    );
    response
}

impl BoundMcpServer {
    /// The address bound (with the port picked, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// Counts of the resource subscriptions the server's sessions and
    /// listen requests hold, and of the resources watched for them; take
    /// it before [`serve_until`](Self::serve_until), it reads the server
    /// while it serves.
    pub fn subscription_stats(&self) -> crate::SubscriptionStats {
        crate::SubscriptionStats::new(self.state.watcher.clone())
    }

    /// The server's authenticator (its static tokens and OAuth resource
    /// server), for another front end on the same port to share: a clone
    /// shares the caches of the issuer's keys and of accepted tokens.
    pub fn authenticator(&self) -> Authenticator {
        self.state.auth.clone()
    }

    /// Serves until `shutdown` completes, then shuts down gracefully (see
    /// the [module docs](super)).
    pub async fn serve_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), McpHttpError> {
        let state = self.state;
        let drain =
            Shutdown::new(self.cancel, self.grace, state.posts.clone()).calls(state.calls.clone());
        let handle = move |request| {
            let state = state.clone();
            async move { state.handle(request).await }
        };
        Ok(self.listener.serve_until(handle, shutdown, drain).await?)
    }

    /// Serves as [`serve_until`](Self::serve_until) does, and beside MCP
    /// another front end on the same port (`oscova serve`'s A2A): a
    /// request whose path `claims` says is the other's goes to `other`
    /// after the port's Origin and Host policy (the listener's, the same
    /// for every path) and nothing else of MCP's (the other checks its
    /// own users); every other request meets MCP's rules. The other's
    /// responses are not waited for at shutdown; cancel its work when
    /// this returns.
    pub async fn serve_until_beside<C, F, Fut>(
        self,
        claims: C,
        other: F,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), McpHttpError>
    where
        C: Fn(&str) -> bool + Clone + Send + Sync + 'static,
        F: Fn(Request<RequestBody>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<BoxBody<Bytes, Infallible>>> + Send + 'static,
    {
        let state = self.state;
        let drain =
            Shutdown::new(self.cancel, self.grace, state.posts.clone()).calls(state.calls.clone());
        let handle = move |request: Request<RequestBody>| {
            let state = state.clone();
            let beside = claims(request.uri().path()).then(|| other.clone());
            async move {
                match beside {
                    Some(other) => other(request).await.map(|b| CountedBody::new(b, None)),
                    None => state.handle(request).await,
                }
            }
        };
        Ok(self.listener.serve_until(handle, shutdown, drain).await?)
    }
}
