//! The commands, one module each, dispatched from [`run`].
//!
//! Rules: a command gets the started host, the configuration and the
//! output format in [`Env`], prints its own output through
//! `crate::output`, and returns the exit status or a `CliError`; it never
//! exits the process itself. The host is shut down by the caller after the
//! command returns. Ctrl-C is watched only while a command waits on work
//! it can cancel ([`cancellable`]); the work winds down through its
//! cancellation token, so connections close and conversations stay valid.

mod blocks;
mod chat;
mod follow;
mod mcp;
mod models;
mod plugins;
mod provider;
mod serve;
mod sessions;
mod speech;
mod tools;
#[cfg(feature = "voice")]
mod voice;

use std::future::Future;

use oscova_core::{CancellationToken, PluginHost};

#[cfg(feature = "mcp-servers")]
pub(crate) use mcp::pin as pin_mcp_server;
#[cfg(feature = "mcp-servers")]
pub(crate) use mcp::{grant as mcp_grant, token_store as mcp_token_store};
#[cfg(feature = "mcp-servers")]
pub(crate) use serve::mcp_login_routes;

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
    /// The program's name (`oscova`, or the embedding host's).
    pub(crate) name: &'static str,
    /// The program's version.
    pub(crate) version: &'static str,
    /// The session extensions `chat --session` activates.
    pub(crate) extensions: Vec<oscova_agent::session::agent::ExtensionFactory>,
}

/// Runs one command.
pub(crate) async fn run(env: &Env, command: Command) -> Result<ExitStatus, CliError> {
    match command {
        Command::Plugins => plugins::run(env),
        Command::Tools(command) => tools::run(env, command).await,
        Command::Mcp(args) => mcp::run(env, args).await,
        Command::Serve(args) => serve::run(env, args).await,
        Command::Chat(args) => chat::run(env, args).await,
        #[cfg(feature = "voice")]
        Command::Voice(args) => voice::run(env, args).await,
        Command::Models(command) => models::run(env, command).await,
        Command::Speech(command) => speech::run(env, command).await,
        Command::Sessions(command) => sessions::run(env, command).await,
    }
}

/// Resolves on Ctrl-C; never, if the signal cannot be watched.
pub(super) async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs `work` to its end. On Ctrl-C it cancels `cancel` and keeps waiting
/// for `work`, which then ends with its own "cancelled" outcome after
/// closing what it opened; a second Ctrl-C stops waiting and gives `None`.
pub(super) async fn cancellable<T>(
    work: impl Future<Output = T>,
    cancel: &CancellationToken,
) -> Option<T> {
    tokio::pin!(work);
    tokio::select! {
        outcome = &mut work => return Some(outcome),
        () = interrupted() => cancel.cancel(),
    }
    tokio::select! {
        outcome = &mut work => Some(outcome),
        () = interrupted() => None,
    }
}
