//! The checks in front of `rmcp`, and the server's state; binding,
//! connections and shutdown are `oscova_serve::Listener`'s.
//!
//! Rules: every request goes through [`State::handle`] (path, token,
//! session owner) and then to `rmcp`'s `StreamableHttpService`, which does
//! the protocol, the Origin and Host checks (as `oscova_serve::OriginPolicy`
//! decides) and the body cap. The user's scope (with its tools as listed,
//! converted once per cached scope) reaches the session factory `rmcp`
//! calls through a task-local value set around that call: `rmcp` builds a
//! session's handler (or a stateless request's) inside the request's own
//! task, so no handler can get another request's user. A POST's response
//! counts as being sent until hyper drops its body, sent in full or
//! abandoned (shutdown waits for these); a GET stream, which may last the
//! session, does not.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use oscova_serve::{
    CallBound, CountedBody, Listener, OriginPolicy, Responses, ScopeCache, Shutdown, Tokens,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{MCP_PATH, McpHttpError, McpHttpServer};
use crate::McpHandler;
use crate::handler::Served;
use crate::rounds::ParkedCalls;

type SentBody = CountedBody<BoxBody<Bytes, Infallible>>;

tokio::task_local! {
    /// The user (scope and tools) of the request `rmcp` is handling in
    /// this task.
    static CURRENT: Served;
}

const SESSION_HEADER: &str = "mcp-session-id";

/// A server bound to its address, ready to serve.
pub struct BoundMcpServer {
    listener: Listener,
    state: Arc<State>,
    cancel: CancellationToken,
    grace: Duration,
    idle: Duration,
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
    rmcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    tokens: Tokens,
    default_user: String,
    scopes: ScopeCache<Served>,
    /// Session id to the user who opened it.
    owners: Mutex<HashMap<String, String>>,
    /// The server-wide bound on calls in flight.
    calls: CallBound,
    /// POST responses not yet sent in full.
    posts: Arc<Responses>,
}

pub(super) async fn bind(
    server: McpHttpServer,
    addr: SocketAddr,
) -> Result<BoundMcpServer, McpHttpError> {
    let names = server.names.clone();
    let listener = Listener::bind(addr).await?;
    let addr = listener.local_addr();
    let cancel = CancellationToken::new();
    let policy = OriginPolicy::new(addr, server.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.clone())
        .with_max_request_body_bytes(server.max_body_bytes)
        .with_allowed_origins(policy.origins().to_vec())
        .enforce_origin_validation();
    if !policy.checks_host() {
        config = config.disable_allowed_hosts();
    }
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(server.idle_timeout);
    let sessions = Arc::new(manager);
    let calls = CallBound::new(server.max_in_flight_total);
    let parked = Arc::new(ParkedCalls::default());
    let factory = {
        let calls = calls.clone();
        let (info, per_session, approve) = (
            server.info.clone(),
            server.max_in_flight,
            server.allow_approval_required,
        );
        move || {
            let served = CURRENT
                .try_with(Served::clone)
                .map_err(|_| std::io::Error::other("no user for this request"))?;
            Ok(
                McpHandler::new(served, info.clone(), per_session, approve, parked.clone())
                    .with_global_bound(calls.semaphore().clone(), calls.max()),
            )
        }
    };
    let rmcp = StreamableHttpService::new(factory, sessions.clone(), config);
    let scopes = ScopeCache::new(
        server.host,
        server.users,
        server.scope_cache,
        move |scope| Served::new(scope, names.clone()),
    );
    let state = Arc::new(State {
        rmcp,
        sessions,
        tokens: server.tokens,
        default_user: server.default_user,
        scopes,
        owners: Mutex::new(HashMap::new()),
        calls,
        posts: Arc::default(),
    });
    Ok(BoundMcpServer {
        listener,
        state,
        cancel,
        grace: server.shutdown_grace,
        idle: server.idle_timeout,
    })
}

fn text_response(status: StatusCode, text: &'static str) -> Response<SentBody> {
    let body = Full::new(Bytes::from_static(text.as_bytes())).boxed();
    let mut response = Response::new(CountedBody::new(body, None));
    *response.status_mut() = status;
    response
}

impl State {
    async fn handle(&self, request: Request<Incoming>) -> Response<SentBody> {
        if request.uri().path() != MCP_PATH {
            return text_response(StatusCode::NOT_FOUND, "Not Found: MCP is served at /mcp");
        }
        let user = if self.tokens.is_empty() {
            self.default_user.as_str()
        } else {
            match self.tokens.authenticate(request.headers()) {
                Some(user) => user,
                None => {
                    let mut response = text_response(
                        StatusCode::UNAUTHORIZED,
                        "Unauthorized: send Authorization: Bearer <token>",
                    );
                    response.headers_mut().insert(
                        http::header::WWW_AUTHENTICATE,
                        http::HeaderValue::from_static("Bearer realm=\"mcp\""),
                    );
                    return response;
                }
            }
        };
        let session = request.headers().get(SESSION_HEADER);
        let in_session = session.is_some();
        if let Some(session) = session.and_then(|v| v.to_str().ok()) {
            let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            if owners.get(session).is_some_and(|owner| owner != user) {
                // Said as for an unknown session: another user's session
                // ids are not even confirmed to exist.
                return text_response(StatusCode::NOT_FOUND, "Not Found: Session not found");
            }
        }
        // A POST's response ends with the answer to what it carried (a GET
        // stream may last the session): shutdown waits for these.
        let sending = (request.method() == http::Method::POST).then(|| self.posts.start());
        let scope = self.scopes.get(user);
        let response = CURRENT.scope(scope, self.rmcp.handle(request)).await;
        let response = response.map(|inner| CountedBody::new(inner, sending));
        if !in_session
            && let Some(opened) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            self.owners
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(opened.to_owned(), user.to_owned());
        }
        response
    }

    /// Forgets the owners of sessions that have ended.
    async fn prune_owners(&self) {
        let live: Vec<String> = {
            let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            owners.keys().cloned().collect()
        };
        let sessions = self.sessions.sessions.read().await;
        let ended: Vec<String> = live
            .into_iter()
            .filter(|id| !sessions.contains_key(id.as_str()))
            .collect();
        drop(sessions);
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        for id in ended {
            owners.remove(&id);
        }
    }
}

impl BoundMcpServer {
    /// The address bound (with the port picked, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then shuts down gracefully (see
    /// the [module docs](super)).
    pub async fn serve_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), McpHttpError> {
        let state = self.state;
        let pruner = {
            let state = state.clone();
            let every = (self.idle / 2).clamp(Duration::from_secs(1), Duration::from_secs(60));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                loop {
                    tick.tick().await;
                    state.prune_owners().await;
                }
            })
        };
        let drain =
            Shutdown::new(self.cancel, self.grace, state.posts.clone()).calls(state.calls.clone());
        let handle = move |request| {
            let state = state.clone();
            async move { state.handle(request).await }
        };
        let served = self.listener.serve_until(handle, shutdown, drain).await;
        pruner.abort();
        Ok(served?)
    }
}
