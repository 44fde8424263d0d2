//! Binding a listener, serving HTTP/1.1 connections on it, and graceful
//! shutdown.
//!
//! Rules: connections are HTTP/1.1 through `hyper`, with `TCP_NODELAY` and
//! 30 seconds to send a request's headers (an idle kept-alive connection
//! waits for its next request's headers, so it closes after 30 idle
//! seconds too); every request meets the port's [`OriginPolicy`] first
//! (see `origin.rs`; a refusal is 403 with `Connection: close`, answered
//! here, never seen by the handler), then goes to the front end's
//! handler, so no front end and no route added later can forget it. A body
//! must arrive in full within [`Limits::body_timeout`] of its headers
//! (30 seconds by default): past it, reading it fails with
//! [`BodyError::Timeout`], the answer is 408 whatever the handler made of
//! the failure, and the connection closes, so a client that trickles a
//! body holds a connection for that long at most. At most
//! [`Limits::max_connections`] connections are open at once
//! (1024 by default); past it, new ones wait in the kernel's
//! listen queue, not accepted, until one closes (a warning is logged
//! once each time the bound is reached). A slot is taken before anything
//! is known of the client, so at most
//! [`Limits::max_connections_per_peer`] of them are open from one IP
//! address (256 by default); a connection past it
//! is closed as soon as it is accepted (one warning, until that address
//! has no connection open again), so one address that opens connections and sends nothing,
//! or trickles headers, holds that many slots at most. The front end
//! should answer what it refuses before it knows a user with
//! `Connection: close` too, so that such clients keep no slot past the
//! answer. An accept error that concerns one connection or a passing
//! shortage of file descriptors is logged and retried after 50 ms; any
//! other ends serving with [`ServeError::Accept`]. Shutdown, once the
//! future given to [`Listener::serve_until`] completes: the listener
//! closes at once; open connections stay up while the responses being
//! sent ([`Responses`](crate::shutdown::Responses)) get [`Shutdown::grace`] to finish (calls past the
//! [`CallBound`] are refused meanwhile: a running call may still need its
//! client's answer, which comes on those connections); then the
//! [cancellation token](Shutdown::new) is cancelled, which ends everything
//! the front end still runs, and connections get two more seconds to
//! close after their current response. A response may upgrade its
//! connection (a WebSocket, [`crate::websocket`]): from the 101 on the
//! connection is the front end's, no longer counted here nor closed at
//! shutdown, so the front end bounds and ends it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{Either, Full};
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use crate::limits::{CallBound, LimitError, Limits};
use crate::origin::{OriginPolicy, OriginRefusal};
use crate::shutdown::Shutdown;

/// How long connections get to close once everything was cancelled.
const CLOSE_DEADLINE: Duration = Duration::from_secs(2);
/// How long a connection gets to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a listener did not bind or stopped accepting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
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
    #[error("accepting connections failed: {0}")]
    Accept(#[source] std::io::Error),
}

/// A bound TCP listener, ready to serve.
#[derive(Debug)]
pub struct Listener {
    listener: TcpListener,
    addr: SocketAddr,
    limits: Limits,
    policy: OriginPolicy,
}

/// Connections open per peer address, and whether a warning about its
/// bound was logged since it last had none open (one warning per
/// episode, however many connections it keeps trying).
#[derive(Debug, Default)]
struct Peers(std::sync::Mutex<HashMap<IpAddr, (usize, bool)>>);

impl Peers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (usize, bool)>> {
        // Every change under the lock is one count changed.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one more connection of `peer`, or None when it has `max`.
    fn admit(self: &Arc<Self>, peer: IpAddr, max: usize) -> Option<PeerSlot> {
        let mut peers = self.lock();
        let (open, warned) = peers.entry(peer).or_default();
        if *open >= max {
            if !*warned {
                *warned = true;
                tracing::warn!(%peer, max, "connection bound per address reached; closing its new connections");
            }
            return None;
        }
        *open += 1;
        Some(PeerSlot {
            peers: self.clone(),
            peer,
        })
    }
}

/// One connection counted against its peer, until dropped.
struct PeerSlot {
    peers: Arc<Peers>,
    peer: IpAddr,
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut peers = self.peers.lock();
        if let Some((open, _)) = peers.get_mut(&self.peer) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                peers.remove(&self.peer);
            }
        }
    }
}

/// Why a request's body could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body did not arrive in full within the listener's body timeout.
    #[error("the request body did not arrive in full within {0:?}")]
    Timeout(Duration),
    /// The connection failed while the body was read.
    #[error(transparent)]
    Read(hyper::Error),
}

/// A request's body, which fails with [`BodyError::Timeout`] once the
/// listener's [body timeout](Limits::body_timeout) has passed since the
/// request's headers arrived. The timer is set only when the body is not
/// all there at the first read, as a small JSON body usually is.
#[derive(Debug)]
pub struct RequestBody {
    inner: Incoming,
    timeout: Duration,
    /// None when the deadline is past any instant the clock can name.
    deadline: Option<Instant>,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Set when the deadline passed: the connection's, shared by its
    /// requests one after the other.
    timed_out: Arc<AtomicBool>,
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(BodyError::Read)));
        }
        let Some(deadline) = this.deadline else {
            return Poll::Pending;
        };
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(BodyError::Timeout(this.timeout))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Listener {
    /// Binds `addr` (port 0 picks a free one).
    pub async fn bind(addr: SocketAddr) -> Result<Self, ServeError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServeError::Bind { addr, source })?;
        Ok(Self {
            listener,
            addr,
            limits: Limits::default(),
            policy: OriginPolicy::new(addr, [""; 0]),
        })
    }

    /// Accepts these browser origins beside loopback ones, on every path
    /// of the port (see [`OriginPolicy::allow_origins`]).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.policy = self.policy.allow_origins(origins);
        self
    }

    /// Accepts these `Host` names beside loopback ones when bound to a
    /// loopback address (see [`OriginPolicy::allow_hosts`]).
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.policy = self.policy.allow_hosts(hosts);
        self
    }

    /// The Origin and Host policy every request meets before the handler:
    /// the bound address's ([`OriginPolicy::new`]) with what
    /// [`allow_origins`](Self::allow_origins) and
    /// [`allow_hosts`](Self::allow_hosts) added.
    pub fn origin_policy(&self) -> &OriginPolicy {
        &self.policy
    }

    /// Sets the bounds on connections and on the time a body gets to
    /// arrive, once [checked](Limits::check); a listener has
    /// [`Limits::default`] until then.
    pub fn limits(mut self, limits: Limits) -> Result<Self, LimitError> {
        limits.check()?;
        self.limits = limits;
        Ok(self)
    }

    /// The address bound (with the port picked, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves every connection with `handle` until `until` completes, then
    /// shuts down as `shutdown` says. Every request meets the
    /// [origin policy](Self::origin_policy) before `handle`: a refused one
    /// is answered 403 here, its body the [`OriginRefusal`], its connection
    /// closed. At most
    /// [`Limits::max_connections`] connections at once,
    /// [`Limits::max_connections_per_peer`] from one address, each body
    /// within [`Limits::body_timeout`] or 408 (see [`limits`](Self::limits)). At shutdown: the
    /// listener closes at once; open
    /// connections stay up while the responses being sent get
    /// [`Shutdown::grace`] to finish (calls past the [`CallBound`], when
    /// given, are refused meanwhile); then the cancellation token is
    /// cancelled, and connections get two more seconds to close after
    /// their current response. Accept errors that concern one connection
    /// (or a passing shortage of file descriptors) are retried; any other
    /// ends serving with [`ServeError::Accept`], after the same shutdown.
    pub async fn serve_until<F, Fut, B>(
        self,
        handle: F,
        until: impl Future<Output = ()> + Send,
        shutdown: Shutdown,
    ) -> Result<(), ServeError>
    where
        F: Fn(Request<RequestBody>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Response<B>> + Send + 'static,
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Told to every connection at shutdown: finish the current
        // response, then close (hyper's graceful shutdown, by hand, since
        // hyper-util's watcher does not take a connection that may be
        // upgraded to a WebSocket).
        let closing = CancellationToken::new();
        let policy = Arc::new(self.policy);
        let connections = Arc::new(Semaphore::new(self.limits.max_connections));
        let body_timeout = self.limits.body_timeout;
        let peers = Arc::new(Peers::default());
        tokio::pin!(until);
        let mut failure = None;
        let mut full = false;
        loop {
            // Said once each time the bound is reached, not per accept.
            let waiting = connections.available_permits() == 0;
            if waiting && !full {
                tracing::warn!(
                    max = self.limits.max_connections,
                    "connection bound reached; new connections wait until one closes"
                );
            }
            full = waiting;
            let slot = async {
                let permit = connections.clone().acquire_owned().await;
                (permit, self.listener.accept().await)
            };
            tokio::select! {
                () = &mut until => break,
                (permit, accepted) = slot => match accepted {
                    Ok((stream, peer)) => {
                        let Some(peer_slot) = peers.admit(peer.ip().to_canonical(), self.limits.max_connections_per_peer) else {
                            // Closed at once; its slot is free again.
                            drop((stream, permit));
                            continue;
                        };
                        let _ = stream.set_nodelay(true);
                        let handle = handle.clone();
                        let policy = policy.clone();
                        let timed_out = Arc::new(AtomicBool::new(false));
                        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                            timed_out.store(false, Ordering::Relaxed);
                            let checked = policy.check(request.uri(), request.headers());
                            if let Err(refusal) = checked {
                                let headers = request.headers();
                                tracing::warn!(
                                    %peer,
                                    host = ?headers.get(hyper::header::HOST),
                                    origin = ?headers.get(hyper::header::ORIGIN),
                                    ?refusal,
                                    "refused a request by its Host or Origin (DNS rebinding or a foreign page)"
                                );
                            }
                            let response = checked.map(|()| {
                                handle(request.map(|inner| RequestBody {
                                    inner,
                                    timeout: body_timeout,
                                    deadline: Instant::now().checked_add(body_timeout),
                                    sleep: None,
                                    timed_out: timed_out.clone(),
                                }))
                            });
                            let timed_out = timed_out.clone();
                            async move {
                                let mut response = match response {
                                    Ok(response) => response.await.map(Either::Left),
                                    Err(refusal) => return Ok(forbidden(refusal)),
                                };
                                if timed_out.load(Ordering::Relaxed) {
                                    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
                                    response.headers_mut().insert(
                                        hyper::header::CONNECTION,
                                        hyper::header::HeaderValue::from_static("close"),
                                    );
                                }
                                Ok::<_, Infallible>(response)
                            }
                        });
                        // Upgrades (WebSocket, `crate::websocket`) are
                        // allowed: the connection ends at the 101 and the
                        // upgraded stream is the front end's to bound.
                        let conn = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(HEADER_READ_TIMEOUT)
                            .serve_connection(TokioIo::new(stream), service)
                            .with_upgrades();
                        let closing = closing.clone();
                        tokio::spawn(async move {
                            // The connection's slot, given back when it ends.
                            let _permit = permit;
                            let _peer = peer_slot;
                            let mut conn = std::pin::pin!(conn);
                            let ended = tokio::select! {
                                ended = conn.as_mut() => ended,
                                () = closing.cancelled() => {
                                    conn.as_mut().graceful_shutdown();
                                    conn.await
                                }
                            };
                            if let Err(error) = ended {
                                tracing::debug!(%error, "connection ended with an error");
                            }
                        });
                    }
                    Err(error) if is_transient(&error) => {
                        tracing::warn!(%error, "accepting a connection failed; retrying");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(error) => {
                        failure = Some(ServeError::Accept(error));
                        break;
                    }
                }
            }
        }
        drop(self.listener);
        let hoard = shutdown.calls.as_ref().map(CallBound::hoard);
        let drained = tokio::time::timeout(shutdown.grace, shutdown.responses.none()).await;
        if drained.is_err() {
            tracing::warn!(
                grace = ?shutdown.grace,
                "calls still running after the shutdown grace; cancelling them"
            );
        }
        shutdown.cancel.cancel();
        if let Some(hoard) = hoard {
            hoard.abort();
        }
        // Connections close after their current response, which now ends;
        // every slot back means every connection closed.
        let all = u32::try_from(self.limits.max_connections).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(CLOSE_DEADLINE, async {
            shutdown.responses.none().await;
            closing.cancel();
            let _ = connections.acquire_many(all).await;
        })
        .await;
        failure.map_or(Ok(()), Err)
    }
}

/// The answer to a request the origin policy refused: 403, the reason,
/// the connection closed (no user is known yet, so the client keeps no
/// connection slot past it).
fn forbidden<B>(refusal: OriginRefusal) -> Response<Either<B, Full<Bytes>>> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(refusal.to_string()))));
    *response.status_mut() = StatusCode::FORBIDDEN;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
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

#[cfg(test)]
mod tests;
