//! What a tool asks to start, and what the policy turns it into.
//!
//! A [`ProcessSpawnRequest`] is the caller's wish: program, arguments, working directory,
//! explicit variables, time zone. A [`ProcessSpawnContext`] is the policy's answer, the
//! complete description of the process, environment included, which hooks may still
//! rewrite. Neither `Debug` prints an environment value: explicit values are how tokens
//! reach a process, so they must never reach a log.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
#[cfg(feature = "process")]
use std::process::Stdio;
use std::sync::Arc;

#[cfg(feature = "process")]
use tokio::process::Command;

/// What a tool asks to start; a [`ProcessSpawnPolicy`](super::ProcessSpawnPolicy) turns it
/// into a [`ProcessSpawnContext`].
#[derive(Clone)]
pub struct ProcessSpawnRequest {
    pub(super) command: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) cwd: Option<PathBuf>,
    /// Kept in call order so that a later call for the same name wins.
    pub(super) env: Vec<(String, Option<String>)>,
    pub(super) time_zone: Option<String>,
    pub(super) origin: Option<String>,
}

impl ProcessSpawnRequest {
    /// A request to run `command` (a program name looked up on `PATH`, or a path) with no
    /// arguments.
    pub fn new(command: impl Into<OsString>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            time_zone: None,
            origin: None,
        }
    }

    /// Appends one argument, passed to the program as is.
    #[must_use]
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    /// Appends arguments, passed to the program as they are.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the working directory; without it the child starts in the host's.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Set a variable explicitly; applied after the deny-list and never filtered.
    ///
    /// The name is used exactly as given (environment names are case-sensitive on Unix).
    /// A later `env` or [`env_remove`](Self::env_remove) for the same name wins.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Remove a variable (an explicit `None`), whether it came from the base environment
    /// or an earlier [`env`](Self::env).
    #[must_use]
    pub fn env_remove(mut self, key: impl Into<String>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// Sets the child's time zone, an IANA name such as `Europe/Berlin`, as `TZ`; it wins
    /// over an explicit `TZ` variable.
    #[must_use]
    pub fn time_zone(mut self, tz: impl Into<String>) -> Self {
        self.time_zone = Some(tz.into());
        self
    }

    /// Says on whose behalf the process runs (free text such as a plugin id); it appears
    /// in error messages and is handed to hooks.
    #[must_use]
    pub fn origin(mut self, who: impl Into<String>) -> Self {
        self.origin = Some(who.into());
        self
    }
}

impl fmt::Debug for ProcessSpawnRequest {
    // Explicit values are how tokens reach a process, so they never reach a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str(),
                    if value.is_some() { "set" } else { "removed" },
                )
            })
            .collect();
        f.debug_struct("ProcessSpawnRequest")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("env", &env)
            .field("time_zone", &self.time_zone)
            .field("origin", &self.origin)
            .finish()
    }
}

/// The complete, final description of a process to start.
///
/// Hooks may change any field; what is here when they are done is exactly what starts.
#[derive(Clone)]
pub struct ProcessSpawnContext {
    /// The program: a name looked up on the `PATH` in [`env`](Self::env), or a path.
    pub command: OsString,
    /// The arguments, passed as a list.
    pub args: Vec<OsString>,
    /// The working directory; `None` keeps the host's.
    pub cwd: Option<PathBuf>,
    /// The whole environment of the child; nothing else is inherited.
    pub env: BTreeMap<OsString, OsString>,
    /// On whose behalf the process runs, for messages and logs.
    pub origin: Option<String>,
}

impl ProcessSpawnContext {
    /// A tokio [`Command`] that starts from a cleared environment and gets exactly
    /// [`env`](Self::env), the arguments as a list (never a shell), the working directory,
    /// stdin from the null device, stdout and stderr piped, and `kill_on_drop(true)`.
    #[cfg(feature = "process")]
    pub fn to_command(&self) -> Command {
        let mut command = Command::new(&self.command);
        command
            .args(&self.args)
            .env_clear()
            .envs(&self.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }
}

impl fmt::Debug for ProcessSpawnContext {
    // The environment is the one place secrets live by design; show names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessSpawnContext")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("origin", &self.origin)
            .finish()
    }
}

/// A host hook, run on every [`ProcessSpawnContext`] after the policy has built it; an
/// `Err` fails the spawn with [`SpawnError::Hook`](super::SpawnError::Hook).
pub type ProcessSpawnHook =
    Arc<dyn Fn(&mut ProcessSpawnContext) -> Result<(), String> + Send + Sync>;
