//! `oscova serve`: MCP at `/mcp` and A2A on one port, for the users of
//! `[[mcp.tokens]]`.
//!
//! Rules: MCP is `oscova mcp --listen`'s server (`[mcp]` applied, the same
//! refusals); A2A is `oscova_a2a`'s service beside it, claiming the card,
//! `/`, `/message:*`, `/tasks` and below, with the same users (the
//! `[[mcp.tokens]]`; without tokens, loopback only and `--user`'s user).
//! Its tasks run the session agent with the launcher's extensions on the
//! provider and model `--provider`/`--model` name, else `[a2a]`'s (or
//! `[serve.a2a]`'s: one of the two, see `config/serve.rs`),
//! else the embedded `llamacpp` when linked (else `ollama`), and the
//! provider's configured model, else its own default (none is a usage
//! error, as for `oscova chat`); the provider's API key is the default
//! user's (`<KEY>.api_key`). Sessions are the `[sessions]` store's; tasks
//! are kept beside them: the same SQLite file, where a server starting
//! fails the tasks a previous process left running, or the same Postgres
//! database, where it leaves them (another instance of the fleet may be
//! running them). One line
//! `NAME serve: http://ADDR:PORT (MCP at /mcp, A2A card at
//! /.well-known/agent-card.json, voice at /voice/)` (the voice part with
//! the `voice` feature) goes to stderr once bound. SIGTERM or
//! Ctrl-C shuts down gracefully, then cancels the A2A runs. With `[a2a]`
//! agents, the results of long tasks that the A2A sessions sent are
//! followed and delivered to those sessions (`follow.rs`); with `[serve]
//! public_url` too, agents that push are asked to POST to
//! `{public_url}/a2a/followups/{id}`, served here without the users'
//! tokens (the per-task token is checked) to wake the follower. With
//! `[serve] public_url` and `[mcp.servers]`, `{public_url}/oauth/mcp/login`
//! is the start page of logins by link, where the person's token binds
//! the login to their browser, and `{public_url}/oauth/mcp/callback`
//! takes the authorization server's redirect of that browser only
//! (`serve/oauth.rs`). Every
//! path of the port, MCP's, A2A's and the follow-up route alike, meets one
//! Origin and Host policy first (`oscova_serve::Listener`'s: `[mcp]
//! allowed_origins` beside loopback origins; bound to loopback, a `Host`
//! naming this machine or `public_url`'s host), 403 otherwise. With the
//! `voice` feature, `/voice/` is a page that talks with the agent from the
//! browser's microphone and `/voice?session=NAME` its WebSocket, for the
//! same users (`serve/voice.rs`).

use std::sync::Arc;

use oscova_a2a::{A2aHandler, A2aServer, SqliteTaskStore, TaskStore};
use oscova_agent::session::SqliteStore;
use oscova_agent::session::agent::AgentHost;

use super::Env;
use super::mcp::{http_server, terminated};
use super::provider::select;
use crate::cli::{ProviderArgs, ServeArgs};
use crate::config::SessionsStore;
use crate::error::{CliError, ExitStatus};

#[cfg(feature = "mcp-servers")]
mod oauth;
#[cfg(feature = "voice")]
mod voice;

/// The start page and redirect URI of `[mcp.servers]` logins by link
/// when `oscova serve` is reached at `public_url` (`serve/oauth.rs`).
#[cfg(feature = "mcp-servers")]
pub(crate) fn mcp_login_routes(public_url: &str) -> (String, String) {
    oauth::login_routes(public_url)
}

pub(super) async fn run(env: &Env, args: ServeArgs) -> Result<ExitStatus, CliError> {
    let section = env.config.serve();
    let provider = ProviderArgs {
        provider: args
            .provider
            .clone()
            .or_else(|| section.a2a_provider().map(str::to_owned)),
        endpoint: None,
        offline: false,
    };
    let selected = select(env, &provider, args.user.user.as_deref())?;
    let mut model = selected.config;
    if let Some(name) = args.model.as_deref().or(section.a2a_model()).map(str::trim) {
        model.model = Some(name.to_owned()).filter(|m| !m.is_empty());
    }
    if model.model.is_none() {
        model.model = selected.provider.default_model();
    }
    if model.model.is_none() {
        return Err(CliError::NoModel {
            provider: model.provider.to_string(),
        });
    }
    let sessions = super::sessions::open_store(&env.config).await?;
    let (tasks, fleet) = task_store(env).await?;
    let mut agents = AgentHost::builder(env.host.clone(), sessions)
        .model_with_key(model.clone(), selected.api_key.clone());
    for extension in &env.extensions {
        agents = agents.add_extension_factory(extension.clone());
    }
    // One Origin and Host policy for the port, MCP's and A2A's alike (the
    // listener's): `[serve] public_url` names the port too, so its host is
    // a `Host` a reverse proxy on this machine may pass on.
    let public_host = section
        .public_url()
        .and_then(|url| reqwest::Url::parse(url).ok())
        .and_then(|url| url.host_str().map(str::to_owned));
    let mcp = http_server(
        env,
        args.user.user.as_deref(),
        args.allow_approval_required,
        args.names,
    )
    .await?
    .allowed_hosts(public_host)
    .bind(args.listen)
    .await
    .map_err(CliError::McpHttp)?;
    let addr = mcp.local_addr();
    let config = env.config.clone();
    let agents = agents.build()?;
    #[cfg(feature = "voice")]
    let voice = {
        let config = env.config.clone();
        voice::VoiceRoute::new(voice::VoiceSetup {
            agents: agents.clone(),
            auth: mcp.authenticator(),
            default_user: selected.user.clone(),
            users: Arc::new(move |id: &str| config.user(Some(id))),
            provider: model.provider.to_string(),
            model: model.model.clone(),
            voice: oscova_agent::session::voice::VoiceOptions::default()
                .with_recognition(env.config.voice_recognition(None, None))
                .with_synthesis(env.config.speech_synthesis(None))
                .with_offline(env.config.speech_offline()),
            routers: super::speech::routers(env),
        })
    };
    // Results of long A2A tasks the sessions sent go back to them.
    let following = super::follow::start(env, &agents);
    // One authenticator for the port: the MCP server's static tokens and
    // OAuth resource server (audience its `/mcp` URL, or the configured
    // `resource`), so an access token for `/mcp` serves A2A too and the
    // issuer's keys are fetched and cached once.
    let mut a2a = A2aServer::new(agents, tasks)
        .authenticator(mcp.authenticator())
        .default_user(selected.user.id())
        .users(Arc::new(move |id: &str| config.user(Some(id))))
        .card(section.card(env.name, env.version))
        .model(model.provider.to_string(), model.model.clone())
        .fail_unfinished_at_start(!fleet)
        .allow_approval_required(args.allow_approval_required)
        .input_wait(section.a2a_input_wait())
        .limits(section.limits(env.config.mcp().max_body_bytes()));
    // Agents asked to push (`[serve] public_url`) call this route.
    if let Some(following) = following
        .as_ref()
        .filter(|_| section.public_url().is_some())
    {
        a2a = a2a.followups(following.webhook_hook());
    }
    let a2a = a2a
        .handler(&format!("http://{addr}"))
        .await
        .map_err(CliError::A2a)?;
    #[cfg(feature = "voice")]
    eprintln!(
        "{} serve: http://{addr} (MCP at /mcp, A2A card at /.well-known/agent-card.json, voice at /voice/)",
        env.name
    );
    #[cfg(not(feature = "voice"))]
    eprintln!(
        "{} serve: http://{addr} (MCP at /mcp, A2A card at /.well-known/agent-card.json)",
        env.name
    );
    let service = a2a.clone();
    #[cfg(feature = "voice")]
    let talk = voice.clone();
    // `[mcp.servers]` logins by link come back here (`[serve] public_url`).
    #[cfg(feature = "mcp-servers")]
    let callback = section.public_url().map(|url| {
        oauth::Logins::new(
            crate::launcher::mcp_servers(&env.config),
            mcp.authenticator(),
            selected.user.id().to_owned(),
            url,
        )
    });
    #[cfg(feature = "mcp-servers")]
    let calls_back = callback.is_some();
    let served = mcp
        .serve_until_beside(
            move |path: &str| {
                #[cfg(feature = "mcp-servers")]
                if calls_back && oauth::Logins::serves(path) {
                    return true;
                }
                #[cfg(feature = "voice")]
                if voice::VoiceRoute::serves(path) {
                    return true;
                }
                A2aHandler::serves(path)
            },
            move |request: http::Request<oscova_serve::RequestBody>| {
                let service = service.clone();
                #[cfg(feature = "voice")]
                let talk = talk.clone();
                #[cfg(feature = "mcp-servers")]
                let callback = callback.clone();
                async move {
                    #[cfg(feature = "mcp-servers")]
                    if let Some(callback) =
                        callback.filter(|_| oauth::Logins::serves(request.uri().path()))
                    {
                        return callback.handle(request).await;
                    }
                    #[cfg(feature = "voice")]
                    if voice::VoiceRoute::serves(request.uri().path()) {
                        return talk.handle(request).await;
                    }
                    service.handle(request).await
                }
            },
            terminated(),
        )
        .await;
    a2a.cancel_runs();
    #[cfg(feature = "voice")]
    voice.cancel();
    served.map_err(CliError::McpHttp)?;
    Ok(ExitStatus::Success)
}

/// The tasks' store, beside the sessions: their SQLite file, or their
/// Postgres database (a fleet: `true`).
async fn task_store(env: &Env) -> Result<(Arc<dyn TaskStore>, bool), CliError> {
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
            let store = oscova_a2a::PostgresTaskStore::connect(&config)
                .await
                .map_err(|e| CliError::A2a(e.into()))?;
            return Ok((Arc::new(store), true));
        }
        // Refused when the file was loaded; kept for the match.
        #[cfg(not(feature = "sessions-postgres"))]
        SessionsStore::Postgres { .. } => return Err(CliError::SessionsPostgresOff),
    };
    let store = SqliteTaskStore::open(path)
        .await
        .map_err(|e| CliError::A2a(e.into()))?;
    Ok((Arc::new(store), false))
}
