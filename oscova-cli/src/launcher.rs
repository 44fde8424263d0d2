//! The entry points: [`run`], [`run_with`] and [`Launcher`].
//!
//! Rules: parsing, configuration, host start-up and the command all happen
//! inside [`Launcher::run_from`], which never panics, prints every error
//! itself (as JSON on stdout with `--json`, else as one line on stderr),
//! and turns it into the documented exit code. clap's own errors keep
//! clap's output and code (2; 0 for `--help` and `--version`). The files
//! and speech plugins, when the launcher's plugin list names them, are
//! rooted where the configuration says ([`Config::files_root`]), never in
//! the working directory; the host's own builder settings come after and
//! can change that. Once the host is built the speech plugin gets the
//! host's speech routers, so the speech providers of every loaded plugin
//! are routable from its tools as from `oscova speech`, and the command
//! reuses those routers.

use std::ffi::OsString;
use std::fmt;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use oscova_core::{
    ApprovalHandler, ExposeSecret, PluginHost, PluginHostBuilder, PluginInfo, PluginRegistration,
    ProcessSpawnPolicy,
};
use oscova_plugin_files::FilesPlugin;
use oscova_plugin_speech::SpeechPlugin;
use oscova_speech::SpeechRouters;

use crate::approval::{Asker, CliApproval};
use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::error::{CliError, ExitStatus};

type Customize = Box<dyn FnOnce(PluginHostBuilder) -> PluginHostBuilder>;

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
    plugins: Vec<PluginRegistration>,
    customize: Option<Customize>,
    approval: Option<Arc<dyn ApprovalHandler>>,
}

impl fmt::Debug for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launcher")
            .field("plugins", &self.plugins)
            .field("customize", &self.customize.is_some())
            .field("approval", &self.approval.is_some())
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
            plugins: Vec::new(),
            customize: None,
            approval: None,
        }
    }

    /// Loads these plugins too, even if the linker dropped their
    /// registration (as [`PluginHostBuilder::expect_linked`] does), first
    /// and in this order, then every other linked plugin: the order decides
    /// the catalog's order and, for two tools with one wire name, which is
    /// kept (the earlier).
    ///
    /// When the list names `oscova_plugin_files::FilesPlugin` or
    /// `oscova_plugin_speech::SpeechPlugin`, the launcher configures it
    /// with one directory per user under [`Config::files_root`]
    /// (`OSCOVA_FILES_ROOT`, the config's `files_root`, else the platform
    /// data directory), the same one for both; the speech plugin then
    /// routes through the host's speech routers (built-in and plugin
    /// providers).
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
        let cli = match Cli::try_parse_from(args) {
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

    fn execute(self, cli: Cli) -> Result<ExitStatus, CliError> {
        let config = Config::load(cli.config.as_deref())?;
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
        let (host, speech) = self.build_host(&config, asker)?;
        let runtime = match &cli.command {
            Command::Mcp(_) => tokio::runtime::Builder::new_multi_thread(),
            _ => tokio::runtime::Builder::new_current_thread(),
        }
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
        let env = crate::commands::Env {
            host: host.clone(),
            speech,
            config,
            json: cli.json,
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

    /// The host, and the speech routers it gave the speech plugin (when
    /// the plugin list names it).
    fn build_host(
        self,
        config: &Config,
        asker: Asker,
    ) -> Result<(PluginHost, Option<Arc<SpeechRouters>>), CliError> {
        let mut spawn = ProcessSpawnPolicy::new();
        for name in config.credential_env_names() {
            spawn = spawn.deny(name.clone());
        }
        let files = self.names(&FilesPlugin::registration());
        let speech_named = self.names(&SpeechPlugin::registration());
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
        if let Some(root) = config.files_root()
            && files
        {
            builder = builder.plugin_instance(FilesPlugin::per_user(root));
        }
        // Kept so the routers can be handed over once the host exists;
        // clones share them.
        let speech = match config.files_root() {
            Some(root) if speech_named => {
                let plugin = SpeechPlugin::per_user(root);
                builder = builder.plugin_instance(plugin.clone());
                Some(plugin)
            }
            _ => None,
        };
        if let Some(customize) = self.customize {
            builder = customize(builder);
        }
        let host = builder
            .approval_handler(CliApproval::new(asker, self.approval))
            .build()?;
        for secret in config.secret_values() {
            host.redactor().add(secret.expose_secret());
        }
        crate::panic::install(host.redactor());
        let routers = speech.map(|plugin| plugin.set_routers_from_host(&host));
        Ok((host, routers))
    }

    /// Whether [`plugins`](Self::plugins) listed this plugin.
    fn names(&self, plugin: &PluginRegistration) -> bool {
        self.plugins.iter().any(|r| same_plugin(r, plugin))
    }
}

fn same_plugin(a: &PluginRegistration, b: &PluginRegistration) -> bool {
    a.type_name() == b.type_name() && a.manifest().id == b.manifest().id
}
