//! Users by bearer token.
//!
//! Rules: the server keeps SHA-256 hashes of tokens, never tokens. A
//! request's `Authorization: Bearer <token>` is hashed and compared with
//! every configured hash in constant time (no early exit, no comparison
//! that stops at the first differing byte), so neither the position of a
//! match nor how much of a hash matched shows in the time taken. A missing,
//! malformed or unknown token is HTTP 401 with `WWW-Authenticate: Bearer`
//! and never says which of the three it was. This is the one place a real
//! authorization server (OAuth 2.1 resource-server checks of access
//! tokens) would plug in: it only has to turn a request's headers into a
//! user id. Without any token every request is the front end's default
//! user, which is safe on a loopback address alone
//! ([`Tokens::may_serve`]).

use std::fmt;
use std::net::SocketAddr;

use http::HeaderMap;
use sha2::{Digest, Sha256};

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
    /// # Ok::<(), oscova_serve::BadTokenHash>(())
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
/// use oscova_serve::{UserToken, token_sha256_hex};
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
/// use http::HeaderMap;
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
        let hash: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for token in &self.tokens {
            // Every entry is compared; the last match wins, which cannot
            // matter (two users with one token is the operator's mistake).
            if ct_eq(&token.sha256, &hash) {
                found = Some(token.user.as_str());
            }
        }
        found
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
