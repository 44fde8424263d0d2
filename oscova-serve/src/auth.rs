//! Users by bearer token: static tokens, and OAuth access tokens.
//!
//! Rules: the server keeps SHA-256 hashes of static tokens, never tokens. A
//! request's `Authorization: Bearer <token>` is hashed and compared with
//! every configured hash in constant time (no early exit, no comparison
//! that stops at the first differing byte), so neither the position of a
//! match nor how much of a hash matched shows in the time taken. Static
//! tokens are tried first; a token that is none of them goes to the OAuth
//! resource server ([`OAuth`], `oauth/`), when one is configured, whose
//! rules (signature, issuer, audience, time, scope) are in its module.
//! An access token's user is the operator's mapping of its claim, else an
//! id derived from the issuer and the claim (`oauth.<tag>.<value>`,
//! [`oauth_user_id`](crate::oauth::oauth_user_id)), so a claim equal to a static
//! user's id (`alice`) is not that user; and a token whose derived id a
//! static token also names (an id in OAuth's namespace,
//! [`OAUTH_USER_PREFIX`], given to a static user) is refused, so the two
//! never meet unless the operator maps a claim to a user.
//! Without OAuth, a missing, malformed or unknown token is HTTP 401 with
//! `WWW-Authenticate: Bearer` and never says which of the three it was.
//! With OAuth, the challenge carries `resource_metadata` (RFC 9728) and the
//! required `scope`; a request without a token gets no error code (RFC
//! 6750 §3.1), any refused token `error="invalid_token"` (the reason is
//! logged, never sent), and a valid token without a required scope 403
//! `error="insufficient_scope"`. When the issuer's keys cannot be had, the
//! answer is 503, not 401: the token may well be good. Without any token
//! or OAuth every request is the front end's default user, which is safe
//! on a loopback address alone ([`Authenticator::may_serve`]).

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use crate::oauth::{OAUTH_USER_PREFIX, OAuth};

/// One user's token, known by its SHA-256 hash.
#[derive(Clone, PartialEq, Eq)]
pub struct UserToken {
    user: String,
    sha256: [u8; 32],
}

impl fmt::Debug for UserToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserToken")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// A token hash that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the token hash of user `{user}` is not a SHA-256 hash: give 64 hex digits \
     (`printf %s \"$TOKEN\" | sha256sum`)"
)]
pub struct BadTokenHash {
    /// The user whose entry is wrong.
    pub user: String,
}

impl UserToken {
    /// A token for `user` given as the lowercase (or uppercase) hex SHA-256
    /// of the token.
    ///
    /// ```
    /// use oscova_serve::UserToken;
    ///
    /// let hash = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
    /// let token = UserToken::from_sha256_hex("alice", hash)?;
    /// assert_eq!(token.user(), "alice");
    /// assert!(UserToken::from_sha256_hex("bob", "abc").is_err());
    /// # Ok::<(), oscova_serve::auth::BadTokenHash>(())
    /// ```
    pub fn from_sha256_hex(user: impl Into<String>, hex: &str) -> Result<Self, BadTokenHash> {
        let user = user.into();
        match parse_hex(hex.trim()) {
            Some(sha256) => Ok(Self { user, sha256 }),
            None => Err(BadTokenHash { user }),
        }
    }

    /// A token for `user` given in clear (tests and examples; a
    /// configuration file holds hashes).
    pub fn from_token(user: impl Into<String>, token: &str) -> Self {
        Self {
            user: user.into(),
            sha256: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// The user the token stands for.
    pub fn user(&self) -> &str {
        &self.user
    }
}

/// The lowercase hex SHA-256 of `token`, as a configuration holds it
/// (`[[mcp.tokens]] sha256` for the `oscova` binary).
///
/// ```
/// use oscova_serve::UserToken;
/// use oscova_serve::auth::token_sha256_hex;
///
/// let hash = token_sha256_hex("a-secret");
/// assert_eq!(hash.len(), 64);
/// assert!(UserToken::from_sha256_hex("alice", &hash).is_ok());
/// ```
pub fn token_sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_hex(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let digit = |c: u8| char::from(c).to_digit(16);
        let (hi, lo) = (digit(pair[0])?, digit(pair[1])?);
        *slot = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

/// Equality of two hashes in time that does not depend on their contents.
fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// The configured tokens: what turns a request's `Authorization` header
/// into a user id.
///
/// ```
/// use http::{HeaderMap, StatusCode};
/// use oscova_serve::{Tokens, UserToken};
///
/// let tokens = Tokens::new([UserToken::from_token("alice", "a-secret")]);
/// let mut headers = HeaderMap::new();
/// headers.insert(http::header::AUTHORIZATION, "Bearer a-secret".parse()?);
/// assert_eq!(tokens.authenticate(&headers), Some("alice"));
/// assert_eq!(tokens.authenticate(&HeaderMap::new()), None);
/// assert!(tokens.may_serve("0.0.0.0:8080".parse()?)); // tokens guard it
/// assert!(!Tokens::default().may_serve("0.0.0.0:8080".parse()?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    tokens: Vec<UserToken>,
}

impl Tokens {
    /// The table of `tokens`.
    pub fn new(tokens: impl IntoIterator<Item = UserToken>) -> Self {
        Self {
            tokens: tokens.into_iter().collect(),
        }
    }

    /// Whether no token is configured (every request is then the front
    /// end's default user's).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether a server with these tokens may listen on `addr`: with no
    /// token, only on a loopback address, since anyone who can reach
    /// another one would act as the default user.
    pub fn may_serve(&self, addr: SocketAddr) -> bool {
        !self.tokens.is_empty() || addr.ip().is_loopback()
    }

    /// The user whose token the request carries, or `None` (missing,
    /// malformed and unknown alike).
    pub fn authenticate(&self, headers: &HeaderMap) -> Option<&str> {
        let presented = bearer(headers)?;
        self.user_of(&Sha256::digest(presented.as_bytes()).into())
    }

    /// Whether a token of the table stands for `user`.
    fn names(&self, user: &str) -> bool {
        self.tokens.iter().any(|t| t.user == user)
    }

    /// The user whose token has SHA-256 `hash`, compared with every entry.
    fn user_of(&self, hash: &[u8; 32]) -> Option<&str> {
        let mut found = None;
        for token in &self.tokens {
            // Every entry is compared; the last match wins, which cannot
            // matter (two users with one token is the operator's mistake).
            if ct_eq(&token.sha256, hash) {
                found = Some(token.user.as_str());
            }
        }
        found
    }
}

/// Why a request is not served: each says its status and the parameters
/// of its `WWW-Authenticate` challenge ([`Authenticator::challenge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthRefusal {
    /// No bearer token (401, no error code).
    #[error("no bearer token")]
    Missing,
    /// A token that is no static token and no acceptable access token
    /// (401 `invalid_token`).
    #[error("the token is not accepted")]
    InvalidToken,
    /// A valid access token without a required scope (403
    /// `insufficient_scope`).
    #[error("the token lacks a required scope")]
    InsufficientScope,
    /// The issuer's keys could not be fetched (503).
    #[error("the authorization server's keys are unavailable")]
    Unavailable,
}

impl AuthRefusal {
    /// The HTTP status of the answer.
    pub fn status(self) -> StatusCode {
        match self {
            Self::Missing | Self::InvalidToken => StatusCode::UNAUTHORIZED,
            Self::InsufficientScope => StatusCode::FORBIDDEN,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// Static tokens and, optionally, an OAuth resource server: what turns a
/// request into a user.
///
/// ```
/// use http::HeaderMap;
/// use oscova_serve::{Authenticator, AuthRefusal, Tokens, UserToken};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let auth = Authenticator::new(Tokens::new([UserToken::from_token("alice", "a-secret")]), None);
/// let mut headers = HeaderMap::new();
/// headers.insert(http::header::AUTHORIZATION, "Bearer a-secret".parse()?);
/// assert_eq!(auth.authenticate(&headers).await, Ok(Some("alice".to_owned())));
/// assert_eq!(auth.authenticate(&HeaderMap::new()).await, Err(AuthRefusal::Missing));
/// assert_eq!(auth.challenge(AuthRefusal::Missing), "Bearer realm=\"oscova\"");
/// // Nothing configured: every request is the front end's default user.
/// assert_eq!(Authenticator::default().authenticate(&headers).await, Ok(None));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Authenticator {
    tokens: Tokens,
    oauth: Option<Arc<OAuth>>,
}

impl Authenticator {
    /// Static `tokens`, and `oauth` access tokens when given.
    pub fn new(tokens: Tokens, oauth: Option<OAuth>) -> Self {
        Self {
            tokens,
            oauth: oauth.map(Arc::new),
        }
    }

    /// The OAuth resource server, if any.
    pub fn oauth(&self) -> Option<&OAuth> {
        self.oauth.as_deref()
    }

    /// Whether nothing is configured: every request is then the front
    /// end's default user's.
    pub fn is_open(&self) -> bool {
        self.tokens.is_empty() && self.oauth.is_none()
    }

    /// Whether a server may listen on `addr`: when open, only on a
    /// loopback address.
    pub fn may_serve(&self, addr: SocketAddr) -> bool {
        !self.is_open() || addr.ip().is_loopback()
    }

    /// The user a request stands for: `Ok(None)` when nothing is
    /// configured (the front end's default user), else the static token's
    /// user or the access token's, or the refusal.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Option<String>, AuthRefusal> {
        if self.is_open() {
            return Ok(None);
        }
        let Some(presented) = bearer(headers) else {
            return Err(AuthRefusal::Missing);
        };
        // Hashed once: the static tokens and OAuth's table of accepted
        // tokens are both keyed by it.
        let hash: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        if let Some(user) = self.tokens.user_of(&hash) {
            return Ok(Some(user.to_owned()));
        }
        let Some(oauth) = &self.oauth else {
            return Err(AuthRefusal::InvalidToken);
        };
        let user = oauth.verify_hashed(presented, hash).await?;
        if user.starts_with(OAUTH_USER_PREFIX) && self.tokens.names(&user) {
            tracing::debug!(%user, "OAuth access token refused: a static token's user has its id");
            return Err(AuthRefusal::InvalidToken);
        }
        Ok(Some(user))
    }

    /// The `WWW-Authenticate` value for `refusal`.
    pub fn challenge(&self, refusal: AuthRefusal) -> String {
        let Some(oauth) = &self.oauth else {
            return "Bearer realm=\"oscova\"".to_owned();
        };
        let mut value = format!(
            "Bearer resource_metadata=\"{}\"",
            oauth.metadata_url().replace(['"', '\\'], "")
        );
        if !oauth.required_scopes().is_empty() {
            value.push_str(&format!(
                ", scope=\"{}\"",
                oauth.required_scopes().join(" ")
            ));
        }
        match refusal {
            AuthRefusal::InvalidToken => value.push_str(", error=\"invalid_token\""),
            AuthRefusal::InsufficientScope => value.push_str(", error=\"insufficient_scope\""),
            AuthRefusal::Missing | AuthRefusal::Unavailable => {}
        }
        value
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme is
/// case-insensitive, as RFC 9110 says).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(auth: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(http::header::AUTHORIZATION, auth.parse().unwrap());
        map
    }

    #[test]
    fn tokens_select_their_user_and_nothing_else_does() {
        let alice = UserToken::from_sha256_hex("alice", &token_sha256_hex("a-secret")).unwrap();
        let table = Tokens::new([alice, UserToken::from_token("bob", "b-secret")]);
        assert_eq!(
            table.authenticate(&headers("Bearer a-secret")),
            Some("alice")
        );
        assert_eq!(
            table.authenticate(&headers("bearer  b-secret ")),
            Some("bob")
        );
        for bad in [
            "Bearer nope",
            "Basic a-secret",
            "Bearer",
            "a-secret",
            "Bearer ",
        ] {
            assert_eq!(table.authenticate(&headers(bad)), None, "{bad}");
        }
        assert_eq!(table.authenticate(&HeaderMap::new()), None);
    }

    #[test]
    fn without_tokens_only_loopback_addresses_may_be_served() {
        let none = Tokens::default();
        assert!(none.may_serve("127.0.0.1:80".parse().unwrap()));
        assert!(none.may_serve("[::1]:80".parse().unwrap()));
        assert!(!none.may_serve("0.0.0.0:80".parse().unwrap()));
        let some = Tokens::new([UserToken::from_token("u", "t")]);
        assert!(some.may_serve("0.0.0.0:80".parse().unwrap()));
    }

    #[test]
    fn hashes_must_be_64_hex_digits() {
        let upper = token_sha256_hex("x").to_uppercase();
        assert!(UserToken::from_sha256_hex("u", &upper).is_ok());
        assert!(UserToken::from_sha256_hex("u", &"g".repeat(64)).is_err());
        assert!(UserToken::from_sha256_hex("u", &"a".repeat(63)).is_err());
        let debug = format!("{:?}", UserToken::from_token("u", "x"));
        assert!(!debug.contains(&token_sha256_hex("x")), "{debug}");
    }
}
