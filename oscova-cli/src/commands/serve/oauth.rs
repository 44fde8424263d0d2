//! `oscova serve`'s routes of `[mcp.servers]` logins by link: the start
//! page a tool call's link opens, `{public_url}/oauth/mcp/login?id=…`,
//! and the callback, `GET {public_url}/oauth/mcp/callback?code=…&state=…`,
//! that finishes the login (the `oscova.mcp` plugin's
//! `McpPluginBuilder::start_login` and `finish_login`).
//!
//! Rules:
//!
//! - **Served only with `[serve] public_url`** (the redirect URI the
//!   authorization server sends the browser to is
//!   `{public_url}/oauth/mcp/callback`, and the plugin makes links only
//!   then), beside the port's other routes and under its Origin and Host
//!   policy.
//! - **The start page binds the login to its user's browser.** `GET
//!   /oauth/mcp/login` is a small page (`assets/mcp-login/`, its script
//!   `GET /oauth/mcp/login.js`; nothing from elsewhere, a
//!   Content-Security-Policy of this origin only) that asks for the
//!   person's oscova serve token (or takes it from the fragment,
//!   `#token=…`, as the voice page does) and `POST`s to
//!   `/oauth/mcp/login?id=…` with `Authorization: Bearer`. The `POST` is
//!   authenticated by the port's [`Authenticator`], as `/mcp` is (none
//!   configured: loopback only, the default user); a refused token is
//!   401 with the challenge, a login of another user 403 with nothing
//!   changed and nothing said about it. The login's user gets the
//!   authorization URL (JSON `{"url", "server"}`) and a cookie holding a
//!   fresh nonce (`oscova_mcp_login_<tag of the id>`, `HttpOnly;
//!   SameSite=Lax; Path=/oauth/mcp`, `Secure` when `public_url` is
//!   https, for the login's term); the plugin keeps only its hash.
//! - **The callback needs that browser.** It takes only `GET` with a
//!   `state` and a `code` (or an `error`), and the login's cookie: no
//!   cookie, or one whose nonce is not the one the login is bound to, is
//!   400 ("not started in this browser by its user"), nothing exchanged
//!   and the login left as it was. A `state` no login under way has, one
//!   used already and one past its term are refused (400) and nothing is
//!   exchanged. Whose grant it is comes from the login kept under the
//!   `state`, never from the request. The cookie is cleared once the
//!   login is finished. The answer is a plain-text page saying what
//!   happened; it never echoes the request's parameters.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use oscova_core::ExposeSecret as _;
use oscova_plugin_mcp::{LOGIN_LINK_TERM, LinkError, McpPluginBuilder};
use oscova_serve::Authenticator;

type Body = BoxBody<Bytes, Infallible>;

/// The callback's path on the port.
const CALLBACK_PATH: &str = "/oauth/mcp/callback";
/// The start page's path on the port (a link is `{it}?id={state}`).
const LOGIN_PATH: &str = "/oauth/mcp/login";
/// The start page's script.
const SCRIPT_PATH: &str = "/oauth/mcp/login.js";
/// Where the login cookie is sent.
const COOKIE_PATH: &str = "/oauth/mcp";
/// The login cookie's name, before its tag.
const COOKIE_PREFIX: &str = "oscova_mcp_login_";

const PAGE: &str = include_str!("../../../assets/mcp-login/index.html");
const SCRIPT: &str = include_str!("../../../assets/mcp-login/login.js");
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
     style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The start page and redirect URI of logins by link for a server at
/// `public_url`.
pub(crate) fn login_routes(public_url: &str) -> (String, String) {
    let base = public_url.trim_end_matches('/');
    (
        format!("{base}{LOGIN_PATH}"),
        format!("{base}{CALLBACK_PATH}"),
    )
}

/// The routes: the `[mcp.servers]` and their token store, the port's
/// users.
#[derive(Clone)]
pub(super) struct Logins {
    inner: Arc<Inner>,
}

struct Inner {
    servers: McpPluginBuilder,
    auth: Authenticator,
    /// The user of a port without tokens.
    default_user: String,
    /// Whether `public_url` is https (the cookie is `Secure`).
    secure: bool,
}

impl Logins {
    pub(super) fn new(
        servers: McpPluginBuilder,
        auth: Authenticator,
        default_user: String,
        public_url: &str,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                servers,
                auth,
                default_user,
                secure: public_url
                    .get(..8)
                    .is_some_and(|s| s.eq_ignore_ascii_case("https://")),
            }),
        }
    }

    /// Whether `path` is one of the routes'.
    pub(super) fn serves(path: &str) -> bool {
        matches!(path, CALLBACK_PATH | LOGIN_PATH | SCRIPT_PATH)
    }

    /// Answers one request of the routes' paths.
    pub(super) async fn handle<B>(&self, request: Request<B>) -> Response<Body> {
        let get = request.method() == Method::GET;
        match request.uri().path() {
            LOGIN_PATH if get => asset(PAGE, "text/html; charset=utf-8"),
            SCRIPT_PATH if get => asset(SCRIPT, "text/javascript; charset=utf-8"),
            LOGIN_PATH if request.method() == Method::POST => self.start(&request).await,
            CALLBACK_PATH if get => self.callback(&request).await,
            LOGIN_PATH => page(
                StatusCode::METHOD_NOT_ALLOWED,
                "Only GET and POST are taken here.\n",
            ),
            _ => page(StatusCode::METHOD_NOT_ALLOWED, "Only GET is taken here.\n"),
        }
    }

    /// `POST /oauth/mcp/login?id=…`: the login bound to this browser, if
    /// it is the authenticated user's.
    async fn start<B>(&self, request: &Request<B>) -> Response<Body> {
        let user = match self.inner.auth.authenticate(request.headers()).await {
            Ok(None) => self.inner.default_user.clone(),
            Ok(Some(id)) => id,
            Err(refusal) => {
                let mut denied = page(refusal.status(), &format!("{refusal}.\n"));
                let challenge = self.inner.auth.challenge(refusal);
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    denied.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                }
                return denied;
            }
        };
        let Some(id) = query(request)
            .into_iter()
            .find_map(|(k, v)| (k == "id").then_some(v))
        else {
            return page(
                StatusCode::BAD_REQUEST,
                "This address names no login (it needs ?id=…). Call the tool again for a new link.\n",
            );
        };
        match self.inner.servers.start_login(&id, Some(&user)).await {
            Ok(started) => {
                let body = serde_json::json!({
                    "url": started.authorization_url,
                    "server": started.server,
                });
                let mut response = page(StatusCode::OK, &body.to_string());
                let cookie = format!(
                    "{}={}; Max-Age={}; Path={COOKIE_PATH}; HttpOnly; SameSite=Lax{}",
                    cookie_name(&id),
                    started.nonce.expose_secret(),
                    LOGIN_LINK_TERM.as_secs(),
                    if self.inner.secure { "; Secure" } else { "" },
                );
                let headers = response.headers_mut();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                if let Ok(value) = HeaderValue::from_str(&cookie) {
                    headers.insert(header::SET_COOKIE, value);
                }
                response
            }
            Err(LinkError::NotYours) => page(StatusCode::FORBIDDEN, "Refused.\n"),
            Err(e @ (LinkError::Unknown | LinkError::Expired)) => {
                page(StatusCode::BAD_REQUEST, &format!("{e}.\n"))
            }
            Err(e) => {
                tracing::warn!(error = %e, "an MCP login could not be started");
                page(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}.\n"))
            }
        }
    }

    /// `GET /oauth/mcp/callback`: the authorization server's redirect of
    /// the browser the login is bound to.
    async fn callback<B>(&self, request: &Request<B>) -> Response<Body> {
        let pairs = query(request);
        let param = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if param("error").is_some() {
            // The person refused, or the authorization server did; the
            // login under way ends with its term.
            return page(
                StatusCode::BAD_REQUEST,
                "The login was refused at the authorization server; nothing was kept. Call the tool again for a new link.\n",
            );
        }
        let (Some(state), Some(code)) = (param("state"), param("code")) else {
            return page(
                StatusCode::BAD_REQUEST,
                "This is the OAuth callback of MCP servers' logins: it takes the authorization server's redirect, with `state` and `code`.\n",
            );
        };
        let name = cookie_name(state);
        let nonce = cookie(request.headers(), &name);
        let finished = self
            .inner
            .servers
            .finish_login(state, code, param("iss"), nonce.as_deref())
            .await;
        match finished {
            Ok(done) => {
                let mut response = page(
                    StatusCode::OK,
                    &format!(
                        "Logged in to MCP server `{}`. You can close this page and call the tool again.\n",
                        done.server
                    ),
                );
                let gone =
                    format!("{name}=; Max-Age=0; Path={COOKIE_PATH}; HttpOnly; SameSite=Lax");
                if let Ok(value) = HeaderValue::from_str(&gone) {
                    response.headers_mut().insert(header::SET_COOKIE, value);
                }
                response
            }
            Err(
                e @ (LinkError::Unknown
                | LinkError::Expired
                | LinkError::NotBound
                | LinkError::Refused { .. }),
            ) => page(StatusCode::BAD_REQUEST, &format!("{e}.\n")),
            Err(e) => {
                tracing::warn!(error = %e, "an MCP login's callback failed");
                page(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}.\n"))
            }
        }
    }
}

/// The request's query, decoded.
fn query<B>(request: &Request<B>) -> Vec<(String, String)> {
    request
        .uri()
        .query()
        .and_then(|q| reqwest::Url::parse(&format!("http://callback/?{q}")).ok())
        .map(|url| url.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// The login cookie's name for the login `id` (its `state`): a tag of
/// it, so logins under way in one browser keep a cookie each.
fn cookie_name(id: &str) -> String {
    let hash = oscova_serve::auth::token_sha256_hex(id);
    format!("{COOKIE_PREFIX}{}", &hash[..16])
}

/// The value of cookie `name` among the request's `Cookie` headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// A plain-text answer.
fn page(status: StatusCode, body: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_owned())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The start page or its script.
fn asset(body: &'static str, kind: &'static str) -> Response<Body> {
    let mut response = page(StatusCode::OK, "");
    *response.body_mut() = Full::new(Bytes::from_static(body.as_bytes())).boxed();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_cookie_is_found_by_its_name_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; b=2"));
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("oscova_mcp_login_x=nonce; c=3"),
        );
        assert_eq!(
            cookie(&headers, "oscova_mcp_login_x").as_deref(),
            Some("nonce")
        );
        assert_eq!(cookie(&headers, "oscova_mcp_login_y"), None);
        assert_ne!(cookie_name("one"), cookie_name("two"));
        assert!(cookie_name("one").starts_with(COOKIE_PREFIX));
    }

    #[test]
    fn the_routes_are_under_the_public_url() {
        assert_eq!(
            login_routes("https://gw.example/"),
            (
                "https://gw.example/oauth/mcp/login".to_owned(),
                "https://gw.example/oauth/mcp/callback".to_owned()
            )
        );
        assert!(Logins::serves("/oauth/mcp/login.js") && !Logins::serves("/oauth/mcp/other"));
    }
}
