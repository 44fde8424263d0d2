//! Binding a listener, serving HTTP/1.1 connections on it, and graceful
//! shutdown.
//!
//! Rules: connections are HTTP/1.1 through `hyper`, with `TCP_NODELAY` and
//! 30 seconds to send a request's headers; every request goes to the front
//! end's handler. An accept error that concerns one connection or a passing
//! shortage of file descriptors is logged and retried after 50 ms; any
//! other ends serving with [`ServeError::Accept`]. Shutdown, once the
//! future given to [`Listener::serve_until`] completes: the listener
//! closes at once; open connections stay up while the responses being
//! sent ([`Responses`]) get [`Shutdown::grace`] to finish (calls past the
//! [`CallBound`] are refused meanwhile: a running call may still need its
//! client's answer, which comes on those connections); then the
//! [cancellation token](Shutdown::new) is cancelled, which ends everything
//! the front end still runs, and connections get two more seconds to
//! close after their current response.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::limits::{CallBound, Responses};

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

/// What graceful shutdown waits for and what it cancels.
#[derive(Debug, Clone)]
pub struct Shutdown {
    cancel: CancellationToken,
    grace: Duration,
    responses: Arc<Responses>,
    calls: Option<CallBound>,
}

impl Shutdown {
    /// Shutdown that waits `grace` for `responses`, then cancels `cancel`.
    pub fn new(cancel: CancellationToken, grace: Duration, responses: Arc<Responses>) -> Self {
        Self {
            cancel,
            grace,
            responses,
            calls: None,
        }
    }

    /// Refuses new calls under `calls` while the grace runs.
    pub fn calls(mut self, calls: CallBound) -> Self {
        self.calls = Some(calls);
        self
    }

    /// How long responses being sent get to finish.
    pub fn grace(&self) -> Duration {
        self.grace
    }
}

/// A bound TCP listener, ready to serve.
#[derive(Debug)]
pub struct Listener {
    listener: TcpListener,
    addr: SocketAddr,
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
        Ok(Self { listener, addr })
    }

    /// The address bound (with the port picked, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves every connection with `handle` until `until` completes, then
    /// shuts down as `shutdown` says: the listener closes at once; open
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
        F: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Response<B>> + Send + 'static,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let graceful = GracefulShutdown::new();
        tokio::pin!(until);
        let mut failure = None;
        loop {
            tokio::select! {
                () = &mut until => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let handle = handle.clone();
                        let service = hyper::service::service_fn(move |request| {
                            let response = handle(request);
                            async move { Ok::<_, Infallible>(response.await) }
                        });
                        let conn = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(HEADER_READ_TIMEOUT)
                            .serve_connection(TokioIo::new(stream), service);
                        let conn = graceful.watch(conn);
                        tokio::spawn(async move {
                            if let Err(error) = conn.await {
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
        // Connections close after their current response, which now ends.
        let _ = tokio::time::timeout(CLOSE_DEADLINE, async {
            shutdown.responses.none().await;
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
