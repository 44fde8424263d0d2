//! Why a process could not be prepared, started or completed.
//!
//! Every variant names the program and, when the request said, on whose behalf it was to
//! run, so a message in a log or in front of a model can be acted on without the request
//! at hand.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

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
