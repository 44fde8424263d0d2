//! `grant = "authorization_code"`: a person's grant per (server, user),
//! got once at login ([`login`]) and kept in the [`TokenStore`], its access
//! token sent by [`UserFlow`] and refreshed as it expires.
//!
//! Rules:
//!
//! - **Whose.** A `per_user` server's calls use the calling user's grant,
//!   a shared server's the host's (`oscova mcp login SERVER` without a
//!   user); a grant is kept per (server name, user) with the server's URL
//!   it was got for, and is never sent for anyone else nor to another
//!   URL (the seal binds all three, see `store.rs`).
//! - **Where to.** Discovery is the client-credentials one
//!   (`discover.rs`): the protected-resource metadata must name the
//!   server itself as `resource`, the authorization server must be the
//!   configured `oauth.issuer` or on the server's own origin. rmcp's
//!   authorization manager is then handed that metadata and does the
//!   protocol: PKCE (S256), client registration, the code exchange and
//!   refreshes, each with the RFC 8707 `resource` (the metadata's). Every
//!   request goes through the server's own HTTP client (`http.rs`).
//! - **Refreshing.** An access token is refreshed a tenth of its life
//!   before it expires (at most 30 seconds early), and when the server
//!   answers 401 to it. One refresh at a time per (server, user) across
//!   processes: the store's lease; whoever takes it reloads the grant and
//!   refreshes only if nobody did meanwhile, so a rotating refresh token
//!   is used once. A refresh the authorization server refuses
//!   (`invalid_grant`: revoked, expired, reused) forgets the grant, and
//!   the call's result is the missing-credential one naming the login
//!   command; nothing retries it. Any other failure keeps the grant and
//!   ends the call with an error; the next call tries again.

pub(crate) mod http;
pub(crate) mod key;
pub(crate) mod link;
pub(crate) mod login;
pub(crate) mod store;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oscova_core::{ExposeSecret, SecretString};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, CredentialStore, OAuthClientConfig,
    StoredCredentials,
};

use super::discover::{Found, discover, line};
use super::{OAuthError, Reach, TokenFuture, TokenSource};
use crate::config::OAuthClient;
use store::{Grant, Place, TokenStore, TokenStoreError};

/// The most a token's renewal is brought forward.
const MAX_MARGIN: Duration = Duration::from_secs(30);

/// The command that logs `user` (`None`: the host) in to `server`.
pub(crate) fn login_command(server: &str, user: Option<&str>) -> String {
    let quote = |s: &str| {
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
        {
            s.to_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    match user {
        Some(user) => format!("oscova mcp login {} --user {}", quote(server), quote(user)),
        None => format!("oscova mcp login {}", quote(server)),
    }
}

/// A call's result when `error` says someone must log in: the
/// missing-credential result (the core convention), naming the server's
/// `oauth` as what is missing and the command to run (`details.login`).
pub(crate) fn login_result(error: &OAuthError) -> Option<oscova_core::ToolResult> {
    let OAuthError::LoginRequired {
        server, command, ..
    } = error
    else {
        return None;
    };
    let mut result = oscova_core::ToolResult::missing_credential(
        format!("{error}, and until then this server's tools cannot run"),
        [format!("mcp.servers.{server}.oauth")],
    );
    if let Some(details) = result.details.as_object_mut() {
        details.insert("login".to_owned(), command.clone().into());
    }
    Some(result)
}

/// An access token to send, and until when.
#[derive(Clone)]
struct Usable {
    value: SecretString,
    /// `None`: until the server refuses it.
    renew_at: Option<SystemTime>,
    issuer: String,
}

impl Usable {
    fn fresh(&self) -> bool {
        self.renew_at.is_none_or(|at| SystemTime::now() < at)
    }
}

/// The grant's access token, if it has one.
fn usable(grant: &Grant) -> Option<Usable> {
    let response = serde_json::to_value(grant.credentials.token_response.as_ref()?).ok()?;
    let value = response.get("access_token")?.as_str()?.to_owned();
    let lifetime = response
        .get("expires_in")
        .and_then(serde_json::Value::as_u64)
        .map(Duration::from_secs);
    let received = grant
        .credentials
        .token_received_at
        .map(|s| UNIX_EPOCH + Duration::from_secs(s));
    let renew_at = match (lifetime, received) {
        (Some(life), Some(at)) => Some(at + life.saturating_sub((life / 10).min(MAX_MARGIN))),
        // A lifetime without a time it was got: treat it as stale.
        (Some(_), None) => Some(UNIX_EPOCH),
        (None, _) => None,
    };
    Some(Usable {
        value: value.into(),
        renew_at,
        issuer: grant.issuer.clone(),
    })
}

/// A row of the store as rmcp's credential store: loads the grant it was
/// made with, saves into the row (its caller holds the lease).
#[derive(Clone)]
pub(crate) struct RowStore {
    store: TokenStore,
    place: Place,
    grant: Arc<std::sync::Mutex<Grant>>,
}

impl RowStore {
    pub(crate) fn new(store: TokenStore, place: Place, grant: Grant) -> Self {
        Self {
            store,
            place,
            grant: Arc::new(std::sync::Mutex::new(grant)),
        }
    }

    /// The grant as last saved (or as made).
    pub(crate) fn grant(&self) -> Grant {
        self.grant
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl CredentialStore for RowStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(Some(self.grant().credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let grant = {
            let mut grant = self
                .grant
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            grant.credentials = credentials;
            grant.clone()
        };
        self.store
            .save(&self.place, &grant)
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .remove(&self.place.server, self.place.user.as_deref())
            .await
            .map(|_| ())
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

/// rmcp's manager for `found`'s authorization server, its requests
/// through `reach`, the RFC 8707 resource `found.resource`.
pub(crate) async fn manager(reach: &Reach, found: &Found) -> Result<AuthorizationManager, String> {
    let metadata: AuthorizationMetadata = serde_json::from_value(found.metadata.clone())
        .map_err(|e| format!("the authorization server's metadata is not usable: {e}"))?;
    let http = Arc::new(http::ScopedHttp {
        reach: reach.clone(),
    });
    let mut manager =
        AuthorizationManager::new_with_oauth_http_client(found.resource.as_str(), http)
            .await
            .map_err(|e| line(&e.to_string()))?;
    manager.set_metadata(metadata);
    Ok(manager)
}

/// One (server, user)'s tokens from their grant in the store.
pub(crate) struct UserFlow {
    pub(crate) reach: Reach,
    pub(crate) config: OAuthClient,
    /// `None`: the host configured no token store.
    pub(crate) store: Option<TokenStore>,
    pub(crate) place: Place,
    /// The host's secret of a confidential `oauth.client_id`.
    pub(crate) client_secret: Option<SecretString>,
    /// The host's start page and callback of logins by link
    /// (`link.rs`); `None`: the result names the login command only.
    pub(crate) redirect: Option<link::LinkRoutes>,
    /// The token last loaded or got; held while one is got, so this
    /// process's requests wait for one refresh.
    cached: tokio::sync::Mutex<Option<Usable>>,
    /// What discovery found, kept for the next refresh.
    found: tokio::sync::Mutex<Option<Found>>,
}

impl UserFlow {
    /// The flow of `place`'s grant.
    pub(crate) fn new(
        reach: Reach,
        config: OAuthClient,
        store: Option<TokenStore>,
        place: Place,
        client_secret: Option<SecretString>,
    ) -> Self {
        Self {
            reach,
            config,
            store,
            place,
            client_secret,
            redirect: None,
            cached: tokio::sync::Mutex::new(None),
            found: tokio::sync::Mutex::new(None),
        }
    }

    /// The same flow, its logins by link served at the host's `redirect`.
    pub(crate) fn with_redirect(mut self, redirect: Option<link::LinkRoutes>) -> Self {
        self.redirect = redirect;
        self
    }

    /// The login command of this (server, user).
    pub(crate) fn command(&self) -> String {
        login_command(&self.place.server, self.place.user.as_deref())
    }

    fn login_required(&self, reason: impl Into<String>) -> OAuthError {
        OAuthError::LoginRequired {
            server: self.place.server.clone(),
            reason: reason.into(),
            command: self.command(),
        }
    }

    fn store(&self) -> Result<&TokenStore, OAuthError> {
        self.store.as_ref().ok_or_else(|| {
            OAuthError::Store(
                "none is configured, so no OAuth grant can be kept (oscova: set `OSCOVA_TOKEN_KEY` to a key of 32 bytes, e.g. `openssl rand -hex 32`)".to_owned(),
            )
        })
    }

    fn store_error(&self, e: TokenStoreError) -> OAuthError {
        match e {
            TokenStoreError::Sealed => self.login_required(e.to_string()),
            e => OAuthError::Store(e.to_string()),
        }
    }

    fn nobody(&self) -> OAuthError {
        let whom = match &self.place.user {
            Some(user) => format!("user `{user}`"),
            None => "the host".to_owned(),
        };
        self.login_required(format!(
            "MCP server `{}` needs {whom} to log in (OAuth authorization code), and nobody has",
            self.place.server
        ))
    }

    /// A fresh access token: the cached one, the stored one, or one got
    /// by a refresh now.
    pub(crate) async fn ready(&self) -> Result<SecretString, OAuthError> {
        let mut cached = self.cached.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| t.fresh()) {
            return Ok(token.value.clone());
        }
        let store = self.store()?;
        let grant = store
            .load(&self.place)
            .await
            .map_err(|e| self.store_error(e))?
            .ok_or_else(|| self.nobody())?;
        if let Some(token) = usable(&grant).filter(Usable::fresh) {
            *cached = Some(token.clone());
            return Ok(token.value);
        }
        let token = self.refresh(store, None).await?;
        *cached = Some(token.clone());
        Ok(token.value)
    }

    /// A token to replace `sent`, which the server refused.
    async fn replace(&self, sent: Option<&SecretString>) -> Result<Usable, OAuthError> {
        let mut cached = self.cached.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| t.fresh())
            && sent.is_some_and(|s| s.expose_secret() != token.value.expose_secret())
        {
            return Ok(token.clone());
        }
        *cached = None;
        let token = self.refresh(self.store()?, sent).await?;
        *cached = Some(token.clone());
        Ok(token)
    }

    /// A new access token, under the store's lease.
    async fn refresh(
        &self,
        store: &TokenStore,
        sent: Option<&SecretString>,
    ) -> Result<Usable, OAuthError> {
        let bound = self.reach.timeout * 4 + Duration::from_secs(5);
        let lease = store
            .lock(&self.place, bound, bound)
            .await
            .map_err(|e| self.store_error(e))?;
        let job = match self.refresh_job(store, sent).await {
            Ok(Ok(job)) => job,
            Ok(Err(token)) => {
                lease.release().await;
                return Ok(token);
            }
            Err(e) => {
                lease.release().await;
                return Err(e);
            }
        };
        // Once the refresh token is sent it is spent (rotated): the
        // request and the save of its answer run to the end on a task of
        // their own even if this call is cancelled, or the grant would
        // keep a refresh token the authorization server no longer takes.
        let running = tokio::spawn(async move {
            let outcome = job.run().await;
            lease.release().await;
            outcome
        });
        running.await.unwrap_or_else(|e| {
            Err(OAuthError::Store(format!(
                "the refresh's task ended early: {e}"
            )))
        })
    }

    /// Under the lease: the token someone else got meanwhile (`Ok(Err)`),
    /// else the refresh to run.
    async fn refresh_job(
        &self,
        store: &TokenStore,
        sent: Option<&SecretString>,
    ) -> Result<Result<RefreshJob, Usable>, OAuthError> {
        let grant = store
            .load(&self.place)
            .await
            .map_err(|e| self.store_error(e))?
            .ok_or_else(|| self.nobody())?;
        if let Some(token) = usable(&grant).filter(Usable::fresh)
            && sent.is_none_or(|s| s.expose_secret() != token.value.expose_secret())
        {
            return Ok(Err(token));
        }
        let found = self.found(&grant).await?;
        let client_secret = self.client_secret.clone().filter(|_| {
            self.config.client_id.as_deref() == Some(grant.credentials.client_id.as_str())
        });
        Ok(Ok(RefreshJob {
            reach: self.reach.clone(),
            found,
            grant,
            store: store.clone(),
            place: self.place.clone(),
            client_secret,
            command: self.command(),
        }))
    }

    /// Discovery's findings, which must still be the grant's
    /// authorization server and resource.
    async fn found(&self, grant: &Grant) -> Result<Found, OAuthError> {
        let mut kept = self.found.lock().await;
        let found = match kept.as_ref() {
            Some(found) => found.clone(),
            None => discover(&self.reach, "Bearer").await?,
        };
        let trimmed = |s: &str| s.trim_end_matches('/').to_owned();
        if trimmed(&found.issuer) != trimmed(&grant.issuer)
            || trimmed(&found.resource) != trimmed(&grant.resource)
        {
            *kept = None;
            return Err(self.login_required(format!(
                "MCP server `{}` now names the authorization server `{}` for the resource `{}`, not the ones of the grant (`{}`, `{}`)",
                self.place.server, found.issuer, found.resource, grant.issuer, grant.resource
            )));
        }
        *kept = Some(found.clone());
        Ok(found)
    }
}

/// One refresh, owning all it needs (it runs on a task of its own).
struct RefreshJob {
    reach: Reach,
    found: Found,
    grant: Grant,
    store: TokenStore,
    place: Place,
    /// The secret of a confidential client, when the grant is its.
    client_secret: Option<SecretString>,
    command: String,
}

impl RefreshJob {
    async fn run(self) -> Result<Usable, OAuthError> {
        let grant = &self.grant;
        let refresh_failed = |reason: String| OAuthError::Refresh {
            issuer: grant.issuer.clone(),
            reason,
        };
        let mut manager = manager(&self.reach, &self.found)
            .await
            .map_err(refresh_failed)?;
        let mut client = OAuthClientConfig::new(
            grant.credentials.client_id.clone(),
            grant.redirect_uri.clone(),
        );
        if let Some(secret) = &self.client_secret {
            client = client.with_client_secret(secret.expose_secret());
        }
        manager
            .configure_client(client)
            .map_err(|e| refresh_failed(line(&e.to_string())))?;
        let row = RowStore::new(self.store.clone(), self.place.clone(), grant.clone());
        manager.set_credential_store(row.clone());
        match manager.refresh_token().await {
            Ok(_) => usable(&row.grant())
                .ok_or_else(|| refresh_failed("the answer had no access token".to_owned())),
            Err(AuthError::TokenRefreshRejected(_) | AuthError::AuthorizationRequired) => {
                self.store
                    .remove(&self.place.server, self.place.user.as_deref())
                    .await
                    .map_err(|e| OAuthError::Store(e.to_string()))?;
                Err(OAuthError::LoginRequired {
                    server: self.place.server.clone(),
                    reason: format!(
                        "the authorization server `{}` refused the grant of MCP server `{}` (revoked, expired or no refresh token), so it was forgotten",
                        grant.issuer, self.place.server
                    ),
                    command: self.command.clone(),
                })
            }
            Err(e) => Err(refresh_failed(line(&e.to_string()))),
        }
    }
}

impl TokenSource for UserFlow {
    fn current(&self) -> TokenFuture<'_, Option<SecretString>> {
        Box::pin(async move { self.ready().await.map(Some) })
    }

    fn refused<'a>(
        &'a self,
        _challenge: &'a str,
        sent: Option<&'a SecretString>,
    ) -> TokenFuture<'a, (SecretString, String)> {
        Box::pin(async move {
            let token = self.replace(sent).await?;
            Ok((token.value, token.issuer))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_command_quotes_what_a_shell_would_split() {
        assert_eq!(login_command("notes", None), "oscova mcp login notes");
        assert_eq!(
            login_command("notes", Some("alice@example.com")),
            "oscova mcp login notes --user alice@example.com"
        );
        assert_eq!(
            login_command("notes", Some("o'brien x")),
            r"oscova mcp login notes --user 'o'\''brien x'"
        );
    }
}
