//! `oscova mcp`: the host's tools as an MCP server, over stdin and stdout
//! for one user, or over streamable HTTP (`--listen`) for many.
//!
//! Rules: the servers are `oscova_mcp::McpServer` and
//! `oscova_mcp::http::McpHttpServer`; this command only picks the
//! user (stdio, or HTTP without tokens) or the users (the config's
//! `[[mcp.tokens]]`), applies the `[mcp]` section, reports diagnostics on
//! stderr (stdout carries protocol messages only on stdio) and serves
//! until the client disconnects (stdio) or SIGTERM or Ctrl-C (HTTP, which
//! then shuts down gracefully). The tools it serves include the
//! `[mcp.servers]` ones (the `oscova.mcp` plugin, feature `mcp-servers`), so it is also a gateway
//! that re-serves other MCP servers with Oscova's policy applied: per-user
//! credentials, approval, redaction, hooks. `oscova mcp pin NAME` pins one
//! server's catalog instead of serving. The server's `serverInfo` is the
//! launcher's name and version. With `--listen`, one line
//! `NAME mcp: serving http://ADDR:PORT/mcp` goes to stderr once the
//! address is bound (with the port picked when 0 was given). Refusals to
//! start (no tokens on a non-loopback address, a short-name clash) are
//! usage errors, exit code 2. `--allow-approval-required` is the server's
//! own setting (it approves such calls itself); without it the person is
//! asked through MCP elicitation when the client declared it, and otherwise
//! the handler the launcher installed decides: the embedding host's
//! handler, else the call is refused with a reason naming the flag. Tools'
//! questions go to the client the same way. Beside the tools, both serve
//! prompts: the config's `[prompts.NAME]`, then the prompt forms of the
//! commands of the session extensions the launcher was given (the
//! `oscova` binary: `hello`, from `HelloExtension`'s `/hello`), one list
//! with unique names (`oscova_mcp::prompt::PromptSources`: a later
//! duplicate is `NAME:2`; the forms through `oscova_mcp::prompt::ExtensionPrompts`), then the
//! `[mcp.servers]` prompts as `SERVER__PROMPT`, and each user's
//! files root as `file:///` resources (`oscova_mcp::resource::FilesResources`:
//! through the files boundary, subscribable) and the `[mcp.servers]`
//! resources as `mcp://SERVER/URI` (`mcp/upstream.rs`: through the
//! `oscova.mcp` plugin's host API, over that user's own connection to the
//! server; an upstream's list change is passed on as the gateway's), with
//! completion of prompt arguments, file paths and template arguments.
//! A call waiting for the person between 2026-07-28 rounds is kept in the
//! `[sessions]` store (`[mcp] waits`, `mcp/waits.rs`), over HTTP and on
//! stdio alike, so the retry carrying the answer may reach any process on
//! that store: another instance, or the next `oscova mcp` a client started
//! after the last one stopped.

#[cfg(feature = "mcp-servers")]
mod login;
#[cfg(feature = "mcp-servers")]
mod upstream;
mod waits;

#[cfg(feature = "mcp-servers")]
pub(crate) use login::{grant, token_store};

use std::net::SocketAddr;

use oscova_mcp::McpServer;
use oscova_mcp::http::McpHttpServer;
use oscova_mcp::prompt::{ExtensionPrompts, PromptSources};
use oscova_mcp::resource::{FilesResources, ResourceSources};
#[cfg(feature = "mcp-servers")]
use oscova_plugin_mcp::McpPluginBuilder;

use super::Env;
use crate::cli::McpArgs;
#[cfg(feature = "mcp-servers")]
use crate::config::Config;
use crate::error::{CliError, ExitStatus};
#[cfg(feature = "mcp-servers")]
use crate::output::print_text;
use crate::output::warn;

pub(super) async fn run(env: &Env, args: McpArgs) -> Result<ExitStatus, CliError> {
    if let Some(addr) = args.listen {
        return serve_http(env, args, addr).await;
    }
    let scope = env
        .host
        .user_scope(env.config.user(args.user.user.as_deref()));
    for d in scope.diagnostics() {
        warn(&d.to_string());
    }
    let offer = Offer::of(env)?;
    let mut server = McpServer::new(scope).resources(offer.resources);
    if let Some(prompts) = offer.prompts {
        server = server.prompts(prompts);
    }
    if let Some(after) = env.config.mcp().task_after() {
        server = server.task_after(after);
    }
    server
        .server_info(env.name, env.version)
        .allow_approval_required(args.allow_approval_required)
        .tool_names(args.names.into())
        .map_err(CliError::McpNames)?
        .wait_store_arc(waits::open(env).await?)
        .serve_stdio()
        .await
        .map_err(CliError::Mcp)?;
    Ok(ExitStatus::Success)
}

/// The MCP HTTP server `--listen` (and `oscova serve`) binds, `[mcp]`
/// applied, its waiting calls kept where `[mcp] waits` says (`mcp/waits.rs`).
pub(super) async fn http_server(
    env: &Env,
    user: Option<&str>,
    allow_approval_required: bool,
    names: crate::cli::Names,
) -> Result<McpHttpServer, CliError> {
    let config = env.config.clone();
    let default_user = env.config.user(user);
    let offer = Offer::of(env)?;
    let mut server = McpHttpServer::new(env.host.clone()).resources(offer.resources);
    if let Some(prompts) = offer.prompts {
        server = server.prompts(prompts);
    }
    let server = server
        .server_info(env.name, env.version)
        .users(move |id: &str| config.user(Some(id)))
        .default_user(default_user.id())
        .allow_approval_required(allow_approval_required)
        .tool_names(names.into())
        .map_err(CliError::McpNames)?
        .wait_store_arc(waits::open(env).await?);
    Ok(env.config.mcp().apply(env.config.auth(), server))
}

async fn serve_http(env: &Env, args: McpArgs, addr: SocketAddr) -> Result<ExitStatus, CliError> {
    let server = http_server(
        env,
        args.user.user.as_deref(),
        args.allow_approval_required,
        args.names,
    )
    .await?
    .bind(addr)
    .await
    .map_err(CliError::McpHttp)?;
    eprintln!(
        "{} mcp: serving http://{}/mcp",
        env.name,
        server.local_addr()
    );
    server
        .serve_until(terminated())
        .await
        .map_err(CliError::McpHttp)?;
    Ok(ExitStatus::Success)
}

/// What `oscova mcp` serves beside the tools.
struct Offer {
    /// The config's `[prompts.NAME]`, then the extensions' prompt forms,
    /// then the `[mcp.servers]` prompts; `None` when there is none of
    /// them (no `prompts` capability then).
    prompts: Option<PromptSources>,
    /// The files root, then the `[mcp.servers]` resources.
    resources: ResourceSources,
}

impl Offer {
    fn of(env: &Env) -> Result<Self, CliError> {
        let mut sources = PromptSources::new();
        if !env.config.prompts().is_empty() {
            sources = sources.with(env.config.prompts().clone());
        }
        if !env.extensions.is_empty() {
            sources = sources.with(ExtensionPrompts::new(env.host.clone(), &env.extensions)?);
        }
        let resources = ResourceSources::new().with(FilesResources::new());
        // The servers' prompts and resources, through the plugin's host
        // API, when any server was loaded.
        #[cfg(feature = "mcp-servers")]
        let (sources, resources) = match env
            .host
            .service::<oscova_plugin_mcp::McpUpstreams>()
            .filter(|u| u.servers().next().is_some())
        {
            Some(upstreams) => {
                let upstreams = (*upstreams).clone();
                let (prompts, changes) = upstream::changes(&upstreams);
                (
                    sources.with(upstream::UpstreamPrompts::new(upstreams.clone(), prompts)),
                    resources.with(upstream::UpstreamResources::new(upstreams, changes)),
                )
            }
            None => (sources, resources),
        };
        Ok(Self {
            prompts: (!sources.is_empty()).then_some(sources),
            resources,
        })
    }
}

/// Resolves on SIGTERM or Ctrl-C (SIGINT).
pub(super) async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                () = super::interrupted() => {}
            }
            return;
        }
    }
    super::interrupted().await;
}

/// `oscova mcp pin NAME`: lists that server and writes its catalog, with
/// its hash, to the lock file beside the config.
#[cfg(feature = "mcp-servers")]
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
