//! The command line, as clap types.
//!
//! Rules: this module only declares flags and subcommands; it runs
//! nothing. Global flags (`--json`, `--config`) work before or after the
//! subcommand. Every subcommand that acts for a user takes `--user`.
//! Adding a command means a variant here and a module under `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use oscova_core::SchemaProfile;

/// Lists, shows and calls the tools of the linked Oscova plugins, and
/// serves them over MCP.
#[derive(Debug, Parser)]
#[command(name = "oscova", version, propagate_version = true)]
pub(crate) struct Cli {
    /// Print machine-readable JSON on stdout instead of text.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Read this config file (default: `OSCOVA_CONFIG`, else
    /// `config.toml` in the platform config directory, e.g.
    /// `~/.config/oscova/config.toml`).
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) config: Option<PathBuf>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the loaded plugins, and the skipped ones with reasons.
    Plugins,

    /// List, show and call tools.
    #[command(subcommand)]
    Tools(ToolsCommand),

    /// Serve a user's tools over MCP on stdin and stdout.
    Mcp(McpArgs),
    //
    // Reserved (speech, issue 6, crate `oscova-speech`):
    //     /// Synthesise and recognise speech through the routers.
    //     #[command(subcommand)]
    //     Speech(crate::commands::speech::SpeechCommand),
    // with `say TEXT -o FILE [--provider KEY] [--voice V] [--endpoint URL]
    // [--offline]` and `hear FILE [--provider KEY] [--endpoint URL]
    // [--offline]`, dispatched in `commands::run` to
    // `commands/speech.rs`.
    //
    // Reserved (models, issue 7, `oscova_core::chat`):
    //     Chat(crate::commands::chat::ChatArgs),
    //     #[command(subcommand)]
    //     Models(crate::commands::models::ModelsCommand),
    // dispatched in `commands::run` to `commands/chat.rs` and
    // `commands/models.rs`.
}

/// `oscova tools ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List the tools a user can call, optionally in a model API's shape.
    List(ListArgs),
    /// Show one tool: description, approval, network scope, schema.
    Show(ShowArgs),
    /// Call one tool and print its result.
    Call(CallArgs),
}

/// The user a command acts for.
#[derive(Debug, Args)]
pub(crate) struct UserArg {
    /// Act as this user (default: `OSCOVA_USER`, else the config's
    /// `default_user`, else `local`).
    #[arg(long, value_name = "USER")]
    pub(crate) user: Option<String>,
}

/// `oscova tools list`
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Export the input schemas for this model API.
    #[arg(long, value_enum, default_value_t = Profile::Raw)]
    pub(crate) profile: Profile,
}

/// `oscova tools show`
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The tool's wire name.
    pub(crate) name: String,
    /// Show the input schema as exported for this model API.
    #[arg(long, value_enum, default_value_t = Profile::Raw)]
    pub(crate) profile: Profile,
}

/// `oscova tools call`
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's wire name.
    pub(crate) name: String,
    /// The arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub(crate) args: String,
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Approve the call without asking (needed for tools that require
    /// approval when there is no terminal to ask on).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
}

/// `oscova mcp`
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Run tools that require approval without asking; without this flag
    /// they are refused (an MCP client cannot be asked on a terminal).
    #[arg(long)]
    pub(crate) allow_approval_required: bool,
}

/// A schema profile, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Profile {
    /// The schema as the tool produced it.
    Raw,
    /// OpenAI strict function calling.
    Openai,
    /// Gemini function declarations.
    Gemini,
    /// Anthropic tool use.
    Anthropic,
}

impl From<Profile> for SchemaProfile {
    fn from(p: Profile) -> Self {
        match p {
            Profile::Raw => SchemaProfile::Raw,
            Profile::Openai => SchemaProfile::OpenAi,
            Profile::Gemini => SchemaProfile::Gemini,
            Profile::Anthropic => SchemaProfile::Anthropic,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_go_anywhere() {
        let cli = Cli::try_parse_from(["oscova", "tools", "list", "--json", "--profile", "gemini"])
            .unwrap();
        assert!(cli.json);
        match cli.command {
            Command::Tools(ToolsCommand::List(args)) => assert_eq!(args.profile, Profile::Gemini),
            other => panic!("{other:?}"),
        }
    }
}
