//! Printing: one JSON document on stdout with `--json`, text otherwise.
//!
//! Rules: with `--json` stdout holds exactly one JSON document (errors
//! included, as `{"error": {"kind", "message", "exit_code"}}`) and stderr
//! only what a person needs; without it results go to stdout and errors to
//! stderr as `PROGRAM: error: ...` (`oscova`, or the name the embedding
//! host gave [`crate::Launcher::name`]). Commands that report as they go (the
//! `chat` REPL, `models pull`) print JSON Lines instead: one compact
//! document per line, the last one the outcome or the error. Error
//! documents are always one line, so they end either kind of output.
//! Writing to a pipe its reader closed ends the output quietly, as other
//! Unix tools do.
//!
//! Everything the CLI prints passes the redactors registered with
//! [`redact_with`], wherever it comes from (tool results, chat answers,
//! errors, warnings, progress): the configured secret values from the
//! moment the file is loaded, then the host's redactor and each user
//! scope's, which may learn more values as they run. JSON is redacted
//! value by value before it is serialised; text streamed in pieces goes
//! through [`stream`], which catches a secret split across pieces. Output
//! written elsewhere in the CLI (the chat view, the progress line) uses
//! [`redacted`] or [`stream`] too. Then every text printed passes
//! `term::for_terminal` and every JSON document `term::json_for_terminal`
//! (see `term.rs`), so no control sequence from a plugin, a server or a
//! model reaches the terminal.

use std::io::Write;
use std::sync::{PoisonError, RwLock};

use oscova_core::{redact::RedactStream, redact::Redactor};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::CliError;
use crate::term::{for_terminal, json_for_terminal};

/// The program's name in messages: `oscova` unless the launcher was given
/// another.
static PROGRAM: RwLock<&'static str> = RwLock::new("oscova");

/// Names the program in messages from now on.
pub(crate) fn set_program(name: &'static str) {
    *PROGRAM.write().unwrap_or_else(PoisonError::into_inner) = name;
}

/// The program's name, as messages give it (`oscova tools list`).
pub(crate) fn program() -> &'static str {
    *PROGRAM.read().unwrap_or_else(PoisonError::into_inner)
}

/// The redactors every printed text passes. Values are only ever added,
/// so whatever was once secret stays hidden for the rest of the process.
static REDACTORS: RwLock<Vec<Redactor>> = RwLock::new(Vec::new());

/// Redacts everything printed from now on with `redactor` (and the values
/// added to it later) as well.
pub(crate) fn redact_with(redactor: &Redactor) {
    // A plain list no panic can leave half-written; hiding secrets matters
    // more than the poison flag.
    REDACTORS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .push(redactor.clone());
}

fn redactors() -> Vec<Redactor> {
    REDACTORS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// `text` with every registered secret replaced.
pub(crate) fn redacted(text: &str) -> String {
    let mut text = text.to_owned();
    for redactor in redactors() {
        if let std::borrow::Cow::Owned(clean) = redactor.redact(&text) {
            text = clean;
        }
    }
    text
}

/// A stream that redacts text printed in pieces with every registered
/// redactor.
pub(crate) fn stream() -> RedactStream {
    RedactStream::new(redactors())
}

/// `value` as JSON with every string redacted.
fn redacted_json<T: Serialize + ?Sized>(value: &T) -> Result<Value, CliError> {
    let mut value =
        serde_json::to_value(value).map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    for redactor in redactors() {
        redactor.redact_json(&mut value);
    }
    Ok(value)
}

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(&redacted_json(value)?)
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    write_stdout(&json_for_terminal(&text))
}

/// Prints `value` as compact JSON on one line of stdout.
pub(crate) fn print_json_line<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string(&redacted_json(value)?)
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    write_stdout(&json_for_terminal(&text))
}

/// Prints `text` and a newline on stdout.
pub(crate) fn print_text(text: &str) -> Result<(), CliError> {
    write_stdout(&for_terminal(&redacted(text)))
}

/// Writes an already redacted and cleaned line. A reader that closed the pipe early
/// (`| head`) has all it wanted, so that is not an error.
fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Output(e)),
        _ => Ok(()),
    }
}

/// Prints a line on stderr.
pub(crate) fn warn(text: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}: {}",
        program(),
        for_terminal(&redacted(text))
    );
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
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}: error: {}",
        program(),
        for_terminal(&redacted(&error.to_string()))
    );
}
