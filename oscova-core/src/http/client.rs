//! The client itself (feature `http`): the error type, [`HttpClient`] and
//! its builders, over `reqwest` with the destination checks of `policy`.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::dns::Resolve;
use serde::Serialize;

use super::allow::{AllowList, Destination};
use super::current_network_scope;
use super::policy::Refusal;
use super::pools::{Lane, Pools};
use crate::locality::is_local_endpoint;
use crate::provider::model::EndpointScope;
use crate::tool::NetworkScope;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The running tool's network scope does not allow this destination;
    /// nothing was sent to it.
    #[error("network scope `{scope}` does not allow a request to {target}: {reason}")]
    ScopeDenied {
        /// The scope in force.
        scope: NetworkScope,
        /// The refused destination (`host:port`, or a name), without the
        /// URL's userinfo, path or query.
        target: String,
        /// Why it was refused.
        reason: String,
    },
    /// An internal destination given to
    /// [`HttpClientBuilder::allow_internal`] is not `host[:port]`.
    #[error("`{entry}` cannot be allowed as an internal destination: {reason}")]
    InvalidDestination {
        /// The entry as given.
        entry: String,
        /// What is wrong with it.
        reason: String,
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
            if let Some(refusal) = e.downcast_ref::<Refusal>() {
                return refusal.clone().into();
            }
            source = e.source();
        }
        Self::Request(err)
    }
}

impl From<Refusal> for HttpError {
    fn from(refusal: Refusal) -> Self {
        Self::ScopeDenied {
            scope: refusal.scope,
            target: refusal.target,
            reason: refusal.reason,
        }
    }
}

#[derive(Clone)]
enum Mode {
    /// Follows the running tool's scope; `None` outside a tool call.
    Tool,
    /// Always this scope.
    Fixed(NetworkScope),
    /// Anything: the host's and providers' own requests.
    Unrestricted,
    /// A provider's configured endpoint, under the `Local` rule.
    Endpoint(Arc<Lane>),
}

impl fmt::Debug for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool => f.write_str("Tool"),
            Self::Fixed(scope) => f.debug_tuple("Fixed").field(scope).finish(),
            Self::Unrestricted => f.write_str("Unrestricted"),
            Self::Endpoint(_) => f.write_str("Endpoint"),
        }
    }
}

/// A cheap-to-clone HTTP client managed by the host. Toolsets keep clones;
/// they never need to shut it down.
///
/// ```
/// use oscova_core::HttpClient;
///
/// // A host that lets its `Internet` tools reach two internal services.
/// let http = HttpClient::builder()
///     .allow_internal(["10.0.0.5:8080", "intranet.example"])
///     .build()?;
/// # let _ = http;
/// # Ok::<(), oscova_core::http::HttpError>(())
/// ```
#[derive(Clone)]
pub struct HttpClient {
    pools: Arc<Result<Pools, String>>,
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
    /// tool's scope, with no internal destination allowed.
    pub fn new() -> Self {
        Self::from_pools(Pools::build(AllowList::default(), None))
    }

    /// Settings for a new set of pools: internal destinations the
    /// `Internet` scope may reach, a resolver.
    pub fn builder() -> HttpClientBuilder {
        HttpClientBuilder::default()
    }

    /// The process-wide default pools, following the running tool's scope.
    pub fn shared_default() -> Self {
        static SHARED: OnceLock<Arc<Result<Pools, String>>> = OnceLock::new();
        Self {
            pools: SHARED
                .get_or_init(|| Arc::new(Pools::build(AllowList::default(), None)))
                .clone(),
            mode: Mode::Tool,
        }
    }

    fn from_pools(pools: Result<Pools, String>) -> Self {
        Self {
            pools: Arc::new(pools),
            mode: Mode::Tool,
        }
    }

    fn with_mode(&self, mode: Mode) -> Self {
        Self {
            pools: self.pools.clone(),
            mode,
        }
    }

    /// The same pools, always with `scope`, whatever is running.
    pub fn with_fixed_scope(&self, scope: NetworkScope) -> Self {
        self.with_mode(Mode::Fixed(scope))
    }

    /// The same pools with no destination check: what the host and
    /// providers use for the endpoints an operator configured, which may
    /// well be on a private network. Follows the environment's proxy
    /// settings, as `reqwest` does.
    pub fn unrestricted(&self) -> Self {
        self.with_mode(Mode::Unrestricted)
    }

    /// The client a provider uses for the endpoint an operator configured
    /// (`endpoint` as the provider will send to it, with a scheme), given
    /// the endpoint scope the operator saved, if any.
    ///
    /// - An endpoint that [`is_local_endpoint`] accepts is reached under
    ///   the `Local` rule: if its name resolves (or it redirects) to an
    ///   address that is not loopback, the request is refused before
    ///   connecting. An offline check that passed on the endpoint's text is
    ///   thereby also checked on its resolved addresses.
    /// - An endpoint saved as [`EndpointScope::Local`] whose text does not
    ///   name this machine (a LAN server) is the operator's explicit
    ///   choice, which wins: the `Local` rule plus exactly that endpoint's
    ///   host and port (a redirect elsewhere is still refused).
    /// - Any other endpoint is reached [`unrestricted`](Self::unrestricted).
    ///
    /// ```
    /// use oscova_core::HttpClient;
    /// use oscova_core::provider::model::EndpointScope;
    ///
    /// let http = HttpClient::shared_default();
    /// let ollama = http.for_endpoint("http://localhost:11434", None);
    /// let lan = http.for_endpoint("http://10.0.0.5:11434", Some(EndpointScope::Local));
    /// let cloud = http.for_endpoint("https://api.example.com", None);
    /// # let _ = (ollama, lan, cloud);
    /// ```
    pub fn for_endpoint(&self, endpoint: &str, saved: Option<EndpointScope>) -> Self {
        let Ok(pools) = &*self.pools else {
            return self.unrestricted();
        };
        if is_local_endpoint(endpoint) {
            return self.with_mode(Mode::Endpoint(pools.local.clone()));
        }
        if saved != Some(EndpointScope::Local) {
            return self.unrestricted();
        }
        let url = reqwest::Url::parse(endpoint)
            .ok()
            .filter(|u| u.has_host())
            .or_else(|| reqwest::Url::parse(&format!("http://{endpoint}")).ok());
        let lane = match url.as_ref().and_then(Destination::of_url) {
            Some(destination) => pools.saved_local(destination),
            // Nothing to allow: the loopback rule refuses it, clearly.
            None => pools.local.clone(),
        };
        self.with_mode(Mode::Endpoint(lane))
    }

    /// The scope a request sent now would be checked against. An
    /// unrestricted client reports `Internet`, the widest tool scope, though
    /// it also reaches internal destinations; a provider's endpoint client
    /// reports `Local`.
    pub fn effective_scope(&self) -> NetworkScope {
        match self.mode {
            Mode::Fixed(scope) => scope,
            Mode::Tool => current_network_scope().unwrap_or(NetworkScope::None),
            Mode::Unrestricted => NetworkScope::Internet,
            Mode::Endpoint(_) => NetworkScope::Local,
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
        let inner = match &*self.pools {
            Err(e) => Err(HttpError::Unavailable(e.clone())),
            Ok(p) => Ok(p.unrestricted.client.request(method, url)),
        };
        HttpRequestBuilder {
            inner,
            client: self.clone(),
        }
    }

    /// Sends a built request under the scope in force now.
    async fn execute(&self, request: reqwest::Request) -> Result<reqwest::Response, HttpError> {
        let pools = match &*self.pools {
            Err(e) => return Err(HttpError::Unavailable(e.clone())),
            Ok(p) => p,
        };
        let lane = match &self.mode {
            Mode::Unrestricted => &pools.unrestricted,
            Mode::Endpoint(lane) => lane,
            Mode::Tool | Mode::Fixed(_) => match self.effective_scope() {
                NetworkScope::None => {
                    return Err(HttpError::ScopeDenied {
                        scope: NetworkScope::None,
                        target: Destination::of_url(request.url())
                            .map_or_else(|| request.url().scheme().to_owned(), |d| d.to_string()),
                        reason: "the tool declares no network access".to_owned(),
                    });
                }
                NetworkScope::Local => &pools.local,
                NetworkScope::Internet => &pools.internet,
            },
        };
        if let Some(policy) = &lane.policy {
            policy.check_url(request.url())?;
        }
        Ok(lane.client.execute(request).await?)
    }
}

impl Default for HttpClient {
    fn default() -> Self {
        Self::shared_default()
    }
}

/// Settings for a new [`HttpClient`]'s pools.
#[derive(Default)]
#[must_use = "a builder does nothing until it is built"]
pub struct HttpClientBuilder {
    allow: Vec<String>,
    resolver: Option<Arc<dyn Resolve>>,
}

impl fmt::Debug for HttpClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClientBuilder")
            .field("allow", &self.allow)
            .field("resolver", &self.resolver.is_some())
            .finish()
    }
}

impl HttpClientBuilder {
    /// Lets `Internet` tools reach these internal destinations, each
    /// written `host[:port]`: a dotted-decimal IPv4 address, an IPv6
    /// address (in brackets when a port follows) or a DNS name. An entry
    /// matches a URL whose host is written that way (an address matches
    /// that address literal, a name that name, in any case), on its port,
    /// or on any port when it has none; a name's resolved addresses are then
    /// not checked. `Local` tools stay on loopback whatever is listed.
    /// Entries add up over calls.
    pub fn allow_internal<I, S>(mut self, destinations: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.allow
            .extend(destinations.into_iter().map(|d| d.as_ref().to_owned()));
        self
    }

    /// Resolves names with `resolver` instead of the system's; the
    /// answers are checked as the system's would be.
    pub fn dns_resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// The client, following the running tool's scope. Fails on an entry
    /// that is not `host[:port]`, or when TLS cannot be set up.
    pub fn build(self) -> Result<HttpClient, HttpError> {
        let entries = self
            .allow
            .iter()
            .map(|entry| {
                Destination::parse(entry).map_err(|reason| HttpError::InvalidDestination {
                    entry: entry.clone(),
                    reason,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pools =
            Pools::build(AllowList::new(entries), self.resolver).map_err(HttpError::Unavailable)?;
        Ok(HttpClient::from_pools(Ok(pools)))
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
    //! Unit tests of the client: scopes, refusal mapping, endpoint clients.

    use super::*;
    use crate::http::scoped;

    use reqwest::dns::{Name, Resolving};

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
                let target = name.as_str().to_owned();
                Box::pin(async move {
                    let refusal = Refusal {
                        scope: NetworkScope::Internet,
                        target,
                        reason: "test".into(),
                    };
                    Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>)
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
                HttpError::ScopeDenied { scope: NetworkScope::Internet, target, .. }
                    if target == "refused.localhost"
            ),
            "{err:?}"
        );
    }

    #[test]
    fn bad_allow_entries_are_named() {
        let err = HttpClient::builder()
            .allow_internal(["10.0.0.5:8080", "http://intranet/"])
            .build()
            .unwrap_err();
        assert!(
            matches!(&err, HttpError::InvalidDestination { entry, .. } if entry == "http://intranet/"),
            "{err}"
        );
        assert!(err.to_string().contains("not a URL"), "{err}");
    }

    #[test]
    fn endpoint_clients_follow_the_text_and_the_saved_scope() {
        let http = HttpClient::new();
        let scope = |endpoint: &str, saved| http.for_endpoint(endpoint, saved).effective_scope();
        assert_eq!(scope("http://localhost:11434", None), NetworkScope::Local);
        assert_eq!(scope("http://evil.localhost:1", None), NetworkScope::Local);
        assert_eq!(
            scope("http://10.0.0.5:11434", Some(EndpointScope::Local)),
            NetworkScope::Local
        );
        assert_eq!(scope("http://10.0.0.5:11434", None), NetworkScope::Internet);
        assert_eq!(
            scope("https://api.example.com", Some(EndpointScope::Remote)),
            NetworkScope::Internet
        );
        assert!(matches!(
            http.for_endpoint("https://api.example.com", None).mode,
            Mode::Unrestricted
        ));
    }
}
