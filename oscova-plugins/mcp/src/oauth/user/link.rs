//! Logins finished by a host's routes: the link a person on the other
//! end of a host (`oscova serve`) follows, the host's binding of it to
//! the browser of the user it is for ([`McpPluginBuilder::start_login`])
//! and the host's finish of it ([`McpPluginBuilder::finish_login`]).
//!
//! Rules:
//!
//! - **The host's routes, not the plugin's.** The plugin opens no
//!   listener. A host that serves logins by link says where its start
//!   page and its callback are ([`McpPluginBuilder::login_redirect`]); a
//!   call of a user who has no grant then starts a login for (server,
//!   that user, that redirect URI) and its missing-credential result
//!   carries the host's start page for it, `{start}?id={state}`, as
//!   `details.login_url` beside the login command, never the
//!   authorization URL itself. The same link is handed out again to that
//!   (server, user)'s calls, on any instance, while its login is still
//!   kept and has half its term left (one registration and one row per
//!   person, not per call).
//! - **Bound to the user's browser.** The authorization URL is given
//!   only to the user the login is for ([`start_login`]: the host has
//!   authenticated them), together with a fresh random nonce the host
//!   sets as a cookie in that browser; only the nonce's SHA-256 is kept,
//!   sealed with the login. The callback is taken only with that nonce
//!   ([`finish_login`]), so a link sent to another person (who would
//!   consent with their own account upstream) can neither be opened by
//!   them nor finished in their browser: no one's upstream grant is ever
//!   kept for another user. Starting again rebinds the login to the
//!   newest browser.
//! - **Kept by `state`.** The login under way (server, user, the
//!   server's URL, the client, the PKCE verifier, what discovery found,
//!   the bound nonce's hash) is kept in the token store under its random
//!   `state`, sealed with the state as associated data, for
//!   [`LOGIN_LINK_TERM`]; any instance sharing the store can bind and
//!   finish it. It is changed or taken only as it was read, in one
//!   statement, so a `state` is used once: a second use, a `state` nobody
//!   started and one whose term is over are refused ([`LinkError`]) and
//!   nothing is exchanged; a finish without the bound nonce is refused
//!   and leaves the login as it was.
//! - **Whose grant.** The grant is kept for the (server, user) that
//!   started the login, read from the sealed row, never from the
//!   callback request; the server must still be configured with the URL
//!   the login was started for.
//!
//! [`start_login`]: McpPluginBuilder::start_login
//! [`finish_login`]: McpPluginBuilder::finish_login

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oscova_core::{ExposeSecret, SecretString};
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::transport::auth::{
    AuthError, OAuthClientConfig, StateStore, StoredAuthorizationState, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::store::{Grant, PendingRow, Place, TokenStore};
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

/// Where a host serves logins by link: the start page the link opens
/// and the callback the authorization server sends the browser back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkRoutes {
    /// The start page; a login's link is `{start}?id={state}`.
    pub(crate) start: String,
    /// The redirect URI.
    pub(crate) redirect: String,
}

impl LinkRoutes {
    /// The link of the login under way by `state`.
    fn link(&self, state: &str) -> String {
        match reqwest_rmcp::Url::parse(&self.start) {
            Ok(mut url) => {
                url.query_pairs_mut().append_pair("id", state);
                url.into()
            }
            // Not a URL: what the host gave, as it gave it.
            Err(_) => format!("{}?id={state}", self.start),
        }
    }
}

/// A login under way, as kept under its `state`.
#[derive(Serialize, Deserialize)]
struct Pending {
    /// The authorization URL, given only to the login's user.
    authorization_url: String,
    /// The hex SHA-256 of the nonce of the browser the login is bound to
    /// ([`McpPluginBuilder::start_login`]); `None` until it is.
    #[serde(default)]
    bound: Option<String>,
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
    /// sharing the store; its `state`.
    pub(crate) async fn keep(self, term: Duration) -> Result<String, String> {
        let (state, authorization) = self
            .captured
            .only()
            .ok_or("the authorization URL was made without one `state`")?;
        let pending = Pending {
            authorization_url: self.authorization_url().to_owned(),
            bound: None,
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
        Ok(state)
    }
}

impl UserFlow {
    /// `error`'s missing-credential result (see `login_result`); with a
    /// host's routes and a store, a login is started for this (server,
    /// user) and its link (the host's start page) added as
    /// `details.login_url`.
    pub(crate) async fn login_result(&self, error: &OAuthError) -> Option<oscova_core::ToolResult> {
        let mut result = super::login_result(error)?;
        let (Some(routes), Some(store)) = (&self.redirect, &self.store) else {
            return Some(result);
        };
        let mut carry = |state: &str| {
            if let Some(details) = result.details.as_object_mut() {
                details.insert("login_url".to_owned(), routes.link(state).into());
            }
        };
        // One login under way per (server, user) at a time: the link
        // made last (by any instance) is handed out again while it has
        // half its term left, so repeated calls neither register a
        // client nor keep a row each.
        if let Ok(Some((state, plain))) = store.live_pending(&self.place, LOGIN_LINK_TERM / 2).await
            && let Ok(last) = serde_json::from_slice::<Pending>(&plain)
            && last.redirect_uri == routes.redirect
            && last.url == self.place.url
        {
            carry(&state);
            return Some(result);
        }
        let started = super::login::begin(super::login::Begin {
            reach: self.reach.clone(),
            config: &self.config,
            store: store.clone(),
            place: self.place.clone(),
            redirect_uri: &routes.redirect,
            client_secret: self.client_secret.clone(),
        })
        .await;
        match started {
            Ok(login) => match login.keep(LOGIN_LINK_TERM).await {
                Ok(state) => carry(&state),
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
    /// The login is another user's: nothing was changed.
    #[error("this login link is not yours")]
    NotYours,
    /// The callback came without the nonce of the browser the login was
    /// bound to (or with another): nothing was exchanged, the login is
    /// left as it was.
    #[error("this login was not started in this browser by its user")]
    NotBound,
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

/// A login bound to the browser of its user
/// ([`McpPluginBuilder::start_login`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct LoginStarted {
    /// The MCP server the login is for.
    pub server: String,
    /// Where to send the browser: the authorization server's URL.
    pub authorization_url: String,
    /// The nonce the host keeps in that browser (a cookie) and gives to
    /// [`McpPluginBuilder::finish_login`]; only its hash is stored.
    pub nonce: SecretString,
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
    /// Where the host serves logins of persons on its other end: `start`,
    /// the page a login's link opens (`{start}?id={state}`; e.g. `oscova
    /// serve`'s `{public_url}/oauth/mcp/login`), and `redirect`, where it
    /// takes the authorization server's redirect (e.g.
    /// `{public_url}/oauth/mcp/callback`). With them and a token store, a
    /// call of a user with no grant starts a login, and its
    /// missing-credential result carries the link (`details.login_url`),
    /// which a host may hand to its client (MCP's URL-mode elicitation).
    /// The host's page authenticates the person and calls
    /// [`start_login`](Self::start_login), its callback
    /// [`finish_login`](Self::finish_login).
    pub fn login_redirect(mut self, start: impl Into<String>, redirect: impl Into<String>) -> Self {
        self.login_redirect = Some(LinkRoutes {
            start: start.into(),
            redirect: redirect.into(),
        });
        self
    }

    /// Binds the login under way `id` (its `state`, from the link) to
    /// the browser of `user`, whom the host has authenticated (`None`:
    /// the host's own): a fresh nonce, whose hash is kept with the
    /// login, and the authorization URL to send that browser to. Done
    /// again, the login is bound to the newest browser.
    ///
    /// # Errors
    ///
    /// [`LinkError::NotYours`] when the login is another user's (nothing
    /// is changed), [`LinkError::Unknown`], [`LinkError::Expired`],
    /// [`LinkError::NoStore`], [`LinkError::Store`].
    pub async fn start_login(
        &self,
        id: &str,
        user: Option<&str>,
    ) -> Result<LoginStarted, LinkError> {
        let store = self.token_store.clone().ok_or(LinkError::NoStore)?;
        let (row, mut pending) = peek(&store, id).await?;
        if pending.user.as_deref() != user {
            return Err(LinkError::NotYours);
        }
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| LinkError::Store("no random nonce could be made".into()))?;
        let nonce = hex(&bytes);
        pending.bound = Some(nonce_hash(&nonce));
        let plain = serde_json::to_vec(&pending).map_err(|e| LinkError::Store(e.to_string()))?;
        if !store
            .reseal_pending(row, &plain)
            .await
            .map_err(|e| LinkError::Store(e.to_string()))?
        {
            // Taken, or bound again, meanwhile.
            return Err(LinkError::Unknown);
        }
        Ok(LoginStarted {
            server: pending.server,
            authorization_url: pending.authorization_url,
            nonce: SecretString::from(nonce),
        })
    }

    /// Finishes a login started by a call's link: the redirect's `state`,
    /// `code` and `iss` (RFC 9207, when it has one), and the nonce the
    /// host kept in the browser ([`start_login`](Self::start_login)). The
    /// login under way is taken from the store by `state` (once), only
    /// with the nonce it is bound to, and the grant kept for the (server,
    /// user) that started it.
    ///
    /// # Errors
    ///
    /// [`LinkError::NotBound`] without the bound nonce (the login is left
    /// as it was), [`LinkError::Unknown`] for a `state` no login under
    /// way has (or had, and was used), [`LinkError::Expired`] past its
    /// term, [`LinkError::Refused`] for a refused code or a server whose
    /// configuration no longer matches, [`LinkError::Store`].
    pub async fn finish_login(
        &self,
        state: &str,
        code: &str,
        iss: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<LoggedIn, LinkError> {
        let store = self.token_store.clone().ok_or(LinkError::NoStore)?;
        let (row, pending) = peek(&store, state).await?;
        let bound = pending.bound.as_deref().is_some_and(|bound| {
            nonce.is_some_and(|nonce| same(nonce_hash(nonce).as_bytes(), bound.as_bytes()))
        });
        if !bound {
            return Err(LinkError::NotBound);
        }
        if !store
            .take_pending(&row)
            .await
            .map_err(|e| LinkError::Store(e.to_string()))?
        {
            // Used, or bound to another browser, meanwhile.
            return Err(LinkError::Unknown);
        }
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

/// The login under way by `state`, read (not taken), still in its term.
async fn peek(store: &TokenStore, state: &str) -> Result<(PendingRow, Pending), LinkError> {
    let row = store
        .peek_pending(state)
        .await
        .map_err(|e| match e {
            // A row no key opens is no login of ours.
            super::store::TokenStoreError::Sealed => LinkError::Unknown,
            e => LinkError::Store(e.to_string()),
        })?
        .ok_or(LinkError::Unknown)?;
    if !row.live {
        return Err(LinkError::Expired);
    }
    let pending: Pending = serde_json::from_slice(&row.plain).map_err(|_| LinkError::Unknown)?;
    Ok((row, pending))
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of a browser's nonce, as kept with its login.
fn nonce_hash(nonce: &str) -> String {
    hex(digest(&SHA256, nonce.as_bytes()).as_ref())
}

/// Whether `a` and `b` are equal, in time that does not depend on where
/// they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
