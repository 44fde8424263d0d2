//! The claims of a signed access token, checked.
//!
//! Rules: `iss` must equal the configured issuer exactly (no trailing-slash
//! or case folding); `aud` (a string or an array) must hold this
//! resource's audience (RFC 8707: a token for another resource is not
//! accepted here, even from the same issuer); `exp` is required and `nbf`
//! honoured, each with the configured leeway and no more; the user is the
//! configured claim's string value (`sub` by default), never empty. Scopes
//! come from `scope` (space-separated, RFC 9068) or `scp` (a string or an
//! array); every configured scope must be among them, and a token that
//! lacks one is otherwise valid: the caller answers 403
//! `insufficient_scope`, not 401.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Why a token's claims are not acceptable here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ClaimError {
    /// The payload is not a JSON object.
    #[error("the token's payload is not a JSON object")]
    NotAnObject,
    /// `iss` is missing or another issuer.
    #[error("the token was issued by another issuer")]
    Issuer,
    /// `aud` does not name this resource.
    #[error("the token is for another resource")]
    Audience,
    /// `exp` is missing or past.
    #[error("the token has expired")]
    Expired,
    /// `nbf` is in the future.
    #[error("the token is not valid yet")]
    NotYetValid,
    /// The user claim is missing, empty or not a string.
    #[error("the token names no user in claim `{0}`")]
    NoUser(String),
    /// A required scope is missing (403, not 401).
    #[error("the token lacks a required scope")]
    Scope,
}

/// What is checked, and against what.
#[derive(Debug, Clone)]
pub(crate) struct Expect<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audience: &'a str,
    pub(crate) scopes: &'a [String],
    pub(crate) user_claim: &'a str,
    pub(crate) leeway: Duration,
}

/// The accepted token's user claim value and its expiry (seconds since
/// the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Accepted {
    pub(crate) user: String,
    pub(crate) exp: u64,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A NumericDate claim as whole seconds (fractions cut, negatives as 0).
fn seconds(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| f.max(0.0) as u64)
    })
}

/// Checks `payload` as `expect` says, at the present time.
pub(crate) fn check(payload: &[u8], expect: &Expect<'_>) -> Result<Accepted, ClaimError> {
    check_at(payload, expect, now_secs())
}

fn check_at(payload: &[u8], expect: &Expect<'_>, now: u64) -> Result<Accepted, ClaimError> {
    let claims: Map<String, Value> =
        serde_json::from_slice(payload).map_err(|_| ClaimError::NotAnObject)?;
    if claims.get("iss").and_then(Value::as_str) != Some(expect.issuer) {
        return Err(ClaimError::Issuer);
    }
    let audience_ok = match claims.get("aud") {
        Some(Value::String(aud)) => aud == expect.audience,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(expect.audience)),
        _ => false,
    };
    if !audience_ok {
        return Err(ClaimError::Audience);
    }
    let leeway = expect.leeway.as_secs();
    let exp = seconds(claims.get("exp")).ok_or(ClaimError::Expired)?;
    if now >= exp.saturating_add(leeway) {
        return Err(ClaimError::Expired);
    }
    if let Some(nbf) = claims.get("nbf") {
        let nbf = seconds(Some(nbf)).ok_or(ClaimError::NotYetValid)?;
        if now.saturating_add(leeway) < nbf {
            return Err(ClaimError::NotYetValid);
        }
    }
    let user = claims
        .get(expect.user_claim)
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| ClaimError::NoUser(expect.user_claim.to_owned()))?;
    let granted: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => scope.split(' ').collect(),
        (_, Some(Value::String(scp))) => scp.split(' ').collect(),
        (_, Some(Value::Array(scp))) => scp.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !expect
        .scopes
        .iter()
        .all(|needed| granted.contains(&needed.as_str()))
    {
        return Err(ClaimError::Scope);
    }
    Ok(Accepted {
        user: user.to_owned(),
        exp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_800_000_000;

    fn run(claims: Value) -> Result<Accepted, ClaimError> {
        let scopes = vec!["mcp".to_owned()];
        let expect = Expect {
            issuer: "https://as.example",
            audience: "https://rs.example/mcp",
            scopes: &scopes,
            user_claim: "sub",
            leeway: Duration::from_secs(30),
        };
        check_at(claims.to_string().as_bytes(), &expect, NOW)
    }

    fn good() -> Value {
        json!({"iss": "https://as.example", "aud": "https://rs.example/mcp",
               "exp": NOW + 60, "sub": "alice", "scope": "openid mcp"})
    }

    fn with(key: &str, value: Value) -> Value {
        let mut claims = good();
        claims[key] = value;
        claims
    }

    #[test]
    fn a_good_token_names_its_user() {
        assert_eq!(run(good()).unwrap().user, "alice");
        let arrays = with("aud", json!(["x", "https://rs.example/mcp"]));
        assert!(run(arrays).is_ok());
        let mut scp = good();
        scp.as_object_mut().unwrap().remove("scope");
        scp["scp"] = json!(["mcp"]);
        assert!(run(scp).is_ok());
        // Within the leeway on both sides.
        assert!(run(with("exp", json!(NOW - 29))).is_ok());
        assert!(run(with("nbf", json!(NOW + 29))).is_ok());
    }

    #[test]
    fn every_claim_is_held_to_its_rule() {
        let cases = [
            (
                with("iss", json!("https://as.example/")),
                ClaimError::Issuer,
            ),
            (with("iss", json!("HTTPS://AS.EXAMPLE")), ClaimError::Issuer),
            (
                with("aud", json!("https://rs.example/other")),
                ClaimError::Audience,
            ),
            (
                with("aud", json!(["https://rs.example"])),
                ClaimError::Audience,
            ),
            (with("exp", json!(NOW - 30)), ClaimError::Expired),
            (with("exp", json!("later")), ClaimError::Expired),
            (with("nbf", json!(NOW + 31)), ClaimError::NotYetValid),
            (with("sub", json!("")), ClaimError::NoUser("sub".into())),
            (with("sub", json!(7)), ClaimError::NoUser("sub".into())),
            (with("scope", json!("mcpx other")), ClaimError::Scope),
        ];
        for (claims, want) in cases {
            assert_eq!(run(claims.clone()), Err(want), "{claims}");
        }
        let mut no_exp = good();
        no_exp.as_object_mut().unwrap().remove("exp");
        assert_eq!(run(no_exp), Err(ClaimError::Expired));
        assert_eq!(
            check_at(
                b"[1]",
                &Expect {
                    issuer: "",
                    audience: "",
                    scopes: &[],
                    user_claim: "sub",
                    leeway: Duration::ZERO
                },
                NOW
            ),
            Err(ClaimError::NotAnObject)
        );
    }
}
