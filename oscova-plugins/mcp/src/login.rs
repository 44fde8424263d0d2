//! Logging in to servers that need a person's consent
//! (`grant = "authorization_code"`): where their grants are kept
//! ([`McpPluginBuilder::token_store`]), starting a login
//! ([`McpPluginBuilder::login`], finished by [`Login::finish`]) and
//! forgetting a grant ([`McpPluginBuilder::logout`]).
//!
//! Rules: a login is for one (server, user) (`None`: the host's own
//! grant, which a shared server's calls and the listing at start use);
//! the server must be configured with that grant, and a token store
//! must be set. See the `oauth::user` module for how grants are kept and
//! refreshed.

use std::sync::Arc;

use oscova_core::{ExposeSecret, SecretString};

use crate::oauth::user::UserFlow;
use crate::oauth::user::login::{Begin, LoggedOut, begin, revoke};
use crate::oauth::user::store::Place;
use crate::{ClientError, Login, McpPluginBuilder, ServerConfig, TokenStore};

impl McpPluginBuilder {
    /// Where `grant = "authorization_code"` servers' grants are kept
    /// (the `oscova` CLI: the sessions' store, their SQLite file or
    /// Postgres database, sealed with `OSCOVA_TOKEN_KEY`). Without it such a server's calls end with an
    /// error saying to set one.
    pub fn token_store(mut self, store: TokenStore) -> Self {
        self.token_store = Some(store);
        self
    }

    /// The host's secret of a confidential `oauth.client_id`, added to the
    /// redactor.
    pub(crate) fn client_secret(&self, config: &ServerConfig) -> Option<SecretString> {
        let client = config
            .oauth
            .as_ref()
            .filter(|c| c.is_user_grant() && !c.client_secret_credential.is_empty())?;
        let resolve = self.host_credentials.0.as_ref()?;
        let secret = resolve(&client.client_secret_credential)?;
        self.redactor.add(secret.expose_secret());
        Some(secret)
    }

    /// The host's grant of an authorization-code server `name`.
    pub(crate) fn host_flow(&self, name: &str, config: &ServerConfig) -> Option<Arc<UserFlow>> {
        let client = config.oauth.as_ref().filter(|c| c.is_user_grant())?;
        Some(Arc::new(UserFlow::new(
            crate::connect::reach(config)?,
            client.clone(),
            self.token_store.clone(),
            Place {
                server: name.to_owned(),
                user: None,
                url: config.url.clone()?,
            },
            self.client_secret(config),
        )))
    }

    /// The configuration of authorization-code server `name`, and the store.
    fn user_grant(&self, name: &str) -> Result<(&ServerConfig, TokenStore), ClientError> {
        let fail = |message: &str| ClientError::Login {
            name: name.to_owned(),
            message: message.to_owned(),
        };
        let config = self
            .config
            .servers
            .get(name)
            .ok_or_else(|| ClientError::UnknownServer(name.to_owned()))?;
        config.check().map_err(|source| ClientError::Config {
            name: name.to_owned(),
            source,
        })?;
        if !config.oauth.as_ref().is_some_and(|c| c.is_user_grant()) {
            return Err(fail(
                "it has no `oauth` with `grant = \"authorization_code\"`, so there is nothing to log in to",
            ));
        }
        let store = self.token_store.clone().ok_or_else(|| {
            fail("no token store is configured (oscova: set `OSCOVA_TOKEN_KEY` to a key of 32 bytes, e.g. `openssl rand -hex 32`)")
        })?;
        Ok((config, store))
    }

    /// Starts logging `user` (`None`: the host) in to server `name`, the
    /// browser to be sent back to `redirect_uri` (a
    /// [`LoopbackRedirect`](crate::LoopbackRedirect)'s): discovery, the
    /// client (registered now if need be), and the authorization URL.
    ///
    /// # Errors
    ///
    /// [`ClientError::UnknownServer`], [`ClientError::Config`], and
    /// [`ClientError::Login`] (not such a server, no token store, discovery
    /// or registration refused).
    pub async fn login(
        &self,
        name: &str,
        user: Option<&str>,
        redirect_uri: &str,
    ) -> Result<Login, ClientError> {
        let (config, store) = self.user_grant(name)?;
        let fail = |message: String| ClientError::Login {
            name: name.to_owned(),
            message: self.redactor.redact(&message).into_owned(),
        };
        let client = config
            .oauth
            .as_ref()
            .ok_or_else(|| fail("no `oauth`".to_owned()))?;
        if !client.client_secret_credential.is_empty() && self.client_secret(config).is_none() {
            return Err(fail(format!(
                "the host's credential `{}` (the secret of `oauth.client_id`) is not set (oscova: in the `[credentials]` table or as an `OSCOVA_CREDENTIAL_*` variable)",
                client.client_secret_credential
            )));
        }
        let reach = crate::tls::client(config.ca_file.as_deref())
            .map_err(|e| fail(e.to_string()))
            .and_then(|_| {
                crate::connect::reach(config).ok_or_else(|| fail("it has no `url`".to_owned()))
            })?;
        begin(Begin {
            reach,
            config: client,
            store,
            place: Place {
                server: name.to_owned(),
                user: user.map(str::to_owned),
                url: config.url.clone().unwrap_or_default(),
            },
            redirect_uri,
            client_secret: self.client_secret(config),
        })
        .await
        .map_err(fail)
    }

    /// Forgets `user`'s (`None`: the host's) grant of server `name`,
    /// after asking its authorization server to revoke it (RFC 7009: its
    /// refresh token, so a copy of it is worth nothing). The grant is
    /// forgotten whether or not the revocation went through; the result
    /// says which.
    ///
    /// # Errors
    ///
    /// As [`login`](Self::login), and the store's failure.
    pub async fn logout(&self, name: &str, user: Option<&str>) -> Result<LoggedOut, ClientError> {
        let (config, store) = self.user_grant(name)?;
        let place = Place {
            server: name.to_owned(),
            user: user.map(str::to_owned),
            url: config.url.clone().unwrap_or_default(),
        };
        let grant = store.load(&place).await.ok().flatten();
        let mut out = LoggedOut {
            forgotten: false,
            revoked_at: None,
            not_revoked: None,
        };
        if let Some(grant) = &grant {
            let secret = self.client_secret(config).filter(|_| {
                config.oauth.as_ref().and_then(|c| c.client_id.as_deref())
                    == Some(grant.credentials.client_id.as_str())
            });
            let revoked = match crate::connect::reach(config) {
                Some(reach) => revoke(&reach, grant, secret.as_ref()).await,
                None => Err("the server's HTTP client could not be made".to_owned()),
            };
            match revoked {
                Ok(issuer) => out.revoked_at = Some(issuer),
                Err(why) => out.not_revoked = Some(self.redactor.redact(&why).into_owned()),
            }
        }
        out.forgotten = store
            .remove(name, user)
            .await
            .map_err(|e| ClientError::Login {
                name: name.to_owned(),
                message: e.to_string(),
            })?;
        Ok(out)
    }
}
