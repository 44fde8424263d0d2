//! Starting processes on a tool's behalf without handing them the host's secrets.
//!
//! A process started for a plugin or tool must not inherit the host's environment as it
//! is: that is how `OPENAI_API_KEY` ends up in tool output. Every spawn therefore goes
//! through a [`ProcessSpawnPolicy`], which computes the complete environment itself; the
//! child starts from an emptied environment plus exactly that map. The rules, in the
//! order they apply:
//!
//! 1. The base environment (the host's, read at each spawn, or one given to
//!    [`ProcessSpawnPolicy::with_base_env`]) loses every deny-listed variable: a name
//!    [`ProcessSpawnPolicy::is_denied`] matches, a value holding a URL with a password
//!    (`scheme://user:pass@host`), and a value containing any secret a
//!    [`Redactor`] given to [`ProcessSpawnPolicy::redacting`] knows (a host's policy is
//!    given the host's redactor, so every key the host has learnt is covered, wherever it
//!    sits in a variable). Over-denying is cheap, because a request can still pass the
//!    variable explicitly; under-denying leaks, so the rule errs wide. Variables that hand
//!    a child an agent or a bus acting for the user (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`,
//!    `DBUS_SESSION_BUS_ADDRESS`, `DOCKER_HOST`, `KRB5CCNAME`, any `*_SOCK`/`*_SOCKET`)
//!    are denied the same way, for every child: a child never learns where the user's
//!    agents listen unless its request passes the variable.
//! 2. Variables the request sets or removes explicitly are applied next and never
//!    filtered: the caller decided that this one process sees this value, and no other
//!    process does.
//! 3. The request's time zone sets `TZ`, so it wins over an explicit `TZ`.
//! 4. Host hooks run last, in order, and see the final context. A failing hook fails the
//!    spawn: falling back to the inherited environment is the very leak this module
//!    exists to stop.
//!
//! Arguments are passed as a list and never through a shell, so nothing in them is
//! interpreted. The child is killed when a run is cancelled or its future is dropped, so
//! an abandoned tool call leaves no process behind; only the direct child is killed, so a
//! program that forks helpers into the background must clean them up itself.
//!
//! The policy and [`ProcessSpawnPolicy::prepare`] are always there; starting a process
//! (`ProcessSpawnPolicy::run`, `ProcessSpawnContext::to_command`) needs the `process`
//! feature (on by default), which brings tokio's process driver.

mod denylist;
mod error;
mod request;
#[cfg(feature = "process")]
mod run;
#[cfg(all(test, feature = "process"))]
mod tests;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::sync::Arc;

pub use error::SpawnError;
pub use request::{ProcessSpawnContext, ProcessSpawnHook, ProcessSpawnRequest};
#[cfg(feature = "process")]
pub use run::ProcessOutput;

use crate::redact::Redactor;
use denylist::{has_url_password, is_agent_socket_name, is_secret_name};

/// Where the base environment comes from.
#[derive(Clone)]
enum BaseEnv {
    /// The host process environment, read at each spawn so it matches what the host sees.
    Host,
    /// A fixed environment given by the embedding host.
    Fixed(BTreeMap<OsString, OsString>),
}

#[derive(Clone)]
struct PolicyInner {
    base: BaseEnv,
    /// Host-added names; compared ignoring ASCII case.
    denied: Vec<String>,
    /// Whose known secrets no inherited value may contain.
    redactors: Vec<Redactor>,
    hooks: Vec<ProcessSpawnHook>,
}

/// Decides the environment of every process started on a tool's behalf, and starts it.
///
/// Cheap to clone: the configuration sits behind an [`Arc`], so clones share it.
#[derive(Clone)]
pub struct ProcessSpawnPolicy {
    inner: Arc<PolicyInner>,
}

impl ProcessSpawnPolicy {
    /// Starts from the host process environment.
    ///
    /// The environment is read each time a process is prepared, not captured here.
    pub fn new() -> Self {
        Self::from_base(BaseEnv::Host)
    }

    /// Starts from a given base environment instead (tests, embedding hosts).
    pub fn with_base_env<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let vars = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        Self::from_base(BaseEnv::Fixed(vars))
    }

    fn from_base(base: BaseEnv) -> Self {
        Self {
            inner: Arc::new(PolicyInner {
                base,
                denied: Vec::new(),
                redactors: Vec::new(),
                hooks: Vec::new(),
            }),
        }
    }

    /// Also deny these exact names (case-insensitive).
    #[must_use]
    pub fn deny(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        let inner = Arc::make_mut(&mut self.inner);
        if !inner.denied.iter().any(|d| d.eq_ignore_ascii_case(&name)) {
            inner.denied.push(name);
        }
        self
    }

    /// Also drop every inherited variable whose value contains a secret `redactor`
    /// knows, now or later (clones of a redactor share its values, so one added after
    /// this call counts). Explicit variables are not checked: the caller chose them.
    ///
    /// ```
    /// use oscova_core::{process::ProcessSpawnPolicy, process::ProcessSpawnRequest, redact::Redactor};
    ///
    /// let redactor = Redactor::new();
    /// let policy = ProcessSpawnPolicy::with_base_env([("NOTE", "key sk-known-1234 here")])
    ///     .redacting(&redactor);
    /// redactor.add("sk-known-1234");
    /// let context = policy.prepare(ProcessSpawnRequest::new("env"))?;
    /// assert!(context.env.is_empty());
    /// # Ok::<(), oscova_core::process::SpawnError>(())
    /// ```
    #[must_use]
    pub fn redacting(mut self, redactor: &Redactor) -> Self {
        Arc::make_mut(&mut self.inner)
            .redactors
            .push(redactor.clone());
        self
    }

    /// Append a host hook; hooks run in order after everything else.
    #[must_use]
    pub fn hook(
        mut self,
        hook: impl Fn(&mut ProcessSpawnContext) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Arc::make_mut(&mut self.inner).hooks.push(Arc::new(hook));
        self
    }

    /// Whether a variable name is removed by the deny-list.
    ///
    /// Names compare ignoring ASCII case. A name is denied when it:
    /// - contains `PASSWORD`, `PASSWD`, `SECRET`, `TOKEN`, `CREDENTIAL` or `PRIVATE`
    ///   (`PGPASSWORD`, `AWS_SECRET_ACCESS_KEY`, `CREDENTIALS`, `Auth__ClientSecret`);
    /// - ends with `_KEY`, `_APIKEY`, `_PAT`, `_AUTH`, `_PWD`, `_DSN` or `_WEBHOOK_URL`
    ///   (`SECRET_KEY`, `AZURE_OPENAI_KEY`, `GITHUB_PAT`, `NPM_AUTH`, `MYSQL_PWD`,
    ///   `SENTRY_DSN`, `SLACK_WEBHOOK_URL`), or is `KEY`, `APIKEY` or `DSN`; the
    ///   underscore keeps `PWD` (the working directory), `OLDPWD` and `MONKEY` out;
    /// - names a data store's address: ends with `_URL`, `_URI` or `_CONNECTION_STRING`
    ///   and has a word starting with `DATABASE`, `DB`, `REDIS`, `MONGO`, `AMQP`, `RABBIT`,
    ///   `POSTGRES`, `PG`, `MYSQL`, `MARIADB`, `MSSQL`, `SQL`, `ELASTIC`, `OPENSEARCH`,
    ///   `CLICKHOUSE`, `CASSANDRA`, `KAFKA` or `MEMCACHE` (`DATABASE_URL`, `REDIS_URL`,
    ///   `MONGODB_URI`);
    /// - has the `Section__Key` form (as .NET-style configuration binds nested keys) and
    ///   its last part ends with `Key`, `Pat`, `Auth`, `Pwd`, `Dsn`, `WebhookUrl` or
    ///   `ConnectionString` (`OpenAI__ApiKey`, `Jwt__SigningKey`), or one part is
    ///   `ConnectionStrings`;
    /// - hands a child an agent's or a bus's socket: `SSH_AUTH_SOCK`, `SSH_AGENT_PID`,
    ///   `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, `DBUS_SYSTEM_BUS_ADDRESS`,
    ///   `DBUS_STARTER_ADDRESS`, `GNOME_KEYRING_CONTROL`, `GNOME_KEYRING_PID`, `DOCKER_HOST`,
    ///   `CONTAINER_HOST`, `KRB5CCNAME`, `KRB5_KTNAME`, `SYSTEMD_NOTIFY_SOCKET`, or any name
    ///   ending with `_SOCK` or `_SOCKET` (a child with the ssh agent's socket can sign as
    ///   the user);
    /// - was added with [`deny`](Self::deny).
    ///
    /// `PATH`, `HOME`, `LANG`, `PWD`, `TERM` and `TZ` pass. Values are judged too, when
    /// the environment is prepared: see the module docs.
    pub fn is_denied(&self, name: &str) -> bool {
        is_secret_name(name)
            || is_agent_socket_name(name)
            || self
                .inner
                .denied
                .iter()
                .any(|denied| denied.eq_ignore_ascii_case(name))
    }

    fn is_denied_os(&self, name: &OsStr) -> bool {
        // A name that is not UTF-8 is judged on its readable part; the replacement
        // character never hides a suffix.
        self.is_denied(&name.to_string_lossy())
    }

    /// Whether an inherited value is a secret whatever its name: it holds a URL with a
    /// password, or a value one of the policy's redactors knows.
    fn is_secret_value(&self, value: &OsStr) -> bool {
        let text = value.to_string_lossy();
        has_url_password(&text)
            || self
                .inner
                .redactors
                .iter()
                .any(|redactor| matches!(redactor.redact(&text), Cow::Owned(_)))
    }

    /// Builds the context: the base environment minus the deny-list, plus the request's
    /// explicit variables (a value sets, `None` removes), then `TZ` from the time zone, then
    /// the hooks in order.
    ///
    /// A hook error fails with [`SpawnError::Hook`] (`process environment hook failed:
    /// <message>`), never falling back to the inherited environment, and later hooks do
    /// not run. Base variables whose names could not be passed on are dropped; an invalid
    /// explicit or hook-set variable fails with [`SpawnError::InvalidEnv`], and a time zone
    /// that is not an IANA name with [`SpawnError::InvalidTimeZone`].
    pub fn prepare(&self, request: ProcessSpawnRequest) -> Result<ProcessSpawnContext, SpawnError> {
        let ProcessSpawnRequest {
            command,
            args,
            cwd,
            env: explicit,
            time_zone,
            origin,
        } = request;

        let keep = |name: &OsStr, value: &OsStr| {
            valid_env_name(name) && !self.is_denied_os(name) && !self.is_secret_value(value)
        };
        let mut env: BTreeMap<OsString, OsString> = match &self.inner.base {
            BaseEnv::Host => std::env::vars_os()
                .filter(|(name, value)| keep(name, value))
                .collect(),
            BaseEnv::Fixed(vars) => vars
                .iter()
                .filter(|(name, value)| keep(name, value))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
        };

        for (name, value) in explicit {
            if !valid_env_name(OsStr::new(&name)) {
                return Err(SpawnError::InvalidEnv { name, origin });
            }
            match value {
                Some(value) => {
                    env.insert(name.into(), value.into());
                }
                None => {
                    env.remove(OsStr::new(&name));
                }
            }
        }

        if let Some(time_zone) = time_zone {
            if !valid_time_zone(&time_zone) {
                return Err(SpawnError::InvalidTimeZone { time_zone, origin });
            }
            env.insert("TZ".into(), time_zone.into());
        }

        let mut context = ProcessSpawnContext {
            command,
            args,
            cwd,
            env,
            origin,
        };
        for hook in &self.inner.hooks {
            hook(&mut context).map_err(|message| SpawnError::Hook {
                message,
                origin: context.origin.clone(),
            })?;
        }

        // Hooks and explicit values are checked here rather than left to the spawn, whose
        // error would not say which variable was wrong.
        if let Some((name, _)) = context
            .env
            .iter()
            .find(|(name, value)| !valid_env_name(name) || value.as_encoded_bytes().contains(&0))
        {
            return Err(SpawnError::InvalidEnv {
                name: name.to_string_lossy().into_owned(),
                origin: context.origin,
            });
        }
        Ok(context)
    }
}

impl Default for ProcessSpawnPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ProcessSpawnPolicy {
    // The base environment holds the host's secrets; show only its shape.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match &self.inner.base {
            BaseEnv::Host => "host".to_owned(),
            BaseEnv::Fixed(vars) => format!("{} fixed variables", vars.len()),
        };
        f.debug_struct("ProcessSpawnPolicy")
            .field("base", &base)
            .field("denied", &self.inner.denied)
            .field("redactors", &self.inner.redactors.len())
            .field("hooks", &self.inner.hooks.len())
            .finish()
    }
}

fn valid_env_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    !bytes.is_empty() && !bytes.contains(&b'=') && !bytes.contains(&0)
}

/// Accepts the shape of IANA names (`UTC`, `Europe/Berlin`, `Etc/GMT+5`) and nothing else:
/// `TZ` can also name a file, so `..` and absolute paths are kept out.
fn valid_time_zone(tz: &str) -> bool {
    !tz.is_empty()
        && tz.len() <= 64
        && tz.split('/').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+'))
        })
}
