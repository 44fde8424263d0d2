//! Where the MCP server, over HTTP or on stdio, keeps calls waiting
//! between 2026-07-28 rounds: `[mcp] waits`.
//!
//! Rules: `"sessions"` (the default) keeps them in the `[sessions]` store
//! (`oscova_mcp::wait`): its SQLite file, through the same writer as the
//! sessions and A2A tasks there, or its Postgres database (the password
//! from `PGPASSWORD`), so a retry carrying an answer is served by any
//! `oscova serve`, `oscova mcp --listen` or `oscova mcp` (stdio) process
//! on that store, another instance of a fleet or this one after a restart
//! (a stdio client that restarts its server retries with the same
//! `requestState`). `"memory"` keeps them
//! in this process only: a retry must reach it. The store is opened when
//! the server starts, so a store that cannot be opened stops it there.

use std::sync::Arc;

use oscova_agent::session::SqliteStore;
use oscova_mcp::http::McpHttpError;
use oscova_mcp::wait::{SqliteWaitStore, WaitStore};

use super::super::Env;
use crate::config::SessionsStore;
use crate::error::CliError;

/// The store `[mcp] waits` names, opened; `None` for memory.
pub(super) async fn open(env: &Env) -> Result<Option<Arc<dyn WaitStore>>, CliError> {
    if !env.config.mcp().waits_in_sessions() {
        return Ok(None);
    }
    let failed = |e| CliError::McpHttp(McpHttpError::WaitStore(e));
    let path = match env.config.sessions() {
        SessionsStore::Sqlite(Some(path)) => path.clone(),
        SessionsStore::Sqlite(None) => SqliteStore::default_path()?,
        #[cfg(feature = "sessions-postgres")]
        SessionsStore::Postgres { url, password } => {
            let config = match password {
                Some(password) => {
                    use oscova_core::ExposeSecret as _;
                    crate::config::sessions::with_password(url, password.expose_secret())
                }
                None => url.clone(),
            };
            let store = oscova_mcp::wait::PostgresWaitStore::connect(&config)
                .await
                .map_err(failed)?;
            return Ok(Some(Arc::new(store)));
        }
        // Refused when the file was loaded; kept for the match.
        #[cfg(not(feature = "sessions-postgres"))]
        SessionsStore::Postgres { .. } => return Err(CliError::SessionsPostgresOff),
    };
    let store = SqliteWaitStore::open(path).await.map_err(failed)?;
    Ok(Some(Arc::new(store)))
}
