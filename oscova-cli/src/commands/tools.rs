//! `oscova tools list|show|call`.
//!
//! Rules: `list` and `show` read the published catalog and never run a
//! tool. `call` runs exactly one tool through the user's scope, so approval,
//! argument checks, redaction and hooks are the host's; the exit status
//! follows the result (see [`ExitStatus`]). The arguments come from
//! `--args`, or from `--args-file` (a regular file, or `-` for stdin) read
//! with the host's default argument cap counted while reading, so neither
//! a huge file nor an endless stream is read whole. Progress goes to stderr as one
//! redrawn line on a terminal and nowhere otherwise. Ctrl-C drops the call
//! (the host's documented way to cancel) and exits with 130. A result's
//! further blocks follow its text: more text printed, bytes (images,
//! audio, blob resources) written to files in `--out-dir` (else a new
//! private temporary folder, never the working directory) with one summary
//! line each naming the file (see `blocks.rs`); `--json` prints them as
//! base64 with their MIME types instead. `call` and `show` take a wire name or, as
//! the test kit does, its end when exactly one of the user's tools ends so
//! (`echo` for `acme_search__example__echo`); more than one is a usage
//! error listing them. Questions from the tool are asked at the terminal
//! (`interact.rs`).

use std::path::Path;

use oscova_agent::profile::{SchemaProfile, export_schema};
use oscova_core::fs::{FileError, read_capped, read_regular};
use oscova_core::{InvokeError, args::DEFAULT_MAX_ARGUMENT_BYTES, host::PublishedTool};
use serde_json::{Value, json};

use super::{Env, interrupted};
use crate::catalog::export_catalog;
use crate::cli::{CallArgs, ListArgs, ShowArgs, ToolsCommand};
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_text, warn};
use crate::term::ProgressLine;

pub(super) async fn run(env: &Env, command: ToolsCommand) -> Result<ExitStatus, CliError> {
    match command {
        ToolsCommand::List(args) => list(env, args),
        ToolsCommand::Show(args) => show(env, args),
        ToolsCommand::Call(args) => call(env, args).await,
    }
}

fn list(env: &Env, args: ListArgs) -> Result<ExitStatus, CliError> {
    let profile = SchemaProfile::from(args.profile);
    let scope = env
        .host
        .user_scope(env.config.user(args.user.user.as_deref()));
    let catalog = export_catalog(scope.tools(), profile);
    if env.json {
        print_json(&json!({
            "user": scope.user().id(),
            "profile": catalog.profile,
            "tools": catalog.tools,
            "unsupported": catalog.unsupported,
            "diagnostics": scope.diagnostics(),
        }))?;
        return Ok(ExitStatus::Success);
    }
    let tools: Vec<&PublishedTool> = scope.tools().collect();
    let width = tools.iter().map(|t| t.wire_name().len()).max().unwrap_or(0);
    let mut text = String::new();
    if tools.is_empty() {
        text.push_str("no tools\n");
    }
    for t in &tools {
        if catalog.unsupported.iter().any(|u| u.name == t.wire_name()) {
            continue;
        }
        text.push_str(&format!(
            "{:width$}  {:12}  {:8}  {}\n",
            t.wire_name(),
            t.approval().to_string(),
            t.network_scope().to_string(),
            summary(t.description()),
        ));
    }
    if !catalog.unsupported.is_empty() {
        text.push_str(&format!("\nnot expressible for {}:\n", catalog.profile));
        for u in &catalog.unsupported {
            text.push_str(&format!("  {}: {}\n", u.name, u.error));
        }
    }
    if !scope.diagnostics().is_empty() || !env.host.diagnostics().is_empty() {
        text.push_str("\nsome plugins or toolsets were skipped; `oscova plugins` says why\n");
        for d in scope.diagnostics() {
            text.push_str(&format!("  {d}\n"));
        }
    }
    print_text(text.trim_end())?;
    Ok(ExitStatus::Success)
}

fn show(env: &Env, args: ShowArgs) -> Result<ExitStatus, CliError> {
    let name = resolve_name(
        env.host.tools().iter().map(PublishedTool::wire_name),
        &args.name,
    )?;
    let Some(tool) = env.host.tool(&name) else {
        return Err(CliError::UnknownTool(args.name));
    };
    let profile = SchemaProfile::from(args.profile);
    let schema = export_schema(tool.input_schema(), profile).map_err(|e| e.to_string());
    if env.json {
        let (schema, error) = match schema {
            Ok(s) => (s, Value::Null),
            Err(e) => (Value::Null, Value::String(e)),
        };
        print_json(&json!({
            "name": tool.wire_name(),
            "plugin": tool.plugin_id(),
            "toolset": tool.toolset_type(),
            "method": tool.info().method(),
            "description": tool.description(),
            "approval": tool.approval(),
            "network_scope": tool.network_scope(),
            "title": tool.title(),
            "annotations": tool.annotations(),
            "profile": profile.as_str(),
            "input_schema": schema,
            "output_schema": tool.output_schema(),
            "error": error,
        }))?;
        return Ok(ExitStatus::Success);
    }
    let schema = match schema {
        Ok(s) => serde_json::to_string_pretty(&s).unwrap_or_default(),
        Err(e) => format!("cannot be exported: {e}"),
    };
    let mut text = tool.wire_name().to_owned();
    if let Some(title) = tool.title() {
        text.push_str(&format!("\n  title:         {title}"));
    }
    text.push_str(&format!(
        "\n  plugin:        {}\n  toolset:       {}\n  approval:      {}\n  network scope: {}\n  annotations:   {}\n\n{}\n\ninput schema ({}):\n{schema}",
        tool.plugin_id(),
        tool.toolset_type(),
        tool.approval(),
        tool.network_scope(),
        hints(tool),
        tool.description(),
        profile.as_str(),
    ));
    if let Some(output) = tool.output_schema() {
        let output = serde_json::to_string_pretty(output).unwrap_or_default();
        text.push_str(&format!("\n\noutput schema:\n{output}"));
    }
    print_text(&text)?;
    Ok(ExitStatus::Success)
}

/// The annotations a tool declares, as words (`read-only, open world`).
fn hints(tool: &PublishedTool) -> String {
    let a = tool.annotations();
    let mut words = Vec::new();
    for (hint, yes, no) in [
        (a.read_only(), "read-only", "not read-only"),
        (a.destructive(), "destructive", "not destructive"),
        (a.idempotent(), "idempotent", "not idempotent"),
        (a.open_world(), "open world", "closed world"),
    ] {
        if let Some(value) = hint {
            words.push(if value { yes } else { no });
        }
    }
    if words.is_empty() {
        "none".to_owned()
    } else {
        words.join(", ")
    }
}

async fn call(env: &Env, args: CallArgs) -> Result<ExitStatus, CliError> {
    let text = match &args.args_file {
        Some(path) => read_args_file(path)?,
        None => args.args.clone(),
    };
    let arguments: Value = serde_json::from_str(&text).map_err(CliError::ArgsNotJson)?;
    if !arguments.is_object() {
        return Err(CliError::ArgsNotObject(json_type(&arguments)));
    }
    let scope = env
        .host
        .user_scope(env.config.user(args.user.user.as_deref()));
    crate::output::redact_with(scope.redactor());
    let name = resolve_name(scope.tools().map(PublishedTool::wire_name), &args.name)?;
    let progress = ProgressLine::on_stderr();
    let call = scope
        .invoke(&name, arguments)
        .progress_arc(progress.as_ref().map(ProgressLine::sink))
        .checked();
    let outcome = tokio::select! {
        outcome = call => outcome,
        () = interrupted() => Err(InvokeError::Cancelled(name.clone())),
    };
    if let Some(line) = &progress {
        line.finish();
    }
    let result = match outcome {
        Ok(result) => result,
        Err(InvokeError::UnknownTool(name)) => return Err(CliError::UnknownTool(name)),
        Err(error) => {
            if matches!(error, InvokeError::Unavailable(_)) {
                for d in scope.diagnostics() {
                    warn(&d.to_string());
                }
            }
            // Panic messages and hook reasons may quote a secret.
            let mut message = error.to_string();
            for redactor in [scope.redactor(), env.host.redactor()] {
                message = redactor.redact(&message).into_owned();
            }
            return Err(CliError::Invoke { error, message });
        }
    };
    if env.json {
        // Blocks carry their bytes as base64 with their MIME types.
        print_json(&result)?;
    } else if result.is_error {
        warn(&format!("tool error: {}", result.content));
        super::blocks::print_blocks(&result, &name, args.out_dir.as_deref())?;
    } else {
        if !result.content.is_empty() || result.blocks.is_empty() {
            print_text(&result.content)?;
        }
        super::blocks::print_blocks(&result, &name, args.out_dir.as_deref())?;
    }
    Ok(if result.is_error {
        ExitStatus::ToolError
    } else {
        ExitStatus::Success
    })
}

/// The wire name `name` means among `tools`: itself when it is one, else
/// the one tool whose wire name ends with `__{name}`. No match leaves it as
/// given, for the host to call unknown.
fn resolve_name<'a>(tools: impl Iterator<Item = &'a str>, name: &str) -> Result<String, CliError> {
    let suffix = format!("__{name}");
    let mut matches = Vec::new();
    for wire in tools {
        if wire == name {
            return Ok(name.to_owned());
        }
        if wire.ends_with(&suffix) {
            matches.push(wire.to_owned());
        }
    }
    match matches.len() {
        0 => Ok(name.to_owned()),
        1 => Ok(matches.remove(0)),
        _ => Err(CliError::AmbiguousTool {
            name: name.to_owned(),
            matches,
        }),
    }
}

/// The text of `--args-file`: the file, or stdin for `-`, at most
/// [`DEFAULT_MAX_ARGUMENT_BYTES`] (counted while reading).
fn read_args_file(path: &Path) -> Result<String, CliError> {
    let cap = DEFAULT_MAX_ARGUMENT_BYTES as u64;
    let bytes = if path == Path::new("-") {
        read_capped(std::io::stdin().lock(), cap)
    } else {
        read_regular(path, cap)
    };
    let refuse = |reason: String| CliError::File {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = bytes.map_err(|e| {
        refuse(match e {
            FileError::TooLarge { limit } => {
                format!("it is larger than {limit} bytes, the most a call's arguments may be")
            }
            other => other.to_string(),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 text".into()))
}

/// The description on one line, cut to fit a listing.
fn summary(text: &str) -> String {
    const MAX: usize = 100;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 3] = [
        "acme__example__echo",
        "acme__other__echo",
        "acme__example__search",
    ];

    #[test]
    fn a_unique_end_names_its_tool() {
        let resolve = |name| resolve_name(TOOLS.into_iter(), name);
        assert_eq!(resolve("search").unwrap(), "acme__example__search");
        assert_eq!(resolve("example__echo").unwrap(), "acme__example__echo");
        assert_eq!(resolve("acme__other__echo").unwrap(), "acme__other__echo");
        // Unknown names go on to the host, which calls them unknown.
        assert_eq!(resolve("nothing").unwrap(), "nothing");
        // Part of a segment is not an end.
        assert_eq!(resolve("cho").unwrap(), "cho");
        match resolve("echo") {
            Err(CliError::AmbiguousTool { matches, .. }) => {
                assert_eq!(matches, ["acme__example__echo", "acme__other__echo"]);
            }
            other => panic!("{other:?}"),
        }
    }
}
