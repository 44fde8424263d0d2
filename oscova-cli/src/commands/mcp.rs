//! `oscova mcp`: one user's tools as an MCP server over stdin and stdout.
//!
//! Rules: the server is `oscova_agent::mcp::McpServer` with its defaults;
//! this command only picks the user, reports the scope's diagnostics on
//! stderr (stdout carries protocol messages only) and serves until the
//! client disconnects. `--allow-approval-required` is the server's own
//! setting (it approves such calls itself); without it the person is asked
//! through MCP elicitation when the client declared it, and otherwise the
//! handler the launcher installed decides: the embedding host's handler,
//! else the call is refused with a reason naming the flag. Tools'
//! questions go to the client the same way.

use oscova_agent::mcp::McpServer;

use super::Env;
use crate::cli::McpArgs;
use crate::error::{CliError, ExitStatus};
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
