//! The commands, one module each, dispatched from [`run`].
//!
//! Rules: a command gets the started host, the configuration and the
//! output format in [`Env`], prints its own output through
//! `crate::output`, and returns the exit status or a `CliError`; it never
//! exits the process itself. The host is shut down by the caller after the
//! command returns.

mod mcp;
mod plugins;
mod tools;

pub use mcp::{McpServer, serve_stdio};

use oscova_core::PluginHost;

use crate::cli::Command;
use crate::config::Config;
use crate::error::{CliError, ExitStatus};

/// What every command gets.
pub(crate) struct Env {
    /// The started host.
    pub(crate) host: PluginHost,
    /// The loaded configuration.
    pub(crate) config: Config,
    /// `--json` was given.
    pub(crate) json: bool,
}

/// Runs one command.
pub(crate) async fn run(env: &Env, command: Command) -> Result<ExitStatus, CliError> {
    match command {
        Command::Plugins => plugins::run(env),
        Command::Tools(command) => tools::run(env, command).await,
        Command::Mcp(args) => mcp::run(env, args).await,
        // Reserved: `Command::Speech(c) => speech::run(env, c).await` (issue 6,
        // `oscova-speech`), and `Command::Chat(a) => chat::run(env, a).await` /
        // `Command::Models(c) => models::run(env, c).await` (issue 7). Speech
        // refusals (offline with a non-local endpoint) map to
        // `ExitStatus::Refused` through a new `CliError` variant.
    }
}
