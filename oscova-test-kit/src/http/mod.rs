//! A real HTTP/1.1 server for tests, written on tokio's `TcpListener`.
//!
//! Rules it keeps:
//! - It binds 127.0.0.1 with a port the system picks, and nothing else,
//!   except inside a network namespace of the test's own
//!   (`oscova-test-support`'s `netns`), where [`TestServer::start_on`] binds the address
//!   the test gave that namespace's loopback device.
//! - It stops by itself: it accepts at most [`MAX_CONNECTIONS`]
//!   connections, none after [`LIFETIME`], and none once the last handle to
//!   it is dropped. A reply that waits for the client waits at most
//!   [`LIFETIME`] too.
//! - Every request is recorded before the handler's reply is written, so a
//!   test that got its answer can look at what it sent.
//! - A client that breaks HTTP/1.1 (see [`Request`]) is not guessed at: the
//!   connection is given up and the mistake is reported by
//!   [`TestServer::requests`].
//! - Connections are kept alive between requests unless the reply says to
//!   close; each accepted connection is counted, so a test can tell that a
//!   refused call never connected.

mod pieces;
mod reply;
mod request;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::AbortHandle;
use tokio::time::{Instant, timeout, timeout_at};

pub use pieces::awkward;
pub use reply::{Framing, Reply};
pub use request::Request;

use request::Read;

/// How many connections one server accepts at most.
pub const MAX_CONNECTIONS: usize = 256;

/// How long after its start a server still accepts connections, and how
/// long a reply waits for a client at most.
pub const LIFETIME: Duration = Duration::from_secs(120);

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

struct State {
    handler: Box<Handler>,
    connections: AtomicUsize,
    requests: Mutex<Vec<Request>>,
    mistakes: Mutex<Vec<String>>,
    dropped: AtomicUsize,
    dropped_notify: Notify,
}

/// Stops the accept loop when the last [`TestServer`] handle goes.
struct StopOnDrop(AbortHandle);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A running server: it answers each request with what the handler returns
/// for it. Clones share the server; it stops accepting when the last one is
/// dropped, or when the test's runtime ends.
///
/// ```
/// use oscova_test_kit::http::{Reply, TestServer};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = TestServer::start(|_| Reply::new(204)).await;
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// assert_eq!(server.connections(), 0);
/// # });
/// ```
#[derive(Clone)]
pub struct TestServer {
    /// Where it listens: 127.0.0.1 (unless started elsewhere) and an
    /// ephemeral port.
    pub addr: SocketAddr,
    state: Arc<State>,
    _stop: Arc<StopOnDrop>,
}

impl TestServer {
    /// Binds 127.0.0.1 on a free port and starts answering with `handler`.
    ///
    /// ```
    /// use oscova_test_kit::http::{Reply, TestServer};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = TestServer::start(|request| {
    ///     Reply::json(200, json!({"you_asked_for": request.path}))
    /// })
    /// .await;
    /// # let _ = server;
    /// # });
    /// ```
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_on(IpAddr::from([127, 0, 0, 1]), handler).await
    }

    /// Binds `ip` on a free port and starts answering with `handler`. For
    /// an address other than loopback, call it only inside
    /// `netns::run` of the workspace's test support, where the address exists on
    /// nothing but the namespace's own loopback device.
    pub async fn start_on(
        ip: IpAddr,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0))
            .await
            .unwrap_or_else(|e| panic!("bind {ip}: {e}"));
        let addr = listener.local_addr().expect("the listener's address");
        let state = Arc::new(State {
            handler: Box::new(handler),
            connections: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            mistakes: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
            dropped_notify: Notify::new(),
        });
        let accept_state = state.clone();
        let accept = tokio::spawn(async move {
            let deadline = Instant::now() + LIFETIME;
            for _ in 0..MAX_CONNECTIONS {
                let Ok(Ok((stream, _))) = timeout_at(deadline, listener.accept()).await else {
                    break;
                };
                accept_state.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, accept_state.clone()));
            }
        });
        Self {
            addr,
            state,
            _stop: Arc::new(StopOnDrop(accept.abort_handle())),
        }
    }

    /// `http://127.0.0.1:{port}` (or the address it was started on),
    /// without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://{host}:{port}`: the same server named another way, such as
    /// `localhost` or the shorthand `127.1`, for tests of how an address is
    /// judged rather than where it leads.
    ///
    /// ```
    /// # use oscova_test_kit::http::{Reply, TestServer};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let server = TestServer::start(|_| Reply::new(204)).await;
    /// assert_eq!(server.url_via("127.1"), format!("http://127.1:{}", server.port()));
    /// # });
    /// ```
    pub fn url_via(&self, host: &str) -> String {
        format!("http://{host}:{}", self.addr.port())
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// How many connections it has accepted so far.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Every request read so far, in order.
    ///
    /// # Panics
    ///
    /// If a client broke HTTP/1.1 on any connection, naming each mistake.
    pub fn requests(&self) -> Vec<Request> {
        let mistakes = lock(&self.state.mistakes).clone();
        assert!(
            mistakes.is_empty(),
            "a client broke HTTP/1.1: {mistakes:#?}"
        );
        lock(&self.state.requests).clone()
    }

    /// The one request read so far.
    ///
    /// # Panics
    ///
    /// If there was none or more than one, or as [`TestServer::requests`].
    pub fn only_request(&self) -> Request {
        let mut requests = self.requests();
        assert_eq!(
            requests.len(),
            1,
            "expected exactly one request: {requests:#?}"
        );
        requests.remove(0)
    }

    /// Waits until a client dropped a connection that the server was still
    /// answering (a delayed, silent or hanging reply); false after
    /// `timeout`.
    pub async fn wait_dropped(&self, timeout: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.state.dropped_notify.notified();
                if self.state.dropped.load(Ordering::SeqCst) > 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

/// `http://127.0.0.1:{port}` for a port where nothing listens (it was
/// bound a moment ago and let go).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let url = oscova_test_kit::http::closed_port_url().await;
/// assert!(url.starts_with("http://127.0.0.1:"));
/// # });
/// ```
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the listener's address");
    drop(listener);
    format!("http://{addr}")
}

/// A poisoned lock only means another test thread panicked; the data is
/// still what was recorded.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    stream.set_nodelay(true).ok();
    let mut buf = Vec::new();
    loop {
        let request = match request::read(&mut stream, &mut buf).await {
            Read::Request(request) => request,
            Read::Closed => return,
            Read::Broken(mistake) => {
                lock(&state.mistakes).push(mistake);
                return;
            }
        };
        lock(&state.requests).push(request.clone());
        let reply = (state.handler)(&request);
        if !reply.delay().is_zero() || reply.is_silent() {
            let wait = if reply.is_silent() {
                LIFETIME
            } else {
                reply.delay()
            };
            if let Ok(()) = timeout(wait, until_closed(&mut stream, &mut buf)).await {
                dropped(&state);
                return;
            }
            if reply.is_silent() {
                return;
            }
        }
        let written = reply::write(&mut stream, &reply).await;
        if reply.is_hanging() {
            // The body never ends; wait for the client to give up on it. A
            // write that failed means it already did.
            if written.is_ok()
                && timeout(LIFETIME, until_closed(&mut stream, &mut buf))
                    .await
                    .is_err()
            {
                return;
            }
            dropped(&state);
            return;
        }
        if written.is_err() {
            return;
        }
        if reply.closes() {
            stream.shutdown().await.ok();
            return;
        }
    }
}

/// Reads until the client closes the connection, keeping what it sent.
async fn until_closed(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    let mut scratch = [0u8; 1024];
    loop {
        match stream.read(&mut scratch).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&scratch[..n]),
        }
    }
}

fn dropped(state: &State) {
    state.dropped.fetch_add(1, Ordering::SeqCst);
    state.dropped_notify.notify_waiters();
}
