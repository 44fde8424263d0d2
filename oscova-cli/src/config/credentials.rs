//! Credentials from the configuration: the `OSCOVA_CREDENTIAL_*`
//! variable of a key, and the resolver plugins get.
//!
//! Rules: the variable wins over the user's `[users.<id>.credentials]`,
//! which wins over the shared `[credentials]` table; the resolver's
//! `Debug` shows no value. The host's own credentials (what a shared
//! `[mcp.servers]` entry's `oauth` client uses, and the listing of any
//! `oauth` server at start) are the variable, then `[credentials]`, and
//! never a user's table.

use std::fmt;
use std::sync::Arc;

use oscova_core::{SecretString, UserInfo, context::CredentialResolver};

use super::{CREDENTIAL_ENV_PREFIX, Secrets};

/// The environment variable that holds credential `key`:
/// [`CREDENTIAL_ENV_PREFIX`] plus the key in upper case with every
/// character outside `[A-Z0-9]` turned into `_`.
///
/// ```
/// assert_eq!(
///     oscova_cli::credential_env_var("acme.api_key"),
///     "OSCOVA_CREDENTIAL_ACME_API_KEY"
/// );
/// ```
pub fn credential_env_var(key: &str) -> String {
    format!("{CREDENTIAL_ENV_PREFIX}{}", env_suffix(key))
}

fn env_suffix(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Resolves credentials from a [`Config`](super::Config): the `OSCOVA_CREDENTIAL_*`
/// variable first, then the user's `[users.<id>.credentials]`, then the
/// shared `[credentials]` table.
#[derive(Clone)]
pub struct ConfigCredentials {
    pub(super) secrets: Arc<Secrets>,
}

impl fmt::Debug for ConfigCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigCredentials").finish_non_exhaustive()
    }
}

impl ConfigCredentials {
    /// The host's own credential `key`: the `OSCOVA_CREDENTIAL_*`
    /// variable, then the shared `[credentials]` table (never a user's).
    pub fn host(&self, key: &str) -> Option<SecretString> {
        let s = &*self.secrets;
        s.env
            .get(&env_suffix(key))
            .or_else(|| s.shared.get(key))
            .cloned()
    }
}

impl CredentialResolver for ConfigCredentials {
    fn resolve(&self, user: &UserInfo, key: &str) -> Option<SecretString> {
        let s = &*self.secrets;
        s.env
            .get(&env_suffix(key))
            .or_else(|| s.users.get(user.id())?.credentials.get(key))
            .or_else(|| s.shared.get(key))
            .cloned()
    }
}
