//! The listener, the checks in front of `rmcp`, and shutdown.
//!
//! Rules: connections are HTTP/1.1 through `hyper`; every request goes
//! through [`Shared::handle`] (path, token, session owner) and then to
//! `rmcp`'s `StreamableHttpService`, which does the protocol, the Origin
//! and Host checks and the body cap. The user's scope (with its tools as
//! listed, converted once per cached scope) reaches the session
//! factory `rmcp` calls through a task-local value set around that call:
//! `rmcp` builds a session's handler (or a stateless request's) inside the
//! request's own task, so no handler can get another request's user.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::auth::TokenTable;
use super::scopes::ScopeCache;
use super::{MCP_PATH, McpHttpError, McpHttpServer};
use crate::mcp::McpHandler;
use crate::mcp::handler::Served;
use crate::mcp::names::ShortNames;
use crate::mcp::rounds::ParkedCalls;

type Body = BoxBody<Bytes, Infallible>;

tokio::task_local! {
    /// The user (scope and tools) of the request `rmcp` is handling in
    /// this task.
    static CURRENT: Served;
}

const SESSION_HEADER: &str = "mcp-session-id";
/// How long connections get to close once everything was cancelled.
const CLOSE_DEADLINE: Duration = Duration::from_secs(2);

/// A server bound to its address, ready to serve.
pub struct BoundMcpServer {
    listener: TcpListener,
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    grace: Duration,
    idle: Duration,
}

impl std::fmt::Debug for BoundMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundMcpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

struct Shared {
    rmcp: StreamableHttpService<McpHandler, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    tokens: TokenTable,
    default_user: String,
    scopes: ScopeCache,
    /// Session id to the user who opened it.
    owners: Mutex<HashMap<String, String>>,
    /// The server-wide bound on calls in flight, and its size.
    calls: Arc<Semaphore>,
    max_calls: usize,
    /// POST responses not yet sent in full.
    posts: Arc<InFlight>,
}

/// A count of responses being sent, and a way to wait for none.
#[derive(Default)]
struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// One response being sent; dropped with the response body.
struct Sending(Arc<InFlight>);

impl InFlight {
    fn start(self: &Arc<Self>) -> Sending {
        self.count.fetch_add(1, Ordering::SeqCst);
        Sending(self.clone())
    }

    async fn none(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

pub(super) async fn bind(
    server: McpHttpServer,
    addr: SocketAddr,
) -> Result<BoundMcpServer, McpHttpError> {
    let names = match server.names {
        super::ToolNames::Short => Some(ShortNames::build(server.host.tools())?),
        _ => None,
    };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| McpHttpError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| McpHttpError::Bind { addr, source })?;
    let cancel = CancellationToken::new();
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
        .collect();
    origins.extend(server.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.clone())
        .with_max_request_body_bytes(server.max_body_bytes)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Behind a load balancer the Host is the public name; DNS
        // rebinding is a threat to servers on this machine's loopback.
        config = config.disable_allowed_hosts();
    }
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(server.idle_timeout);
    let sessions = Arc::new(manager);
    let calls = Arc::new(Semaphore::new(server.max_in_flight_total));
    let parked = Arc::new(ParkedCalls::default());
    let factory = {
        let calls = calls.clone();
        let max_calls = server.max_in_flight_total;
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
                    .with_global_bound(calls.clone(), max_calls),
            )
        }
    };
    let rmcp = StreamableHttpService::new(factory, sessions.clone(), config);
    let shared = Arc::new(Shared {
        rmcp,
        sessions,
        tokens: TokenTable::new(server.tokens),
        default_user: server.default_user,
        scopes: ScopeCache::new(server.host, server.users, server.scope_cache, names),
        owners: Mutex::new(HashMap::new()),
        calls,
        max_calls: server.max_in_flight_total,
        posts: Arc::default(),
    });
    Ok(BoundMcpServer {
        listener,
        addr,
        shared,
        cancel,
        grace: server.shutdown_grace,
        idle: server.idle_timeout,
    })
}

fn text_response(status: StatusCode, text: &'static str) -> Response<SentBody> {
    let body = Full::new(Bytes::from_static(text.as_bytes())).boxed();
    let mut response = Response::new(SentBody {
        inner: body,
        _sending: None,
    });
    *response.status_mut() = status;
    response
}

/// A response body that, for a POST, counts as being sent until hyper
/// drops it, sent in full or abandoned (shutdown waits for these). Wrapping `rmcp`'s body in place
/// of boxing it once more saves an allocation and a dynamic call a frame.
struct SentBody {
    inner: Body,
    _sending: Option<Sending>,
}

impl hyper::body::Body for SentBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

impl Shared {
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
        let scope = self.scopes.scope(user);
        let response = CURRENT.scope(scope, self.rmcp.handle(request)).await;
        let response = response.map(|inner| SentBody {
            inner,
            _sending: sending,
        });
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
        self.addr
    }

    /// Serves until `shutdown` completes, then shuts down gracefully (see
    /// the [module docs](super)).
    pub async fn serve_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), McpHttpError> {
        let graceful = GracefulShutdown::new();
        let shared = self.shared.clone();
        let pruner = {
            let shared = shared.clone();
            let every = (self.idle / 2).clamp(Duration::from_secs(1), Duration::from_secs(60));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                loop {
                    tick.tick().await;
                    shared.prune_owners().await;
                }
            })
        };
        tokio::pin!(shutdown);
        let mut failure = None;
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let shared = shared.clone();
                        let service = hyper::service::service_fn(move |request| {
                            let shared = shared.clone();
                            async move { Ok::<_, Infallible>(shared.handle(request).await) }
                        });
                        let conn = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(Duration::from_secs(30))
                            .serve_connection(TokioIo::new(stream), service);
                        let conn = graceful.watch(conn);
                        tokio::spawn(async move {
                            if let Err(error) = conn.await {
                                tracing::debug!(%error, "MCP connection ended with an error");
                            }
                        });
                    }
                    Err(error) if is_transient(&error) => {
                        tracing::warn!(%error, "accepting an MCP connection failed; retrying");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(error) => {
                        failure = Some(McpHttpError::Accept(error));
                        break;
                    }
                }
            }
        }
        drop(self.listener);
        pruner.abort();
        // From now on every permit that comes back is kept, so new calls
        // are refused while running ones finish; open connections stay up
        // meanwhile (a running call may still need its client's answer).
        let max = u32::try_from(shared.max_calls).unwrap_or(u32::MAX);
        let hoard = tokio::spawn({
            let calls = shared.calls.clone();
            async move { calls.acquire_many_owned(max).await.ok() }
        });
        // Every POST answered in full means every call's answer was sent.
        let drained = tokio::time::timeout(self.grace, shared.posts.none()).await;
        if drained.is_err() {
            tracing::warn!(
                grace = ?self.grace,
                "MCP calls still running after the shutdown grace; cancelling them"
            );
        }
        self.cancel.cancel();
        hoard.abort();
        // Connections close after their current response, which now ends.
        let _ = tokio::time::timeout(CLOSE_DEADLINE, async {
            shared.posts.none().await;
            graceful.shutdown().await;
        })
        .await;
        failure.map_or(Ok(()), Err)
    }
}

/// Accept errors that concern one connection or a passing shortage, not
/// the listener.
fn is_transient(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock | TimedOut
    ) || error
        .raw_os_error()
        .is_some_and(|code| code == 23 || code == 24) // ENFILE, EMFILE
}
