//! A url server's `oauth` table: [`OAuthClient`], its [`OAuthGrant`] and,
//! for client credentials, its [`ClientAuth`].
//!
//! Rules: each grant takes its own keys and refuses the other's
//! (`client_id_credential` is the client credentials' key, `client_id`
//! the authorization code's), so a half-converted table is an error, not
//! a server that quietly asks for the wrong thing.

use serde::Deserialize;

use super::ConfigError;

/// A url server's OAuth client: when the server answers 401 with its
/// protected-resource metadata (RFC 9728), a token is got from its
/// authorization server for the server as resource (RFC 8707) by one of
/// two grants ([`OAuthGrant`]).
///
/// **Client credentials** (the default, RFC 6749 §4.4): the credentials
/// are named by key: a `per_user` server resolves them from the calling
/// user's credentials, a shared one from the host's. The client secret is
/// only ever sent to the token endpoint of the configured `issuer`, or,
/// without one, of an authorization server on the MCP server's own
/// origin.
///
/// ```
/// use oscova_plugin_mcp::{OAuthClient, ServerConfig};
///
/// let notes = ServerConfig::url("https://notes.example.com/mcp").oauth(
///     OAuthClient::new("notes.client_id", "notes.client_secret")
///         .scopes(["mcp"])
///         .issuer("https://auth.example.com"),
/// );
/// assert!(notes.check().is_ok());
/// ```
///
/// **Authorization code with PKCE** (`grant = "authorization_code"`): a
/// person consents once (`oscova mcp login SERVER [--user U]`), and the
/// grant's tokens are kept per (server, user) in the token store
/// ([`TokenStore`](crate::TokenStore)), refreshed as they expire. A
/// `per_user` server uses each user's grant; a shared one the host's
/// (`login` without a user). The client is, in this order: `client_id`
/// (registered with the authorization server beforehand, with
/// `client_secret_credential` naming the host's credential holding its
/// secret if it is confidential), else `client_metadata_url` (a Client ID
/// Metadata Document) when the authorization server says it takes them,
/// else one registered at login by Dynamic Client Registration (RFC 7591).
///
/// ```
/// use oscova_plugin_mcp::{OAuthClient, ServerConfig};
///
/// let mail = ServerConfig::url("https://mail.example.com/mcp")
///     .per_user(true)
///     .oauth(OAuthClient::authorization_code().scopes(["mcp"]).issuer("https://auth.example.com"));
/// assert!(mail.check().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct OAuthClient {
    /// How a token is got (default: client credentials).
    #[serde(default)]
    pub grant: OAuthGrant,
    /// Client credentials: the credential key of the client id.
    #[serde(default)]
    pub client_id_credential: String,
    /// Client credentials: the credential key of the client secret.
    /// Authorization code: the host's credential key of a confidential
    /// `client_id`'s secret (empty: a public client).
    #[serde(default)]
    pub client_secret_credential: String,
    /// Authorization code: a client registered with the authorization
    /// server beforehand (a client id is not a secret).
    #[serde(default)]
    pub client_id: Option<String>,
    /// Authorization code: the `https://` URL of this client's Client ID
    /// Metadata Document, used as its client id where the authorization
    /// server advertises `client_id_metadata_document_supported`.
    #[serde(default)]
    pub client_metadata_url: Option<String>,
    /// The scopes asked for (none: the ones the server's challenge names,
    /// if any).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The authorization server trusted with the secret (and, for the
    /// authorization code, with the person's consent). The server's
    /// metadata must name it; without it, only an authorization server on
    /// the MCP server's own origin is used.
    #[serde(default)]
    pub issuer: Option<String>,
    /// Client credentials: how the client authenticates at the token
    /// endpoint (default: HTTP Basic when the authorization server offers
    /// it, else the form).
    #[serde(default)]
    pub client_auth: Option<ClientAuth>,
}

/// How an `oauth` server's tokens are got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OAuthGrant {
    /// RFC 6749 §4.4: the client's own credentials, no person involved.
    #[default]
    ClientCredentials,
    /// RFC 6749 §4.1 with PKCE (RFC 7636): a person's consent, given once
    /// at login, kept as a refresh token.
    AuthorizationCode,
}

/// How an OAuth client authenticates at the token endpoint (RFC 6749
/// §2.3.1), as the authorization server registered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ClientAuth {
    /// HTTP Basic with the form-encoded id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the request's form.
    ClientSecretPost,
}

impl OAuthClient {
    /// Client credentials from credential keys `client_id` and
    /// `client_secret`.
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self {
            grant: OAuthGrant::ClientCredentials,
            client_id_credential: client_id.into(),
            client_secret_credential: client_secret.into(),
            client_id: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            issuer: None,
            client_auth: None,
        }
    }

    /// The authorization code grant with PKCE, its client registered at
    /// login unless [`client_id`](Self::client_id) or
    /// [`client_metadata_url`](Self::client_metadata_url) says otherwise.
    pub fn authorization_code() -> Self {
        Self {
            grant: OAuthGrant::AuthorizationCode,
            ..Self::new("", "")
        }
    }

    /// Authorization code: a client registered beforehand.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// Authorization code: the host's credential key of the registered
    /// client's secret (a confidential client).
    pub fn client_secret_credential(mut self, key: impl Into<String>) -> Self {
        self.client_secret_credential = key.into();
        self
    }

    /// Authorization code: this client's Client ID Metadata Document.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Whether a person's grant is needed (the authorization code).
    pub fn is_user_grant(&self) -> bool {
        self.grant == OAuthGrant::AuthorizationCode
    }

    /// How the client authenticates at the token endpoint.
    pub fn client_auth(mut self, method: ClientAuth) -> Self {
        self.client_auth = Some(method);
        self
    }

    /// The scopes asked for.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The authorization server trusted with the secret.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
}

impl OAuthClient {
    /// The keys each grant needs or refuses.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        match self.grant {
            OAuthGrant::ClientCredentials => {
                if self.client_id_credential.is_empty() {
                    return Err(ConfigError::OAuthMissing("client_id_credential"));
                }
                if self.client_secret_credential.is_empty() {
                    return Err(ConfigError::OAuthMissing("client_secret_credential"));
                }
                if self.client_id.is_some() {
                    return Err(ConfigError::OAuthMisplaced("client_id"));
                }
                if self.client_metadata_url.is_some() {
                    return Err(ConfigError::OAuthMisplaced("client_metadata_url"));
                }
            }
            OAuthGrant::AuthorizationCode => {
                if !self.client_id_credential.is_empty() {
                    return Err(ConfigError::OAuthMisplaced("client_id_credential"));
                }
                if self.client_auth.is_some() {
                    return Err(ConfigError::OAuthMisplaced("client_auth"));
                }
                if !self.client_secret_credential.is_empty() && self.client_id.is_none() {
                    return Err(ConfigError::OAuthMissing("client_id"));
                }
                if let Some(url) = &self.client_metadata_url
                    && !url.starts_with("https://")
                {
                    return Err(ConfigError::OAuthClientMetadataUrl);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerConfig;

    fn table(oauth: serde_json::Value) -> Result<ServerConfig, String> {
        let config: ServerConfig = serde_json::from_value(serde_json::json!({
            "url": "https://mail.example.com/mcp", "per_user": true, "oauth": oauth
        }))
        .map_err(|e| e.to_string())?;
        config.check().map_err(|e| e.to_string())?;
        Ok(config)
    }

    #[test]
    fn the_authorization_code_table_deserialises() {
        let config = table(serde_json::json!({
            "grant": "authorization_code", "client_id": "oscova-mail",
            "client_secret_credential": "mail.client_secret",
            "scopes": ["mcp"], "issuer": "https://auth.example.com"
        }))
        .expect("the table");
        let oauth = config.oauth.expect("oauth");
        assert!(oauth.is_user_grant());
        assert_eq!(oauth.client_id.as_deref(), Some("oscova-mail"));
        let registered = table(serde_json::json!({
            "grant": "authorization_code",
            "client_metadata_url": "https://oscova.example.com/client.json"
        }))
        .expect("registered at login, or by its document");
        assert!(registered.oauth.is_some_and(|o| o.client_id.is_none()));
        let default = table(serde_json::json!({
            "client_id_credential": "a", "client_secret_credential": "b"
        }))
        .expect("client credentials by default");
        assert_eq!(
            default.oauth.map(|o| o.grant),
            Some(OAuthGrant::ClientCredentials)
        );
    }

    #[test]
    fn each_grant_refuses_the_others_keys() {
        for (oauth, error) in [
            (
                serde_json::json!({"grant": "authorization_code", "client_id_credential": "a"}),
                "`oauth.client_id_credential` does not apply",
            ),
            (
                serde_json::json!({"grant": "authorization_code", "client_auth": "client_secret_post"}),
                "`oauth.client_auth` does not apply",
            ),
            (
                serde_json::json!({"grant": "authorization_code", "client_secret_credential": "s"}),
                "`oauth.client_id` is required",
            ),
            (
                serde_json::json!({"grant": "authorization_code", "client_metadata_url": "http://x/c.json"}),
                "must be an `https://` URL",
            ),
            (
                serde_json::json!({"client_secret_credential": "s"}),
                "`oauth.client_id_credential` is required",
            ),
            (
                serde_json::json!({"client_id_credential": "a", "client_secret_credential": "b", "client_id": "c"}),
                "`oauth.client_id` does not apply",
            ),
            (serde_json::json!({"grant": "password"}), "unknown variant"),
        ] {
            let err = table(oauth.clone()).expect_err(&oauth.to_string());
            assert!(err.contains(error), "{oauth}: {err}");
        }
    }
}
