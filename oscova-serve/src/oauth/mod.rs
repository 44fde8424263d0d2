//! An OAuth 2.1 resource server: JWT access tokens from one issuer become
//! users.
//!
//! Rules (each pinned by a test in `oscova-mcp/tests/it/oauth.rs` against
//! a real authorization server, npm `oidc-provider`, and by the unit tests
//! of `jws.rs`, `claims.rs` and `keys.rs`):
//!
//! - A token is a compact JWS signed with RS256, ES256 or EdDSA by a key of
//!   the issuer's JWK set; `alg: none`, HMAC (so a public key used as a
//!   secret), any other algorithm, a key of another type than the
//!   algorithm's, and a signature by any other key are refused (`jws.rs`).
//! - `iss` is the configured issuer exactly; `aud` holds this resource's
//!   audience (by default the resource's own URL, RFC 8707); `exp` is
//!   required and `nbf` honoured, with [`OAuthConfig::leeway`] (60 s by
//!   default, at most 5 minutes) and no more (`claims.rs`).
//! - Keys are discovered and fetched lazily through the host's HTTP client,
//!   cached, and refetched on an unknown key id at most once per
//!   [`OAuthConfig::refetch_interval`] (`keys.rs`).
//! - A valid token without every configured scope is 403
//!   `insufficient_scope`; every other refusal is 401 `invalid_token`, and
//!   the reason goes to the log (debug), never to the client.
//! - The user is named by the [`OAuthConfig::user_claim`] (`sub` by
//!   default): the user id [`OAuthConfig::users`] maps its value to, or
//!   else an id of the issuer and the value, `oauth.<tag>.<value>`
//!   ([`oauth_user_id`], `user.rs`), never the value itself, so no token
//!   is a static-token user (or a mapped one) by naming it in a claim.
//! - The token is the caller's proof to this server only: nothing here
//!   passes it on, and the front ends never forward a request's
//!   `Authorization` header to a tool or an upstream server.
//! - An opaque token (anything but three dot-separated segments) is
//!   refused, unless [`OAuthConfig::introspection`] is set: then it is
//!   posted to the issuer's RFC 7662 `introspection_endpoint` (from its
//!   metadata) with this server's client credentials (HTTP Basic), and
//!   accepted only when the answer says `active: true` and its claims pass
//!   the same checks as a JWT's (`iss`, when the answer names one,
//!   `aud`, `exp`, `nbf`, scopes, user). The issuer is the one party an
//!   opaque token is shown to. Each opaque token not yet accepted costs
//!   one introspection request.
//! - A token accepted once is remembered by its SHA-256 (never in clear)
//!   until its `exp` passes, in a bounded table, so a client's next request
//!   costs a hash rather than a signature check: measured with `cargo bench
//!   -p oscova-serve --bench auth`, a first check is about 100 µs (ES256;
//!   EdDSA 95 µs), a remembered token 0.8 µs, a static token 0.25 µs.

mod claims;
mod jws;
mod keys;
mod user;

pub use user::{OAUTH_USER_PREFIX, oauth_user_id};

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oscova_core::{ExposeSecret, HttpClient, SecretString};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::auth::AuthRefusal;
use claims::{ClaimError, Expect};
use jws::Jws;
use keys::Keys;

/// The default leeway on `exp` and `nbf`.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
/// The range of [`OAuthConfig::leeway`]: none to 5 minutes.
const LEEWAY_RANGE: RangeInclusive<Duration> = Duration::ZERO..=Duration::from_secs(300);
/// The default least time between two fetches of the issuer's keys caused
/// by unknown key ids.
const DEFAULT_REFETCH_INTERVAL: Duration = Duration::from_secs(60);
/// The range of [`OAuthConfig::refetch_interval`]: a second to a day.
const REFETCH_INTERVAL_RANGE: RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(24 * 3600);
/// How many accepted tokens are remembered.
const REMEMBERED: usize = 4096;

/// How a server checks OAuth access tokens: the issuer it trusts, the
/// audience and scopes it needs, and how a token names its user.
///
/// ```
/// use oscova_serve::OAuthConfig;
///
/// // `alice@example.com` is the user `alice`; any other address is
/// // `oauth_user_id("https://auth.example.com", address)`.
/// let config = OAuthConfig::new("https://auth.example.com")
///     .scopes(["mcp"])
///     .user_claim("email")
///     .users([("alice@example.com", "alice")]);
/// assert_eq!(config.issuer(), "https://auth.example.com");
/// ```
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    issuer: String,
    audience: Option<String>,
    resource: Option<String>,
    scopes: Vec<String>,
    user_claim: String,
    users: HashMap<String, String>,
    leeway: Duration,
    refetch_interval: Duration,
    introspection: Option<Introspection>,
}

/// The client this server introspects opaque tokens as.
#[derive(Debug, Clone)]
struct Introspection {
    client_id: String,
    secret: SecretString,
}

/// A setting of [`OAuthConfig`] that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The issuer (or resource, or audience) is not an `http(s)://` URL.
    #[error("the OAuth {what} `{url}` is not an http:// or https:// URL")]
    NotAUrl {
        /// Which setting.
        what: &'static str,
        /// Its value.
        url: String,
    },
    /// A scope is empty or holds a space, a quote or a backslash.
    #[error("the OAuth scope `{0}` is not a scope token (no spaces, quotes or backslashes)")]
    BadScope(String),
    /// The user claim is empty.
    #[error("the OAuth user claim is empty")]
    NoUserClaim,
    /// A duration outside its range.
    #[error(transparent)]
    Setting(#[from] crate::LimitError),
}

impl OAuthConfig {
    /// Tokens from `issuer` (its exact `iss`), with the defaults: audience
    /// the resource's URL, no scope required, user claim `sub`.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            audience: None,
            resource: None,
            scopes: Vec::new(),
            user_claim: "sub".to_owned(),
            users: HashMap::new(),
            leeway: DEFAULT_LEEWAY,
            refetch_interval: DEFAULT_REFETCH_INTERVAL,
            introspection: None,
        }
    }

    /// Accepts opaque tokens through the issuer's RFC 7662 introspection
    /// endpoint, authenticating as `client_id` with `secret` (HTTP Basic).
    pub fn introspection(mut self, client_id: impl Into<String>, secret: SecretString) -> Self {
        self.introspection = Some(Introspection {
            client_id: client_id.into(),
            secret,
        });
        self
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The `aud` a token must hold (by default the resource's URL).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// This resource's public URL, as clients reach it (by default the
    /// front end's own: `http://<bound address>/mcp` for MCP). Set it
    /// when the server is behind a proxy or a name.
    pub fn resource(mut self, url: impl Into<String>) -> Self {
        self.resource = Some(url.into());
        self
    }

    /// The scopes every token must carry.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The claim naming the user (`sub` by default). A value
    /// [`users`](Self::users) does not map is the user
    /// [`oauth_user_id`]`(issuer, value)`, apart from every static-token
    /// user.
    pub fn user_claim(mut self, claim: impl Into<String>) -> Self {
        self.user_claim = claim.into();
        self
    }

    /// Claim values mapped to user ids, which may be any user (a
    /// static-token user's id included: the mapping is the operator's
    /// explicit choice); a value not here is the user
    /// [`oauth_user_id`]`(issuer, value)`, never the value itself.
    pub fn users(
        mut self,
        users: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Self {
        self.users = users
            .into_iter()
            .map(|(claim, user)| (claim.into(), user.into()))
            .collect();
        self
    }

    /// The clock skew allowed on `exp` and `nbf`: 60 seconds by default,
    /// none to 5 minutes.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The least time between two key fetches caused by unknown key ids:
    /// 60 seconds by default, a second to a day.
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }

    /// Checks the settings (the issuer, and the resource and audience when
    /// set, are URLs; scopes are scope tokens; the durations are in their
    /// ranges), as [`OAuth::new`] does: a configuration file can be
    /// checked when it is loaded.
    pub fn validate(&self) -> Result<(), OAuthError> {
        self.check(self.resource.as_deref().unwrap_or("http://resource"))
    }

    fn check(&self, resource: &str) -> Result<(), OAuthError> {
        let url = |what: &'static str, url: &str| {
            let ok = ["http://", "https://"]
                .iter()
                .any(|s| url.strip_prefix(s).is_some_and(|rest| !rest.is_empty()));
            if ok {
                Ok(())
            } else {
                Err(OAuthError::NotAUrl {
                    what,
                    url: url.to_owned(),
                })
            }
        };
        url("issuer", &self.issuer)?;
        url("resource", resource)?;
        if let Some(audience) = &self.audience
            && audience.is_empty()
        {
            return Err(OAuthError::NotAUrl {
                what: "audience",
                url: String::new(),
            });
        }
        for scope in &self.scopes {
            if scope.is_empty() || scope.contains([' ', '"', '\\']) || !scope.is_ascii() {
                return Err(OAuthError::BadScope(scope.clone()));
            }
        }
        if self.user_claim.is_empty() {
            return Err(OAuthError::NoUserClaim);
        }
        crate::limits::check_duration("oauth leeway_secs", self.leeway, &LEEWAY_RANGE)?;
        crate::limits::check_duration(
            "oauth refetch_interval_secs",
            self.refetch_interval,
            &REFETCH_INTERVAL_RANGE,
        )?;
        Ok(())
    }
}

/// A resource server's token check, built from an [`OAuthConfig`] for
/// one resource.
pub struct OAuth {
    issuer: String,
    audience: String,
    resource: String,
    scopes: Vec<String>,
    user_claim: String,
    users: HashMap<String, String>,
    leeway: Duration,
    introspection: Option<Introspection>,
    keys: Keys,
    /// SHA-256 of accepted tokens: their user and `exp`.
    remembered: Mutex<HashMap<[u8; 32], (String, u64)>>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("resource", &self.resource)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// The check of `config` for the resource at `resource` (used unless
    /// the config names its own), fetching keys with `http` (the host's
    /// client: [`oscova_core::PluginHost::http_client`]).
    pub fn new(config: OAuthConfig, resource: &str, http: HttpClient) -> Result<Self, OAuthError> {
        let resource = config
            .resource
            .clone()
            .unwrap_or_else(|| resource.to_owned());
        config.check(&resource)?;
        Ok(Self {
            keys: Keys::new(config.issuer.clone(), http, config.refetch_interval),
            audience: config.audience.unwrap_or_else(|| resource.clone()),
            issuer: config.issuer,
            resource,
            scopes: config.scopes,
            user_claim: config.user_claim,
            users: config.users,
            leeway: config.leeway,
            introspection: config.introspection,
            remembered: Mutex::default(),
        })
    }

    /// The resource's URL, as its metadata gives it.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes every token must carry.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The URL of the resource's RFC 9728 metadata: the well-known segment
    /// inserted before the resource's path.
    pub fn metadata_url(&self) -> String {
        let (scheme, rest) = self.resource.split_once("://").unwrap_or(("https", ""));
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        format!(
            "{scheme}://{authority}/.well-known/oauth-protected-resource{}",
            path.trim_end_matches('/')
        )
    }

    /// The RFC 9728 protected-resource metadata document, as JSON.
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
        })
    }

    /// The user a bearer `token` stands for, or why not.
    pub async fn verify(&self, token: &str) -> Result<String, AuthRefusal> {
        self.verify_hashed(token, Sha256::digest(token.as_bytes()).into())
            .await
    }

    /// [`verify`](Self::verify), given the token's SHA-256.
    pub(crate) async fn verify_hashed(
        &self,
        token: &str,
        hash: [u8; 32],
    ) -> Result<String, AuthRefusal> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if let Some((user, exp)) = self.lock_remembered().get(&hash)
            && now < exp.saturating_add(self.leeway.as_secs())
        {
            return Ok(user.clone());
        }
        let invalid = |why: &dyn std::fmt::Display| {
            tracing::debug!(reason = %why, "OAuth access token refused");
            AuthRefusal::InvalidToken
        };
        let unavailable = |e: keys::KeysUnavailable| {
            tracing::debug!(reason = %e, "OAuth access token not checked");
            AuthRefusal::Unavailable
        };
        let payload = match &self.introspection {
            Some(client) if token.split('.').count() != 3 => {
                self.introspect(token, client)
                    .await
                    .map_err(|e| e.map_or(AuthRefusal::InvalidToken, unavailable))?
            }
            _ => {
                let jws = Jws::parse(token).map_err(|e| invalid(&e))?;
                let keys = self
                    .keys
                    .candidates(jws.kid.as_deref(), jws.alg)
                    .await
                    .map_err(unavailable)?;
                if !keys.iter().any(|key| jws.verified_by(key)) {
                    return Err(invalid(&"no key of the issuer signed it"));
                }
                jws.payload
            }
        };
        let expect = Expect {
            issuer: &self.issuer,
            audience: &self.audience,
            scopes: &self.scopes,
            user_claim: &self.user_claim,
            leeway: self.leeway,
        };
        let accepted = claims::check(&payload, &expect).map_err(|e| match e {
            ClaimError::Scope => AuthRefusal::InsufficientScope,
            other => invalid(&other),
        })?;
        let user = match self.users.get(&accepted.user) {
            Some(mapped) => mapped.clone(),
            None => oauth_user_id(&self.issuer, &accepted.user),
        };
        let mut remembered = self.lock_remembered();
        if remembered.len() >= REMEMBERED {
            let leeway = self.leeway.as_secs();
            remembered.retain(|_, (_, exp)| now < exp.saturating_add(leeway));
            if remembered.len() >= REMEMBERED {
                remembered.clear();
            }
        }
        remembered.insert(hash, (user.clone(), accepted.exp));
        Ok(user)
    }

    /// The claims the issuer's introspection endpoint gives for an opaque
    /// `token`: `Err(None)` when it is not active, `Err(Some(_))` when the
    /// endpoint cannot be asked.
    async fn introspect(
        &self,
        token: &str,
        client: &Introspection,
    ) -> Result<Vec<u8>, Option<keys::KeysUnavailable>> {
        let endpoint = self.keys.introspection_endpoint().await.map_err(Some)?;
        let body = format!(
            "token={}&token_type_hint=access_token",
            keys::form_encode(token)
        );
        let answer = self
            .keys
            .post_form(
                &endpoint,
                &client.client_id,
                client.secret.expose_secret(),
                body,
            )
            .await
            .map_err(Some)?;
        let mut claims: Map<String, Value> = serde_json::from_slice(&answer).map_err(|_| {
            Some(keys::KeysUnavailable(format!(
                "{endpoint} did not answer a JSON object"
            )))
        })?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            tracing::debug!("OAuth access token refused: not active");
            return Err(None);
        }
        // The answer comes from the issuer itself; `iss` is optional in it.
        claims
            .entry("iss")
            .or_insert_with(|| Value::String(self.issuer.clone()));
        serde_json::to_vec(&claims).map_err(|_| None)
    }

    fn lock_remembered(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (String, u64)>> {
        self.remembered.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oauth(config: OAuthConfig, resource: &str) -> Result<OAuth, OAuthError> {
        OAuth::new(config, resource, HttpClient::new())
    }

    #[test]
    fn metadata_lives_under_the_well_known_prefix_of_the_resource() {
        let server = oauth(
            OAuthConfig::new("https://as.example").scopes(["mcp"]),
            "http://127.0.0.1:9/mcp",
        )
        .unwrap();
        assert_eq!(
            server.metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(server.metadata()["resource"], "http://127.0.0.1:9/mcp");
        assert_eq!(
            server.metadata()["authorization_servers"][0],
            "https://as.example"
        );
        assert_eq!(server.audience, "http://127.0.0.1:9/mcp");
        let behind = oauth(
            OAuthConfig::new("https://as.example")
                .resource("https://mcp.example.com/mcp")
                .audience("api://mcp"),
            "http://127.0.0.1:9/mcp",
        )
        .unwrap();
        assert_eq!(behind.resource(), "https://mcp.example.com/mcp");
        assert_eq!(behind.audience, "api://mcp");
    }

    #[test]
    fn settings_are_checked() {
        let bad = [
            OAuthConfig::new("as.example"),
            OAuthConfig::new("https://as.example").scopes(["a b"]),
            OAuthConfig::new("https://as.example").scopes([""]),
            OAuthConfig::new("https://as.example").user_claim(""),
            OAuthConfig::new("https://as.example").leeway(Duration::from_secs(301)),
            OAuthConfig::new("https://as.example").refetch_interval(Duration::ZERO),
            OAuthConfig::new("https://as.example").audience(""),
        ];
        for config in bad {
            assert!(
                oauth(config.clone(), "http://127.0.0.1/mcp").is_err(),
                "{config:?}"
            );
        }
        assert!(oauth(OAuthConfig::new("https://as.example"), "mcp").is_err());
    }
}
