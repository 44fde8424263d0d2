//! `oscova sessions ...` as clap types: list, show, export, import and
//! delete a user's sessions.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::UserArg;

/// `oscova sessions ...`
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List the user's sessions, the most recently changed first.
    List(SessionsListArgs),
    /// Show a session's entries (id, parent, type, text), the leaf marked;
    /// with `--json`, `{"session", "leaf", "entries": [{"id", "parent_id",
    /// "type", ...}]}`.
    Show(SessionNameArgs),
    /// Write a session to a file in another program's format.
    Export(ExportArgs),
    /// Store a session file as a new session of the user.
    Import(ImportArgs),
    /// Delete a session with all its entries.
    Delete(SessionNameArgs),
}

/// `oscova sessions list`
#[derive(Debug, Args)]
pub(crate) struct SessionsListArgs {
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// `oscova sessions show` and `delete`
#[derive(Debug, Args)]
pub(crate) struct SessionNameArgs {
    /// The session's name.
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// A session file format, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SessionFormat {
    /// pi's JSONL session file (format v3; v2 files are migrated on import).
    Pi,
}

/// `oscova sessions export`
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The session's name.
    pub(crate) name: String,
    /// The file format.
    #[arg(long, value_enum)]
    pub(crate) format: SessionFormat,
    /// The file to write (replaced if it exists): a regular file, made
    /// readable and writable by you alone (mode 0600), as the session is.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: PathBuf,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// `oscova sessions import`
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The session file: a regular file of at most 256 MiB.
    pub(crate) file: PathBuf,
    /// The file format.
    #[arg(long, value_enum)]
    pub(crate) format: SessionFormat,
    /// The new session's name (default: the file's name without its
    /// extension); refused when the user already has one so named.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) user: UserArg,
}
