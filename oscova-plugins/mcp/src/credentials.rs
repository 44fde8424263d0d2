//! Which credentials a server's calls get: for one user scope, the
//! user's (`credential_env`, `credential_header`, a `per_user` server's
//! `oauth`: client credentials, or the user's grant of the authorization
//! code), or, for a shared server's `oauth`, the host's.
//!
//! Rules: a credential the scope cannot resolve keeps the toolset: its
//! tools stay listed, and each call returns the missing-credential result
//! naming the keys and where to set them (the user's, or the host's for a
//! shared server), without connecting. The host's credentials are asked
//! of the host's resolver only ([`HostCredentials`]), never of a user's.

use std::sync::Arc;

use oscova_core::{AgentPluginContext, SecretString};

use crate::connect::OAuthAccess;
use crate::oauth::Credentials;
use crate::oauth::user::UserFlow;
use crate::oauth::user::store::Place;
use crate::server::{MissingCredentials, Server, ServerHandler, Slot};

/// The host's own credentials, by key (`oauth` of shared servers, and
/// the listing at start).
#[derive(Clone, Default)]
pub(crate) struct HostCredentials(pub(crate) Option<Arc<ResolveHost>>);

/// How the host's credentials are resolved: key → secret.
type ResolveHost = dyn Fn(&str) -> Option<SecretString> + Send + Sync;

impl std::fmt::Debug for HostCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "HostCredentials(..)"
        } else {
            "HostCredentials(none)"
        })
    }
}

/// One scope's handler: a `per_user` server gets its own (empty) slot and
/// that user's credentials. A credential the user has not set keeps the
/// toolset: its tools stay listed, and each call returns an error naming
/// the credential and how to set it, without connecting to the server.
pub(crate) fn handler(server: &Arc<Server>, ctx: &AgentPluginContext) -> Arc<ServerHandler> {
    let config = &server.config;
    let mut credentials = Vec::new();
    let mut missing = Vec::new();
    let keys = if config.is_stdio() {
        &config.credential_env
    } else {
        &config.credential_header
    };
    for (name, key) in keys {
        match ctx.credentials().get(key) {
            Some(secret) => credentials.push((name.clone(), secret)),
            None => missing.push((name.clone(), key.clone())),
        }
    }
    // `oauth`: a per-user server's client is the user's; a shared one's
    // is the host's, resolved at start.
    let mut oauth = None;
    let mut host_missing = None;
    let mut user_flow = None;
    if let Some(client) = config.oauth.as_ref().filter(|c| c.is_user_grant()) {
        // A person's grant: the user's own (`per_user`), else the host's.
        let flow = if config.per_user {
            crate::connect::reach(config).map(|reach| {
                Arc::new(
                    UserFlow::new(
                        reach,
                        client.clone(),
                        server.token_store.clone(),
                        Place {
                            server: server.name.clone(),
                            user: Some(ctx.user_id().to_owned()),
                            url: config.url.clone().unwrap_or_default(),
                        },
                        server.client_secret.clone(),
                    )
                    .with_redirect(server.login_redirect.clone()),
                )
            })
        } else {
            server.host_flow.clone()
        };
        oauth = flow.clone().map(OAuthAccess::User);
        user_flow = flow;
    } else if let Some(client) = &config.oauth {
        if config.per_user {
            let id = ctx.credentials().get(&client.client_id_credential);
            let secret = ctx.credentials().get(&client.client_secret_credential);
            match (id, secret) {
                (Some(id), Some(secret)) => {
                    oauth = Some(OAuthAccess::Client {
                        credentials: Credentials { id, secret },
                        tokens: server.tokens.of(Some(ctx.user_id())),
                    });
                }
                (id, secret) => {
                    for (set, name, key) in [
                        (
                            id.is_some(),
                            "oauth.client_id_credential",
                            &client.client_id_credential,
                        ),
                        (
                            secret.is_some(),
                            "oauth.client_secret_credential",
                            &client.client_secret_credential,
                        ),
                    ] {
                        if !set {
                            missing.push((name.to_owned(), key.clone()));
                        }
                    }
                }
            }
        } else {
            match &server.host_oauth {
                Some(credentials) => {
                    oauth = Some(OAuthAccess::Client {
                        credentials: credentials.clone(),
                        tokens: server.tokens.of(None),
                    });
                }
                None => host_missing = Some(MissingCredentials::host(&server.name, client)),
            }
        }
    }
    let missing = (!missing.is_empty())
        .then(|| MissingCredentials::new(&server.name, ctx.user_id(), missing))
        .or(host_missing);
    let handler = Arc::new(ServerHandler {
        server: server.clone(),
        own: config
            .per_user
            .then(|| tokio::sync::Mutex::new(Slot::default())),
        credentials,
        oauth,
        user_flow,
        missing,
        spawn: if config.per_user {
            ctx.spawn_policy().clone()
        } else {
            server.spawn.clone()
        },
        user: ctx.user_id().to_owned(),
    });
    server.register(&handler);
    handler
}
