//! Starting processes on a tool's behalf without handing them the host's secrets.
//!
//! A process started for a plugin or tool must not inherit the host's environment as it
//! is: that is how `OPENAI_API_KEY` ends up in tool output. Every spawn therefore goes
//! through a [`ProcessSpawnPolicy`], which computes the complete environment itself; the
//! child starts from an emptied environment plus exactly that map. The rules, in the
//! order they apply:
//!
//! 1. The base environment (the host's, read at each spawn, or one given to
//!    [`ProcessSpawnPolicy::with_base_env`]) loses every deny-listed name
//!    ([`ProcessSpawnPolicy::is_denied`]). Over-denying is cheap, because a request can
//!    still pass the variable explicitly; under-denying leaks, so the rule errs wide.
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

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, Command};
use tokio_util::sync::CancellationToken;

/// How much of a failed process's stderr an error keeps; enough for a diagnosis, small
/// enough to sit in a log line or a model message.
const STDERR_CAP: usize = 4 * 1024;

/// Marks that the start of a captured stderr was cut off.
const TRUNCATION_MARK: &str = "…";

/// Exact names that are secrets on their own.
const DENIED_NAMES: [&str; 4] = ["API_KEY", "TOKEN", "SECRET", "PASSWORD"];

/// Suffixes of `UPPER_SNAKE` names that mark a secret, underscore included so that
/// `TOKENIZER_PATH` or `MAX_TOKENS` are not caught.
const DENIED_SUFFIXES: [&str; 4] = ["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Endings of the last part of a `Section__Key` name. That part is a `PascalCase` key, so
/// there is no underscore to anchor on: `BotToken` and `ClientSecret` must count.
const DENIED_KEY_ENDINGS: [&str; 5] = ["APIKEY", "API_KEY", "TOKEN", "SECRET", "PASSWORD"];

/// What a tool asks to start; a [`ProcessSpawnPolicy`] turns it into a
/// [`ProcessSpawnContext`].
#[derive(Clone)]
pub struct ProcessSpawnRequest {
    command: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    /// Kept in call order so that a later call for the same name wins.
    env: Vec<(String, Option<String>)>,
    time_zone: Option<String>,
    origin: Option<String>,
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

    fn command_name(&self) -> String {
        self.command.to_string_lossy().into_owned()
    }

    fn cancelled(&self) -> SpawnError {
        SpawnError::Cancelled {
            command: self.command_name(),
            origin: self.origin.clone(),
        }
    }

    fn io_error(&self, source: io::Error) -> SpawnError {
        SpawnError::Io {
            command: self.command_name(),
            origin: self.origin.clone(),
            source,
        }
    }

    fn spawn_error(&self, source: io::Error) -> SpawnError {
        if source.kind() != io::ErrorKind::NotFound {
            return self.io_error(source);
        }
        // A missing working directory also fails the spawn with "not found"; blaming the
        // program then would send the user looking in the wrong place.
        if let Some(dir) = &self.cwd
            && let Err(dir_error) = std::fs::metadata(dir)
        {
            return SpawnError::WorkingDir {
                command: self.command_name(),
                path: dir.clone(),
                origin: self.origin.clone(),
                source: dir_error,
            };
        }
        SpawnError::NotFound {
            command: self.command_name(),
            origin: self.origin.clone(),
            source,
        }
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
/// `Err` fails the spawn with [`SpawnError::Hook`].
pub type ProcessSpawnHook =
    Arc<dyn Fn(&mut ProcessSpawnContext) -> Result<(), String> + Send + Sync>;

/// What a successful process wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessOutput {
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
}

/// Why a process could not be prepared, started or completed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A host hook refused the spawn; no process was started.
    #[error("process environment hook failed: {message}")]
    Hook {
        /// What the hook said.
        message: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
    },
    /// An environment variable name or value cannot be passed to a process; no process
    /// was started.
    #[error(
        "invalid environment variable `{name}`{}: names must be non-empty without `=` or NUL, values without NUL",
        for_origin(.origin)
    )]
    InvalidEnv {
        /// The offending name.
        name: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
    },
    /// The requested time zone is not an IANA name; no process was started.
    #[error(
        "invalid time zone `{time_zone}`{}: expected an IANA name such as `Europe/Berlin`",
        for_origin(.origin)
    )]
    InvalidTimeZone {
        /// The requested zone.
        time_zone: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
    },
    /// The program does not exist.
    #[error("program `{command}` not found{}: is it installed and on PATH?", for_origin(.origin))]
    NotFound {
        /// The program that was asked for.
        command: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
        /// The error from the operating system.
        #[source]
        source: io::Error,
    },
    /// The working directory is missing or inaccessible.
    #[error(
        "working directory `{}` for `{command}`{} is not accessible",
        .path.display(),
        for_origin(.origin)
    )]
    WorkingDir {
        /// The program that was to run.
        command: String,
        /// The requested working directory.
        path: PathBuf,
        /// On whose behalf the process was to run.
        origin: Option<String>,
        /// The error from the operating system.
        #[source]
        source: io::Error,
    },
    /// The process ran and exited unsuccessfully (non-zero code or killed by a signal).
    #[error("`{command}`{} failed ({status}){}", for_origin(.origin), stderr_suffix(.stderr))]
    Failed {
        /// The program that ran.
        command: String,
        /// On whose behalf the process ran.
        origin: Option<String>,
        /// How it exited.
        status: ExitStatus,
        /// The end of its stderr, trimmed and at most 4 KiB; it may contain anything the
        /// program printed, so redact before showing it further.
        stderr: String,
    },
    /// The run was cancelled; a started process was killed.
    #[error("`{command}`{} was cancelled", for_origin(.origin))]
    Cancelled {
        /// The program that was to run or was running.
        command: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
    },
    /// Starting the process or talking to it failed.
    #[error("i/o error running `{command}`{}", for_origin(.origin))]
    Io {
        /// The program that was to run or was running.
        command: String,
        /// On whose behalf the process was to run.
        origin: Option<String>,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn for_origin(origin: &Option<String>) -> String {
    origin
        .as_deref()
        .map(|who| format!(" (for {who})"))
        .unwrap_or_default()
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

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
    /// - is `API_KEY`, `TOKEN`, `SECRET` or `PASSWORD`;
    /// - ends with `_API_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`;
    /// - has the `Section__Key` form (as .NET-style configuration binds nested keys) and
    ///   its last `__`-separated part ends with `ApiKey`, `API_KEY`, `Token`, `Secret` or
    ///   `Password`. No underscore is required there, so `Telegram__BotToken` and
    ///   `Auth__ClientSecret` are denied along with `OpenAI__ApiKey`;
    /// - was added with [`deny`](Self::deny).
    ///
    /// Names such as `AWS_SECRET_ACCESS_KEY` or `DATABASE_URL` carry secrets without
    /// matching these rules; hosts that have them add them with [`deny`](Self::deny).
    pub fn is_denied(&self, name: &str) -> bool {
        is_secret_name(name)
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

        let keep = |name: &OsStr| valid_env_name(name) && !self.is_denied_os(name);
        let mut env: BTreeMap<OsString, OsString> = match &self.inner.base {
            BaseEnv::Host => std::env::vars_os().filter(|(name, _)| keep(name)).collect(),
            BaseEnv::Fixed(vars) => vars
                .iter()
                .filter(|(name, _)| keep(name))
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

    /// Prepares and starts the process, writes `stdin` to it if given, and waits for it to
    /// exit, returning what it wrote to stdout and stderr.
    ///
    /// - Cancelling `cancel` kills the child and returns [`SpawnError::Cancelled`]
    ///   promptly.
    /// - A non-zero exit is [`SpawnError::Failed`], carrying the captured stderr, trimmed
    ///   and capped at 4 KiB.
    /// - A missing program is [`SpawnError::NotFound`], a missing working directory
    ///   [`SpawnError::WorkingDir`], other I/O errors [`SpawnError::Io`] with their source.
    ///
    /// Without `stdin` the child's stdin is the null device. Stdin is written while
    /// stdout and stderr are read, so a child that answers before reading everything, or
    /// never reads at all, cannot deadlock the run; a child that exits without reading is
    /// not an error in itself (its exit status decides). A token that is already cancelled
    /// starts nothing. Dropping the returned future also kills the child.
    ///
    /// Output is collected in memory without a limit; stderr is only capped in
    /// [`SpawnError::Failed`], where the last 4 KiB are kept because programs print their
    /// decisive error last.
    pub async fn run(
        &self,
        request: ProcessSpawnRequest,
        stdin: Option<Vec<u8>>,
        cancel: &CancellationToken,
    ) -> Result<ProcessOutput, SpawnError> {
        let context = self.prepare(request)?;
        if cancel.is_cancelled() {
            return Err(context.cancelled());
        }

        let mut command = context.to_command();
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command
            .spawn()
            .map_err(|source| context.spawn_error(source))?;
        let stdin_pipe = child.stdin.take();
        let stdout_pipe = child.stdout.take();
        let stderr_pipe = child.stderr.take();

        let finished = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            outcome = async {
                tokio::join!(
                    write_stdin(stdin_pipe, stdin),
                    read_pipe(stdout_pipe),
                    read_pipe(stderr_pipe),
                    child.wait(),
                )
            } => Some(outcome),
        };

        let Some((written, stdout, stderr, status)) = finished else {
            // An error here means the child already exited; either way it is gone and
            // reaped, which is all cancellation promises.
            let _already_gone = child.kill().await;
            return Err(context.cancelled());
        };

        let status = status.map_err(|source| context.io_error(source))?;
        let stderr = stderr.map_err(|source| context.io_error(source))?;
        if !status.success() {
            return Err(SpawnError::Failed {
                command: context.command_name(),
                origin: context.origin.clone(),
                status,
                stderr: stderr_summary(&stderr),
            });
        }
        let stdout = stdout.map_err(|source| context.io_error(source))?;
        written.map_err(|source| context.io_error(source))?;
        Ok(ProcessOutput { stdout, stderr })
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
            .field("hooks", &self.inner.hooks.len())
            .finish()
    }
}

fn ends_with_ignore_ascii_case(name: &str, suffix: &str) -> bool {
    name.len()
        .checked_sub(suffix.len())
        .and_then(|start| name.as_bytes().get(start..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
}

fn is_secret_name(name: &str) -> bool {
    if DENIED_NAMES
        .iter()
        .any(|denied| name.eq_ignore_ascii_case(denied))
        || DENIED_SUFFIXES
            .iter()
            .any(|suffix| ends_with_ignore_ascii_case(name, suffix))
    {
        return true;
    }
    name.rsplit_once("__").is_some_and(|(_, key)| {
        DENIED_KEY_ENDINGS
            .iter()
            .any(|ending| ends_with_ignore_ascii_case(key, ending))
    })
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

async fn write_stdin(pipe: Option<ChildStdin>, bytes: Option<Vec<u8>>) -> io::Result<()> {
    let (Some(mut pipe), Some(bytes)) = (pipe, bytes) else {
        return Ok(());
    };
    match pipe.write_all(&bytes).await {
        // The child closed its stdin early; its exit status says whether that was fine.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
    // Dropping the pipe here closes it, so the child sees end of input.
}

async fn read_pipe<R: AsyncRead + Unpin>(pipe: Option<R>) -> io::Result<Vec<u8>> {
    let mut buffer = Vec::new();
    if let Some(mut pipe) = pipe {
        pipe.read_to_end(&mut buffer).await?;
    }
    Ok(buffer)
}

fn stderr_summary(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_CAP {
        return text.to_owned();
    }
    let mut start = text.len() - (STDERR_CAP - TRUNCATION_MARK.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{TRUNCATION_MARK}{}", text.get(start..).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

    fn policy() -> ProcessSpawnPolicy {
        ProcessSpawnPolicy::with_base_env([
            ("PATH", PATH),
            ("HOME", "/home/tester"),
            ("LANG", "C.UTF-8"),
            ("OPENAI_API_KEY", "sk-base-openai"),
            ("GITHUB_TOKEN", "ghp_base"),
            ("DB_PASSWORD", "hunter22"),
            ("AWS_SECRET", "aws-base"),
            ("OpenAI__ApiKey", "sk-base-dotnet"),
            ("Telegram__BotToken", "tg-base"),
            ("INTERNAL_CRED", "internal-base"),
        ])
    }

    fn temp_path(tag: &str) -> PathBuf {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("oscova-process-{}-{tag}-{n}", std::process::id()))
    }

    fn env_of(output: &ProcessOutput) -> BTreeMap<String, String> {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }

    async fn run_env(
        policy: &ProcessSpawnPolicy,
        request: ProcessSpawnRequest,
    ) -> BTreeMap<String, String> {
        let output = policy
            .run(request, None, &CancellationToken::new())
            .await
            .expect("env runs");
        env_of(&output)
    }

    fn process_gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // A killed but not yet reaped child is a zombie: no longer running.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    async fn wait_for_pid(path: &Path) -> u32 {
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("child never wrote its pid");
    }

    #[test]
    fn deny_list_rules() {
        let policy = policy().deny("internal_cred");
        for name in [
            "OPENAI_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "AWS_SECRET",
            "API_KEY",
            "token",
            "Secret",
            "PASSWORD",
            "OpenAI__ApiKey",
            "OPENAI__APIKEY",
            "Telegram__BotToken",
            "Auth__ClientSecret",
            "Db__Password",
            "Smtp__Mail__SmtpPassword",
            "Legacy__OPENAI_API_KEY",
            "Section__Api_Key",
            "INTERNAL_CRED",
            "Internal_Cred",
        ] {
            assert!(policy.is_denied(name), "{name} should be denied");
        }
        for name in [
            "PATH",
            "HOME",
            "TZ",
            "MAX_TOKENS",
            "TOKENIZER_PATH",
            "MYTOKEN",
            "SECRETS_DIR",
            "PASSWORD_MIN_LENGTH",
            "Logging__MaxTokens",
            "Section__",
            "INTERNAL_CRED_PATH",
            "",
        ] {
            assert!(!policy.is_denied(name), "{name} should be kept");
        }
    }

    #[tokio::test]
    async fn spawned_env_has_no_denied_variables() {
        let policy = policy().deny("INTERNAL_CRED");
        let env = run_env(&policy, ProcessSpawnRequest::new("env")).await;
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "AWS_SECRET",
            "OpenAI__ApiKey",
            "Telegram__BotToken",
            "INTERNAL_CRED",
        ] {
            assert!(!env.contains_key(name), "{name} leaked: {env:?}");
        }
        assert_eq!(env.get("PATH").map(String::as_str), Some(PATH));
        assert_eq!(env.get("HOME").map(String::as_str), Some("/home/tester"));
        assert_eq!(env.get("LANG").map(String::as_str), Some("C.UTF-8"));
    }

    #[tokio::test]
    async fn host_environment_is_filtered_too() {
        let policy = ProcessSpawnPolicy::new();
        let context = policy
            .prepare(ProcessSpawnRequest::new("env"))
            .expect("prepares");
        for name in context.env.keys() {
            assert!(!policy.is_denied_os(name), "{name:?} leaked");
        }
        let host_path = std::env::var_os("PATH");
        assert_eq!(context.env.get(OsStr::new("PATH")), host_path.as_ref());
    }

    #[tokio::test]
    async fn explicit_token_reaches_only_its_process() {
        let policy = policy();
        let cancel = CancellationToken::new();
        let (with_token, without_token) = tokio::join!(
            policy.run(
                ProcessSpawnRequest::new("env").env("GITHUB_TOKEN", "ghp_given"),
                None,
                &cancel
            ),
            policy.run(ProcessSpawnRequest::new("env"), None, &cancel),
        );
        let with_token = env_of(&with_token.expect("first runs"));
        let without_token = env_of(&without_token.expect("second runs"));
        assert_eq!(
            with_token.get("GITHUB_TOKEN").map(String::as_str),
            Some("ghp_given")
        );
        assert!(!without_token.contains_key("GITHUB_TOKEN"));
    }

    #[tokio::test]
    async fn none_removes_and_later_calls_win() {
        let policy = policy();
        let env = run_env(
            &policy,
            ProcessSpawnRequest::new("env")
                .env_remove("HOME")
                .env("EXTRA", "1")
                .env_remove("EXTRA")
                .env("AGAIN", "old")
                .env_remove("AGAIN")
                .env("AGAIN", "new"),
        )
        .await;
        assert!(!env.contains_key("HOME"));
        assert!(!env.contains_key("EXTRA"));
        assert_eq!(env.get("AGAIN").map(String::as_str), Some("new"));
        assert!(env.contains_key("PATH"));
    }

    #[tokio::test]
    async fn time_zone_sets_tz() {
        let output = policy()
            .run(
                ProcessSpawnRequest::new("env")
                    .env("TZ", "America/New_York")
                    .time_zone("Europe/Berlin"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect("env runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.lines().any(|line| line == "TZ=Europe/Berlin"),
            "{text}"
        );
        assert!(!text.contains("America/New_York"));
    }

    #[test]
    fn invalid_time_zone_is_refused() {
        for tz in [
            "",
            "../../etc/passwd",
            "/etc/localtime",
            "Europe//Berlin",
            "Europe/Berlin/",
        ] {
            let error = policy()
                .prepare(ProcessSpawnRequest::new("env").time_zone(tz))
                .expect_err("refused");
            assert!(matches!(error, SpawnError::InvalidTimeZone { .. }), "{tz}");
        }
        for tz in [
            "UTC",
            "Etc/GMT+5",
            "America/Argentina/Buenos_Aires",
            "EST5EDT",
        ] {
            assert!(
                policy()
                    .prepare(ProcessSpawnRequest::new("env").time_zone(tz))
                    .is_ok(),
                "{tz}"
            );
        }
    }

    #[test]
    fn invalid_env_names_are_refused() {
        for name in ["", "A=B", "NUL\0"] {
            let error = policy()
                .prepare(ProcessSpawnRequest::new("env").env(name, "x"))
                .expect_err("refused");
            assert!(matches!(error, SpawnError::InvalidEnv { .. }), "{name:?}");
        }
        let error = policy()
            .prepare(ProcessSpawnRequest::new("env").env("OK", "bad\0value"))
            .expect_err("refused");
        assert!(matches!(error, SpawnError::InvalidEnv { ref name, .. } if name == "OK"));
    }

    #[tokio::test]
    async fn failing_hook_fails_spawn_and_starts_nothing() {
        let marker = temp_path("hook-marker");
        let policy = policy().hook(|_| Err("vault is locked".to_owned()));
        let error = policy
            .run(
                ProcessSpawnRequest::new("touch")
                    .arg(&marker)
                    .origin("plugin.vault"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("hook fails the spawn");
        assert!(
            matches!(&error, SpawnError::Hook { message, origin }
                if message == "vault is locked" && origin.as_deref() == Some("plugin.vault")),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "process environment hook failed: vault is locked"
        );
        assert!(!marker.exists(), "the process must not have started");
    }

    #[tokio::test]
    async fn hooks_run_in_order_after_everything_else() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (first, second) = (Arc::clone(&seen), Arc::clone(&seen));
        let policy = policy()
            .hook(move |context| {
                first.lock().expect("lock").push("first");
                // Runs after the request's values and TZ were applied.
                let tz = context
                    .env
                    .get(OsStr::new("TZ"))
                    .cloned()
                    .unwrap_or_default();
                let given = context
                    .env
                    .get(OsStr::new("GIVEN"))
                    .cloned()
                    .unwrap_or_default();
                let mut order = OsString::from("a");
                order.push(":");
                order.push(tz);
                order.push(":");
                order.push(given);
                context.env.insert("ORDER".into(), order);
                Ok(())
            })
            .hook(move |context| {
                second.lock().expect("lock").push("second");
                let mut order = context
                    .env
                    .get(OsStr::new("ORDER"))
                    .cloned()
                    .unwrap_or_default();
                order.push(":b");
                context.env.insert("ORDER".into(), order);
                Ok(())
            });
        let env = run_env(
            &policy,
            ProcessSpawnRequest::new("env")
                .env("GIVEN", "yes")
                .time_zone("UTC"),
        )
        .await;
        assert_eq!(env.get("ORDER").map(String::as_str), Some("a:UTC:yes:b"));
        assert_eq!(*seen.lock().expect("lock"), ["first", "second"]);
    }

    #[tokio::test]
    async fn hook_error_stops_later_hooks() {
        let later_ran = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&later_ran);
        let policy = policy().hook(|_| Err("no".to_owned())).hook(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        assert!(policy.prepare(ProcessSpawnRequest::new("env")).is_err());
        assert_eq!(later_ran.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn stdin_is_passed() {
        let output = policy()
            .run(
                ProcessSpawnRequest::new("cat"),
                Some(b"hello from stdin".to_vec()),
                &CancellationToken::new(),
            )
            .await
            .expect("cat runs");
        assert_eq!(output.stdout, b"hello from stdin");
        assert!(output.stderr.is_empty());
    }

    #[tokio::test]
    async fn large_stdin_does_not_deadlock() {
        // Far beyond a pipe buffer: cat blocks writing stdout unless it is read meanwhile.
        let input: Vec<u8> = (0..4 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        let output = tokio::time::timeout(
            Duration::from_secs(20),
            policy().run(
                ProcessSpawnRequest::new("cat"),
                Some(input.clone()),
                &CancellationToken::new(),
            ),
        )
        .await
        .expect("no deadlock")
        .expect("cat runs");
        assert_eq!(output.stdout, input);

        // A child that never reads its stdin.
        let output = tokio::time::timeout(
            Duration::from_secs(20),
            policy().run(
                ProcessSpawnRequest::new("sh").args(["-c", "echo done"]),
                Some(input),
                &CancellationToken::new(),
            ),
        )
        .await
        .expect("no deadlock")
        .expect("sh runs");
        assert_eq!(output.stdout, b"done\n");
    }

    #[tokio::test]
    async fn args_are_not_interpreted_by_a_shell() {
        let output = policy()
            .run(
                ProcessSpawnRequest::new("printf").args(["%s|%s", "$HOME; *", "`id`"]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect("printf runs");
        assert_eq!(output.stdout, b"$HOME; *|`id`");
    }

    #[tokio::test]
    async fn cwd_is_used() {
        let dir = std::env::temp_dir().canonicalize().expect("temp dir");
        let output = policy()
            .run(
                ProcessSpawnRequest::new("pwd").cwd(&dir),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect("pwd runs");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            dir.to_string_lossy()
        );
    }

    #[tokio::test]
    async fn missing_program_is_not_found() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("oscova-no-such-program").origin("plugin.x"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        assert!(
            matches!(&error, SpawnError::NotFound { command, .. } if command == "oscova-no-such-program"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "program `oscova-no-such-program` not found (for plugin.x): is it installed and on PATH?"
        );
        assert!(std::error::Error::source(&error).is_some());
    }

    #[tokio::test]
    async fn missing_working_directory_is_reported_as_such() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("env").cwd("/nonexistent/oscova/dir"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        assert!(matches!(error, SpawnError::WorkingDir { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn non_zero_exit_carries_stderr() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("sh")
                    .args(["-c", "echo partial; echo '  boom  ' >&2; exit 3"]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        match &error {
            SpawnError::Failed {
                command,
                status,
                stderr,
                ..
            } => {
                assert_eq!(command, "sh");
                assert_eq!(status.code(), Some(3));
                assert_eq!(stderr, "boom");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(error.to_string(), "`sh` failed (exit status: 3): boom");
    }

    #[tokio::test]
    async fn captured_stderr_is_capped_keeping_the_end() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("sh").args([
                    "-c",
                    "i=0; while [ $i -lt 2000 ]; do printf 'noise ü ' >&2; i=$((i+1)); done; echo FINAL >&2; exit 1",
                ]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        let SpawnError::Failed { stderr, .. } = error else {
            panic!("unexpected {error:?}");
        };
        assert!(stderr.len() <= STDERR_CAP, "{}", stderr.len());
        assert!(stderr.starts_with(TRUNCATION_MARK));
        assert!(stderr.ends_with("FINAL"));
    }

    #[tokio::test]
    async fn cancellation_kills_the_child() {
        let pid_file = temp_path("pid");
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let request = ProcessSpawnRequest::new("sh").args([
            OsString::from("-c"),
            OsString::from("echo $$ > \"$1\"; exec sleep 30"),
            OsString::from("sh"),
            pid_file.clone().into_os_string(),
        ]);
        let policy = policy();
        let (result, pid) = tokio::join!(policy.run(request, None, &cancel), async {
            let pid = wait_for_pid(&pid_file).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
            pid
        });
        let elapsed = started.elapsed();
        let _ = std::fs::remove_file(&pid_file);
        assert!(
            matches!(result, Err(SpawnError::Cancelled { .. })),
            "{result:?}"
        );
        assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "child {pid} still exists"
        );
    }

    #[tokio::test]
    async fn already_cancelled_starts_nothing() {
        let marker = temp_path("cancel-marker");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result = policy()
            .run(
                ProcessSpawnRequest::new("touch").arg(&marker),
                None,
                &cancel,
            )
            .await;
        assert!(matches!(result, Err(SpawnError::Cancelled { .. })));
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn dropping_the_run_kills_the_child() {
        let pid_file = temp_path("drop-pid");
        let request = ProcessSpawnRequest::new("sh").args([
            OsString::from("-c"),
            OsString::from("echo $$ > \"$1\"; exec sleep 30"),
            OsString::from("sh"),
            pid_file.clone().into_os_string(),
        ]);
        let policy = policy();
        let cancel = CancellationToken::new();
        let (timed_out, pid) = tokio::join!(
            tokio::time::timeout(
                Duration::from_millis(500),
                policy.run(request, None, &cancel)
            ),
            wait_for_pid(&pid_file),
        );
        let _ = std::fs::remove_file(&pid_file);
        assert!(timed_out.is_err());
        let deadline = Instant::now() + Duration::from_secs(2);
        while !process_gone(pid) {
            assert!(Instant::now() < deadline, "child {pid} survived the drop");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[test]
    fn debug_shows_no_environment_values() {
        let request = ProcessSpawnRequest::new("env").env("GITHUB_TOKEN", "ghp_secret_value");
        let text = format!("{request:?}");
        assert!(text.contains("GITHUB_TOKEN") && !text.contains("ghp_secret_value"));

        let policy = policy();
        let context = policy.prepare(request).expect("prepares");
        let text = format!("{context:?}");
        assert!(text.contains("GITHUB_TOKEN") && !text.contains("ghp_secret_value"));
        assert!(!text.contains(PATH));

        let text = format!("{policy:?}");
        assert!(!text.contains("sk-base-openai") && !text.contains(PATH));
    }

    #[test]
    fn policy_clones_share_configuration() {
        let base = policy();
        let denying = base.clone().deny("HOME");
        assert!(denying.is_denied("home"));
        assert!(
            !base.is_denied("HOME"),
            "builder calls must not affect other clones"
        );
        let copy = denying.clone();
        assert!(Arc::ptr_eq(&copy.inner, &denying.inner));
    }

    #[test]
    fn to_command_clears_the_environment() {
        let context = ProcessSpawnContext {
            command: "env".into(),
            args: vec!["-0".into()],
            cwd: None,
            env: BTreeMap::from([(OsString::from("ONLY"), OsString::from("this"))]),
            origin: None,
        };
        let command = context.to_command();
        let std_command = command.as_std();
        let envs: Vec<_> = std_command.get_envs().collect();
        assert_eq!(envs, [(OsStr::new("ONLY"), Some(OsStr::new("this")))]);
        assert_eq!(std_command.get_args().collect::<Vec<_>>(), ["-0"]);
    }
}
