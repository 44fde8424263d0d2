//! Logging in: [`Login`] (discovery, the client, the authorization URL
//! with PKCE, then the code exchange), and [`LoopbackRedirect`], the
//! listener that takes the browser's redirect (RFC 8252 §7.3).
//!
//! Rules: the server is asked once without a token; its 401 challenge
//! leads to the authorization server as for a call (`discover.rs`: the
//! configured `issuer` or the server's own origin, the metadata naming
//! the server as `resource`). The client is `oauth.client_id`, else the
//! `oauth.client_metadata_url` where the authorization server takes
//! Client ID Metadata Documents, else one registered now (RFC 7591, a
//! public native client with this redirect URI). The authorization URL
//! carries the PKCE S256 challenge, a random `state` and the `resource`;
//! the redirect must carry that `state` (and the `iss` the authorization
//! server announces, RFC 9207), or no code is exchanged. The grant is
//! saved under the store's lease (a refresh elsewhere never overwrites
//! it with an older one), replacing the (server, user)'s previous one.
//! The loopback listener binds 127.0.0.1 on a port the system picks,
//! answers only `GET /callback` carrying a `state` or an `error`
//! (anything else is a 404 and it keeps waiting), reads at most 16 KiB
//! of a request, and gives each connection 10 seconds.

use std::time::Duration;

use oscova_core::{ExposeSecret, SecretString};
use rmcp::transport::auth::{AuthorizationManager, OAuthClientConfig, StoredCredentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::store::{Grant, Place, TokenStore};
use super::{RowStore, manager};
use crate::config::OAuthClient;
use crate::oauth::discover::{allowed, discover, line};
use crate::oauth::{Found, Reach};

/// The name a client registered at login gets.
const CLIENT_NAME: &str = "Oscova";

/// A login under way: the URL to open, then [`finish`](Self::finish) with
/// where the authorization server redirected the browser.
pub struct Login {
    manager: AuthorizationManager,
    /// The PKCE verifier and `state` the URL was made with, kept for a
    /// login finished elsewhere (`link.rs`).
    pub(super) captured: super::link::Captured,
    url: String,
    pub(super) redirect_uri: String,
    pub(super) client_id: String,
    pub(super) found: Found,
    pub(super) store: TokenStore,
    pub(super) place: Place,
    pub(super) timeout: Duration,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("server", &self.place.server)
            .field("user", &self.place.user)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// What a login needs, from the builder.
pub(crate) struct Begin<'a> {
    pub(crate) reach: Reach,
    pub(crate) config: &'a OAuthClient,
    pub(crate) store: TokenStore,
    pub(crate) place: Place,
    pub(crate) redirect_uri: &'a str,
    pub(crate) client_secret: Option<SecretString>,
}

/// The server's 401 challenge to a request without a token.
async fn challenge(reach: &Reach) -> Result<String, String> {
    allowed(&reach.url, reach.network, "the MCP server's URL").map_err(|e| e.to_string())?;
    let hello = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = reach
        .http
        .post(&reach.url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(hello.to_string())
        .timeout(reach.timeout)
        .send()
        .await
        .map_err(|e| crate::tls::reason(&e))?;
    let status = response.status();
    if status != http::StatusCode::UNAUTHORIZED {
        return Err(format!(
            "it answered a request without a token with HTTP {}, not 401: it does not ask for OAuth",
            status.as_u16()
        ));
    }
    Ok(response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("Bearer")
        .to_owned())
}

/// Starts a login: discovery, the client, the authorization URL.
pub(crate) async fn begin(begin: Begin<'_>) -> Result<Login, String> {
    let Begin {
        reach,
        config,
        store,
        place,
        redirect_uri,
        client_secret,
    } = begin;
    let challenge = challenge(&reach).await?;
    let found = discover(&reach, &challenge)
        .await
        .map_err(|e| e.to_string())?;
    let mut manager = manager(&reach, &found).await?;
    let scopes: Vec<String> = found
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let takes_documents = found
        .metadata
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let client_id = match (&config.client_id, &config.client_metadata_url) {
        (Some(id), _) => {
            let mut client =
                OAuthClientConfig::new(id.clone(), redirect_uri).with_scopes(scopes.clone());
            if let Some(secret) = &client_secret {
                client = client.with_client_secret(secret.expose_secret());
            }
            manager
                .configure_client(client)
                .map_err(|e| line(&e.to_string()))?;
            id.clone()
        }
        (None, Some(document)) if takes_documents => {
            let client =
                OAuthClientConfig::new(document.clone(), redirect_uri).with_scopes(scopes.clone());
            manager
                .configure_client(client)
                .map_err(|e| line(&e.to_string()))?;
            document.clone()
        }
        _ => {
            if found.metadata.get("registration_endpoint").is_none() {
                return Err(format!(
                    "the authorization server `{}` offers no Dynamic Client Registration{}; set `oauth.client_id` to a client registered there",
                    found.issuer,
                    if config.client_metadata_url.is_some() {
                        " and takes no Client ID Metadata Document"
                    } else {
                        ""
                    }
                ));
            }
            if let Some(endpoint) = found
                .metadata
                .get("registration_endpoint")
                .and_then(serde_json::Value::as_str)
            {
                allowed(endpoint, reach.network, "the registration endpoint")
                    .map_err(|e| e.to_string())?;
            }
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let client = manager
                .register_client(CLIENT_NAME, redirect_uri, &refs)
                .await
                .map_err(|e| line(&e.to_string()))?;
            client.client_id
        }
    };
    let captured = super::link::Captured::default();
    manager.set_state_store(captured.clone());
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let url = manager
        .get_authorization_url(&refs)
        .await
        .map_err(|e| line(&e.to_string()))?;
    Ok(Login {
        manager,
        captured,
        url,
        redirect_uri: redirect_uri.to_owned(),
        client_id,
        found,
        store,
        place,
        timeout: reach.timeout,
    })
}

impl Login {
    /// The URL the person opens (in any browser) to log in and consent.
    pub fn authorization_url(&self) -> &str {
        &self.url
    }

    /// Where the authorization server sends the browser back.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Exchanges the code of `redirected` (the URL the browser was sent
    /// to, or its query string) for the grant, and keeps the grant.
    ///
    /// # Errors
    ///
    /// The authorization server's refusal (`error` in the redirect), a
    /// `state` that is not this login's, a refused code, or the store.
    pub async fn finish(mut self, redirected: &str) -> Result<(), String> {
        let query = redirected
            .split_once('?')
            .map_or(redirected, |(_, q)| q)
            .split('#')
            .next()
            .unwrap_or_default();
        let param = |name: &str| {
            reqwest_rmcp::Url::parse(&format!("http://x/?{query}"))
                .ok()?
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = param("error") {
            let description = param("error_description")
                .map(|d| format!(": {}", line(&d)))
                .unwrap_or_default();
            return Err(format!(
                "the authorization server refused the login: {}{description}",
                line(&error)
            ));
        }
        let (Some(code), Some(state)) = (param("code"), param("state")) else {
            return Err("the redirect carries no `code` and `state`; paste the whole URL the browser was sent to".to_owned());
        };
        let grant = Grant {
            credentials: StoredCredentials::new(self.client_id.clone(), None, Vec::new(), None),
            redirect_uri: self.redirect_uri.clone(),
            resource: self.found.resource.clone(),
            issuer: self.found.issuer.clone(),
        };
        let row = RowStore::new(self.store.clone(), self.place.clone(), grant);
        self.manager.set_credential_store(row);
        let bound = self.timeout * 4 + Duration::from_secs(5);
        let lease = self
            .store
            .lock(&self.place, bound, bound)
            .await
            .map_err(|e| e.to_string())?;
        let exchanged = self
            .manager
            .exchange_code_for_token_with_issuer(&code, &state, param("iss").as_deref())
            .await;
        lease.release().await;
        exchanged.map(|_| ()).map_err(|e| match e {
            rmcp::transport::auth::AuthError::InternalError(m) if m.contains("state not found") => {
                "the redirect's `state` is not this login's (an old or foreign redirect); nothing was exchanged".to_owned()
            }
            e => line(&e.to_string()),
        })
    }
}

/// A listener on 127.0.0.1 that takes the authorization server's
/// redirect of the browser (RFC 8252 §7.3).
#[derive(Debug)]
pub struct LoopbackRedirect {
    listener: tokio::net::TcpListener,
    uri: String,
}

/// The most of one request that is read.
const MAX_REQUEST: usize = 16 * 1024;

impl LoopbackRedirect {
    /// Listens on 127.0.0.1, on a port the system picks.
    ///
    /// # Errors
    ///
    /// When no port can be bound.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener,
            uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// The redirect URI to register and send: `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the browser's `GET /callback?…` and returns the URL it
    /// asked for; the page it gets says the login may be closed.
    ///
    /// # Errors
    ///
    /// When the listener fails.
    pub async fn wait(self) -> std::io::Result<String> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let read = tokio::time::timeout(Duration::from_secs(10), async {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 2048];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST {
                    let n = stream.read(&mut chunk).await?;
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                Ok::<_, std::io::Error>(buf)
            })
            .await;
            let Ok(Ok(buf)) = read else { continue };
            let head = String::from_utf8_lossy(&buf);
            let mut words = head.lines().next().unwrap_or_default().split(' ');
            let (method, target) = (words.next(), words.next().unwrap_or_default());
            let path = target.split('?').next().unwrap_or_default();
            let query = target.split_once('?').map(|(_, q)| q).unwrap_or_default();
            let answer = query
                .split('&')
                .any(|p| p.starts_with("state=") || p.starts_with("error="));
            if method == Some("GET") && path == "/callback" && answer {
                let page = "Logged in. You can close this page and go back to the terminal.\n";
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                            page.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                let _ = stream.shutdown().await;
                let base = self.uri.trim_end_matches("/callback");
                return Ok(format!("{base}{target}"));
            }
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    }
}

/// What a logout did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoggedOut {
    /// Whether there was a grant, now forgotten.
    pub forgotten: bool,
    /// The authorization server that revoked the grant's refresh token
    /// (RFC 7009), if it did.
    pub revoked_at: Option<String>,
    /// Why it was not revoked there, when there was a grant to revoke.
    pub not_revoked: Option<String>,
}

/// Revokes `grant`'s refresh token (else its access token) at the
/// authorization server the server names now, when it is still the
/// grant's and offers a `revocation_endpoint` (RFC 7009); the issuer.
pub(crate) async fn revoke(
    reach: &Reach,
    grant: &Grant,
    client_secret: Option<&SecretString>,
) -> Result<String, String> {
    let challenge = challenge(reach).await?;
    let found = discover(reach, &challenge)
        .await
        .map_err(|e| e.to_string())?;
    if found.issuer.trim_end_matches('/') != grant.issuer.trim_end_matches('/') {
        return Err(format!(
            "the server now names the authorization server `{}`, not the grant's `{}`",
            found.issuer, grant.issuer
        ));
    }
    let endpoint = found
        .metadata
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("`{}` has no revocation endpoint", found.issuer))?;
    allowed(endpoint, reach.network, "the revocation endpoint").map_err(|e| e.to_string())?;
    let response =
        serde_json::to_value(grant.credentials.token_response.as_ref()).unwrap_or_default();
    let (token, hint) = match response.get("refresh_token").and_then(|t| t.as_str()) {
        Some(token) => (token.to_owned(), "refresh_token"),
        None => (
            response
                .get("access_token")
                .and_then(|t| t.as_str())
                .ok_or("the grant holds no token")?
                .to_owned(),
            "access_token",
        ),
    };
    let form = crate::oauth::discover::form;
    let mut body = format!("token={}&token_type_hint={hint}", form(&token));
    let mut request = reach
        .http
        .post(endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .timeout(reach.timeout);
    match client_secret {
        Some(secret) => {
            request = request.basic_auth(
                form(&grant.credentials.client_id),
                Some(form(secret.expose_secret())),
            );
        }
        None => body.push_str(&format!(
            "&client_id={}",
            form(&grant.credentials.client_id)
        )),
    }
    let status = request
        .body(body)
        .send()
        .await
        .map_err(|e| crate::tls::reason(&e))?
        .status();
    if !status.is_success() {
        return Err(format!("`{endpoint}` answered HTTP {}", status.as_u16()));
    }
    Ok(found.issuer)
}
