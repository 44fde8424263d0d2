//! The host-managed HTTP client and the network scope it enforces.
//!
//! The host sets the running tool's [`NetworkScope`] in a task-local around
//! every call. A toolset's [`HttpClient`] reads it when a request is sent:
//! `None` refuses before anything is built, `Local` sends only to loopback
//! and `localhost` targets through a client whose DNS resolver refuses any
//! non-loopback address and whose redirect policy refuses non-local hops,
//! `Internet` sends anything. Refusals happen before a connection is made.
//!
//! The scope is read when a request is sent, not when it is built, so a
//! request built earlier (in a factory, say) is checked against the tool
//! that sends it. It lives in a task-local: outside a tool call, and in a
//! task a tool spawns (`tokio::spawn` does not carry task-locals), a
//! toolset's client acts as `None` and refuses everything.
//!
//! # What this does not stop
//!
//! The scope guards the client the host hands out; it is not a sandbox. A
//! tool is not stopped when it:
//!
//! - opens sockets or resolves names itself (`std::net::TcpStream`,
//!   `tokio::net`, its own `reqwest::Client` or another HTTP library);
//! - starts a process (`curl`, a helper program): the spawn policy decides
//!   a child's environment, not its network;
//! - calls [`HttpClient::with_fixed_scope`] on its client, which replaces
//!   the running tool's scope by a fixed one; providers use it to be
//!   unscoped, and nothing keeps a tool from doing the same;
//! - reaches the network through something unscoped the host gave it: a
//!   provider, or the host's own client ([`crate::PluginHost::http_client`]);
//! - is `Internet`: that means anything, including services on loopback
//!   and on private networks;
//! - is `Local` and talks to a loopback service that itself forwards
//!   requests elsewhere (a proxy, a tunnel).
//!
//! `Local` also trusts the system resolver to answer for `localhost` and
//! `*.localhost`; every answer is checked, so a name that resolves to
//! another machine is refused, never connected to.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect;
use serde::Serialize;

use crate::locality::{is_local_endpoint, is_loopback_ip};
use crate::tool::NetworkScope;

tokio::task_local! {
    static TOOL_SCOPE: NetworkScope;
}

/// Runs `fut` as a tool with network scope `scope`.
pub(crate) async fn scoped<F: Future>(scope: NetworkScope, fut: F) -> F::Output {
    TOOL_SCOPE.scope(scope, fut).await
}

/// Runs `f` as a tool with network scope `scope`.
pub(crate) fn scoped_sync<R>(scope: NetworkScope, f: impl FnOnce() -> R) -> R {
    TOOL_SCOPE.sync_scope(scope, f)
}

/// The network scope of the tool running on this task, if any.
#[inline]
pub fn current_network_scope() -> Option<NetworkScope> {
    TOOL_SCOPE.try_with(|s| *s).ok()
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The running tool's network scope does not allow this target.
    #[error("network scope `{scope}` does not allow a request to {target}")]
    ScopeDenied {
        /// The scope in force.
        scope: NetworkScope,
        /// The refused URL or address.
        target: String,
    },
    /// The client could not be built (TLS set-up failed).
    #[error("the HTTP client is unavailable: {0}")]
    Unavailable(String),
    /// The request itself failed.
    #[error("HTTP request failed: {0}")]
    Request(#[source] reqwest::Error),
}

impl From<reqwest::Error> for HttpError {
    fn from(err: reqwest::Error) -> Self {
        // A refusal from the resolver or redirect policy comes back wrapped.
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        while let Some(e) = source {
            if let Some(denied) = e.downcast_ref::<ScopeRefusal>() {
                return Self::ScopeDenied {
                    scope: NetworkScope::Local,
                    target: denied.0.clone(),
                };
            }
            source = e.source();
        }
        Self::Request(err)
    }
}

#[derive(Debug)]
struct ScopeRefusal(String);

impl fmt::Display for ScopeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "network scope `local` does not allow {}", self.0)
    }
}

impl std::error::Error for ScopeRefusal {}

/// Resolves names and refuses any answer that is not loopback.
#[derive(Debug)]
struct LoopbackOnly;

impl Resolve for LoopbackOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(bad) = addrs.iter().find(|a| !is_loopback_ip(a.ip())) {
                return Err(
                    Box::new(ScopeRefusal(format!("{host} (resolves to {})", bad.ip())))
                        as Box<dyn std::error::Error + Send + Sync>,
                );
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

struct Clients {
    local: reqwest::Client,
    internet: reqwest::Client,
}

fn build_clients() -> Result<Clients, String> {
    let local = reqwest::Client::builder()
        .no_proxy()
        .dns_resolver(Arc::new(LoopbackOnly))
        .redirect(redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= 10 {
                attempt.error("too many redirects")
            } else if is_local_endpoint(attempt.url().as_str()) {
                attempt.follow()
            } else {
                let target = attempt.url().to_string();
                attempt.error(ScopeRefusal(target))
            }
        }))
        .build()
        .map_err(|e| e.to_string())?;
    let internet = reqwest::Client::builder()
        .build()
        .map_err(|e| e.to_string())?;
    Ok(Clients { local, internet })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Follows the running tool's scope; `None` outside a tool call.
    Tool,
    /// Always this scope.
    Fixed(NetworkScope),
}

/// A cheap-to-clone HTTP client managed by the host. Toolsets keep clones;
/// they never need to shut it down.
#[derive(Clone)]
pub struct HttpClient {
    clients: Arc<Result<Clients, String>>,
    mode: Mode,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A new set of connection pools whose clients follow the running
    /// tool's scope.
    pub fn new() -> Self {
        Self {
            clients: Arc::new(build_clients()),
            mode: Mode::Tool,
        }
    }

    /// The process-wide default pools, following the running tool's scope.
    pub fn shared_default() -> Self {
        static SHARED: OnceLock<Arc<Result<Clients, String>>> = OnceLock::new();
        Self {
            clients: SHARED.get_or_init(|| Arc::new(build_clients())).clone(),
            mode: Mode::Tool,
        }
    }

    /// The same pools, always with `scope`, whatever is running.
    pub fn with_fixed_scope(&self, scope: NetworkScope) -> Self {
        Self {
            clients: self.clients.clone(),
            mode: Mode::Fixed(scope),
        }
    }

    /// The scope a request sent now would be checked against.
    pub fn effective_scope(&self) -> NetworkScope {
        match self.mode {
            Mode::Fixed(scope) => scope,
            Mode::Tool => current_network_scope().unwrap_or(NetworkScope::None),
        }
    }

    /// Starts a `GET` request.
    pub fn get(&self, url: &str) -> HttpRequestBuilder {
        self.request(reqwest::Method::GET, url)
    }

    /// Starts a `POST` request.
    pub fn post(&self, url: &str) -> HttpRequestBuilder {
        self.request(reqwest::Method::POST, url)
    }

    /// Starts a request. The scope is read, and checked, when it is sent.
    pub fn request(&self, method: reqwest::Method, url: &str) -> HttpRequestBuilder {
        let inner = match &*self.clients {
            Err(e) => Err(HttpError::Unavailable(e.clone())),
            Ok(c) => Ok(c.internet.request(method, url)),
        };
        HttpRequestBuilder {
            inner,
            client: self.clone(),
        }
    }

    /// Sends a built request under the scope in force now.
    async fn execute(&self, request: reqwest::Request) -> Result<reqwest::Response, HttpError> {
        let clients = match &*self.clients {
            Err(e) => return Err(HttpError::Unavailable(e.clone())),
            Ok(c) => c,
        };
        let scope = self.effective_scope();
        let denied = || HttpError::ScopeDenied {
            scope,
            target: request.url().to_string(),
        };
        let client = match scope {
            NetworkScope::None => return Err(denied()),
            NetworkScope::Local if !is_local_endpoint(request.url().as_str()) => {
                return Err(denied());
            }
            NetworkScope::Local => &clients.local,
            NetworkScope::Internet => &clients.internet,
        };
        Ok(client.execute(request).await?)
    }
}

impl Default for HttpClient {
    fn default() -> Self {
        Self::shared_default()
    }
}

/// A request being built; a refusal is carried to [`send`](Self::send).
#[must_use = "a request does nothing until it is sent"]
pub struct HttpRequestBuilder {
    inner: Result<reqwest::RequestBuilder, HttpError>,
    client: HttpClient,
}

impl fmt::Debug for HttpRequestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequestBuilder").finish_non_exhaustive()
    }
}

impl HttpRequestBuilder {
    fn map(self, f: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder) -> Self {
        Self {
            inner: self.inner.map(f),
            client: self.client,
        }
    }

    /// Adds a header.
    pub fn header(self, name: &str, value: &str) -> Self {
        self.map(|b| b.header(name, value))
    }

    /// Sets a bearer token.
    pub fn bearer_auth(self, token: &str) -> Self {
        self.map(|b| b.bearer_auth(token))
    }

    /// Adds query parameters.
    pub fn query<T: Serialize + ?Sized>(self, query: &T) -> Self {
        self.map(|b| b.query(query))
    }

    /// Sets a JSON body.
    pub fn json<T: Serialize + ?Sized>(self, body: &T) -> Self {
        self.map(|b| b.json(body))
    }

    /// Sets a raw body.
    pub fn body(self, body: impl Into<reqwest::Body>) -> Self {
        self.map(|b| b.body(body))
    }

    /// Sets a timeout for the whole request.
    pub fn timeout(self, timeout: Duration) -> Self {
        self.map(|b| b.timeout(timeout))
    }

    /// Any other `reqwest` setting.
    pub fn with(self, f: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder) -> Self {
        self.map(f)
    }

    /// Sends the request, or fails before connecting if the scope forbids it.
    pub async fn send(self) -> Result<reqwest::Response, HttpError> {
        let request = self.inner?.build()?;
        self.client.execute(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn outside_a_tool_the_toolset_client_refuses() {
        let client = HttpClient::new();
        assert_eq!(client.effective_scope(), NetworkScope::None);
        let err = client.get("http://127.0.0.1:9/").send().await.unwrap_err();
        assert!(matches!(err, HttpError::ScopeDenied { .. }), "{err}");
    }

    #[tokio::test]
    async fn local_scope_refuses_remote_literals_before_connecting() {
        let client = HttpClient::new();
        let err = scoped(NetworkScope::Local, client.get("http://10.0.0.5/").send())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                HttpError::ScopeDenied {
                    scope: NetworkScope::Local,
                    ..
                }
            ),
            "{err}"
        );
    }

    /// A refusal from the resolver travels through hyper's connector errors;
    /// it must still come out as a scope error, not a generic request error.
    #[tokio::test]
    async fn resolver_refusals_map_to_scope_denied() {
        #[derive(Debug)]
        struct Refuse;
        impl Resolve for Refuse {
            fn resolve(&self, name: Name) -> Resolving {
                let host = name.as_str().to_owned();
                Box::pin(async move {
                    Err(Box::new(ScopeRefusal(host)) as Box<dyn std::error::Error + Send + Sync>)
                })
            }
        }
        let client = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(Refuse))
            .build()
            .unwrap();
        let err = client
            .get("http://refused.localhost/")
            .send()
            .await
            .unwrap_err();
        let err = HttpError::from(err);
        assert!(
            matches!(
                &err,
                HttpError::ScopeDenied { scope: NetworkScope::Local, target }
                    if target == "refused.localhost"
            ),
            "{err:?}"
        );
    }
}
