//! The `[auth]` section: who may use the servers (`oscova mcp --listen`,
//! and the A2A server after it): static tokens and OAuth access tokens.
//!
//! Rules: every key is optional. `[[auth.tokens]]` entries (`user`,
//! `sha256`: the lowercase hex SHA-256 of the user's bearer token) are
//! checked when the file is loaded, like `[[mcp.tokens]]`, which stays
//! accepted: both lists are used, merged (an entry may be in either).
//! `[auth.oauth]` accepts JWT access tokens from one issuer
//! (`oscova_serve::OAuthConfig`): `issuer` (required in the table, its
//! exact `iss`), `audience` (default: the server's resource URL),
//! `resource` (the server's public URL; default `http://ADDR:PORT/mcp`),
//! `scopes` (required in every token; default none), `user_claim`
//! (default `sub`), `leeway_secs` (default 60, at most 300),
//! `refetch_interval_secs` (default 60, 1 to 86400) and
//! `[auth.oauth.users]` mapping claim values to user ids. A claim value
//! not mapped there is the user `oauth.<tag>.<value>`
//! (`oscova_mcp::http::oauth_user_id`: the tag from the issuer, the value
//! escaped), never the value itself, so an access token whose claim is
//! `alice` is not the static-token user `alice`; map a claim to a user
//! (a static one included) to make it that user. A static token's user
//! may not begin with `oauth.` (OAuth's ids), checked when the file is
//! loaded.
//! `introspection_client_id` turns on RFC 7662 introspection of opaque
//! tokens as that client; its secret is never in the file, only in
//! [`OAUTH_SECRET_ENV`] (captured with the environment when the file is
//! loaded, held as a secret). Every value is checked when the file is
//! loaded, naming the key.
//!
//! ```toml
//! [[auth.tokens]]
//! user = "alice"
//! sha256 = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc"
//!
//! [auth.oauth]
//! issuer = "https://auth.example.com"
//! resource = "https://mcp.example.com/mcp"
//! scopes = ["mcp"]
//! user_claim = "sub"
//!
//! [auth.oauth.users]
//! "0f3c9d2e-client" = "ci-bot"
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use oscova_core::SecretString;
use oscova_mcp::http::{McpHttpServer, OAUTH_USER_PREFIX, OAuthConfig, UserToken};
use serde::Deserialize;

/// Holds the secret of `[auth.oauth] introspection_client_id`.
pub const OAUTH_SECRET_ENV: &str = "OSCOVA_OAUTH_CLIENT_SECRET";

/// `[auth]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthSection {
    #[serde(default)]
    tokens: Vec<TokenEntry>,
    oauth: Option<OAuthSection>,
    /// Parsed from `tokens` by [`AuthSection::check`].
    #[serde(skip)]
    parsed: Vec<UserToken>,
    /// Built from `oauth` by [`AuthSection::check`].
    #[serde(skip)]
    config: Option<OAuthConfig>,
}

/// One `[[auth.tokens]]` or `[[mcp.tokens]]` entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TokenEntry {
    user: String,
    sha256: String,
}

/// `[auth.oauth]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct OAuthSection {
    issuer: String,
    audience: Option<String>,
    resource: Option<String>,
    #[serde(default)]
    scopes: Vec<String>,
    user_claim: Option<String>,
    leeway_secs: Option<u64>,
    refetch_interval_secs: Option<u64>,
    introspection_client_id: Option<String>,
    #[serde(default)]
    users: BTreeMap<String, String>,
}

/// Parses token entries; `table` names them in messages.
pub(crate) fn parse_tokens(entries: &[TokenEntry], table: &str) -> Result<Vec<UserToken>, String> {
    entries
        .iter()
        .map(|t| {
            if t.user.is_empty() {
                return Err(format!("an [[{table}]] entry has an empty user"));
            }
            if t.user.starts_with(OAUTH_USER_PREFIX) {
                return Err(format!(
                    "the [[{table}]] user `{}` begins with `{OAUTH_USER_PREFIX}`, which names \
                     OAuth users: name the user otherwise",
                    t.user
                ));
            }
            UserToken::from_sha256_hex(&t.user, &t.sha256).map_err(|e| e.to_string())
        })
        .collect()
}

impl AuthSection {
    /// Parses the token hashes and checks the OAuth settings;
    /// `secret` is [`OAUTH_SECRET_ENV`]'s value, if it was set.
    pub(crate) fn check(&mut self, secret: Option<SecretString>) -> Result<(), String> {
        self.parsed = parse_tokens(&self.tokens, "auth.tokens")?;
        let Some(oauth) = &self.oauth else {
            return Ok(());
        };
        let mut config = OAuthConfig::new(&oauth.issuer).scopes(oauth.scopes.iter().cloned());
        if let Some(audience) = &oauth.audience {
            config = config.audience(audience);
        }
        if let Some(resource) = &oauth.resource {
            config = config.resource(resource);
        }
        if let Some(claim) = &oauth.user_claim {
            config = config.user_claim(claim);
        }
        if let Some(secs) = oauth.leeway_secs {
            config = config.leeway(Duration::from_secs(secs));
        }
        if let Some(secs) = oauth.refetch_interval_secs {
            config = config.refetch_interval(Duration::from_secs(secs));
        }
        for (claim, user) in &oauth.users {
            if user.is_empty() {
                return Err(format!(
                    "[auth.oauth.users] maps `{claim}` to an empty user"
                ));
            }
        }
        config = config.users(oauth.users.clone());
        if let Some(client) = &oauth.introspection_client_id {
            let secret = secret.ok_or_else(|| {
                format!(
                    "[auth.oauth] introspection_client_id needs the client's secret in the \
                     {OAUTH_SECRET_ENV} environment variable (never in the file)"
                )
            })?;
            config = config.introspection(client, secret);
        }
        config
            .validate()
            .map_err(|e| format!("[auth.oauth]: {e}"))?;
        self.config = Some(config);
        Ok(())
    }

    /// The section's static tokens.
    pub(crate) fn tokens(&self) -> &[UserToken] {
        &self.parsed
    }

    /// The OAuth settings on `server`, if any.
    pub(crate) fn apply(&self, server: McpHttpServer) -> McpHttpServer {
        match &self.config {
            Some(config) => server.oauth(config.clone()),
            None => server,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(text: &str) -> Result<AuthSection, String> {
        let mut section: AuthSection = toml::from_str(text).map_err(|e| e.to_string())?;
        section.check(None).map(|()| section)
    }

    #[test]
    fn oauth_settings_are_checked_when_loaded() {
        let good = checked(
            "[oauth]\nissuer = \"https://as.example\"\nscopes = [\"mcp\"]\n\
             leeway_secs = 10\n[oauth.users]\nclient-1 = \"bot\"\n",
        )
        .unwrap();
        assert!(good.config.is_some());
        for (bad, says) in [
            ("[oauth]\nissuer = \"as.example\"\n", "issuer"),
            (
                "[oauth]\nissuer = \"https://a\"\nscopes = [\"a b\"]\n",
                "scope",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nleeway_secs = 301\n",
                "leeway_secs",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nrefetch_interval_secs = 0\n",
                "refetch_interval_secs",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nuser_claim = \"\"\n",
                "claim",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\n[oauth.users]\nx = \"\"\n",
                "empty user",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nissuers = []\n",
                "unknown field",
            ),
            ("[oauth]\nscopes = []\n", "issuer"),
            ("[[tokens]]\nuser = \"a\"\nsha256 = \"abc\"\n", "SHA-256"),
            (
                "[[tokens]]\nuser = \"oauth.x.alice\"\nsha256 = \"abc\"\n",
                "begins with `oauth.`",
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nintrospection_client_id = \"rs\"\n",
                OAUTH_SECRET_ENV,
            ),
            (
                "[oauth]\nissuer = \"https://a\"\nintrospection_client_secret = \"s\"\n",
                "unknown field",
            ),
        ] {
            let message = checked(bad).unwrap_err();
            assert!(message.contains(says), "{bad}: {message}");
        }
    }
}
