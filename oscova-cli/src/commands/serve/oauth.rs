//! `oscova serve`'s OAuth callback for `[mcp.servers]` logins by link:
//! `GET {public_url}/oauth/mcp/callback?code=…&state=…` finishes the
//! login a tool call of a person on the other end started (the
//! `oscova.mcp` plugin's `McpPluginBuilder::finish_login`).
//!
//! Rules: served only with `[serve] public_url` (the redirect URI the
//! authorization server sends the browser to is
//! `{public_url}/oauth/mcp/callback`, and the plugin makes links only
//! then). The browser carries no user token: the route needs none, and
//! whose grant it is comes from the login kept under the `state`, never
//! from the request. Only `GET` with a `state` and a `code` (or an
//! `error`) is taken; a `state` no login under way has, one used already
//! and one past its term are refused (400) and nothing is exchanged. The
//! answer is a plain-text page saying what happened; it never echoes the
//! request's parameters.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use oscova_plugin_mcp::{LinkError, McpPluginBuilder};

type Body = BoxBody<Bytes, Infallible>;

/// The callback's path on the port.
pub(crate) const CALLBACK_PATH: &str = "/oauth/mcp/callback";

/// The redirect URI of logins by link for a server at `public_url`.
pub(crate) fn callback_uri(public_url: &str) -> String {
    format!("{}{CALLBACK_PATH}", public_url.trim_end_matches('/'))
}

/// The route: the `[mcp.servers]` and their token store.
#[derive(Clone)]
pub(super) struct Callback {
    servers: Arc<McpPluginBuilder>,
}

impl Callback {
    pub(super) fn new(servers: McpPluginBuilder) -> Self {
        Self {
            servers: Arc::new(servers),
        }
    }

    /// Whether `path` is the callback's.
    pub(super) fn serves(path: &str) -> bool {
        path == CALLBACK_PATH
    }

    /// Takes the authorization server's redirect of the browser.
    pub(super) async fn handle<B>(&self, request: Request<B>) -> Response<Body> {
        if request.method() != Method::GET {
            return page(StatusCode::METHOD_NOT_ALLOWED, "Only GET is taken here.\n");
        }
        let pairs: Vec<(String, String)> = request
            .uri()
            .query()
            .and_then(|q| reqwest::Url::parse(&format!("http://callback/?{q}")).ok())
            .map(|url| url.query_pairs().into_owned().collect())
            .unwrap_or_default();
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
        match self.servers.finish_login(state, code, param("iss")).await {
            Ok(done) => page(
                StatusCode::OK,
                &format!(
                    "Logged in to MCP server `{}`. You can close this page and call the tool again.\n",
                    done.server
                ),
            ),
            Err(e @ (LinkError::Unknown | LinkError::Expired | LinkError::Refused { .. })) => {
                page(StatusCode::BAD_REQUEST, &format!("{e}.\n"))
            }
            Err(e) => {
                tracing::warn!(error = %e, "an MCP login's callback failed");
                page(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}.\n"))
            }
        }
    }
}

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
    response
}
