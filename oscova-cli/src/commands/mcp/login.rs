//! `oscova mcp login NAME [--user U] [--paste]` and `oscova mcp logout
//! NAME [--user U]`: a person's consent for an `[mcp.servers.NAME]`
//! whose `oauth` has `grant = "authorization_code"`, kept by the
//! `oscova.mcp` plugin.
//!
//! Rules: the grants are kept in the sessions' store: their SQLite file
//! (`[sessions] path`, else the default one) or, with `store =
//! "postgres"`, their Postgres database (`url`, the password from
//! `PGPASSWORD`), where every instance of a fleet finds them and one
//! refresh at a time holds across instances; sealed with the key in
//! `OSCOVA_TOKEN_KEY` (32 bytes as 64 hex digits or base64; never in
//! the config file nor beside the tokens). Without `--user` the grant
//! is the host's own (the listing at start, `oscova mcp pin`, a shared
//! server's calls). The authorization URL is printed alone on stdout
//! (with `--json`: `{"authorization_url", "redirect_uri"}` on one
//! line), what to do on stderr; the browser's redirect is taken on
//! `http://127.0.0.1:PORT/callback` (a port the system picks), or, with
//! `--paste`, the first line of stdin is the address the browser ended
//! on. Waiting ends after `--wait-secs`. `logout` asks the
//! authorization server to revoke the grant (RFC 7009) and forgets it,
//! saying whether the revocation went through. A server that is not
//! such a server, a missing key or a refused login is an error naming
//! what to fix.

use std::time::Duration;

use oscova_agent::session::SqliteStore;
use oscova_plugin_mcp::{
    ClientError, LoopbackRedirect, McpPluginBuilder, TOKEN_KEY_ENV, TokenKey, TokenStore,
};
use serde_json::json;

use crate::cli::{McpAction, McpLoginArgs, McpLogoutArgs};
use crate::config::{Config, SessionsStore};
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json_line, print_text, warn};

/// The token store in the sessions' store, sealed with `key`.
fn store_in_sessions(config: &Config, key: TokenKey) -> Result<TokenStore, CliError> {
    match config.sessions() {
        SessionsStore::Sqlite(Some(path)) => Ok(TokenStore::new(path.clone(), key)),
        SessionsStore::Sqlite(None) => Ok(TokenStore::new(SqliteStore::default_path()?, key)),
        #[cfg(feature = "sessions-postgres")]
        SessionsStore::Postgres { url, password } => {
            let config = match password {
                Some(password) => {
                    use oscova_core::ExposeSecret as _;
                    crate::config::sessions::with_password(url, password.expose_secret())
                }
                None => url.clone(),
            };
            Ok(TokenStore::postgres(config, key))
        }
        // Refused when the file was loaded; kept for the match.
        #[cfg(not(feature = "sessions-postgres"))]
        SessionsStore::Postgres { .. } => Err(CliError::SessionsPostgresOff),
    }
}

/// The token store, when `OSCOVA_TOKEN_KEY` holds a key.
///
/// # Errors
///
/// A key that is not one, or no default sessions file.
pub(crate) fn token_store(config: &Config) -> Result<Option<TokenStore>, String> {
    let key = TokenKey::from_env().map_err(|e| format!("`{TOKEN_KEY_ENV}`: {e}"))?;
    let Some(key) = key else {
        return Ok(None);
    };
    store_in_sessions(config, key)
        .map(Some)
        .map_err(|e| e.to_string())
}

fn login_error(name: &str, message: String) -> CliError {
    CliError::McpLogin(ClientError::Login {
        name: name.to_owned(),
        message,
    })
}

/// `builder` with the token store, or the error saying how to set one.
fn with_store(
    config: &Config,
    builder: McpPluginBuilder,
    name: &str,
) -> Result<McpPluginBuilder, CliError> {
    match token_store(config).map_err(|e| login_error(name, e))? {
        Some(store) => Ok(builder.token_store(store)),
        None => Err(login_error(
            name,
            format!(
                "`{TOKEN_KEY_ENV}` is not set: it holds the key that seals the grants at rest (32 bytes as 64 hex digits or base64, e.g. `openssl rand -hex 32`), and every process serving this server needs the same one"
            ),
        )),
    }
}

/// `oscova mcp login` or `logout` (or `pin`, handed on).
pub(crate) async fn grant(
    config: &Config,
    builder: McpPluginBuilder,
    action: &McpAction,
    json: bool,
) -> Result<ExitStatus, CliError> {
    match action {
        McpAction::Login(args) => login(config, builder, args, json).await,
        McpAction::Logout(args) => logout(config, builder, args, json).await,
        McpAction::Pin { name } => super::pin(config, builder, name).await,
    }
}

/// `oscova mcp login`.
async fn login(
    config: &Config,
    builder: McpPluginBuilder,
    args: &McpLoginArgs,
    json: bool,
) -> Result<ExitStatus, CliError> {
    let name = args.name.as_str();
    let user = args.user.as_deref();
    let builder = with_store(config, builder, name)?;
    let loopback = LoopbackRedirect::bind().await.map_err(|e| {
        login_error(
            name,
            format!("no port on 127.0.0.1 to take the redirect: {e}"),
        )
    })?;
    let login = builder
        .login(name, user, loopback.redirect_uri())
        .await
        .map_err(CliError::McpLogin)?;
    let whom = user.map_or_else(|| "the host".to_owned(), |u| format!("user `{u}`"));
    warn(&format!(
        "to log {whom} in to MCP server `{name}`, open this URL in a browser:"
    ));
    if json {
        print_json_line(&json!({
            "authorization_url": login.authorization_url(),
            "redirect_uri": login.redirect_uri(),
        }))?;
    } else {
        print_text(login.authorization_url())?;
    }
    let wait = Duration::from_secs(args.wait_secs);
    let redirected = if args.paste {
        warn("then paste here the address the browser ends on, and press Enter:");
        drop(loopback);
        let line = tokio::time::timeout(wait, read_line())
            .await
            .map_err(|_| {
                login_error(
                    name,
                    format!("nothing was pasted within {} s", args.wait_secs),
                )
            })?
            .map_err(|e| login_error(name, format!("reading stdin: {e}")))?;
        line.trim().to_owned()
    } else {
        warn(&format!(
            "waiting for the browser at {} (where no browser reaches this machine, use --paste)",
            login.redirect_uri()
        ));
        tokio::time::timeout(wait, loopback.wait())
            .await
            .map_err(|_| {
                login_error(
                    name,
                    format!("the browser did not come back within {} s", args.wait_secs),
                )
            })?
            .map_err(|e| login_error(name, format!("the loopback listener: {e}")))?
    };
    login
        .finish(&redirected)
        .await
        .map_err(|e| login_error(name, e))?;
    if json {
        print_json_line(&json!({"server": name, "user": user, "logged_in": true}))?;
    } else {
        print_text(&format!("logged {whom} in to MCP server `{name}`"))?;
    }
    Ok(ExitStatus::Success)
}

/// The first line of stdin.
async fn read_line() -> std::io::Result<String> {
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(std::io::Error::other)?
}

/// `oscova mcp logout`.
async fn logout(
    config: &Config,
    builder: McpPluginBuilder,
    args: &McpLogoutArgs,
    json: bool,
) -> Result<ExitStatus, CliError> {
    let name = args.name.as_str();
    let user = args.user.as_deref();
    let builder = with_store(config, builder, name)?;
    let out = builder
        .logout(name, user)
        .await
        .map_err(CliError::McpLogin)?;
    let whom = user.map_or_else(|| "the host".to_owned(), |u| format!("user `{u}`"));
    if let Some(why) = &out.not_revoked {
        warn(&format!(
            "the authorization server was not asked to revoke the grant ({why}); it is forgotten here all the same"
        ));
    }
    if json {
        print_json_line(&json!({
            "server": name, "user": user, "forgotten": out.forgotten,
            "revoked_at": out.revoked_at,
        }))?;
    } else if out.forgotten {
        let revoked = out
            .revoked_at
            .as_deref()
            .map(|issuer| format!(", revoked at `{issuer}`"))
            .unwrap_or_default();
        print_text(&format!(
            "forgot the grant of {whom} for MCP server `{name}`{revoked}"
        ))?;
    } else {
        print_text(&format!("{whom} had no grant for MCP server `{name}`"))?;
    }
    Ok(ExitStatus::Success)
}
