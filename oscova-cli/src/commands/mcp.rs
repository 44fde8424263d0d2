//! `oscova mcp`: one user's tools as an MCP server over stdin and stdout.
//!
//! Rules: the server is `oscova_agent::mcp::McpServer` with its defaults;
//! this command only picks the user, reports the scope's diagnostics on
//! stderr (stdout carries protocol messages only) and serves until the
//! client disconnects. The tools it serves include the `[mcp.servers]`
//! ones (the `oscova.mcp` plugin), so it is also a gateway that re-serves
//! other MCP servers with Oscova's policy applied: per-user credentials,
//! approval, redaction, hooks. `oscova mcp pin NAME` pins one server's
//! catalog instead of serving. `--allow-approval-required` is the server's own
//! setting (it approves such calls itself); without it the person is asked
//! through MCP elicitation when the client declared it, and otherwise the
//! handler the launcher installed decides: the embedding host's handler,
//! else the call is refused with a reason naming the flag. Tools'
//! questions go to the client the same way.

use oscova_agent::mcp::McpServer;
use oscova_plugin_mcp::McpPluginBuilder;

use super::Env;
use crate::cli::McpArgs;
use crate::config::Config;
use crate::error::{CliError, ExitStatus};
use crate::output::print_text;
use crate::output::warn;

pub(super) async fn run(env: &Env, args: McpArgs) -> Result<ExitStatus, CliError> {
    let scope = env
        .host
        .user_scope(env.config.user(args.user.user.as_deref()));
    for d in scope.diagnostics() {
        warn(&d.to_string());
    }
    McpServer::new(scope)
        .allow_approval_required(args.allow_approval_required)
        .serve_stdio()
        .await
        .map_err(CliError::Mcp)?;
    Ok(ExitStatus::Success)
}

/// `oscova mcp pin NAME`: lists that server and writes its catalog, with
/// its hash, to the lock file beside the config.
pub(crate) async fn pin(
    config: &Config,
    builder: McpPluginBuilder,
    name: &str,
) -> Result<ExitStatus, CliError> {
    let hash = builder.pin(name).await.map_err(CliError::McpPin)?;
    let lock = config
        .mcp_lock_file()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    print_text(&format!("pinned MCP server `{name}` ({hash}) in {lock}"))?;
    Ok(ExitStatus::Success)
}
