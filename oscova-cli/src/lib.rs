//! The reference Oscova host: the `oscova` command, as a library.
//!
//! The `oscova` binary is [`run_with`] over the plugins it links. A host
//! binary that links its own plugin crates gets the same commands the same
//! way:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     oscova_cli::run_with(oscova_core::linked_plugins![
//!         example_hello_plugin::ExampleAgentPlugin,
//!     ])
//! }
//! ```
//!
//! [`Launcher`] adds a host's own builder settings (hooks, spawn policy, an
//! exact plugin list) and approval policy.
//!
//! # Commands
//!
//! ```text
//! oscova plugins                         loaded plugins, versions, skipped ones with reasons
//! oscova tools list [--user U] [--profile raw|openai|gemini|anthropic]
//! oscova tools show NAME [--profile P]   description, approval, network scope, schema
//! oscova tools call NAME --args JSON [--user U] [--yes]
//! oscova mcp [--user U] [--allow-approval-required]   MCP server over stdio
//! ```
//!
//! `--json` (anywhere on the line) prints one JSON document on stdout,
//! errors included (`{"error": {"kind", "message", "exit_code"}}`); only
//! command-line parse errors stay clap's text on stderr (exit code 2).
//! `--config PATH` names the config file.
//!
//! `tools list --profile P` exports every tool's input schema with
//! [`oscova_core::export_schema`] in the shape that API takes (see
//! [`Catalog`]); tools a profile cannot express are listed under
//! `unsupported` with the reason, never dropped.
//!
//! # Approval
//!
//! A tool that needs approval (`Required`, and `Default` when the config's
//! `default_approval` is `"required"`) runs when `--yes` is given, when the
//! embedding host's [`Launcher::approval_handler`] says yes, or when the
//! person at the terminal answers `y` (the question goes to stderr, the
//! answer comes from stdin if it is a terminal, else `/dev/tty`). With no
//! terminal and no `--yes`, the call is refused without running (exit 3).
//! `oscova mcp` never asks: such tools are refused unless the server was
//! started with `--allow-approval-required` or the host's handler approves.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the tool returned an error result, or failed (panicked, unavailable for this user) |
//! | 2 | usage or configuration error: bad flags, **unknown tool**, `--args` not a JSON object or not fitting the tool, an unreadable or invalid config file; nothing ran |
//! | 3 | refused by the host: approval denied or impossible to ask for, or a host hook blocked the call; the tool did not run |
//! | 130 | interrupted with Ctrl-C; the call was cancelled |
//!
//! An unknown tool is a usage error (2) like an unknown subcommand: the
//! caller named something that does not exist, and `oscova tools list`
//! says what does.
//!
//! # Configuration
//!
//! A user's id, time zone and credentials come from a TOML file and from
//! environment variables. The file is `--config PATH`, else
//! `OSCOVA_CONFIG`, else `config.toml` in the platform config directory
//! (`~/.config/oscova/config.toml` on Linux, honouring
//! `XDG_CONFIG_HOME`); a missing default file is fine, a missing named
//! file is an error. Every key is optional and unknown keys are errors:
//!
//! ```toml
//! # The user when neither --user nor OSCOVA_USER is given (else "local").
//! default_user = "alice"
//! # What ToolApprovalMode::Default means: "not_required" (the default) or "required".
//! default_approval = "not_required"
//!
//! # Credentials for every user, by the key plugins ask for.
//! [credentials]
//! "acme.api_key" = "shared-key"
//!
//! # One table per user.
//! [users.alice]
//! time_zone = "Europe/Berlin"   # IANA name, handed to tools and child processes
//!
//! [users.alice.credentials]
//! "acme.api_key" = "alice-key"  # wins over [credentials]
//! ```
//!
//! | variable | meaning |
//! |---|---|
//! | `OSCOVA_CONFIG` | the config file, when `--config` is not given |
//! | `OSCOVA_USER` | the user, when `--user` is not given (wins over `default_user`) |
//! | `OSCOVA_TIME_ZONE` | the user's time zone (wins over the file) |
//! | `OSCOVA_CREDENTIAL_<KEY>` | credential `<key>`: upper case, every character outside `A-Z0-9` as `_` (`acme.api_key` → `OSCOVA_CREDENTIAL_ACME_API_KEY`); wins over the file, for whichever user the command runs as |
//!
//! Credentials reach plugins only through [`ConfigCredentials`] (a
//! [`CredentialResolver`](oscova_core::CredentialResolver)); every
//! configured value is redacted from tool output, and the
//! `OSCOVA_CREDENTIAL_*` variables are kept out of processes tools start.
//!
//! # MCP
//!
//! `oscova mcp` serves the user's tools over stdio with the official Rust
//! SDK (`rmcp`): `tools/list` gives wire names, descriptions, raw input
//! schemas and `openWorldHint` (true for `NetworkScope::Internet`);
//! `tools/call` runs through the user's scope; tool errors and refusals
//! come back as `isError` results (an unknown tool as an invalid-params
//! error); progress becomes `notifications/progress` when the client sent
//! a progress token; `notifications/cancelled` cancels the call.
//! [`McpServer`] serves a scope on any `rmcp` transport.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod approval;
mod catalog;
mod cli;
mod commands;
mod config;
mod error;
mod launcher;
mod output;
mod term;

pub use catalog::{Catalog, UnsupportedTool, export_catalog, export_tool};
pub use commands::{McpServer, serve_stdio};
pub use config::{
    CONFIG_ENV, CREDENTIAL_ENV_PREFIX, Config, ConfigCredentials, DEFAULT_USER, TIME_ZONE_ENV,
    USER_ENV, credential_env_var,
};
pub use error::{CliError, ExitStatus};
pub use launcher::{Launcher, run, run_with};
