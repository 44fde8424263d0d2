//! Test users: an id, a time zone, credentials and a files root.
//!
//! Rules: credentials are given per user and handed to toolsets only
//! through the host's resolver, as a real host would (so a tool that
//! echoes one is redacted like in production); a temporary files root is
//! created when the user's scope is built and removed when the scope is
//! dropped.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::context::CredentialResolver;
use oscova_core::{SecretString, UserInfo};

/// A user a test calls tools as.
///
/// ```
/// use oscova_test_kit::TestUser;
///
/// let user = TestUser::new("alice")
///     .with_time_zone("Europe/Berlin")
///     .with_credential("acme.api_key", "sk-test")
///     .with_temp_files();
/// assert_eq!(user.id(), "alice");
/// ```
#[derive(Debug, Clone)]
pub struct TestUser {
    id: String,
    time_zone: Option<String>,
    credentials: BTreeMap<String, String>,
    files: Files,
}

#[derive(Debug, Clone)]
enum Files {
    None,
    Temp,
    At(PathBuf),
}

impl TestUser {
    /// A user with this id: no time zone, no credentials, no files root.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            time_zone: None,
            credentials: BTreeMap::new(),
            files: Files::None,
        }
    }

    /// Sets the user's IANA time zone (`Europe/Berlin`).
    pub fn with_time_zone(mut self, zone: impl Into<String>) -> Self {
        self.time_zone = Some(zone.into());
        self
    }

    /// Gives the user the credential `key` (what a toolset asks
    /// `ctx.credentials().get(key)` for) with this value. The host learns
    /// it as a secret and redacts it from every result.
    pub fn with_credential(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.credentials.insert(key.into(), value.into());
        self
    }

    /// Gives the user a fresh temporary files root, created when the scope
    /// is built and removed with it ([`TestScope::files_root`](crate::TestScope::files_root)).
    pub fn with_temp_files(mut self) -> Self {
        self.files = Files::Temp;
        self
    }

    /// Gives the user this files root (the test owns the directory).
    pub fn with_files_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.files = Files::At(root.into());
        self
    }

    /// The user's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The [`UserInfo`] for a scope, and the temporary directory that
    /// backs its files root, if the user asked for one.
    pub(crate) fn info(&self) -> std::io::Result<(UserInfo, Option<tempfile::TempDir>)> {
        let mut info = UserInfo::new(self.id.clone());
        if let Some(zone) = &self.time_zone {
            info = info.with_time_zone(zone.clone());
        }
        let temp = match &self.files {
            Files::None => None,
            Files::At(path) => {
                info = info.with_files_root(path.clone());
                None
            }
            Files::Temp => {
                let dir = tempfile::Builder::new().prefix("oscova-kit-").tempdir()?;
                info = info.with_files_root(dir.path());
                Some(dir)
            }
        };
        Ok((info, temp))
    }

    pub(crate) fn credentials(&self) -> &BTreeMap<String, String> {
        &self.credentials
    }
}

/// Every test user's credentials, by user id: the host's resolver.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vault(Arc<Mutex<HashMap<String, BTreeMap<String, String>>>>);

impl Vault {
    pub(crate) fn add(&self, user: &TestUser) {
        let mut users = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        users
            .entry(user.id.clone())
            .or_default()
            .extend(user.credentials().clone());
    }
}

impl CredentialResolver for Vault {
    fn resolve(&self, user: &UserInfo, key: &str) -> Option<SecretString> {
        let users = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let value = users.get(user.id())?.get(key)?;
        Some(SecretString::from(value.clone()))
    }
}
