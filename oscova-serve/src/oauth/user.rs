//! The user id an access token names: OAuth users are kept apart from
//! static-token users.
//!
//! Rules: a claim value the operator maps ([`OAuthConfig::users`]) is the
//! user id it is mapped to, whatever it is (a static-token user
//! included: that is the operator's explicit choice). Any other claim
//! value `v` from the issuer `iss` is the user
//! `oauth.<tag>.<name>` ([`oauth_user_id`]): `<tag>` the first 12 hex
//! digits of the SHA-256 of `iss` (so two issuers' users are two users),
//! `<name>` the value with every byte but ASCII letters, digits, `-` and
//! `.` written `_XX` (uppercase hex, `_` itself included), or, when that
//! is longer than 64 bytes, `~` and the first 32 hex digits of the
//! value's SHA-256. So each (issuer, value) has an id of its own, never
//! the value itself (a token whose `email` or `preferred_username` is
//! `alice` is not the static user `alice`, nor a mapped user), and a
//! safe path segment as it is (ASCII, no separator, not `.` or `..`, at
//! most 83 bytes), the same after `oscova_core::fs::user_dir_name`
//! unless hashed. Ids beginning [`OAUTH_USER_PREFIX`] are OAuth's: a host
//! gives no static-token user such an id (`oscova`'s configuration
//! refuses one), and [`Authenticator`](crate::Authenticator) refuses a
//! token whose derived id a static token also names.
//!
//! [`OAuthConfig::users`]: super::OAuthConfig::users

use sha2::{Digest, Sha256};

/// How every user id derived from an access token begins.
pub const OAUTH_USER_PREFIX: &str = "oauth.";

/// The longest escaped claim value kept readable; a longer one is hashed.
const MAX_NAME: usize = 64;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The user id of the claim value `claim` from the issuer `issuer` (its
/// exact `iss`), when the operator mapped it to none (see the module
/// rules).
///
/// ```
/// use oscova_serve::oauth::oauth_user_id;
///
/// let id = oauth_user_id("https://auth.example.com", "alice@example.com");
/// assert!(id.starts_with("oauth."));
/// assert!(id.ends_with(".alice_40example.com"));
/// assert_ne!(oauth_user_id("https://other.example.com", "alice@example.com"), id);
/// assert_ne!(oauth_user_id("https://auth.example.com", "alice"), "alice");
/// ```
pub fn oauth_user_id(issuer: &str, claim: &str) -> String {
    let tag = &hex(&Sha256::digest(issuer.as_bytes()))[..12];
    let mut name = String::with_capacity(claim.len());
    for byte in claim.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' => name.push(char::from(byte)),
            other => name.push_str(&format!("_{other:02X}")),
        }
    }
    if name.len() > MAX_NAME {
        name = format!("~{}", &hex(&Sha256::digest(claim.as_bytes()))[..32]);
    }
    format!("{OAUTH_USER_PREFIX}{tag}.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "https://auth.example.com";

    #[test]
    fn ids_are_apart_from_the_claim_one_to_one_and_safe_path_segments() {
        let values = [
            "alice",
            "Alice",
            "alice@example.com",
            "alice_40example.com",
            "alice_example.com",
            "../bob",
            ".",
            "..",
            "a/b",
            "a\\b",
            "auth0|5f7c",
            "é",
            "~x",
            "oauth.x.alice",
            &"x".repeat(MAX_NAME),
            &"x".repeat(MAX_NAME + 1),
            &"/".repeat(200),
        ];
        let mut seen = std::collections::HashSet::new();
        for value in values {
            let id = oauth_user_id(ISSUER, value);
            assert_ne!(id, value);
            assert!(id.starts_with(OAUTH_USER_PREFIX), "{id}");
            assert!(id.len() <= OAUTH_USER_PREFIX.len() + 13 + MAX_NAME, "{id}");
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)),
                "{id}"
            );
            assert!(!id.contains('/') && id != "." && id != "..", "{id}");
            if !id.contains('~') {
                assert_eq!(
                    oscova_core::fs::user_dir_name(&id).as_deref(),
                    Some(id.as_str())
                );
            }
            assert!(seen.insert(id.clone()), "{value} collides: {id}");
            // The same value from another issuer is another user.
            assert_ne!(oauth_user_id("https://auth.example.com/", value), id);
        }
        assert_eq!(
            oauth_user_id(ISSUER, "alice@example.com"),
            oauth_user_id(ISSUER, "alice@example.com")
        );
        assert!(oauth_user_id(ISSUER, &"x".repeat(MAX_NAME + 1)).contains(".~"));
    }
}
