//! Logins finished by a host's callback route: the link a person on the
//! other end of a host (`oscova serve`) follows, and the host's finish of
//! it ([`McpPluginBuilder::finish_login`]).
//!
//! Rules:
//!
//! - **The host's route, not the plugin's.** The plugin opens no
//!   listener. A host that serves a callback says where it is
//!   ([`McpPluginBuilder::login_redirect`]); a call of a user who has no
//!   grant then starts a login for (server, that user, that redirect URI)
//!   and its missing-credential result carries the authorization URL as
//!   `details.login_url` beside the login command. The same link is
//!   handed out again to that (server, user)'s calls, on any instance,
//!   while its login is still kept and has half its term left (one
//!   registration and one row per person, not per call). The host finishes it
//!   with the redirect's `state` and `code` alone.
//! - **Kept by `state`.** The login under way (server, user, the
//!   server's URL, the client, the PKCE verifier, what discovery found)
//!   is kept in the token store under its random `state`, sealed with
//!   the state as associated data, for [`LOGIN_LINK_TERM`]; any instance
//!   sharing the store can finish it. It is taken out in one statement,
//!   so a `state` is used once: a second use, a `state` nobody started
//!   and one whose term is over are refused ([`LinkError`]) and nothing
//!   is exchanged.
//! - **Whose grant.** The grant is kept for the (server, user) that
//!   started the login, read from the sealed row, never from the
//!   callback request; the server must still be configured with the URL
//!   the login was started for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oscova_core::{ExposeSecret, SecretString};
use rmcp::transport::auth::{
    AuthError, OAuthClientConfig, StateStore, StoredAuthorizationState, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::store::{Grant, Place, TokenStore};
use super::{RowStore, UserFlow, manager};
use crate::McpPluginBuilder;
use crate::oauth::discover::line;
use crate::oauth::{Found, OAuthError};

/// How long a login link can be finished after it was made: 10 minutes.
pub const LOGIN_LINK_TERM: Duration = Duration::from_secs(600);

/// rmcp's authorization state, captured as the URL is made so a login
/// can be kept and finished elsewhere; an in-memory state store for a
/// login finished here.
#[derive(Clone, Default)]
pub(crate) struct Captured {
    states: Arc<Mutex<HashMap<String, StoredAuthorizationState>>>,
}

impl Captured {
    fn holding(state: &str, authorization: StoredAuthorizationState) -> Self {
        let captured = Self::default();
        captured.lock().insert(state.to_owned(), authorization);
        captured
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredAuthorizationState>> {
        self.states.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The one state the login's URL was made with.
    fn only(&self) -> Option<(String, StoredAuthorizationState)> {
        let states = self.lock();
        let mut all = states.iter();
        let (state, authorization) = all.next()?;
        all.next()
            .is_none()
            .then(|| (state.clone(), authorization.clone()))
    }
}

#[async_trait::async_trait]
impl StateStore for Captured {
    async fn save(&self, csrf: &str, state: StoredAuthorizationState) -> Result<(), AuthError> {
        self.lock().insert(csrf.to_owned(), state);
        Ok(())
    }

    async fn load(&self, csrf: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        Ok(self.lock().get(csrf).cloned())
    }

    async fn delete(&self, csrf: &str) -> Result<(), AuthError> {
        self.lock().remove(csrf);
        Ok(())
    }
}

/// A login under way, as kept under its `state`.
#[derive(Serialize, Deserialize)]
struct Pending {
    /// The link: the authorization URL.
    authorization_url: String,
    server: String,
    user: Option<String>,
    url: String,
    client_id: String,
    redirect_uri: String,
    issuer: String,
    token_endpoint: String,
    resource: String,
    scope: Option<String>,
    metadata: Value,
    authorization: StoredAuthorizationState,
}

impl super::login::Login {
    /// Keeps this login in the store under its `state` for `term`, to be
    /// finished by [`McpPluginBuilder::finish_login`] in any process
    /// sharing the store; the authorization URL.
    pub(crate) async fn keep(self, term: Duration) -> Result<String, String> {
        let (state, authorization) = self
            .captured
            .only()
            .ok_or("the authorization URL was made without one `state`")?;
        let pending = Pending {
            authorization_url: self.authorization_url().to_owned(),
            server: self.place.server.clone(),
            user: self.place.user.clone(),
            url: self.place.url.clone(),
            client_id: self.client_id.clone(),
            redirect_uri: self.redirect_uri.clone(),
            issuer: self.found.issuer.clone(),
            token_endpoint: self.found.token_endpoint.clone(),
            resource: self.found.resource.clone(),
            scope: self.found.scope.clone(),
            metadata: self.found.metadata.clone(),
            authorization,
        };
        let plain = serde_json::to_vec(&pending).map_err(|e| e.to_string())?;
        self.store
            .put_pending(&state, &self.place, &plain, term)
            .await
            .map_err(|e| e.to_string())?;
        Ok(self.authorization_url().to_owned())
    }
}

impl UserFlow {
    /// `error`'s missing-credential result (see `login_result`); with a
    /// host's redirect URI and a store, a login is started for this
    /// (server, user) and its URL added as `details.login_url`.
    pub(crate) async fn login_result(&self, error: &OAuthError) -> Option<oscova_core::ToolResult> {
        let mut result = super::login_result(error)?;
        let (Some(redirect), Some(store)) = (&self.redirect, &self.store) else {
            return Some(result);
        };
        // One login under way per (server, user) at a time: the link
        // made last (by any instance) is handed out again while it has
        // half its term left, so repeated calls neither register a
        // client nor keep a row each.
        if let Ok(Some(plain)) = store.live_pending(&self.place, LOGIN_LINK_TERM / 2).await
            && let Ok(last) = serde_json::from_slice::<Pending>(&plain)
            && last.redirect_uri == *redirect
            && last.url == self.place.url
        {
            if let Some(details) = result.details.as_object_mut() {
                details.insert("login_url".to_owned(), last.authorization_url.into());
            }
            return Some(result);
        }
        let started = super::login::begin(super::login::Begin {
            reach: self.reach.clone(),
            config: &self.config,
            store: store.clone(),
            place: self.place.clone(),
            redirect_uri: redirect,
            client_secret: self.client_secret.clone(),
        })
        .await;
        match started {
            Ok(login) => match login.keep(LOGIN_LINK_TERM).await {
                Ok(url) => {
                    if let Some(details) = result.details.as_object_mut() {
                        details.insert("login_url".to_owned(), url.into());
                    }
                }
                Err(error) => {
                    tracing::warn!(server = %self.place.server, %error, "a login link was not kept");
                }
            },
            Err(error) => {
                tracing::warn!(server = %self.place.server, %error, "no login link could be made");
            }
        }
        Some(result)
    }
}

/// Why a login's redirect was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// No token store is configured, so no login can be finished here.
    #[error("no token store is configured, so no login can be finished here")]
    NoStore,
    /// The `state` is no login's under way: never started, or used once
    /// already.
    #[error("this login link belongs to no login under way (it was used already, or never made)")]
    Unknown,
    /// The login's term was over.
    #[error(
        "this login link has expired (a link lasts {} minutes); call the tool again for a new one",
        LOGIN_LINK_TERM.as_secs() / 60
    )]
    Expired,
    /// The authorization server's refusal, a refused code, or the
    /// server's configuration changed since the login started.
    #[error("the login to MCP server `{server}` failed: {message}")]
    Refused {
        /// The MCP server.
        server: String,
        /// Why.
        message: String,
    },
    /// The token store failed.
    #[error("the token store: {0}")]
    Store(String),
}

/// A login finished through the host's callback.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoggedIn {
    /// The MCP server logged in to.
    pub server: String,
    /// The user whose grant it is (`None`: the host's own).
    pub user: Option<String>,
}

impl McpPluginBuilder {
    /// Where the host takes the authorization server's redirect for
    /// logins of persons on its other end (e.g. `oscova serve`'s
    /// `{public_url}/oauth/mcp/callback`). With it and a token store, a
    /// call of a user with no grant starts a login there, and its
    /// missing-credential result carries the link (`details.login_url`),
    /// which a host may hand to its client (MCP's URL-mode elicitation);
    /// the host finishes it with [`finish_login`](Self::finish_login).
    pub fn login_redirect(mut self, uri: impl Into<String>) -> Self {
        self.login_redirect = Some(uri.into());
        self
    }

    /// Finishes a login started by a call's link: the redirect's `state`,
    /// `code` and `iss` (RFC 9207, when it has one). The login under way
    /// is taken from the store by `state` (once), and the grant kept for
    /// the (server, user) that started it.
    ///
    /// # Errors
    ///
    /// [`LinkError::Unknown`] for a `state` no login under way has (or
    /// had, and was used), [`LinkError::Expired`] past its term,
    /// [`LinkError::Refused`] for a refused code or a server whose
    /// configuration no longer matches, [`LinkError::Store`].
    pub async fn finish_login(
        &self,
        state: &str,
        code: &str,
        iss: Option<&str>,
    ) -> Result<LoggedIn, LinkError> {
        let store = self.token_store.clone().ok_or(LinkError::NoStore)?;
        let (plain, live) = store
            .take_pending(state)
            .await
            .map_err(|e| match e {
                // A row no key opens is no login of ours.
                super::store::TokenStoreError::Sealed => LinkError::Unknown,
                e => LinkError::Store(e.to_string()),
            })?
            .ok_or(LinkError::Unknown)?;
        if !live {
            return Err(LinkError::Expired);
        }
        let pending: Pending = serde_json::from_slice(&plain).map_err(|_| LinkError::Unknown)?;
        let refused = |message: String| LinkError::Refused {
            server: pending.server.clone(),
            message: self.redactor.redact(&message).into_owned(),
        };
        let config = self
            .config
            .servers
            .get(&pending.server)
            .filter(|c| c.url.as_deref() == Some(pending.url.as_str()))
            .ok_or_else(|| {
                refused("the server is no longer configured at the URL the login was for".into())
            })?;
        let reach = crate::connect::reach(config)
            .ok_or_else(|| refused("the server has no `url` and `oauth`".into()))?;
        let secret: Option<SecretString> = self.client_secret(config).filter(|_| {
            config.oauth.as_ref().and_then(|o| o.client_id.as_deref())
                == Some(pending.client_id.as_str())
        });
        let found = Found {
            issuer: pending.issuer.clone(),
            token_endpoint: pending.token_endpoint.clone(),
            resource: pending.resource.clone(),
            scope: pending.scope.clone(),
            metadata: pending.metadata.clone(),
        };
        let mut manager = manager(&reach, &found).await.map_err(refused)?;
        let scopes: Vec<String> = (pending.scope.as_deref().unwrap_or_default())
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut client = OAuthClientConfig::new(pending.client_id.clone(), &pending.redirect_uri)
            .with_scopes(scopes);
        if let Some(secret) = &secret {
            client = client.with_client_secret(secret.expose_secret());
        }
        manager
            .configure_client(client)
            .map_err(|e| refused(line(&e.to_string())))?;
        manager.set_state_store(Captured::holding(state, pending.authorization.clone()));
        let place = Place {
            server: pending.server.clone(),
            user: pending.user.clone(),
            url: pending.url.clone(),
        };
        let grant = Grant {
            credentials: StoredCredentials::new(pending.client_id.clone(), None, Vec::new(), None),
            redirect_uri: pending.redirect_uri.clone(),
            resource: pending.resource.clone(),
            issuer: pending.issuer.clone(),
        };
        manager.set_credential_store(RowStore::new(store.clone(), place.clone(), grant));
        finish_under_lease(&store, &place, reach.timeout, manager, state, code, iss)
            .await
            .map_err(refused)?;
        Ok(LoggedIn {
            server: pending.server,
            user: pending.user,
        })
    }
}

/// The code exchanged (the grant saved) under the refresh lease.
async fn finish_under_lease(
    store: &TokenStore,
    place: &Place,
    timeout: Duration,
    manager: rmcp::transport::auth::AuthorizationManager,
    state: &str,
    code: &str,
    iss: Option<&str>,
) -> Result<(), String> {
    let bound = timeout * 4 + Duration::from_secs(5);
    let lease = store
        .lock(place, bound, bound)
        .await
        .map_err(|e| e.to_string())?;
    let exchanged = manager
        .exchange_code_for_token_with_issuer(code, state, iss)
        .await;
    lease.release().await;
    exchanged.map(drop).map_err(|e| line(&e.to_string()))
}
