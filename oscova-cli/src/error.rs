//! Errors and exit codes.
//!
//! Every way a command can fail is one [`CliError`] variant, and every
//! variant maps to exactly one [`ExitStatus`]; the mapping lives here and
//! nowhere else, so the documented exit codes cannot drift from the code.
//! Tool results with `is_error` are not errors of the CLI: the command that
//! ran the tool returns [`ExitStatus::ToolError`] itself.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use oscova_core::{HostError, InvokeError};

/// How an `oscova` command ended, as a process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitStatus {
    /// `0`: the command did what was asked.
    Success,
    /// `1`: the tool ran and returned an error result, or the tool (or the
    /// host) failed while running it.
    ToolError,
    /// `2`: a usage or configuration error: bad flags (clap's own code), an
    /// unknown tool, arguments that are not JSON or do not fit the tool, an
    /// unreadable or invalid config file. Nothing ran.
    Usage,
    /// `3`: the host refused the call: approval denied or impossible to ask
    /// for, or a host hook blocked it. The tool did not run.
    Refused,
    /// `130`: the call was interrupted (Ctrl-C) and cancelled.
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
    #[error("the config file {} is not valid: {source}", .path.display())]
    ConfigParse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line and column.
        #[source]
        source: Box<toml::de::Error>,
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
    #[error("unknown tool `{0}`; `oscova tools list` shows the tools")]
    UnknownTool(String),
    /// The host could not be built.
    #[error("the host could not start: {0}")]
    Host(#[from] HostError),
    /// The host refused or failed a tool call.
    #[error("{message}")]
    Invoke {
        /// What happened.
        error: InvokeError,
        /// The error's text with known secrets redacted.
        message: String,
    },
    /// The MCP server could not start or stopped with an error.
    #[error("MCP server: {0}")]
    Mcp(String),
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
            | Self::UnknownTool(_) => ExitStatus::Usage,
            Self::Invoke { error, .. } => match error {
                InvokeError::UnknownTool(_) | InvokeError::InvalidArguments { .. } => {
                    ExitStatus::Usage
                }
                InvokeError::Cancelled(_) => ExitStatus::Interrupted,
                e if e.is_refusal() => ExitStatus::Refused,
                _ => ExitStatus::ToolError,
            },
            Self::Host(_) | Self::Mcp(_) | Self::Runtime(_) | Self::Output(_) => {
                ExitStatus::ToolError
            }
        }
    }

    /// A short machine-readable kind, used in `--json` error output.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ConfigRead { .. } | Self::ConfigParse { .. } | Self::ConfigValue { .. } => {
                "config"
            }
            Self::ArgsNotJson(_) | Self::ArgsNotObject(_) => "invalid_arguments",
            Self::UnknownTool(_) => "unknown_tool",
            Self::Host(_) => "host",
            Self::Invoke { error, .. } => error.kind(),
            Self::Mcp(_) => "mcp",
            Self::Runtime(_) => "runtime",
            Self::Output(_) => "output",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_usage_and_failures_have_distinct_codes() {
        let denied = CliError::from(InvokeError::Denied {
            tool: "t".into(),
            reason: None,
        });
        assert_eq!(denied.exit_status().code(), 3);
        let blocked = CliError::from(InvokeError::Blocked {
            tool: "t".into(),
            reason: "no".into(),
        });
        assert_eq!(blocked.exit_status().code(), 3);
        assert_eq!(CliError::UnknownTool("t".into()).exit_status().code(), 2);
        let panicked = CliError::from(InvokeError::Panicked {
            tool: "t".into(),
            message: "boom".into(),
        });
        assert_eq!(panicked.exit_status().code(), 1);
        assert_eq!(panicked.kind(), "panicked");
    }
}
