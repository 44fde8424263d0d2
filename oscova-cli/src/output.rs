//! Printing: one JSON document on stdout with `--json`, text otherwise.
//!
//! Rules: with `--json` stdout holds exactly one JSON document (errors
//! included, as `{"error": {"kind", "message", "exit_code"}}`) and stderr
//! only what a person needs; without it results go to stdout and errors to
//! stderr as `oscova: error: ...`. Commands that report as they go (the
//! `chat` REPL, `models pull`) print JSON Lines instead: one compact
//! document per line, the last one the outcome or the error. Error
//! documents are always one line, so they end either kind of output.
//! Writing to a pipe its reader closed ends the output quietly, as other
//! Unix tools do.

use std::io::Write;

use serde::Serialize;
use serde_json::json;

use crate::error::CliError;

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    print_text(&text)
}

/// Prints `value` as compact JSON on one line of stdout.
pub(crate) fn print_json_line<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text =
        serde_json::to_string(value).map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    print_text(&text)
}

/// Prints `text` and a newline on stdout. A reader that closed the pipe
/// early (`| head`) has all it wanted, so that is not an error.
pub(crate) fn print_text(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Output(e)),
        _ => Ok(()),
    }
}

/// Prints a line on stderr.
pub(crate) fn warn(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "oscova: {text}");
}

/// Prints a command's error in the requested format.
pub(crate) fn print_error(error: &CliError, json: bool) {
    if json {
        let doc = json!({
            "error": {
                "kind": error.kind(),
                "message": error.to_string(),
                "exit_code": error.exit_status().code(),
            }
        });
        if print_json_line(&doc).is_ok() {
            return;
        }
    }
    let _ = writeln!(std::io::stderr().lock(), "oscova: error: {error}");
}
