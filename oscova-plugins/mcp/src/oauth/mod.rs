//! OAuth for a url server that answers 401 (the server's `oauth` table,
//! [`OAuthClient`]): a token is got from the server's authorization
//! server and sent as `Authorization: Bearer`, by client credentials
//! ([`Flow`], the rules below) or from a person's grant of the
//! authorization code (`user/`, whose module header has its own rules;
//! discovery and the HTTP client's 401 handling are shared through
//! [`TokenSource`]).
//!
//! Rules:
//!
//! - **The flow.** A request answered 401 with `WWW-Authenticate: Bearer
//!   resource_metadata="…"` (RFC 9728; without the parameter, the
//!   well-known URL of the server's own path) → the protected-resource
//!   metadata → its `authorization_servers` → that server's metadata (RFC
//!   8414 `oauth-authorization-server`, else OpenID `openid-configuration`,
//!   whose `issuer` must be the one asked for) → its `token_endpoint` →
//!   `grant_type=client_credentials` with `resource` (RFC 8707: the
//!   resource the metadata names) and `scope` (the configured scopes, else
//!   the challenge's), the client authenticated as `client_auth` says,
//!   else with HTTP Basic (`client_secret_basic`, the RFC 8414 default)
//!   unless the metadata offers only `client_secret_post` → the request
//!   again, with the token.
//! - **Where the secret may go.** With `oauth.issuer` set, the metadata
//!   must name that authorization server, or nothing is sent anywhere (a
//!   hostile MCP server could otherwise have the client secret posted to
//!   a server of its choosing). Without it, only an authorization server
//!   on the MCP server's own origin (scheme, host, port) is used; any
//!   other is refused with an error saying to set `oauth.issuer`. The
//!   metadata URL must be on the MCP server's origin too, and its
//!   `resource` must be the server's URL (or a parent path of it on the
//!   same origin). Every URL (metadata, authorization server, token
//!   endpoint) must be `https://`, or `http://` on a loopback address,
//!   and inside the server's `network` scope; every request goes through
//!   the server's own HTTP client (its `ca_file`, no proxy from the
//!   environment, no redirects) and is bounded by its `timeout_secs`;
//!   bodies are read up to [`MAX_BODY`].
//! - **Tokens.** Cached per (server, user) in memory, across connections,
//!   until `expires_in` less a margin (a tenth of the lifetime, at most 30
//!   seconds); an expired one is replaced before a request is sent, from
//!   the token endpoint already found. A token without `expires_in` is
//!   kept until the server refuses it. A 401 to a request that carried a
//!   token drops it, and one more token is got (discovery again, from the
//!   new challenge); a 401 to that one is an error, never a loop (the
//!   refused token is kept, so the next attempt again costs at most one
//!   token request). Only a message (POST) is retried so; the SSE
//!   stream's GET and the session's DELETE go with the current token
//!   and stop at a 401. Calls that need a token while one is being got
//!   wait for it (one request).
//! - **Secrets.** The client secret and the tokens are held as
//!   [`SecretString`]s and are never part of an error, a diagnostic or a
//!   log line; the client secret is added to the server's redactor. The
//!   authorization server's error code and description (one line, at most
//!   200 characters) are shown with the credential keys to check.

mod client;
mod discover;
pub(crate) mod user;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_core::{ExposeSecret, SecretString};

use crate::config::OAuthClient;
pub(crate) use client::OAuthHttp;
pub(crate) use discover::{Found, Reach, check_endpoint};

/// The most of a metadata or token response body that is read.
pub(crate) const MAX_BODY: usize = 64 * 1024;

/// The most a token's renewal is brought forward.
const MAX_MARGIN: Duration = Duration::from_secs(30);

/// Why no token could be got, or the server would not take it. Messages
/// name the URLs and credential keys involved, never a secret or token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum OAuthError {
    /// A URL the flow would use is not allowed (scheme, origin, scope).
    #[error("OAuth: {0}")]
    Refused(String),
    /// A metadata document could not be read or is not usable.
    #[error("OAuth: {what} at `{url}`: {reason}")]
    Metadata {
        what: &'static str,
        url: String,
        reason: String,
    },
    /// The token endpoint refused the client credentials.
    #[error(
        "OAuth: the authorization server `{issuer}` refused the client credentials `{id_key}` and `{secret_key}` (HTTP {status}{detail}); check them"
    )]
    TokenRefused {
        issuer: String,
        status: u16,
        detail: String,
        id_key: String,
        secret_key: String,
    },
    /// The token endpoint's answer is not a bearer token.
    #[error("OAuth: the token endpoint `{url}` answered without a usable bearer token: {reason}")]
    TokenAnswer { url: String, reason: String },
    /// The MCP server refused a token just got for it.
    #[error(
        "OAuth: the MCP server refused the access token just got from `{issuer}` (it answered 401 again); check the client's scopes and the server's audience"
    )]
    Rejected { issuer: String },
    /// `grant = "authorization_code"`: nobody has logged in for this
    /// (server, user), or the grant is gone (revoked, expired, refused
    /// at refresh). The message is the guidance: the command to run.
    #[error("OAuth: {reason}; log in with `{command}`")]
    LoginRequired {
        /// The server's name.
        server: String,
        reason: String,
        /// `oscova mcp login SERVER [--user U]`.
        command: String,
    },
    /// A refresh that failed for another reason than a refused grant
    /// (the authorization server unreachable, an odd answer): the grant
    /// is kept, and the next call tries again.
    #[error("OAuth: refreshing the access token at `{issuer}` failed: {reason}")]
    Refresh { issuer: String, reason: String },
    /// The token store could not be read or written, or none is set.
    #[error("OAuth: the token store: {0}")]
    Store(String),
}

impl OAuthError {
    /// The OAuth error somewhere in `error`'s chain (the HTTP client wraps
    /// it in an `io::Error`, see [`OAuthHttp`]).
    pub(crate) fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Self> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(found) = e.downcast_ref::<Self>() {
                return Some(found);
            }
            if let Some(found) = e
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<Self>())
            {
                return Some(found);
            }
            next = e.source();
        }
        None
    }
}

/// One (server, user)'s client credentials, resolved.
#[derive(Clone)]
pub(crate) struct Credentials {
    pub(crate) id: SecretString,
    pub(crate) secret: SecretString,
}

/// An access token and when to renew it (`None`: when refused).
#[derive(Clone)]
struct Token {
    value: SecretString,
    renew_at: Option<Instant>,
}

impl Token {
    fn new(value: SecretString, lifetime: Option<Duration>) -> Self {
        let renew_at = lifetime.map(|life| {
            let margin = (life / 10).min(MAX_MARGIN);
            Instant::now() + life.saturating_sub(margin)
        });
        Self { value, renew_at }
    }

    fn fresh(&self) -> bool {
        self.renew_at.is_none_or(|at| Instant::now() < at)
    }
}

/// One (server, user)'s token and what discovery found, kept across
/// connections.
#[derive(Default)]
pub(crate) struct TokenState {
    token: Option<Token>,
    found: Option<Found>,
}

/// A (server, user)'s token state, shared by its connections.
pub(crate) type Tokens = Arc<tokio::sync::Mutex<TokenState>>;

/// The token states of one server, by user (`None`: the host's).
#[derive(Default)]
pub(crate) struct TokenCache {
    by_user: std::sync::Mutex<HashMap<Option<String>, Tokens>>,
}

/// How many users' states are kept before those without a fresh token
/// are dropped.
const KEPT_USERS: usize = 1024;

impl TokenCache {
    /// `user`'s token state (`None`: the host's).
    pub(crate) fn of(&self, user: Option<&str>) -> Tokens {
        let mut map = self
            .by_user
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(tokens) = map.get(&user.map(str::to_owned)) {
            return tokens.clone();
        }
        if map.len() >= KEPT_USERS {
            map.retain(|_, state| {
                state
                    .try_lock()
                    .map_or(true, |s| s.token.as_ref().is_some_and(Token::fresh))
            });
        }
        map.entry(user.map(str::to_owned)).or_default().clone()
    }
}

/// A future of a token source.
pub(crate) type TokenFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, OAuthError>> + Send + 'a>>;

/// Where a connection's access tokens come from: client credentials
/// ([`Flow`]) or a person's grant ([`user::UserFlow`]).
pub(crate) trait TokenSource: Send + Sync {
    /// The token to send now (`None`: none yet, the server's 401 says
    /// where to get one).
    fn current(&self) -> TokenFuture<'_, Option<SecretString>>;

    /// After a 401 with `challenge` to a request that carried `sent`: a
    /// new token, and the issuer it came from.
    fn refused<'a>(
        &'a self,
        challenge: &'a str,
        sent: Option<&'a SecretString>,
    ) -> TokenFuture<'a, (SecretString, String)>;
}

/// Everything one connection's client-credentials flow needs.
pub(crate) struct Flow {
    pub(crate) reach: Reach,
    pub(crate) config: OAuthClient,
    pub(crate) credentials: Credentials,
    pub(crate) tokens: Tokens,
}

impl TokenSource for Flow {
    fn current(&self) -> TokenFuture<'_, Option<SecretString>> {
        Box::pin(Flow::current(self))
    }

    fn refused<'a>(
        &'a self,
        challenge: &'a str,
        sent: Option<&'a SecretString>,
    ) -> TokenFuture<'a, (SecretString, String)> {
        Box::pin(Flow::refused(self, challenge, sent))
    }
}

impl Flow {
    /// The token to send: the cached one while fresh, else a new one from
    /// the token endpoint already found; `None` before discovery (the
    /// server's 401 says where to go).
    async fn current(&self) -> Result<Option<SecretString>, OAuthError> {
        let mut state = self.tokens.lock().await;
        if let Some(token) = state.token.as_ref().filter(|t| t.fresh()) {
            return Ok(Some(token.value.clone()));
        }
        state.token = None;
        let Some(found) = state.found.clone() else {
            return Ok(None);
        };
        let token = discover::request_token(self, &found).await?;
        let value = token.value.clone();
        state.token = Some(token);
        Ok(Some(value))
    }

    /// After a 401 with `challenge` to a request that carried `sent`:
    /// the token another request got meanwhile, else a new one, found
    /// afresh from the challenge.
    async fn refused(
        &self,
        challenge: &str,
        sent: Option<&SecretString>,
    ) -> Result<(SecretString, String), OAuthError> {
        let mut state = self.tokens.lock().await;
        if let (Some(token), Some(found)) = (&state.token, &state.found) {
            let replaced = sent.is_none_or(|s| s.expose_secret() != token.value.expose_secret());
            if replaced && token.fresh() {
                return Ok((token.value.clone(), found.issuer.clone()));
            }
        }
        state.token = None;
        let found = discover::discover(&self.reach, challenge).await?;
        state.found = Some(found.clone());
        let token = discover::request_token(self, &found).await?;
        let value = token.value.clone();
        state.token = Some(token);
        Ok((value, found.issuer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_renewed_a_tenth_of_its_life_early_and_at_most_30_seconds() {
        let short = Token::new("t".into(), Some(Duration::from_secs(2)));
        let at = short.renew_at.unwrap() - Instant::now();
        assert!(at <= Duration::from_millis(1800) && at > Duration::from_millis(1700));
        let long = Token::new("t".into(), Some(Duration::from_secs(3600)));
        let at = long.renew_at.unwrap() - Instant::now();
        assert!(at <= Duration::from_secs(3570) && at > Duration::from_secs(3569));
        assert!(Token::new("t".into(), None).fresh(), "kept until refused");
        assert!(!Token::new("t".into(), Some(Duration::ZERO)).fresh());
    }

    #[test]
    fn an_oauth_error_is_found_inside_an_io_error() {
        let io = std::io::Error::other(OAuthError::Rejected {
            issuer: "https://a".into(),
        });
        let found = OAuthError::find(&io).map(ToString::to_string);
        assert!(found.is_some_and(|m| m.contains("https://a")));
        let other = std::io::Error::other("plain");
        assert!(OAuthError::find(&other).is_none());
    }
}
