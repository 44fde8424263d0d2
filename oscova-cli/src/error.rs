//! Errors and exit codes.
//!
//! Every way a command can fail is one [`CliError`] variant, and every
//! variant maps to exactly one [`ExitStatus`]; the mapping lives here and
//! nowhere else, so the documented exit codes cannot drift from the code.
//! Tool results with `is_error` are not errors of the CLI: the command that
//! ran the tool returns [`ExitStatus::ToolError`] itself. Model calls map
//! the same way: an offline refusal is a refusal (3), a cancellation an
//! interruption (130), a missing model or provider a usage error (2), and
//! every other model failure (unreachable, 401, unknown model, malformed
//! stream, round bound) a failure (1). Speech follows suit: an offline
//! refusal is 3, a cancellation 130, an unknown provider or voice and
//! unusable text or audio 2, a provider failure 1.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use oscova_agent::chat::ChatError;
use oscova_agent::session::SessionError;
use oscova_agent::session::agent::{AgentError, AgentHostError};
use oscova_agent::session::compaction::CompactionError;
use oscova_agent::session::store::SqliteFileError;
use oscova_core::provider::model::ModelError;
use oscova_core::{HostError, InvokeError};
use oscova_mcp::http::McpHttpError;
use oscova_speech::SpeechError;

/// How an `oscova` command ended, as a process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitStatus {
    /// `0`: the command did what was asked.
    Success,
    /// `1`: the tool ran and returned an error result, or the tool (or the
    /// host) failed while running it, or a model call failed (server
    /// unreachable, key refused, unknown model, malformed answer, the bound
    /// on rounds reached).
    ToolError,
    /// `2`: a usage or configuration error: bad flags (clap's own code), an
    /// unknown tool, arguments that are not JSON or do not fit the tool, an
    /// unreadable or invalid config file, an unknown model or speech
    /// provider, no model to use, an operation the provider does not offer,
    /// an unknown voice, empty text, an audio file that is missing or not
    /// WAV. Nothing ran.
    Usage,
    /// `3`: the host refused the call: approval denied or impossible to ask
    /// for, or a host hook blocked it (the tool did not run); or offline
    /// operation was required and the model or speech endpoint is not on
    /// this machine, or a model endpoint that looks local resolves to
    /// another machine (no connection was made).
    Refused,
    /// `130`: the call, chat, download or speech operation was interrupted
    /// (Ctrl-C) and cancelled.
    Interrupted,
}

impl ExitStatus {
    /// The numeric exit code.
    pub const fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::ToolError => 1,
            Self::Usage => 2,
            Self::Refused => 3,
            Self::Interrupted => 130,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The config file named by `--config` or `OSCOVA_CONFIG` (or an
    /// existing default file) could not be read.
    #[error("cannot read the config file {}: {source}", .path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The config file is not valid TOML of the documented shape.
    ///
    /// The TOML parser's own error is not kept: its text quotes the
    /// offending line, which may be a credential's. The message names the
    /// line, column, table and key instead, with any credential value it
    /// would quote redacted.
    #[error("the config file {} is not valid: {message}", .path.display())]
    ConfigParse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line and column.
        message: String,
    },
    /// A config value has the right type but a wrong value.
    #[error("the config file {} is not valid: {message}", .path.display())]
    ConfigValue {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `--args` is not JSON.
    #[error("--args is not valid JSON: {0}")]
    ArgsNotJson(#[source] serde_json::Error),
    /// `--args` is JSON but not an object.
    #[error("--args must be a JSON object (the tool's arguments by name), not {0}")]
    ArgsNotObject(&'static str),
    /// No published tool has this name.
    #[error(
        "unknown tool `{0}`; `{program} tools list` shows the tools",
        program = crate::output::program()
    )]
    UnknownTool(String),
    /// A short tool name that more than one of the user's tools ends with.
    #[error("`{name}` names more than one tool ({}); give more of the wire name", .matches.join(", "))]
    AmbiguousTool {
        /// The name as given.
        name: String,
        /// The wire names it could mean.
        matches: Vec<String>,
    },
    /// The host could not be built.
    #[error("the host could not start: {0}")]
    Host(#[from] HostError),
    /// The session agent's host refused its parts (a model whose provider
    /// the plugin host did not build): a configuration error.
    #[error("the session agent could not start: {0}")]
    AgentHost(#[from] AgentHostError),
    /// The host refused or failed a tool call.
    #[error("{message}")]
    Invoke {
        /// What happened.
        error: InvokeError,
        /// The error's text with known secrets redacted.
        message: String,
    },
    /// No loaded plugin registered a model provider with this type key.
    #[error("no model provider `{key}` is loaded; {}", choices(available))]
    UnknownProvider {
        /// The type key asked for.
        key: String,
        /// The type keys that are loaded.
        available: Vec<String>,
    },
    /// The provider does not offer this operation.
    #[error("model provider `{provider}` cannot {operation}")]
    Unsupported {
        /// The provider type key.
        provider: String,
        /// What was asked, as a verb phrase (`download models`).
        operation: &'static str,
    },
    /// Neither `--model` nor the config names a model.
    #[error(
        "no model given for provider `{provider}`: pass --model, or set `model` in \
         [providers.{provider}] of the config file"
    )]
    NoModel {
        /// The provider type key.
        provider: String,
    },
    /// A model provider call failed.
    #[error("{message}")]
    Model {
        /// What happened.
        error: ModelError,
        /// The error's text with known secrets redacted.
        message: String,
    },
    /// A chat failed.
    #[error("{message}")]
    Chat {
        /// What happened.
        error: ChatError,
        /// The error's text with known secrets redacted.
        message: String,
    },
    /// A speech operation was refused or failed.
    #[error("{message}")]
    Speech {
        /// What happened.
        error: SpeechError,
        /// The error's text with known secrets redacted.
        message: String,
    },
    /// A file named on the command line cannot be used: the audio for
    /// `speech hear` is missing, unreadable or not WAV, or the folder of
    /// `speech say -o` does not exist. Nothing ran.
    #[error("cannot use {}: {reason}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// Writing a result file failed after the work was done.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Reading the chat's input failed.
    #[error("cannot read the input: {0}")]
    Input(#[source] io::Error),
    /// The MCP server could not start or stopped with an error.
    #[error("MCP server: {0}")]
    Mcp(#[source] oscova_mcp::McpError),
    /// The MCP HTTP server could not start or stopped with an error.
    #[error("MCP server: {0}")]
    McpHttp(#[source] oscova_mcp::http::McpHttpError),
    /// The A2A server (`oscova serve`) could not start.
    #[error("A2A server: {0}")]
    A2a(#[source] oscova_a2a::ServeA2aError),
    /// `--names short` with two tools sharing a short name.
    #[error("MCP server: {0}")]
    McpNames(#[source] oscova_mcp::NameClash),
    /// Pinning an MCP server's catalog (`oscova mcp pin`) failed.
    #[cfg(feature = "mcp-servers")]
    #[error("{0}")]
    McpPin(#[source] oscova_plugin_mcp::ClientError),
    /// `oscova mcp login` or `logout` failed.
    #[cfg(feature = "mcp-servers")]
    #[error("{0}")]
    McpLogin(#[source] oscova_plugin_mcp::ClientError),
    /// `[mcp.servers]` or `oscova mcp pin` in a build without the
    /// `mcp-servers` feature.
    #[error(
        "{what}: this oscova was built without MCP servers as toolsets (the `mcp-servers` \
         feature of oscova-cli, part of `first-party`)"
    )]
    McpServersOff {
        /// What asked for them.
        what: String,
    },
    /// `[sessions] store = "postgres"` in a build without the
    /// `sessions-postgres` feature.
    #[error(
        "sessions.store is \"postgres\": this oscova was built without the Postgres session \
         store (the `sessions-postgres` feature of oscova-cli, part of `first-party`); use \
         store = \"sqlite\" or a build with the feature"
    )]
    SessionsPostgresOff,
    /// A session operation failed: a missing session (exit 2), a name
    /// already taken (2), an unknown entry (2), a file that is not a pi
    /// session (2), the store (1).
    #[error("{message}")]
    Session {
        /// What failed.
        error: oscova_agent::session::SessionError,
        /// The error's text, redacted.
        message: String,
    },
    /// A chat slash command that cannot run: unknown, missing its
    /// argument or its session, or not available yet (`/compact`).
    #[error("{message}")]
    SlashCommand {
        /// What is wrong and what to do.
        message: String,
    },
    /// A session extension failed (its command, or a spawn it asked
    /// for).
    #[error("{message}")]
    Extension {
        /// What failed (`AgentError::kind`).
        kind: &'static str,
        /// The error's text, redacted.
        message: String,
    },
    /// The async runtime could not be created.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Output(#[source] io::Error),
}

impl From<InvokeError> for CliError {
    fn from(error: InvokeError) -> Self {
        let message = error.to_string();
        Self::Invoke { error, message }
    }
}

impl CliError {
    /// The exit status this error ends the process with.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Self::ConfigRead { .. }
            | Self::ConfigParse { .. }
            | Self::ConfigValue { .. }
            | Self::ArgsNotJson(_)
            | Self::ArgsNotObject(_)
            | Self::UnknownTool(_)
            | Self::AmbiguousTool { .. }
            | Self::UnknownProvider { .. }
            | Self::AgentHost(_)
            | Self::Unsupported { .. }
            | Self::NoModel { .. }
            | Self::File { .. }
            | Self::McpServersOff { .. }
            | Self::SessionsPostgresOff
            | Self::SlashCommand { .. }
            | Self::McpNames(_) => ExitStatus::Usage,
            Self::Session { error, .. } => match error {
                SessionError::NotFound { .. }
                | SessionError::NameTaken { .. }
                | SessionError::UnknownEntry(_)
                | SessionError::InvalidId(_)
                | SessionError::InvalidAppend(_) => ExitStatus::Usage,
                // The store's file is open to others (or not a file): the
                // operator's to fix, as a config file others can write.
                SessionError::Backend { source, .. }
                    if matches!(
                        source.downcast_ref::<SqliteFileError>(),
                        Some(SqliteFileError::NotPrivate { .. })
                    ) =>
                {
                    ExitStatus::Usage
                }
                _ => ExitStatus::ToolError,
            },
            Self::McpHttp(error) => match error {
                McpHttpError::NoTokens { .. } | McpHttpError::Setting(_) => ExitStatus::Usage,
                _ => ExitStatus::ToolError,
            },
            Self::A2a(error) => match error {
                oscova_a2a::ServeA2aError::NoTokens { .. }
                | oscova_a2a::ServeA2aError::Setting(_) => ExitStatus::Usage,
                _ => ExitStatus::ToolError,
            },
            Self::Extension { .. } => ExitStatus::ToolError,
            Self::Model { error, .. } => model_status(error),
            Self::Speech { error, .. } => speech_status(error),
            Self::Chat { error, .. } => match error {
                ChatError::Model(error) => model_status(error),
                ChatError::Cancelled => ExitStatus::Interrupted,
                ChatError::NoModel { .. } | ChatError::ProviderMismatch { .. } => ExitStatus::Usage,
                _ => ExitStatus::ToolError,
            },
            Self::Invoke { error, .. } => match error {
                InvokeError::UnknownTool(_) | InvokeError::InvalidArguments { .. } => {
                    ExitStatus::Usage
                }
                InvokeError::Cancelled(_) => ExitStatus::Interrupted,
                e if e.is_refusal() => ExitStatus::Refused,
                _ => ExitStatus::ToolError,
            },
            #[cfg(feature = "mcp-servers")]
            Self::McpPin(oscova_plugin_mcp::ClientError::UnknownServer(_))
            | Self::McpPin(oscova_plugin_mcp::ClientError::NoLockFile)
            | Self::McpPin(oscova_plugin_mcp::ClientError::Config { .. })
            | Self::McpLogin(oscova_plugin_mcp::ClientError::UnknownServer(_))
            | Self::McpLogin(oscova_plugin_mcp::ClientError::Config { .. }) => ExitStatus::Usage,
            #[cfg(feature = "mcp-servers")]
            Self::McpLogin(_) => ExitStatus::ToolError,
            #[cfg(feature = "mcp-servers")]
            Self::McpPin(_) => ExitStatus::ToolError,
            Self::Host(_)
            | Self::Mcp(_)
            | Self::Runtime(_)
            | Self::Output(_)
            | Self::Input(_)
            | Self::Write { .. } => ExitStatus::ToolError,
        }
    }

    /// A short machine-readable kind, used in `--json` error output. A
    /// model, speech or tool error's is that error's own `kind()`
    /// ([`ModelError::kind`], [`SpeechError::kind`], [`InvokeError::kind`]),
    /// so the CLI, chat spans and every other front end name a failure
    /// alike.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ConfigRead { .. } | Self::ConfigParse { .. } | Self::ConfigValue { .. } => {
                "config"
            }
            Self::ArgsNotJson(_) | Self::ArgsNotObject(_) => "invalid_arguments",
            Self::UnknownTool(_) => "unknown_tool",
            Self::AmbiguousTool { .. } => "ambiguous_tool",
            Self::Host(_) => "host",
            Self::AgentHost(error) => error.kind(),
            Self::Invoke { error, .. } => error.kind(),
            Self::UnknownProvider { .. } => "unknown_provider",
            Self::Unsupported { .. } => "unsupported",
            Self::NoModel { .. } => "no_model",
            Self::Model { error, .. } => error.kind(),
            Self::Chat { error, .. } => match error {
                ChatError::Model(error) => error.kind(),
                ChatError::Cancelled => "cancelled",
                ChatError::RoundLimit { .. } => "round_limit",
                ChatError::NoModel { .. } => "no_model",
                _ => "chat",
            },
            Self::Speech { error, .. } => error.kind(),
            Self::File { .. } => "file",
            Self::Write { .. } => "write",
            Self::Input(_) => "input",
            Self::Mcp(_) | Self::McpHttp(_) | Self::McpNames(_) => "mcp",
            Self::A2a(_) => "a2a",
            #[cfg(feature = "mcp-servers")]
            Self::McpPin(_) => "mcp_pin",
            #[cfg(feature = "mcp-servers")]
            Self::McpLogin(_) => "mcp_login",
            Self::McpServersOff { .. } => "mcp_servers_off",
            Self::SessionsPostgresOff => "sessions_postgres_off",
            Self::SlashCommand { .. } => "slash_command",
            Self::Extension { .. } => "extension",
            Self::Session { error, .. } => match error {
                SessionError::NotFound { .. } => "session_not_found",
                SessionError::NameTaken { .. } => "session_exists",
                SessionError::UnknownEntry(_) => "unknown_entry",
                SessionError::Changed { .. } => "session_changed",
                SessionError::Leased { .. } => "session_in_use",
                SessionError::InvalidId(_) | SessionError::InvalidAppend(_) => "invalid_session",
                _ => "session_store",
            },
            Self::Runtime(_) => "runtime",
            Self::Output(_) => "output",
        }
    }
}

impl From<ModelError> for CliError {
    fn from(error: ModelError) -> Self {
        match error {
            // What a provider cannot do is a usage error, as for speech.
            ModelError::Unsupported {
                provider,
                operation,
            } => Self::Unsupported {
                provider,
                operation,
            },
            error => {
                let message = error.to_string();
                Self::Model { error, message }
            }
        }
    }
}

impl From<ChatError> for CliError {
    fn from(error: ChatError) -> Self {
        match error {
            ChatError::Model(error) => error.into(),
            error => {
                let message = error.to_string();
                Self::Chat { error, message }
            }
        }
    }
}

impl From<CompactionError> for CliError {
    /// A compaction fails as its part does: nothing to compact is a usage
    /// error, the summarising call a model error (an offline refusal 3, a
    /// cancellation 130), the write a session error.
    fn from(error: CompactionError) -> Self {
        let message = error.to_string();
        match error {
            CompactionError::NothingToCompact => Self::SlashCommand { message },
            CompactionError::NoModel { provider } => Self::NoModel { provider },
            CompactionError::Model {
                source: source @ ModelError::Unsupported { .. },
                ..
            } => source.into(),
            CompactionError::Model { source, .. } => Self::Model {
                error: source,
                message,
            },
            CompactionError::Session(error) => error.into(),
            _ => Self::Model {
                error: ModelError::Other(message.clone()),
                message,
            },
        }
    }
}

impl From<SessionError> for CliError {
    fn from(error: SessionError) -> Self {
        let message = error.to_string();
        Self::Session { error, message }
    }
}

impl From<AgentError> for CliError {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::Chat(error) => error.into(),
            AgentError::ModelCall { error } => Self::from(error).kept_for_retry(),
            AgentError::NothingToRetry => Self::SlashCommand {
                message: "nothing to retry: the session's last message is an answer".into(),
            },
            AgentError::Session(error) => error.into(),
            AgentError::Compaction(error) => error.into(),
            AgentError::UnknownCommand(name) => Self::SlashCommand {
                message: format!("unknown command /{name}; /help lists the commands"),
            },
            error => Self::Extension {
                kind: error.kind(),
                message: error.to_string(),
            },
        }
    }
}

impl CliError {
    /// A failed model call of `chat --session`: says that the message is
    /// kept and how to ask again without sending it twice. Its kind and
    /// exit status stay the model error's.
    fn kept_for_retry(mut self) -> Self {
        if let Self::Model { message, .. } | Self::Chat { message, .. } = &mut self {
            message.push_str(
                "; your message is kept in the session: /retry (or -m /retry) asks the model \
                 again without sending it twice",
            );
        }
        self
    }
}

impl From<SpeechError> for CliError {
    fn from(error: SpeechError) -> Self {
        let message = error.to_string();
        Self::Speech { error, message }
    }
}

impl CliError {
    /// This error with every known secret in its message replaced by
    /// `[REDACTED]` (model, chat, tool and speech errors; others carry no
    /// server text).
    pub(crate) fn redacted(mut self, redactors: &[&oscova_core::redact::Redactor]) -> Self {
        if let Self::Model { message, .. }
        | Self::Chat { message, .. }
        | Self::Invoke { message, .. }
        | Self::Extension { message, .. }
        | Self::Speech { message, .. } = &mut self
        {
            for redactor in redactors {
                *message = redactor.redact(message).into_owned();
            }
        }
        self
    }
}

fn choices(available: &[String]) -> String {
    if available.is_empty() {
        "this host has none".to_owned()
    } else {
        format!("use one of: {}", available.join(", "))
    }
}

fn model_status(error: &ModelError) -> ExitStatus {
    match error {
        ModelError::NotLocal { .. }
        | ModelError::NoLocalEndpoint { .. }
        | ModelError::Refused { .. } => ExitStatus::Refused,
        ModelError::Cancelled => ExitStatus::Interrupted,
        _ => ExitStatus::ToolError,
    }
}

fn speech_status(error: &SpeechError) -> ExitStatus {
    match error {
        SpeechError::NotLocal { .. } | SpeechError::NoLocalEndpoint { .. } => ExitStatus::Refused,
        SpeechError::UnknownProvider { .. }
        | SpeechError::InvalidAudio(_)
        | SpeechError::InvalidText(_)
        | SpeechError::UnknownVoice { .. } => ExitStatus::Usage,
        SpeechError::Cancelled => ExitStatus::Interrupted,
        _ => ExitStatus::ToolError,
    }
}

#[cfg(test)]
mod tests;
