//! `oscova mcp login` and `oscova mcp logout`: a person's consent for
//! an `[mcp.servers.NAME]` whose `oauth` has `grant =
//! "authorization_code"`.

use clap::Args;

/// `oscova mcp login`
#[derive(Debug, Args)]
pub(crate) struct McpLoginArgs {
    /// The server, as named in `[mcp.servers.NAME]` (its `oauth` has
    /// `grant = "authorization_code"`).
    pub(crate) name: String,
    /// Log this user in: their grant serves their calls of a `per_user`
    /// server. Without it, the host itself: its grant lists the server's
    /// tools at start (and `oscova mcp pin`) and serves a shared
    /// server's calls.
    #[arg(long, value_name = "USER")]
    pub(crate) user: Option<String>,
    /// Read the address the browser was sent back to from stdin (open the
    /// printed URL in any browser, log in, then paste the address it ends
    /// on), instead of waiting for the browser on
    /// `http://127.0.0.1:PORT/callback`: for a machine no browser can
    /// reach.
    #[arg(long)]
    pub(crate) paste: bool,
    /// How long to wait for the browser or the pasted address, in
    /// seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub(crate) wait_secs: u64,
}

/// `oscova mcp logout`: the grant revoked at the authorization server
/// (RFC 7009) and forgotten here.
#[derive(Debug, Args)]
pub(crate) struct McpLogoutArgs {
    /// The server, as named in `[mcp.servers.NAME]`.
    pub(crate) name: String,
    /// Forget this user's grant (default: the host's own).
    #[arg(long, value_name = "USER")]
    pub(crate) user: Option<String>,
}
