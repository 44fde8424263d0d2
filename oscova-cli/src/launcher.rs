//! The entry points: [`run`], [`run_with`] and [`Launcher`].
//!
//! Rules: parsing, configuration, host start-up and the command all happen
//! inside [`Launcher::run_from`], which never panics, prints every error
//! itself (as JSON on stdout with `--json`, else as one line on stderr),
//! and turns it into the documented exit code. clap's own errors keep
//! clap's output and code (2; 0 for `--help` and `--version`). The
//! launcher wires no particular plugin: it gives the host each user's files
//! root ([`Config::files_root`], one folder per user, never the working
//! directory), which plugins that work on files read from their context;
//! the host's own builder settings come after and can change that. The
//! program's name and version ([`Launcher::name`], [`Launcher::version`])
//! are what `--version`, the MCP server's `serverInfo` and every message
//! that names a command show: an embedding host's own, not `oscova`'s.

use std::ffi::OsString;
use std::fmt;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};
use oscova_core::{
    ExposeSecret, PluginHost, PluginHostBuilder, host::ApprovalHandler, plugin::PluginRegistration,
    process::ProcessSpawnPolicy, redact::Redactor,
};

#[cfg(feature = "mcp-servers")]
use oscova_plugin_mcp::{McpPlugin, McpPluginBuilder};

use oscova_agent::session::agent::{Extension, ExtensionFactory, extension_factory};

use crate::approval::{Asker, CliApproval};
use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::error::{CliError, ExitStatus};
use crate::interact::TerminalInteraction;

type Customize = Box<dyn FnOnce(PluginHostBuilder) -> PluginHostBuilder>;

/// How many slow synchronous tool bodies `oscova mcp` runs at once, off
/// the runtime's workers; later calls wait their turn (quick ones run in
/// place, see `PluginHostBuilder::blocking_sync_tools`).
const SERVING_SYNC_TOOLS: usize = 16;

/// Runs the `oscova` command line over every plugin linked into this
/// binary, with the process arguments.
///
/// A linker drops plugin crates that nothing references; name yours with
/// [`run_with`] so they are kept.
pub fn run() -> ExitCode {
    Launcher::new().run()
}

/// Runs the `oscova` command line over every linked plugin, making sure the
/// listed ones are loaded even if the linker dropped their registration.
///
/// A host binary that links its own plugins is three lines:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     oscova_cli::run_with(oscova_core::linked_plugins![
///         example_hello_plugin::ExampleAgentPlugin,
///     ])
/// }
/// ```
pub fn run_with(plugins: impl IntoIterator<Item = PluginRegistration>) -> ExitCode {
    Launcher::new().plugins(plugins).run()
}

/// The `oscova` command line, configured for one host binary.
///
/// ```
/// use oscova_cli::Launcher;
///
/// let code = Launcher::new()
///     .plugins(oscova_core::linked_plugins![example_hello_plugin::ExampleAgentPlugin])
///     .host_builder(|b| b.strict(true))
///     .run_from(["oscova", "--config", "/nonexistent.toml", "plugins"]);
/// assert_eq!(code, oscova_cli::ExitStatus::Usage); // the explicit config file is missing
/// ```
pub struct Launcher {
    name: &'static str,
    version: &'static str,
    plugins: Vec<PluginRegistration>,
    customize: Option<Customize>,
    approval: Option<Arc<dyn ApprovalHandler>>,
    extensions: Vec<ExtensionFactory>,
}

impl fmt::Debug for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launcher")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("plugins", &self.plugins)
            .field("customize", &self.customize.is_some())
            .field("approval", &self.approval.is_some())
            .field("extensions", &self.extensions.len())
            .finish()
    }
}

impl Default for Launcher {
    fn default() -> Self {
        Self::new()
    }
}

impl Launcher {
    /// A launcher over every linked plugin.
    pub fn new() -> Self {
        Self {
            name: "oscova",
            version: env!("CARGO_PKG_VERSION"),
            plugins: Vec::new(),
            customize: None,
            approval: None,
            extensions: Vec::new(),
        }
    }

    /// The program's name (default `oscova`): what `--version` prints, the
    /// name the MCP server gives its clients (`serverInfo.name`), and the
    /// command messages tell the person to run (`NAME tools list`). Give
    /// your binary's, usually `env!("CARGO_PKG_NAME")` or `env!("CARGO_BIN_NAME")`.
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// The program's version (default: this crate's): what `--version`
    /// prints and the MCP server gives its clients (`serverInfo.version`).
    /// Give your binary's, usually `env!("CARGO_PKG_VERSION")`.
    pub fn version(mut self, version: &'static str) -> Self {
        self.version = version;
        self
    }

    /// The command line this launcher parses, with its name and version:
    /// for shell completions, man pages, or checking a README against it.
    pub fn command(&self) -> clap::Command {
        Cli::command().name(self.name).version(self.version)
    }

    /// Loads these plugins too, even if the linker dropped their
    /// registration (as [`PluginHostBuilder::also_load`] does), first
    /// and in this order, then every other linked plugin: the order decides
    /// the catalog's order and, for two tools with one wire name, which is
    /// kept (the earlier).
    ///
    /// Every user's files root is a directory under
    /// [`Config::files_root`] (`OSCOVA_FILES_ROOT`, the config's
    /// `files_root`, else the platform data directory), handed to plugins
    /// through their context.
    pub fn plugins(mut self, plugins: impl IntoIterator<Item = PluginRegistration>) -> Self {
        self.plugins.extend(plugins);
        self
    }

    /// Adjusts the host builder after the CLI has set credentials, the
    /// default approval policy and the spawn policy from the config (so
    /// this can override them) and before it installs its approval
    /// handler (so use [`approval_handler`](Self::approval_handler) for
    /// approval). For example `|b| b.plugins(list)` loads exactly `list`.
    pub fn host_builder(
        mut self,
        customize: impl FnOnce(PluginHostBuilder) -> PluginHostBuilder + 'static,
    ) -> Self {
        self.customize = Some(Box::new(customize));
        self
    }

    /// The host's own approval policy. The CLI asks it before it asks the
    /// terminal; a yes approves the call, a no leaves the decision to the
    /// command's flags and the terminal.
    pub fn approval_handler(mut self, handler: impl ApprovalHandler) -> Self {
        self.approval = Some(Arc::new(handler));
        self
    }

    /// Adds a session extension (made with `T::default()`, one instance
    /// per session) to `chat --session`: its tools, its slash commands
    /// (listed by `/help`) and its handlers, in the order added.
    pub fn extension<T: Extension + Default>(mut self) -> Self {
        self.extensions.push(extension_factory::<T>());
        self
    }

    /// Runs with the process arguments.
    pub fn run(self) -> ExitCode {
        self.run_from(std::env::args_os()).into()
    }

    /// Runs with these arguments (the first is the program name).
    pub fn run_from<I, T>(self, args: I) -> ExitStatus
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        crate::output::set_program(self.name);
        let parsed = self
            .command()
            .try_get_matches_from(args)
            .and_then(|matches| Cli::from_arg_matches(&matches));
        let cli = match parsed {
            Ok(cli) => cli,
            Err(e) => {
                let _ = e.print();
                return match e.exit_code() {
                    0 => ExitStatus::Success,
                    _ => ExitStatus::Usage,
                };
            }
        };
        let json = cli.json;
        match self.execute(cli) {
            Ok(status) => status,
            Err(e) => {
                crate::output::print_error(&e, json);
                e.exit_status()
            }
        }
    }

    fn execute(mut self, cli: Cli) -> Result<ExitStatus, CliError> {
        let config = Config::load(cli.config.as_deref())?;
        // From here on nothing printed may show a configured secret.
        let secrets = Redactor::new();
        for secret in config.secret_values() {
            secrets.add(secret.expose_secret());
        }
        crate::output::redact_with(&secrets);
        let asker = match &cli.command {
            Command::Tools(crate::cli::ToolsCommand::Call(args)) => {
                Asker::Terminal { yes: args.yes }
            }
            Command::Chat(args) => Asker::Terminal { yes: args.yes },
            Command::Mcp(args) => Asker::Mcp {
                allow: args.allow_approval_required,
            },
            _ => Asker::Mcp { allow: false },
        };
        let serving = matches!(cli.command, Command::Mcp(_));
        let runtime = match &cli.command {
            Command::Mcp(_) => tokio::runtime::Builder::new_multi_thread(),
            _ => tokio::runtime::Builder::new_current_thread(),
        }
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
        // `oscova mcp pin NAME` contacts that one server, and no other.
        if let Command::Mcp(crate::cli::McpArgs {
            action: Some(crate::cli::McpAction::Pin { name }),
            ..
        }) = &cli.command
        {
            #[cfg(feature = "mcp-servers")]
            let outcome = {
                let builder = self.mcp_servers(&config);
                runtime.block_on(crate::commands::pin_mcp_server(&config, builder, name))
            };
            #[cfg(not(feature = "mcp-servers"))]
            let outcome = Err(CliError::McpServersOff {
                what: format!("`{} mcp pin {name}`", self.name),
            });
            runtime.shutdown_background();
            return outcome;
        }
        // `oscova mcp login|logout NAME`: that one server's grant, no host.
        if let Command::Mcp(crate::cli::McpArgs {
            action: Some(action),
            ..
        }) = &cli.command
            && !matches!(action, crate::cli::McpAction::Pin { .. })
        {
            #[cfg(feature = "mcp-servers")]
            let outcome = {
                let builder = self.mcp_servers(&config);
                runtime.block_on(crate::commands::mcp_grant(
                    &config, builder, action, cli.json,
                ))
            };
            #[cfg(not(feature = "mcp-servers"))]
            let outcome = Err(CliError::McpServersOff {
                what: format!("`{} mcp {action:?}`", self.name),
            });
            runtime.shutdown_background();
            return outcome;
        }
        // MCP servers' catalogs are known before the host starts (listed
        // on the runtime that serves their calls, or read from pins).
        #[cfg(feature = "mcp-servers")]
        let mcp = (!config.mcp_servers().servers.is_empty()).then(|| {
            let mut builder = self.mcp_servers(&config);
            // `oscova serve` with a public URL takes logins' redirects
            // (`serve/oauth.rs`), so a call without a grant gets a link.
            if let (Command::Serve(_), Some(url)) = (&cli.command, config.serve().public_url()) {
                let (start, callback) = crate::commands::mcp_login_routes(url);
                builder = builder.login_redirect(start, callback);
            }
            runtime.block_on(builder.start())
        });
        #[cfg(not(feature = "mcp-servers"))]
        let mcp = None;
        let (name, version) = (self.name, self.version);
        let extensions = std::mem::take(&mut self.extensions);
        // `oscova serve` with a public URL serves the follow-up webhooks,
        // so the A2A tools may ask agents to push there.
        let push_url = match &cli.command {
            Command::Serve(_) => config.serve().public_url().map(str::to_owned),
            _ => None,
        };
        let host = self.build_host(&config, asker, (serving, push_url), mcp)?;
        // Traces, when an OTLP endpoint is configured; flushed when this
        // guard drops, after the runtime has stopped.
        #[cfg(feature = "otel")]
        let _telemetry = crate::telemetry::init(host.redactor());
        let env = crate::commands::Env {
            host: host.clone(),
            config,
            json: cli.json,
            name,
            version,
            extensions,
        };
        let outcome = runtime.block_on(async {
            let outcome = crate::commands::run(&env, cli.command).await;
            host.shutdown().await;
            outcome
        });
        // A blocked stdin read (MCP, the prompt) must not hold the exit.
        runtime.shutdown_background();
        outcome
    }

    /// The host, over the named plugins and every other linked one.
    ///
    /// When `serving` MCP, the host runs slow synchronous tool bodies off
    /// the runtime's workers, so one stalls neither other calls nor
    /// `ping`. `push_url` is where the A2A tools ask agents to push
    /// (`oscova serve`'s `[serve] public_url`).
    fn build_host(
        self,
        config: &Config,
        asker: Asker,
        (serving, push_url): (bool, Option<String>),
        mcp: Option<McpServers>,
    ) -> Result<PluginHost, CliError> {
        let spawn = spawn_policy(config);
        // The named plugins load first, in the order given, then every other
        // linked one: what the linker happened to keep must not decide the
        // order, nor with it which of two duplicate wire names is kept.
        let mut order = self.plugins;
        for linked in PluginRegistration::linked() {
            if !order.iter().any(|r| same_plugin(r, linked)) {
                order.push(*linked);
            }
        }
        let mut builder = PluginHost::builder()
            .plugins(order)
            .credentials(config.credentials())
            .default_approval(config.default_approval())
            .spawn_policy(spawn);
        if let Some(http) = config.http_client() {
            builder = builder.http_client(http);
        }
        if let Some(root) = config.files_root() {
            builder = builder.files_roots_under(root);
        }
        if serving {
            builder = builder.blocking_sync_tools(SERVING_SYNC_TOOLS);
        }
        #[cfg(feature = "mcp-servers")]
        if let Some(mcp) = mcp {
            // The servers' status is the host's to show (`oscova plugins`).
            // So are their prompts and resources (`oscova mcp`, `serve`).
            builder = builder
                .service(mcp.status().clone())
                .service(mcp.upstreams())
                .plugin_instance(mcp);
        }
        #[cfg(not(feature = "mcp-servers"))]
        let _: Option<McpServers> = mcp;
        // `[a2a]`'s agents, checked when the file was loaded.
        #[cfg(not(feature = "a2a-agents"))]
        let _: Option<String> = push_url;
        #[cfg(feature = "a2a-agents")]
        if !config.a2a_agents().agents.is_empty() {
            let mut a2a_config = config.a2a_agents().clone();
            a2a_config.push_url = push_url;
            let a2a = oscova_plugin_a2a::A2aPlugin::new(a2a_config).map_err(|e| {
                CliError::ConfigValue {
                    path: config.source().map_or_else(
                        || std::path::PathBuf::from("<string>"),
                        std::path::Path::to_path_buf,
                    ),
                    message: e.to_string(),
                }
            })?;
            builder = builder.plugin_instance(a2a);
        }
        // At a terminal the person answers tools' questions (an embedding
        // host's `customize` may set its own handler); an MCP session
        // answers them through its client, call by call.
        if let Asker::Terminal { yes } = asker {
            builder = builder.interaction_handler(TerminalInteraction { yes });
        }
        if let Some(customize) = self.customize {
            builder = customize(builder);
        }
        // One pair of speech routers for the commands and the speech
        // plugin's tools, over every plugin's speech providers (after
        // `customize`: an embedding host's own routers come first).
        builder = builder.service_with(oscova_speech::SpeechRouters::from_context);
        let host = builder
            .approval_handler(CliApproval::new(asker, self.approval))
            .build()?;
        for secret in config.secret_values() {
            host.redactor().add(secret.expose_secret());
        }
        crate::output::redact_with(host.redactor());
        crate::panic::install(host.redactor());
        Ok(host)
    }
}

/// The plugin of the config's `[mcp.servers]`.
#[cfg(feature = "mcp-servers")]
type McpServers = McpPlugin;
/// No plugin of `[mcp.servers]`: the config refuses the section.
#[cfg(not(feature = "mcp-servers"))]
type McpServers = std::convert::Infallible;

#[cfg(feature = "mcp-servers")]
impl Launcher {
    /// The config's `[mcp.servers]`, with the host's spawn policy, the
    /// config's secrets redacted from what the servers print, and the
    /// host's credentials (`oauth` of shared servers, and the listing).
    fn mcp_servers(&self, config: &Config) -> McpPluginBuilder {
        mcp_servers(config)
    }
}

/// The config's `[mcp.servers]` as [`Launcher::mcp_servers`] makes them
/// (also `oscova serve`'s OAuth callback's).
#[cfg(feature = "mcp-servers")]
pub(crate) fn mcp_servers(config: &Config) -> McpPluginBuilder {
    let secrets = Redactor::new();
    for secret in config.secret_values() {
        secrets.add(secret.expose_secret());
    }
    let host = config.credentials();
    let mut builder = McpPlugin::builder()
        .config(config.mcp_servers().clone())
        .spawn_policy(spawn_policy(config).redacting(&secrets))
        .redactor(&secrets)
        .host_credentials(move |key| host.host(key));
    if let Some(lock) = config.mcp_lock_file() {
        builder = builder.lock_file(lock);
    }
    // `grant = "authorization_code"` servers' grants (`oscova mcp login`).
    match crate::commands::mcp_token_store(config) {
        Ok(Some(store)) => builder = builder.token_store(store),
        Ok(None) => {}
        Err(e) => crate::output::warn(&format!("MCP servers' OAuth grants: {e}")),
    }
    builder
}

/// The spawn policy of every child process: the host's environment less
/// secret-looking names and the config's credential variables.
fn spawn_policy(config: &Config) -> ProcessSpawnPolicy {
    let mut spawn = ProcessSpawnPolicy::new();
    for name in config.credential_env_names() {
        spawn = spawn.deny(name.clone());
    }
    spawn
}

fn same_plugin(a: &PluginRegistration, b: &PluginRegistration) -> bool {
    a.type_name() == b.type_name() && a.manifest().id == b.manifest().id
}
