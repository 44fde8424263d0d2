//! The `[sessions]` section: where `oscova chat --session` and `oscova
//! sessions` keep conversations.
//!
//! Rules: every key is optional. `store = "sqlite"` (the default) keeps
//! them in one SQLite file, `path` (a relative path is relative to the
//! config file's folder), else `${XDG_DATA_HOME:-~/.local/share}/oscova/sessions.db`.
//! `store = "postgres"` needs `url = "postgres://user@host:port/db"` and
//! the `sessions-postgres` feature (part of `first-party`); in a build
//! without it the section is an error when the file is loaded, naming the
//! feature, never silently ignored. **A password never sits in the config
//! file**: a `url` with a password (in its user part or as a `password`
//! option) is refused when the file is loaded, and the message says where
//! the password goes instead: the `PGPASSWORD` environment variable, read
//! once when the configuration is loaded, held as a secret (redacted from
//! every output) and handed to the Postgres client alone. A key that
//! belongs to the other store (`path` with postgres, `url` with sqlite) is
//! an error, so a half-edited section never runs on the wrong store.
//!
//! The compaction keys: `context_window` (the model's window in tokens)
//! turns on automatic compaction in `oscova chat --session`: after a
//! message, a context past `context_window - reserve_tokens` is
//! summarised, keeping about `keep_recent_tokens` of the newest
//! (`reserve_tokens` and `keep_recent_tokens` default to pi's 16384 and
//! 20000). Without it the CLI compacts only on `/compact`: no model
//! provider tells the CLI its window, and a guessed one would either
//! never trigger or summarise too early. A reserve not below the window
//! is an error (it would compact after every message).
//!
//! ```toml
//! [sessions]
//! store = "postgres"
//! url = "postgres://oscova@db.internal:5432/oscova"   # PGPASSWORD holds the password
//! ```

use std::path::{Path, PathBuf};

use oscova_agent::session::compaction::CompactionSettings;
use oscova_core::SecretString;
use serde::Deserialize;

use super::ranges::{
    SESSIONS_CONTEXT_WINDOW, SESSIONS_KEEP_RECENT_TOKENS, SESSIONS_RESERVE_TOKENS,
};

/// The variable that holds the Postgres password (libpq's name for it).
pub const SESSIONS_PASSWORD_ENV: &str = "PGPASSWORD";

/// `[sessions]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionsSection {
    store: Option<String>,
    path: Option<PathBuf>,
    url: Option<String>,
    context_window: Option<u64>,
    reserve_tokens: Option<u64>,
    keep_recent_tokens: Option<u64>,
}

/// When `oscova chat --session` compacts, as checked when the file was
/// loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionsCompaction {
    /// `context_window`: set, compaction is automatic.
    context_window: Option<u64>,
    reserve_tokens: u64,
    keep_recent_tokens: u64,
}

impl Default for SessionsCompaction {
    fn default() -> Self {
        Self {
            context_window: None,
            reserve_tokens: CompactionSettings::DEFAULT_RESERVE_TOKENS,
            keep_recent_tokens: CompactionSettings::DEFAULT_KEEP_RECENT_TOKENS,
        }
    }
}

impl SessionsCompaction {
    /// The settings of automatic compaction, when `context_window` is set.
    pub(crate) fn automatic(&self) -> Option<CompactionSettings> {
        self.context_window.map(|window| self.with_window(window))
    }

    /// The settings `/compact` cuts with (the window plays no part there).
    pub(crate) fn on_request(&self) -> CompactionSettings {
        self.with_window(self.context_window.unwrap_or(u64::MAX))
    }

    fn with_window(&self, window: u64) -> CompactionSettings {
        CompactionSettings::new(window)
            .with_reserve_tokens(self.reserve_tokens)
            .with_keep_recent_tokens(self.keep_recent_tokens)
    }
}

/// Where sessions are kept, as checked when the file was loaded.
#[derive(Clone)]
pub(crate) enum SessionsStore {
    /// One SQLite file; `None`: the default file.
    Sqlite(Option<PathBuf>),
    /// A Postgres database: the URL without a password, and the password
    /// from `PGPASSWORD`.
    Postgres {
        /// `postgres://user@host:port/db`, never with a password.
        url: String,
        /// `PGPASSWORD`, if it was set.
        password: Option<SecretString>,
    },
}

impl std::fmt::Debug for SessionsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Self::Postgres { url, password } => f
                .debug_struct("Postgres")
                .field("url", url)
                .field("password", &password.is_some())
                .finish(),
        }
    }
}

impl SessionsSection {
    /// The compaction keys, checked: each in its range, the reserve below
    /// the window.
    pub(crate) fn compaction(&self) -> Result<SessionsCompaction, String> {
        SESSIONS_CONTEXT_WINDOW.check(self.context_window)?;
        SESSIONS_RESERVE_TOKENS.check(self.reserve_tokens)?;
        SESSIONS_KEEP_RECENT_TOKENS.check(self.keep_recent_tokens)?;
        let mut out = SessionsCompaction {
            context_window: self.context_window,
            ..SessionsCompaction::default()
        };
        if let Some(reserve) = self.reserve_tokens {
            out.reserve_tokens = reserve;
        }
        if let Some(keep) = self.keep_recent_tokens {
            out.keep_recent_tokens = keep;
        }
        if let Some(window) = out.context_window
            && out.reserve_tokens >= window
        {
            return Err(format!(
                "sessions.reserve_tokens is {} and sessions.context_window {window}: the reserve \
                 must be below the window (or every message would compact the session)",
                out.reserve_tokens
            ));
        }
        Ok(out)
    }

    /// Checks the section and resolves it: `source` is the config file
    /// (a relative `path` is relative to its folder), `password` the
    /// `PGPASSWORD` value captured with the environment. The message names
    /// the key and what to write instead.
    pub(crate) fn resolve(
        &self,
        source: Option<&Path>,
        password: Option<SecretString>,
    ) -> Result<SessionsStore, String> {
        match self.store.as_deref() {
            None | Some("sqlite") => {
                if self.url.is_some() {
                    return Err(
                        "sessions.url is for store = \"postgres\"; the sqlite store takes `path`"
                            .into(),
                    );
                }
                let path = self
                    .path
                    .as_ref()
                    .map(|p| match source.and_then(Path::parent) {
                        Some(dir) if p.is_relative() => dir.join(p),
                        _ => p.clone(),
                    });
                if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                    return Err("sessions.path is empty".into());
                }
                Ok(SessionsStore::Sqlite(path))
            }
            Some("postgres") => {
                if self.path.is_some() {
                    return Err(
                        "sessions.path is for store = \"sqlite\"; the postgres store takes `url`"
                            .into(),
                    );
                }
                let Some(url) = self.url.as_deref() else {
                    return Err("store = \"postgres\" needs sessions.url = \
                         \"postgres://user@host:port/db\""
                        .into());
                };
                check_url(url)?;
                if cfg!(not(feature = "sessions-postgres")) {
                    return Err(crate::error::CliError::SessionsPostgresOff.to_string());
                }
                Ok(SessionsStore::Postgres {
                    url: url.to_owned(),
                    password,
                })
            }
            Some(other) => Err(format!(
                "sessions.store is {other:?}; use \"sqlite\" or \"postgres\""
            )),
        }
    }
}

/// A `postgres://` or `postgresql://` URL with no password in it.
fn check_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|_| {
        // The text is not quoted: it may hold a password.
        "sessions.url is not a URL; write postgres://user@host:port/db".to_owned()
    })?;
    if !matches!(parsed.scheme(), "postgres" | "postgresql") {
        return Err(format!(
            "sessions.url has the scheme `{}`; write postgres://user@host:port/db",
            parsed.scheme()
        ));
    }
    let in_query = parsed
        .query_pairs()
        .any(|(key, _)| key.eq_ignore_ascii_case("password"));
    if parsed.password().is_some() || in_query {
        return Err(format!(
            "sessions.url holds a password, and a password never sits in the config file: \
             remove it from the URL and set the {SESSIONS_PASSWORD_ENV} environment variable instead"
        ));
    }
    Ok(())
}

/// `url` with `password` added as the client's `password` option,
/// percent-encoded, for the Postgres client alone (never printed).
#[cfg_attr(not(feature = "sessions-postgres"), allow(dead_code))]
pub(crate) fn with_password(url: &str, password: &str) -> String {
    let mut encoded = String::with_capacity(password.len() * 3);
    for byte in password.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}password={encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> SessionsSection {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn sqlite_is_the_default_and_a_relative_path_follows_the_file() {
        let none = section("").resolve(None, None).unwrap();
        assert!(matches!(none, SessionsStore::Sqlite(None)), "{none:?}");
        let file = Path::new("/etc/oscova/config.toml");
        let rel = section("path = \"s.db\"")
            .resolve(Some(file), None)
            .unwrap();
        match rel {
            SessionsStore::Sqlite(Some(p)) => assert_eq!(p, Path::new("/etc/oscova/s.db")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_password_in_the_url_is_refused_and_never_quoted() {
        for url in [
            "postgres://alice:hunter2-secret@db:5432/oscova",
            "postgresql://alice@db/oscova?password=hunter2-secret",
            "postgres://alice@db/oscova?sslmode=disable&PASSWORD=hunter2-secret",
        ] {
            let text = format!("store = \"postgres\"\nurl = \"{url}\"");
            let err = section(&text).resolve(None, None).unwrap_err();
            assert!(err.contains("PGPASSWORD"), "{err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        let err = section("store = \"postgres\"\nurl = \"not a url hunter2\"")
            .resolve(None, None)
            .unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn keys_of_the_other_store_and_unknown_stores_are_refused() {
        let err = section("url = \"postgres://a@b/c\"")
            .resolve(None, None)
            .unwrap_err();
        assert!(err.contains("sessions.url"), "{err}");
        let err = section("store = \"postgres\"")
            .resolve(None, None)
            .unwrap_err();
        assert!(err.contains("needs sessions.url"), "{err}");
        let err = section("store = \"redis\"")
            .resolve(None, None)
            .unwrap_err();
        assert!(err.contains("\"sqlite\" or \"postgres\""), "{err}");
    }

    #[test]
    fn postgres_needs_the_feature() {
        let result =
            section("store = \"postgres\"\nurl = \"postgres://a@127.0.0.1/c\"").resolve(None, None);
        if cfg!(feature = "sessions-postgres") {
            assert!(matches!(result, Ok(SessionsStore::Postgres { .. })));
        } else {
            let err = result.unwrap_err();
            assert!(err.contains("sessions-postgres"), "{err}");
        }
    }

    #[test]
    fn compaction_is_automatic_only_with_a_window() {
        let none = section("").compaction().unwrap();
        assert_eq!(none.automatic(), None);
        assert_eq!(none.on_request().keep_recent_tokens, 20_000);
        let set = section("context_window = 8192\nreserve_tokens = 1024")
            .compaction()
            .unwrap()
            .automatic()
            .unwrap();
        assert_eq!(
            (
                set.context_window,
                set.reserve_tokens,
                set.keep_recent_tokens
            ),
            (8192, 1024, 20_000)
        );
        // pi's default reserve does not fit a small window.
        let err = section("context_window = 8192").compaction().unwrap_err();
        assert!(err.contains("reserve_tokens is 16384"), "{err}");
        let err = section("context_window = 0").compaction().unwrap_err();
        assert!(err.contains("sessions.context_window is 0"), "{err}");
    }

    #[test]
    fn the_password_is_encoded_as_an_option() {
        assert_eq!(
            with_password("postgres://a@h/db", "p&s w"),
            "postgres://a@h/db?password=p%26s%20w"
        );
        assert_eq!(
            with_password("postgres://a@h/db?sslmode=disable", "x"),
            "postgres://a@h/db?sslmode=disable&password=x"
        );
    }
}
